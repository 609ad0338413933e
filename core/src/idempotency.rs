//! Idempotency keys (SPEC §5): one UUID v4 per operation, the same on every attempt.

use std::fmt;

use rand::RngCore;

/// A UUID v4, created once per operation and sent with every attempt of it.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct IdempotencyKey([u8; 36]);

impl IdempotencyKey {
    /// A new random key (122 random bits) drawn from `rng`.
    pub fn generate<R: RngCore + ?Sized>(rng: &mut R) -> Self {
        let mut b = [0u8; 16];
        rng.fill_bytes(&mut b);
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

    /// A new key from the operating system's random source: never from a seed, and never
    /// the same in a parent and a child after `fork()` (each call asks the kernel).
    pub fn random() -> Self {
        use rand::TryRngCore;
        Self::generate(&mut rand::rngs::OsRng.unwrap_err())
    }

    /// The key as text: 36 lower-case characters, `xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx`.
    pub fn as_str(&self) -> &str {
        // Only ASCII hex digits and dashes are ever written.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
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
