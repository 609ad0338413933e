//! The shared file cannot be turned against its users (SPEC §9; issue 11): symbolic links,
//! files of another user or writable by others, junk and corrupt values are refused or
//! clamped; a cancelled acquire gives its slot back.
#![allow(unsafe_code)]

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::PathBuf;
use std::time::Duration;

use recuo::regulator::MAX_QUEUED_STARTS;
use recuo::{monotonic_ns, CancelToken, Regulator, RegulatorError, RetryBudget};

const S: u64 = 1_000_000_000;

/// A fresh private directory for one test.
fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("recuo-shared-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn one_per_second(path: &std::path::Path) -> Result<Regulator, String> {
    Regulator::shared(path, "1/s".parse().unwrap(), 1).map_err(|e| e.to_string())
}

/// Writes `value` at byte `offset` of the file.
fn poke(path: &std::path::Path, offset: u64, value: u64) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.write_all_at(&value.to_le_bytes(), offset).unwrap();
}

#[test]
fn a_new_file_is_private_and_its_space_reserved() {
    let path = dir("new").join("reg");
    let _r = one_per_second(&path).unwrap();
    let meta = std::fs::metadata(&path).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert_eq!(meta.len(), 48);
    // Blocks are allocated (posix_fallocate), not a sparse hole a full disk could refuse.
    assert!(meta.blocks() > 0, "{} blocks", meta.blocks());
}

#[test]
fn symbolic_links_are_never_followed() {
    let d = dir("links");
    let victim = d.join("victim");
    std::fs::write(&victim, [7u8; 48]).unwrap();
    std::os::unix::fs::symlink(&victim, d.join("link")).unwrap();
    let e = one_per_second(&d.join("link")).unwrap_err();
    assert_eq!(
        e,
        format!(
            "shared state: refusing {}: it is a symbolic link (a shared file is never opened \
             through one)",
            d.join("link").display()
        )
    );
    assert_eq!(std::fs::read(&victim).unwrap(), [7u8; 48]);
    // A dangling link does not create its target.
    std::os::unix::fs::symlink(d.join("target"), d.join("dangling")).unwrap();
    assert!(one_per_second(&d.join("dangling")).is_err());
    assert!(!d.join("target").exists());
}

#[test]
fn a_file_others_may_write_is_refused() {
    let path = dir("mode").join("reg");
    drop(one_per_second(&path).unwrap());
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
    assert_eq!(
        one_per_second(&path).unwrap_err(),
        format!(
            "shared state: refusing {}: its group or others may write it (mode 666; make it \
             0600)",
            path.display()
        )
    );
}

#[test]
fn a_file_of_another_user_is_refused() {
    // SAFETY: geteuid has no preconditions.
    let euid = unsafe { libc::geteuid() };
    let path = dir("owner").join("reg");
    drop(one_per_second(&path).unwrap());
    if euid == 0 {
        std::os::unix::fs::chown(&path, Some(65534), None).unwrap();
        assert_eq!(
            one_per_second(&path).unwrap_err(),
            format!(
                "shared state: refusing {}: it belongs to user 65534, not to this process's \
                 user 0",
                path.display()
            )
        );
    } else {
        // Not root: a file of root's cannot even be opened for writing.
        assert!(one_per_second(std::path::Path::new("/etc/hostname")).is_err());
    }
}

#[test]
fn junk_is_refused_and_left_as_it_was() {
    let d = dir("junk");
    let junk: Vec<u8> = (1..=48).collect();
    std::fs::write(d.join("reg"), &junk).unwrap();
    std::fs::set_permissions(d.join("reg"), std::fs::Permissions::from_mode(0o600)).unwrap();
    assert_eq!(
        one_per_second(&d.join("reg")).unwrap_err(),
        format!(
            "shared state: {} does not hold a recuo shared state (it lacks recuo's mark); it is \
             refused, never set up again over what it holds — remove it if it is yours",
            d.join("reg").display()
        )
    );
    assert_eq!(std::fs::read(d.join("reg")).unwrap(), junk);
    // All zeros is a set-up that never finished: it is set up.
    std::fs::write(d.join("zeros"), [0u8; 48]).unwrap();
    std::fs::set_permissions(d.join("zeros"), std::fs::Permissions::from_mode(0o600)).unwrap();
    assert!(one_per_second(&d.join("zeros")).is_ok());
}

#[test]
fn a_zero_current_interval_does_not_lift_the_limit() {
    let path = dir("zero-interval").join("reg");
    let r = one_per_second(&path).unwrap();
    // current_interval_ns sits at byte 32 (after the header, interval, burst, adaptive).
    poke(&path, 32, 0);
    let now = 1_000 * S;
    let allowed = (0..100_000)
        .filter(|_| r.try_acquire_at(now, 1).is_ok())
        .count();
    assert_eq!(allowed, 1);
    assert_eq!(r.rate().interval_ns(), S);
    // A second process opening the file sees the same clamp.
    let again = one_per_second(&path).unwrap();
    assert_eq!(again.rate().interval_ns(), S);
}

