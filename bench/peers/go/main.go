// The Go peer of cio's benchmarks (bench/driver.py): goroutines, channels and the net package, as a
// Go user would write them. Same command line as cio_bench:
//
//	go-peer BENCH go --cpus P --seconds S [--param N] [--smoke]   prints RESULT lines
//	go-peer serve-echo FD                                          the echo server of B10 (FD: a listening socket)
//	go-peer serve-http FD                                          the net/http server of B17
//
// CPU placement is the driver's (taskset for one/same); GOMAXPROCS follows the CPUs allowed.
package main

import (
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
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

func fileListener(fd int) net.Listener {
	l, err := net.FileListener(os.NewFile(uintptr(fd), "listener"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "go-peer: listener:", err)
		os.Exit(1)
	}
	return l
}

// The B17 server: net/http, keep-alive, GET / answers a 16-byte body (net/http adds its Date and
// Content-Type headers, as it does for every Go user).
func serveHTTP(fd int) {
	hello := []byte("Hello from cio!\n")
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "16")
		w.Write(hello)
	})
	http.Serve(fileListener(fd), h)
	os.Exit(0)
}

// B19: `chains` goroutines, each sleeping 100 times in a row for durations from a
// fixed sequence (1-1000 µs, the same in every peer); ns of wall time per timer.
func b19(param int, smoke bool) {
	chains, per := param, 100
	if chains <= 0 {
		chains = 10000
	}
	if smoke {
		chains, per = 100, 10
	}
	start, c0 := time.Now(), cpuSeconds()
	var wg sync.WaitGroup
	wg.Add(chains)
	for c := 0; c < chains; c++ {
		go func(c int) {
			for k := 0; k < per; k++ {
				time.Sleep(time.Duration(timerUs(c, k)) * time.Microsecond)
			}
			wg.Done()
		}(c)
	}
	wg.Wait()
	result("cpu", 100*(cpuSeconds()-c0)/time.Since(start).Seconds(), "%")
	result("main", float64(time.Since(start).Nanoseconds())/float64(per*chains), "ns/timer")
	result("timers", float64(per*chains), "n")
}

// The duration of chain c's k-th timer, in µs (1..1000): the same formula in every B19 contender.
func timerUs(c, k int) int {
	return int((uint32(c)*2654435761+uint32(k)*40503)%1000) + 1
}

// B18: copies the tree SRC to DST (filepath.WalkDir; directories made in walk order, each file
// copied by its own goroutine, 16 at a time, with io.Copy: copy_file_range under it on Linux,
// mode and times kept); ns of wall time per file.
func b18(src, dst string) {
	start, c0 := time.Now(), cpuSeconds()
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	files := 0
	var failed error
	var mu sync.Mutex
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(to, info.Mode().Perm())
		}
		files++
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := copyFile(path, to, info); err != nil {
				mu.Lock()
				failed = err
				mu.Unlock()
			}
		}()
		return nil
	})
	wg.Wait()
	if err == nil {
		err = failed
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "go-peer: B18:", err)
		os.Exit(1)
	}
	result("cpu", 100*(cpuSeconds()-c0)/time.Since(start).Seconds(), "%")
	result("main", float64(time.Since(start).Nanoseconds())/float64(files), "ns/file")
	result("files", float64(files), "n")
}

func copyFile(from, to string, info fs.FileInfo) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, info.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chtimes(to, info.ModTime(), info.ModTime())
}

func main() {
	args := os.Args[1:]
	if len(args) == 2 && args[0] == "serve-http" {
		fd, _ := strconv.Atoi(args[1])
		serveHTTP(fd)
		return
	}
	if len(args) == 3 && args[0] == "B18" { // B18 go SRC DST (run by cio_bench, which made SRC)
		b18(args[1], args[2])
		return
	}
	if len(args) == 2 && args[0] == "serve-echo" {
		fd, _ := strconv.Atoi(args[1])
		serveEcho(fd)
		return
	}
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: go-peer BENCH go [--seconds S] [--smoke] | serve-echo FD")
		os.Exit(2)
	}
	seconds, smoke, param := 0.3, false, 0
	for i := 2; i < len(args); i++ {
		switch args[i] {
		case "--seconds":
			seconds, _ = strconv.ParseFloat(args[i+1], 64)
			i++
		case "--param":
			param, _ = strconv.Atoi(args[i+1])
			i++
		case "--cpus":
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
	case "B19":
		b19(param, smoke)
	default:
		fmt.Println("NA no Go version of", args[0])
		os.Exit(3)
	}
}
