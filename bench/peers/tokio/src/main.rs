//! The Tokio peer of cio's benchmarks (bench/driver.py): tasks, a JoinSet-free group and the net
//! module, as a Tokio user would write them. Same command line as cio_bench:
//!
//!     tokio-peer BENCH tokio --cpus P --seconds S [--param N] [--smoke]   prints RESULT lines
//!     tokio-peer serve-echo FD          the echo server of B10 (FD: a listening socket)
//!     tokio-peer serve-http FD          the HTTP/1.1 server of B17: a minimal keep-alive responder on
//!                                       TcpListener (hyper, Debian's librust-hyper-dev, is not used)
//!
//! The runtime is Tokio's multi-thread one with one worker per CPU allowed (the driver places the
//! process with taskset for one/same).
use std::os::unix::io::FromRawFd;
use std::time::{Duration, Instant};

fn result(metric: &str, value: f64, unit: &str) {
    println!("RESULT {} {} {}", metric, value, unit);
}

fn rusage() -> libc::rusage {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    ru
}

fn cpu_seconds() -> f64 {
    let ru = rusage();
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

fn max_rss_mib() -> f64 {
    rusage().ru_maxrss as f64 / 1024.0
}

/// Calls body(n) with growing n until `seconds` are used (after a ~10 % warm-up); ns per unit of n.
async fn measure<F, Fut>(body: F, seconds: f64) -> f64
where
    F: Fn(u64) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let mut n: u64 = 1;
    let warm = Duration::from_secs_f64(seconds * 0.1);
    let start = Instant::now();
    while start.elapsed() < warm {
        body(n).await;
        n *= 2;
    }
    let (mut total, mut ops) = (Duration::ZERO, 0u64);
    let (c0, w0) = (cpu_seconds(), Instant::now());
    while total < Duration::from_secs_f64(seconds) {
        let t = Instant::now();
        body(n).await;
        let took = t.elapsed();
        total += took;
        ops += n;
        if took < Duration::from_millis(50) {
            n *= 2;
        }
    }
    result("cpu", 100.0 * (cpu_seconds() - c0) / w0.elapsed().as_secs_f64(), "%");
    total.as_nanos() as f64 / ops as f64
}

async fn b3(seconds: f64) {
    let ns = measure(|n| async move {
        for _ in 0..n {
            tokio::spawn(async {}).await.unwrap();
        }
    }, seconds).await;
    result("main", ns, "ns/op");
}

async fn b5(seconds: f64) {
    const TASKS: u64 = 1000;
    let ns = measure(|n| async move {
        for _ in 0..n {
            let handles: Vec<_> = (0..TASKS).map(|_| tokio::spawn(async {})).collect();
            for h in handles {
                h.await.unwrap();
            }
        }
    }, seconds).await;
    result("main", ns / TASKS as f64, "ns/task");
}

async fn b12(smoke: bool) {
    let tasks = if smoke { 1000 } else { 100_000 };
    let start = Instant::now();
    let handles: Vec<_> = (0..tasks)
        .map(|_| tokio::spawn(async { tokio::time::sleep(Duration::from_secs(1)).await }))
        .collect();
    for h in handles {
        h.await.unwrap();
    }
    result("main", start.elapsed().as_secs_f64(), "s");
    result("rss", max_rss_mib(), "MiB");
}

async fn serve_echo(fd: i32) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let std_listener = unsafe { std::net::TcpListener::from_raw_fd(fd) };
    std_listener.set_nonblocking(true).unwrap();
    let listener = tokio::net::TcpListener::from_std(std_listener).unwrap();
    loop {
        let (mut sock, _) = match listener.accept().await {
            Ok(x) => x,
            Err(_) => return,
        };
        tokio::spawn(async move {
            let mut buf = [0u8; 64];
            loop {
                if sock.read_exact(&mut buf).await.is_err() {
                    return;
                }
                if sock.write_all(&buf).await.is_err() {
                    return;
                }
            }
        });
    }
}

