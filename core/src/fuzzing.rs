//! Entry points for the fuzz targets of `fuzz/` (the `fuzzing` feature): inputs a stranger
//! controls reach code that is not public otherwise — a shared file's contents (a Redis
//! server's replies are read by the `redis` crate, in `recuo-redis`). Not for applications; nothing here is stable.

use std::path::PathBuf;

/// A file of this process for [`shared_file`], in the temporary directory.
fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("recuo-fuzz-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    dir.join("state")
}

/// Writes `data` (after a first byte that picks the kind of state and whether to fit the
/// rest to the state's size) as a shared file, opens it as a regulator or a budget, and
/// uses it: every open either fails with an error or gives a state whose answers stay within
/// what its settings allow. Panics only when that promise breaks.
pub fn shared_file(data: &[u8]) {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;

    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let path = scratch();
    let _ = std::fs::remove_file(&path);
    let regulator = mode & 1 == 0;
    let size = if regulator {
        std::mem::size_of::<crate::regulator::RegulatorState>()
    } else {
        std::mem::size_of::<crate::budget::BudgetState>()
    };
    let mut bytes = rest.to_vec();
    if mode & 2 == 0 {
        bytes.resize(size, 0);
    }
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .and_then(|mut f| f.write_all(&bytes));
    if written.is_err() {
        return;
    }
    const S: u64 = 1_000_000_000;
    let now = 1_000 * S;
    if regulator {
        let rate: crate::Rate = "10/s".parse().unwrap_or_else(|_| unreachable!());
        let interval = rate.interval_ns();
        let Ok(r) = crate::Regulator::shared(&path, rate, 3) else {
            return;
        };
        assert_eq!(r.burst(), 3);
        let slowest = interval.saturating_mul(64);
        let current = r.rate().interval_ns();
        assert!((interval..=slowest).contains(&current), "{current}");
        for i in 0..4 {
            let _ = r.reserve_at(now + i * interval, 1, 0);
        }
        r.on_throttled();
        r.on_success();
        let current = r.rate().interval_ns();
        assert!((interval..=slowest).contains(&current), "{current}");
        // Whatever the file holds, a start waits at most the queue's longest wait, or is
        // refused as beyond it.
        let longest = interval.saturating_mul(crate::regulator::MAX_QUEUED_STARTS);
        match r.reserve_at(now, 1, u64::MAX) {
            Ok(wait) => assert!(wait <= longest, "a wait of {wait} ns"),
            Err(Err(crate::RegulatorError::QueueFull {
                wait_ns,
                longest_ns,
            })) => {
                assert_eq!(longest_ns, longest);
                assert!(wait_ns > longest, "{wait_ns}");
            }
            Err(e) => panic!("{e:?}"),
        }
    } else {
        let Ok(b) = crate::RetryBudget::shared(&path, 0.1, 1.0, 10) else {
            return;
        };
        for i in 0..3 {
            b.record_request_at(now + i * S);
            let _ = b.try_withdraw_at(now + i * S);
        }
        let _ = b.counts_at(now);
        let _ = b.counts_at(u64::MAX);
        b.record_request_at(u64::MAX);
        let _ = b.try_withdraw_at(u64::MAX);
    }
}
