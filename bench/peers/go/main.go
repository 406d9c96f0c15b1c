// The Go peer of cio's benchmarks (bench/driver.py): goroutines, channels and the net package, as a
// Go user would write them. Same command line as cio_bench:
//
//	go-peer BENCH go --cpus P --seconds S [--param N] [--smoke]   prints RESULT lines
//	go-peer serve-echo FD                                          the echo server of B10 (FD: a listening socket)
//
// CPU placement is the driver's (taskset for one/same); GOMAXPROCS follows the CPUs allowed.
package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"
)

func result(metric string, value float64, unit string) {
	fmt.Printf("RESULT %s %g %s\n", metric, value, unit)
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// measure calls body(n) with growing n until seconds are used (after a ~10 % warm-up) and returns
// ns per unit of n, as bench_measure does; it also reports the CPU share.
func measure(body func(n int), seconds float64) float64 {
	n := 1
	warm := time.Duration(seconds * 0.1 * 1e9)
	for start := time.Now(); time.Since(start) < warm; n *= 2 {
		body(n)
	}
	total, ops := time.Duration(0), 0
	c0, w0 := cpuSeconds(), time.Now()
	for total < time.Duration(seconds*1e9) {
		t := time.Now()
		body(n)
		total += time.Since(t)
		ops += n
		if time.Since(t) < 50*time.Millisecond {
			n *= 2
		}
	}
	result("cpu", 100*(cpuSeconds()-c0)/time.Since(w0).Seconds(), "%")
	return float64(total.Nanoseconds()) / float64(ops)
}

// B3: spawn a goroutine and wait for it, serially.
func b3(seconds float64) {
	done := make(chan struct{})
	result("main", measure(func(n int) {
		for i := 0; i < n; i++ {
			go func() { done <- struct{}{} }()
			<-done
		}
	}, seconds), "ns/op")
}

// B5: a group of 1,000 goroutines, spawned then awaited (sync.WaitGroup).
func b5(seconds float64) {
	const tasks = 1000
	result("main", measure(func(n int) {
		for i := 0; i < n; i++ {
			var wg sync.WaitGroup
			wg.Add(tasks)
			for k := 0; k < tasks; k++ {
				go func() { wg.Done() }()
			}
			wg.Wait()
		}
	}, seconds)/tasks, "ns/task")
}

// B12: 100,000 goroutines sleeping 1 s: wall time and peak RSS.
func b12(smoke bool) {
	tasks := 100000
	if smoke {
		tasks = 1000
	}
	start := time.Now()
	var wg sync.WaitGroup
	wg.Add(tasks)
	for k := 0; k < tasks; k++ {
		go func() { time.Sleep(time.Second); wg.Done() }()
	}
	wg.Wait()
	result("main", time.Since(start).Seconds(), "s")
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	result("rss", float64(ru.Maxrss)/1024, "MiB")
}

// The B10 echo server: a goroutine per connection, 64-byte messages echoed back.
func serveEcho(fd int) {
	l, err := net.FileListener(os.NewFile(uintptr(fd), "listener"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "go-peer: listener:", err)
		os.Exit(1)
	}
	for {
		c, err := l.Accept()
		if err != nil {
			os.Exit(0)
		}
		go func(c net.Conn) {
			defer c.Close()
			buf := make([]byte, 64)
			for {
				if _, err := io.ReadFull(c, buf); err != nil {
					return
				}
				if _, err := c.Write(buf); err != nil {
					return
				}
			}
		}(c)
	}
}

func main() {
	args := os.Args[1:]
	if len(args) == 2 && args[0] == "serve-echo" {
		fd, _ := strconv.Atoi(args[1])
		serveEcho(fd)
		return
	}
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: go-peer BENCH go [--seconds S] [--smoke] | serve-echo FD")
		os.Exit(2)
	}
	seconds, smoke := 0.3, false
	for i := 2; i < len(args); i++ {
		switch args[i] {
		case "--seconds":
			seconds, _ = strconv.ParseFloat(args[i+1], 64)
			i++
		case "--cpus", "--param":
			i++
		case "--smoke":
			smoke = true
		}
	}
	if smoke {
		seconds = 0.01
	}
	_ = runtime.GOMAXPROCS(0)
	switch args[0] {
	case "B3":
		b3(seconds)
	case "B5":
		b5(seconds)
	case "B12":
		b12(smoke)
	default:
		fmt.Println("NA no Go version of", args[0])
		os.Exit(3)
	}
}
