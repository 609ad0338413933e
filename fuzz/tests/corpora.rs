//! The smoke run of `make test`: every committed input of `corpus/<target>/` (the seeds, and
//! every input a fuzzer found worth keeping, crashes included) through its target's checks,
//! then a short burst of cheap mutations of them — so a crash in the corpus fails the tests
//! without libFuzzer or a nightly toolchain. `make fuzz` is the real, coverage-guided run.

use std::path::Path;
use std::time::{Duration, Instant};

type Target = fn(&[u8]);

const TARGETS: [(&str, Target); 5] = [
    ("retry_after", recuo_fuzz::retry_after),
    ("rate_limit", recuo_fuzz::rate_limit),
    ("redaction", recuo_fuzz::redaction),
    ("who_answered", recuo_fuzz::who_answered),
    ("shared_file", recuo_fuzz::shared_file),
];

fn inputs(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus")
        .join(target);
    let mut found: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| {
            let path = entry.unwrap().path();
            let data = std::fs::read(&path).unwrap();
            (path.display().to_string(), data)
        })
        .collect();
    found.sort();
    found
}

/// A small xorshift generator: the mutations are the same on every run.
struct Mutator(u64);

impl Mutator {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    /// A copy of `seed` with a few bytes flipped, inserted, removed or duplicated.
    fn mutate(&mut self, seed: &[u8]) -> Vec<u8> {
        let mut out = seed.to_vec();
        for _ in 0..1 + self.below(4) {
            let at = self.below(out.len() + 1);
            match self.below(5) {
                0 if at < out.len() => out[at] ^= 1 << self.below(8),
                1 => out.insert(at, self.next() as u8),
                2 if at < out.len() => {
                    out.remove(at);
                }
                3 => {
                    let interesting = [b'0', b'9', b';', b'=', b'?', b'&', b'\r', b'\n', 0xc3];
                    out.insert(at, interesting[self.below(interesting.len())]);
                }
                _ => {
                    let end = (at + self.below(16)).min(out.len());
                    let copy = out[at..end].to_vec();
                    out.splice(at..at, copy);
                }
            }
        }
        out
    }
}

#[test]
fn every_committed_input_passes_its_target() {
    for (target, check) in TARGETS {
        let inputs = inputs(target);
        assert!(!inputs.is_empty(), "no corpus for {target}");
        for (name, data) in &inputs {
            let result = std::panic::catch_unwind(|| check(data));
            assert!(result.is_ok(), "{target}: {name} fails its checks");
        }
    }
}

#[test]
fn mutations_of_the_corpora_pass_their_targets() {
    let per_target = std::env::var("RECUO_FUZZ_SMOKE_MS")
        .ok()
        .and_then(|ms| ms.parse().ok())
        .map_or(Duration::from_millis(300), Duration::from_millis);
    for (target, check) in TARGETS {
        let seeds = inputs(target);
        let mut m = Mutator(0x9e37_79b9_7f4a_7c15);
        let until = Instant::now() + per_target;
        let mut runs = 0u64;
        while Instant::now() < until || runs < 100 {
            let (_, seed) = &seeds[m.below(seeds.len())];
            let input = m.mutate(seed);
            let result = std::panic::catch_unwind(|| check(&input));
            assert!(
                result.is_ok(),
                "{target}: the mutation {input:?} fails its checks"
            );
            runs += 1;
        }
    }
}
