//! The random generator jitter draws from: seedable, so every test can be exact.

use rand::distr::uniform::{UniformInt, UniformSampler};
use rand::rngs::StdRng;
use rand::{RngCore, SeedableRng};

/// A random generator for jitter.
///
/// [`JitterRng::seeded`] gives the same sequence for the same seed on every platform and in
/// every binding built from the same recuo release; [`JitterRng::from_entropy`] seeds from
/// the operating system. Any [`RngCore`] can be used wherever the core asks for randomness;
/// this type is what the bindings hand in.
#[derive(Debug, Clone)]
pub struct JitterRng(StdRng);

impl JitterRng {
    /// A generator whose sequence is fixed by `seed`.
    pub fn seeded(seed: u64) -> Self {
        JitterRng(StdRng::seed_from_u64(seed))
    }

    /// A generator seeded from the thread's own generator, which the operating system seeds
    /// (and reseeds) — so making one costs no system call.
    pub fn from_entropy() -> Self {
        JitterRng(StdRng::from_rng(&mut rand::rng()))
    }

    /// `Some(seed)` gives [`JitterRng::seeded`], `None` gives [`JitterRng::from_entropy`].
    pub fn from_seed_option(seed: Option<u64>) -> Self {
        seed.map_or_else(Self::from_entropy, Self::seeded)
    }
}

impl RngCore for JitterRng {
    fn next_u32(&mut self) -> u32 {
        self.0.next_u32()
    }
    fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }
    fn fill_bytes(&mut self, dst: &mut [u8]) {
        self.0.fill_bytes(dst)
    }
}

/// A [`JitterRng`] created on first use, so that a loop whose first attempt succeeds never
/// pays for seeding (reading the operating system's entropy costs a system call).
#[derive(Debug, Clone, Default)]
pub struct LazyJitterRng {
    seed: Option<u64>,
    rng: Option<JitterRng>,
}

impl LazyJitterRng {
    /// A generator that will be [`JitterRng::seeded`] with `seed` when `Some`, or seeded from
    /// the operating system when `None` — at the first draw, not before.
    pub const fn new(seed: Option<u64>) -> Self {
        LazyJitterRng { seed, rng: None }
    }

    /// Seeds the generator now if it is not yet: a copy made after this draws what the
    /// original draws.
    pub(crate) fn ready(&mut self) {
        self.get();
    }

    fn get(&mut self) -> &mut JitterRng {
        let seed = self.seed;
        self.rng
            .get_or_insert_with(|| JitterRng::from_seed_option(seed))
    }
}

impl RngCore for LazyJitterRng {
    fn next_u32(&mut self) -> u32 {
        self.get().next_u32()
    }
    fn next_u64(&mut self) -> u64 {
        self.get().next_u64()
    }
    fn fill_bytes(&mut self, dst: &mut [u8]) {
        self.get().fill_bytes(dst)
    }
}

/// A uniform draw from `lo..=hi`; `lo` when `hi <= lo`.
///
/// The draw `rng.random_range(lo..=hi)` makes, without its range argument and its checks:
/// the same sampler on the same bounds, so the same value from the same generator.
#[inline]
pub(crate) fn uniform_inclusive<R: RngCore + ?Sized>(rng: &mut R, lo: u64, hi: u64) -> u64 {
    if hi <= lo {
        lo
    } else {
        UniformInt::<u64>::sample_single_inclusive(lo, hi, rng).unwrap_or(lo)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_draws_as_random_range() {
        use rand::Rng;
        let bounds = [
            (0, 1),
            (0, 1000),
            (5, 8000),
            (1, u64::MAX),
            (0, u64::MAX - 1),
        ];
        let mut a = JitterRng::seeded(18);
        let mut b = JitterRng::seeded(18);
        for _ in 0..200 {
            for (lo, hi) in bounds {
                assert_eq!(uniform_inclusive(&mut a, lo, hi), b.random_range(lo..=hi));
            }
        }
        assert_eq!(
            uniform_inclusive(&mut a, 0, u64::MAX),
            b.random_range(0..=u64::MAX)
        );
    }

    #[test]
    fn same_seed_same_sequence() {
        let mut a = JitterRng::seeded(7);
        let mut b = JitterRng::seeded(7);
        let xs: Vec<u64> = (0..8).map(|_| uniform_inclusive(&mut a, 0, 1000)).collect();
        let ys: Vec<u64> = (0..8).map(|_| uniform_inclusive(&mut b, 0, 1000)).collect();
        assert_eq!(xs, ys);
        assert!(xs.iter().all(|&x| x <= 1000));
    }

    #[test]
    fn lazy_generator_draws_like_the_seeded_one() {
        let mut lazy = LazyJitterRng::new(Some(11));
        assert!(lazy.rng.is_none());
        let mut eager = JitterRng::seeded(11);
        assert_eq!(lazy.next_u64(), eager.next_u64());
        assert!(lazy.rng.is_some());
    }

    #[test]
    fn empty_range_gives_its_low_end() {
        let mut r = JitterRng::seeded(1);
        assert_eq!(uniform_inclusive(&mut r, 5, 5), 5);
        assert_eq!(uniform_inclusive(&mut r, 9, 3), 9);
        let a = uniform_inclusive(&mut r, 0, u64::MAX);
        let b = uniform_inclusive(&mut r, 0, u64::MAX);
        assert_ne!(a, b);
    }
}