#[test]
fn a_huge_arrival_time_is_clamped_and_refused_as_beyond_the_queue() {
    let path = dir("huge-tat").join("reg");
    let r = one_per_second(&path).unwrap();
    // tat_ns sits at byte 40.
    poke(&path, 40, u64::MAX);
    let now = 1_000 * S;
    // Clamped to the furthest the settings allow (4096 + 64 intervals ahead for a burst
    // of 1): refused as beyond the queue, never let through early, and the lock-out ends.
    match r.reserve_at(now, 1, u64::MAX) {
        Err(Err(RegulatorError::QueueFull {
            wait_ns,
            longest_ns,
        })) => {
            assert_eq!(longest_ns, MAX_QUEUED_STARTS * S);
            assert_eq!(wait_ns, (MAX_QUEUED_STARTS + 64) * S);
        }
        other => panic!("{other:?}"),
    }
    let later = now + 64 * S;
    assert_eq!(
        r.reserve_at(later, 1, u64::MAX).unwrap(),
        MAX_QUEUED_STARTS * S
    );
    assert!(r.reserve_at(later, 1, u64::MAX).is_err());
    assert_eq!(MAX_QUEUED_STARTS, 4096);
}

#[test]
fn budget_counts_near_the_top_saturate() {
    let path = dir("budget").join("budget");
    let b = RetryBudget::shared(&path, 0.1, 1.0, 10).unwrap();
    let now = 1_000 * S;
    let top = u64::from(u32::MAX);
    // Bucket 1000 % 10 = 0 starts at byte 40: requests, then retries, each the second + 1
    // in the high 32 bits and the count in the low ones.
    let word = |second: u64, count: u64| (second + 1) << 32 | count;
    poke(&path, 40, word(1_000, top));
    poke(&path, 48, word(1_000, 5));
    assert!(b.try_withdraw_at(now));
    b.record_request_at(now);
    assert_eq!(b.counts_at(now), (top, 6));
    poke(&path, 48, word(1_000, top));
    assert!(
        !b.try_withdraw_at(now),
        "4.3e8 retries allowed, 4.3e9 taken"
    );
    assert_eq!(b.counts_at(now), (top, top));
    // Another bucket of the window near the top too: the sums add up without overflow.
    poke(&path, 56, word(1_001, top));
    poke(&path, 64, word(1_001, top));
    assert_eq!(b.counts_at(now + S), (2 * top, 2 * top));
    // A count of a second outside the window is never counted.
    assert_eq!(b.counts_at(now + 10 * S), (top, top));
    // A ratio read from the file is never believed: the settings are this process's.
    poke(&path, 16, u64::MAX);
    poke(&path, 24, u64::MAX);
    let fresh = 5_000 * S;
    b.record_request_at(fresh);
    let granted = (0..100).filter(|_| b.try_withdraw_at(fresh)).count();
    assert_eq!(granted, 10);
}

#[test]
fn a_cancelled_acquire_gives_its_slot_back() {
    for shared in [false, true] {
        let path = dir(&format!("give-back-{shared}")).join("reg");
        let rate = "1/min".parse().unwrap();
        let r = if shared {
            Regulator::shared(&path, rate, 1).unwrap()
        } else {
            Regulator::new(rate, 1).unwrap()
        };
        let cancel = CancelToken::new();
        assert!(r.acquire(1, &cancel).unwrap());
        let c = cancel.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(30));
            c.cancel();
        });
        assert!(!r.acquire(1, &cancel).unwrap());
        t.join().unwrap();
        // The next start waits what is left of the first interval, not two intervals.
        let wait = r.reserve_now(1, 0).unwrap_err().unwrap();
        assert!(
            wait <= 60 * S && wait > 59 * S,
            "shared {shared}: the next wait is {wait} ns"
        );
    }
}

#[test]
fn a_slot_given_back_behind_another_pushes_by_one_interval_at_most() {
    let r = Regulator::new("1/min".parse().unwrap(), 1).unwrap();
    let now = monotonic_ns();
    assert_eq!(r.reserve_at(now, 1, 0).unwrap(), 0);
    let a = r.reserve_start(1, u64::MAX).unwrap();
    let b = r.reserve_start(1, u64::MAX).unwrap();
    assert!(a.wait_ns() <= 60 * S && b.wait_ns() <= 120 * S);
    // A cannot be returned (B is reserved behind it): it stays spent, one interval.
    assert!(!r.give_back(a));
    // B, the last, can: the next start comes right after A, as if B never asked.
    assert!(r.give_back(b));
    assert!(!r.give_back(b), "a reservation is given back once");
    let c = r.reserve_start(1, u64::MAX).unwrap();
    assert!(c.wait_ns() <= 120 * S && c.wait_ns() > 119 * S, "{c:?}");
    // Repeated cancellations of the last reservation never push the next start out.
    for _ in 0..100 {
        let d = r.reserve_start(1, u64::MAX).unwrap();
        assert!(r.give_back(d));
    }
    let e = r.reserve_start(1, u64::MAX).unwrap();
    assert!(e.wait_ns() <= 180 * S && e.wait_ns() > 179 * S, "{e:?}");
}
