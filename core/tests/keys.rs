//! Idempotency keys as SPEC §5 says: from the operating system's random source, never from a
//! seed, and never repeated by a forked child (issue 11).
#![allow(unsafe_code)]

use recuo::{Attempts, IdempotencyKey, JitterRng, ManualClock, Policy, Retry};

fn key_of_a_seeded_loop(seed: u64) -> String {
    let p = Policy::guide_b();
    let mut key = String::new();
    let _ = Retry::new(&p)
        .clock(ManualClock::new(0))
        .seed(seed)
        .call(|ctx| {
            key = ctx.idempotency_key().to_string();
            Ok::<(), ()>(())
        });
    key
}

#[test]
fn two_loops_with_one_seed_make_two_keys() {
    let (a, b) = (key_of_a_seeded_loop(7), key_of_a_seeded_loop(7));
    assert_eq!((a.len(), b.len()), (36, 36));
    assert_ne!(a, b);
    // The sans-IO machine too: the generator handed in is the jitter's, not the key's.
    let p = Policy::guide_b();
    let mut one = Attempts::new(&p);
    let mut two = Attempts::new(&p);
    let k1 = one.idempotency_key(&mut JitterRng::seeded(7));
    let k2 = two.idempotency_key(&mut JitterRng::seeded(7));
    assert_ne!(k1, k2);
    // A key injected from a seeded generator stays fixed, for tests that need one.
    assert_eq!(
        IdempotencyKey::generate(&mut JitterRng::seeded(7)),
        IdempotencyKey::generate(&mut JitterRng::seeded(7))
    );
}

#[test]
fn a_forked_child_never_repeats_its_parents_keys() {
    // Warm whatever could be cached before the fork.
    let before = IdempotencyKey::random();
    let mut fds = [0i32; 2];
    // SAFETY: pipe fills two descriptors.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: the child only makes keys (a system call, no allocation), writes them to the
    // pipe and leaves with _exit, touching nothing the other threads of the harness hold.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0);
    if pid == 0 {
        for _ in 0..2 {
            let k = IdempotencyKey::random();
            // SAFETY: writing 36 bytes from a live buffer to the pipe.
            unsafe { libc::write(fds[1], k.as_str().as_ptr().cast(), 36) };
        }
        // SAFETY: ends the child at once.
        unsafe { libc::_exit(0) };
    }
    // SAFETY: closing the parent's copy of the write end.
    unsafe { libc::close(fds[1]) };
    let parent: Vec<String> = (0..2)
        .map(|_| IdempotencyKey::random().to_string())
        .collect();
    let mut got = [0u8; 72];
    let mut filled = 0;
    while filled < got.len() {
        // SAFETY: reading into the unfilled rest of a live buffer.
        let n = unsafe {
            libc::read(
                fds[0],
                got[filled..].as_mut_ptr().cast(),
                got.len() - filled,
            )
        };
        assert!(n > 0, "the child wrote {filled} bytes");
        filled += n as usize;
    }
    let mut status = 0;
    // SAFETY: waiting for our own child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    unsafe { libc::close(fds[0]) };
    let child = [
        String::from_utf8(got[..36].to_vec()).unwrap(),
        String::from_utf8(got[36..].to_vec()).unwrap(),
    ];
    let mut all: Vec<&str> = parent.iter().map(String::as_str).collect();
    all.extend(child.iter().map(String::as_str));
    all.push(before.as_str());
    let distinct: std::collections::HashSet<&str> = all.iter().copied().collect();
    assert_eq!(distinct.len(), 5, "{all:?}");
}
