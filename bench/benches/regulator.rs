//! `Regulator::try_acquire` beside governor's direct rate limiter `check()`, in one run: one
//! thread, and two threads contending for the same limiter. Both are set so that nearly
//! every call is refused (the common case under load: many callers, few slots), and both
//! read the clock on every call (on this kind of machine, most of the cost).

use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use governor::{Quota, RateLimiter};
use recuo_bench::{sides, Side};

fn single_thread(c: &mut Criterion) {
    let mut g = c.benchmark_group("try_acquire/1 thread");
    let recuo = recuo::Regulator::new("100/s".parse().unwrap(), 10).unwrap();
    let governor = RateLimiter::direct(
        Quota::per_second(NonZeroU32::new(100).unwrap()).allow_burst(NonZeroU32::new(10).unwrap()),
    );
    for side in sides() {
        match side {
            Side::Recuo => g.bench_function("recuo", |b| {
                b.iter(|| std::hint::black_box(recuo.try_acquire().is_ok()))
            }),
            Side::Peer => g.bench_function("governor", |b| {
                b.iter(|| std::hint::black_box(governor.check().is_ok()))
            }),
        };
    }
    g.finish();
}

/// Times `iters` calls on this thread while a second thread hammers the same limiter.
fn contended(iters: u64, call: Arc<dyn Fn() -> bool + Send + Sync>) -> Duration {
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let other = {
        let (stop, call) = (stop.clone(), call.clone());
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                std::hint::black_box(call());
            }
        })
    };
    let start = Instant::now();
    for _ in 0..iters {
        std::hint::black_box(call());
    }
    let elapsed = start.elapsed();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let _ = other.join();
    elapsed
}

fn two_threads(c: &mut Criterion) {
    let mut g = c.benchmark_group("try_acquire/2 threads");
    let recuo = Arc::new(recuo::Regulator::new("100/s".parse().unwrap(), 10).unwrap());
    let governor = Arc::new(RateLimiter::direct(
        Quota::per_second(NonZeroU32::new(100).unwrap()).allow_burst(NonZeroU32::new(10).unwrap()),
    ));
    for side in sides() {
        match side {
            Side::Recuo => g.bench_function("recuo", |b| {
                b.iter_custom(|iters| {
                    let r = recuo.clone();
                    contended(iters, Arc::new(move || r.try_acquire().is_ok()))
                })
            }),
            Side::Peer => g.bench_function("governor", |b| {
                b.iter_custom(|iters| {
                    let l = governor.clone();
                    contended(iters, Arc::new(move || l.check().is_ok()))
                })
            }),
        };
    }
    g.finish();
}

criterion_group!(benches, single_thread, two_threads);
criterion_main!(benches);