async fn serve_http(fd: i32) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    const RESPONSE: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 16\r\nConnection: keep-alive\r\n\r\nHello from cio!\n";
    let std_listener = unsafe { std::net::TcpListener::from_raw_fd(fd) };
    std_listener.set_nonblocking(true).unwrap();
    let listener = tokio::net::TcpListener::from_std(std_listener).unwrap();
    loop {
        let (mut sock, _) = match listener.accept().await {
            Ok(x) => x,
            Err(_) => return,
        };
        let _ = sock.set_nodelay(true);
        tokio::spawn(async move {
            let mut buf = vec![0u8; 8192];
            let mut have = 0usize;
            loop {
                let n = match sock.read(&mut buf[have..]).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => n,
                };
                have += n;
                let mut start = 0usize;
                while let Some(end) = buf[start..have].windows(4).position(|w| w == b"\r\n\r\n") {
                    if sock.write_all(RESPONSE).await.is_err() {
                        return;
                    }
                    start += end + 4;
                }
                buf.copy_within(start..have, 0);
                have -= start;
                if have == buf.len() {
                    return;
                }
            }
        });
    }
}

/// B19: `chains` tasks, each sleeping 100 times in a row (durations 1-1000 µs from the
/// formula every contender uses); ns of wall time per timer.
async fn b19(param: usize, smoke: bool) {
    let (chains, per) = if smoke { (100usize, 10usize) } else { (if param > 0 { param } else { 10000 }, 100usize) };
    let (start, c0) = (Instant::now(), cpu_seconds());
    let handles: Vec<_> = (0..chains)
        .map(|c| {
            tokio::spawn(async move {
                for k in 0..per {
                    let us = ((c as u32).wrapping_mul(2654435761).wrapping_add((k as u32).wrapping_mul(40503)) % 1000) + 1;
                    tokio::time::sleep(Duration::from_micros(us as u64)).await;
                }
            })
        })
        .collect();
    for h in handles {
        h.await.unwrap();
    }
    result("cpu", 100.0 * (cpu_seconds() - c0) / start.elapsed().as_secs_f64(), "%");
    result("main", start.elapsed().as_nanos() as f64 / (per * chains) as f64, "ns/timer");
    result("timers", (per * chains) as f64, "n");
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    if args.len() == 2 && args[0] == "serve-http" {
        let fd: i32 = args[1].parse().unwrap();
        rt.block_on(serve_http(fd));
        return;
    }
    if args.len() == 2 && args[0] == "serve-echo" {
        let fd: i32 = args[1].parse().unwrap();
        rt.block_on(serve_echo(fd));
        return;
    }
    if args.len() < 2 {
        eprintln!("usage: tokio-peer BENCH tokio [--seconds S] [--smoke] | serve-echo FD");
        std::process::exit(2);
    }
    let (mut seconds, mut smoke, mut param) = (0.3f64, false, 0usize);
    let mut i = 2;
    while i < args.len() {
        match args[i].as_str() {
            "--seconds" => {
                seconds = args[i + 1].parse().unwrap();
                i += 1;
            }
            "--param" => {
                param = args[i + 1].parse().unwrap_or(0);
                i += 1;
            }
            "--cpus" => i += 1,
            "--smoke" => smoke = true,
            _ => {}
        }
        i += 1;
    }
    if smoke {
        seconds = 0.01;
    }
    // The measuring code runs as a task on a worker (as cio's Evented runs it on a fiber of a loop),
    // not on the thread that blocks on the runtime.
    match args[0].as_str() {
        "B3" => rt.block_on(async move { tokio::spawn(b3(seconds)).await.unwrap() }),
        "B5" => rt.block_on(async move { tokio::spawn(b5(seconds)).await.unwrap() }),
        "B12" => rt.block_on(async move { tokio::spawn(b12(smoke)).await.unwrap() }),
        "B19" => rt.block_on(async move { tokio::spawn(b19(param, smoke)).await.unwrap() }),
        other => {
            println!("NA no Tokio version of {}", other);
            std::process::exit(3);
        }
    }
}
