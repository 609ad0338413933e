//! Idempotency keys: one UUID v4 per operation, the same on every attempt, drawn
//! from the operating system's random source — never from a seed or the jitter's generator,
//! so that no two operations share a key, not even in processes forked from one another.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use rand::rngs::OsRng;
use rand::{RngCore, TryRngCore};

/// A UUID v4, created once per operation and sent with every attempt of it.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct IdempotencyKey([u8; 36]);

impl IdempotencyKey {
    /// A new key of 122 random bits from the operating system (`getrandom`): what every loop
    /// uses. Costs one system call and no allocation; a forked child never repeats its
    /// parent's keys, since nothing is kept in the process to be copied.
    ///
    /// Should the system refuse (it does not on any supported kernel), the key comes from
    /// the process id, the monotonic clock and a counter, mixed by the standard library's
    /// randomly keyed hasher: still distinct per process and per call, never a seed's.
    pub fn random() -> Self {
        let mut b = [0u8; 16];
        if OsRng.try_fill_bytes(&mut b).is_err() {
            b = fallback_bytes();
        }
        Self::from_bytes(b)
    }

    /// A key drawn from `rng`: for tests that inject a fixed key (a seeded generator gives
    /// the same key every run). Loops never use it: they call [`IdempotencyKey::random`].
    pub fn generate<R: RngCore + ?Sized>(rng: &mut R) -> Self {
        let mut b = [0u8; 16];
        rng.fill_bytes(&mut b);
        Self::from_bytes(b)
    }

    /// 16 bytes as a UUID v4 (the version and variant bits set).
    fn from_bytes(mut b: [u8; 16]) -> Self {
        b[6] = (b[6] & 0x0f) | 0x40; // version 4
        b[8] = (b[8] & 0x3f) | 0x80; // RFC 4122 variant
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut text = [0u8; 36];
        let mut i = 0;
        for (j, byte) in b.iter().enumerate() {
            if matches!(j, 4 | 6 | 8 | 10) {
                text[i] = b'-';
                i += 1;
            }
            text[i] = HEX[usize::from(byte >> 4)];
            text[i + 1] = HEX[usize::from(byte & 0xf)];
            i += 2;
        }
        IdempotencyKey(text)
    }

    /// The key as text: 36 lower-case characters, `xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx`.
    pub fn as_str(&self) -> &str {
        // Only ASCII hex digits and dashes are ever written.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

/// 16 bytes unique to this process and call, for when the system's random source fails.
fn fallback_bytes() -> [u8; 16] {
    use std::hash::{BuildHasher, Hasher};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let state = std::collections::hash_map::RandomState::new();
    let mut out = [0u8; 16];
    for (i, half) in out.chunks_mut(8).enumerate() {
        let mut h = state.build_hasher();
        h.write_u32(std::process::id());
        h.write_u64(crate::clock::monotonic_ns());
        h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
        h.write_usize(i);
        half.copy_from_slice(&h.finish().to_le_bytes());
    }
    out
}

impl fmt::Display for IdempotencyKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for IdempotencyKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "IdempotencyKey({})", self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::JitterRng;

    fn is_uuid_v4(s: &str) -> bool {
        let b = s.as_bytes();
        b.len() == 36
            && b.iter().enumerate().all(|(i, c)| match i {
                8 | 13 | 18 | 23 => *c == b'-',
                14 => *c == b'4',
                19 => matches!(c, b'8' | b'9' | b'a' | b'b'),
                _ => c.is_ascii_digit() || (b'a'..=b'f').contains(c),
            })
    }

    #[test]
    fn random_keys_are_uuid_v4_and_never_repeat() {
        let mut seen = std::collections::HashSet::new();
        for _ in 0..10_000 {
            let k = IdempotencyKey::random();
            assert!(is_uuid_v4(k.as_str()), "{k}");
            assert!(seen.insert(k));
        }
        let f = IdempotencyKey::from_bytes(fallback_bytes());
        assert!(is_uuid_v4(f.as_str()) && !seen.contains(&f));
        assert_ne!(fallback_bytes(), fallback_bytes());
    }

    #[test]
    fn a_seeded_generator_injects_the_same_key() {
        let a = IdempotencyKey::generate(&mut JitterRng::seeded(7));
        let b = IdempotencyKey::generate(&mut JitterRng::seeded(7));
        assert_eq!(a, b);
        assert!(is_uuid_v4(a.as_str()));
    }

    #[test]
    fn keys_are_uuid_v4() {
        let mut rng = JitterRng::seeded(3);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..1000 {
            let k = IdempotencyKey::generate(&mut rng);
            let s = k.as_str();
            assert_eq!(s.len(), 36);
            let parts: Vec<&str> = s.split('-').collect();
            assert_eq!(
                parts.iter().map(|p| p.len()).collect::<Vec<_>>(),
                [8, 4, 4, 4, 12]
            );
            assert!(parts[2].starts_with('4'), "{s}");
            assert!(
                matches!(parts[3].as_bytes()[0], b'8' | b'9' | b'a' | b'b'),
                "{s}"
            );
            assert!(s
                .bytes()
                .all(|b| b == b'-' || b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
            assert!(seen.insert(s.to_string()));
        }
    }
}
