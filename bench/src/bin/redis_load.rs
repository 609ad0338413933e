//! `redis_load URL KEY THREADS SECONDS`: what a user's acquire costs through recuo's own Redis
//! client — `THREADS` threads sharing one `recuo_redis::regulator(URL, KEY, 1 000 000/s,
//! burst 1)`, each calling `try_acquire` in a loop for `SECONDS` — for `make bench-redis`
//! (bench/redis/redis_bench.py). The rate is high enough that no acquire waits: each one is
//! the script's full path (read, reserve, write), as redis-benchmark sends it.
//!
//! Protocol with the caller, one line each: after opening the regulator and a warm-up of
//! 0.2 s in every thread (so that every thread's connection exists and the script is cached
//! on the server), it prints `warm` and waits for a line on stdin; the caller reads the
//! server's `INFO commandstats` then, and again after the run, to count the commands each
//! acquire sent. Then it runs and prints one JSON object: `acquires` (the `try_acquire` calls),
//! `refused` (a 1 000 000/s regulator refuses none: a refusal is a failed call, `try_acquire`
//! failing closed),
//! `seconds`, `per_s`, and the latencies `p50_us`, `p99_us`, `max_us`. An error opening the
//! regulator (a URL this build refuses) goes to stderr with exit status 2.

use std::io::BufRead;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use recuo::{Rate, Regulator};

/// Each thread's acquires until `stop`: (latencies in ns, refused).
fn run(regulator: &Regulator, start: &Barrier, length: Duration) -> (Vec<u64>, u64) {
    let mut latencies = Vec::with_capacity(1 << 16);
    let mut refused = 0;
    start.wait();
    let stop = Instant::now() + length;
    loop {
        let t0 = Instant::now();
        if t0 >= stop {
            break;
        }
        if regulator.try_acquire().is_err() {
            refused += 1;
        }
        latencies.push(u64::try_from(t0.elapsed().as_nanos()).unwrap_or(u64::MAX));
    }
    (latencies, refused)
}

/// Every thread runs for `length`, all starting together: (latencies in ns, refused).
fn phase(regulator: &Arc<Regulator>, threads: usize, length: Duration) -> (Vec<u64>, u64) {
    let start = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let (regulator, start) = (Arc::clone(regulator), Arc::clone(&start));
            std::thread::spawn(move || run(&regulator, &start, length))
        })
        .collect();
    let mut all = Vec::new();
    let mut refused = 0;
    for h in handles {
        let (latencies, r) = h.join().expect("a load thread panicked");
        all.extend(latencies);
        refused += r;
    }
    (all, refused)
}

fn quantile_us(sorted: &[u64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    // The nearest rank, as redis-benchmark's percentiles.
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1] as f64 / 1000.0
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [url, key, threads, seconds] = args.as_slice() else {
        eprintln!("usage: redis_load URL KEY THREADS SECONDS");
        std::process::exit(64);
    };
    let threads: usize = threads.parse().expect("THREADS is a whole number");
    let seconds: f64 = seconds.parse().expect("SECONDS is a number");
    let rate = Rate::per_second(1_000_000.0).expect("a positive rate");
    let regulator = match recuo_redis::regulator(url, key, rate, 1) {
        Ok(r) => Arc::new(r),
        Err(e) => {
            eprintln!("redis_load: {e}");
            std::process::exit(2);
        }
    };
    let (_, refused) = phase(&regulator, threads, Duration::from_millis(200));
    if refused > 0 {
        eprintln!("redis_load: {refused} acquires refused during the warm-up (calls failing)");
    }
    println!("warm");
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .expect("the caller's go-ahead on stdin");
    let began = Instant::now();
    let (mut latencies, refused) = phase(&regulator, threads, Duration::from_secs_f64(seconds));
    let elapsed = began.elapsed().as_secs_f64();
    latencies.sort_unstable();
    let acquires = latencies.len() as u64;
    println!(
        "{{\"threads\": {threads}, \"acquires\": {acquires}, \"refused\": {refused}, \
         \"seconds\": {elapsed:.4}, \"per_s\": {:.1}, \"p50_us\": {:.1}, \"p99_us\": {:.1}, \
         \"max_us\": {:.1}}}",
        acquires as f64 / elapsed,
        quantile_us(&latencies, 0.50),
        quantile_us(&latencies, 0.99),
        quantile_us(&latencies, 1.0),
    );
}
