//! SHA-256 (the `sha2` crate) for cache keys and file checksums: stable
//! across Rust versions and platforms (unlike `std`'s hasher), and
//! collision-resistant, since a key that matched the wrong source would run
//! stale machine code.

use std::fmt;

use sha2::{Digest, Sha256};

/// Bytes of a [`CacheKey`]: 128 bits.
const KEY_BYTES: usize = 16;

/// The key of a cached compiled loop: the first 128 bits of a SHA-256 over
/// everything the machine code depends on. Formats (`{}` or `{:x}`, any width)
/// as 32 lowercase hex digits, for file names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CacheKey([u8; KEY_BYTES]);

impl fmt::LowerHex for CacheKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

impl fmt::Display for CacheKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::LowerHex::fmt(self, f)
    }
}

/// The key for `parts` (the source, the compiler and its options, op2's
/// version...). Each part is hashed after its length, so that `("ab", "c")`
/// and `("a", "bc")` differ.
pub fn cache_key(parts: &[&[u8]]) -> CacheKey {
    let mut h = Sha256::new();
    for part in parts {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part);
    }
    let digest = h.finalize();
    let mut key = [0; KEY_BYTES];
    key.copy_from_slice(&digest[..KEY_BYTES]);
    CacheKey(key)
}

/// The SHA-256 of `bytes`, for the checksum trailer of cached files.
pub fn checksum(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_stable_part_sensitive_and_128_bits() {
        assert_eq!(cache_key(&[b"op2"]), cache_key(&[b"op2"]));
        assert_ne!(cache_key(&[b"ab", b"c"]), cache_key(&[b"a", b"bc"]));
        assert_ne!(cache_key(&[b"ab", b""]), cache_key(&[b"ab"]));
        assert_ne!(cache_key(&[b"x"]), cache_key(&[b"y"]));
        // Stable across runs, versions and platforms: a fixed value (the
        // first 16 bytes of SHA-256(3u64 little-endian, "op2")).
        let key = cache_key(&[b"op2"]);
        assert_eq!(key.to_string(), "ace665f900010aabf1dc55704f1be1f9");
        // 32 hex digits however it is formatted (callers write `{key:016x}`).
        assert_eq!(format!("{key:016x}"), key.to_string());
        assert_eq!(format!("{key:x}").len(), 32);
    }

    #[test]
    fn checksum_is_sha256() {
        // FIPS 180-2's test vector.
        assert_eq!(
            checksum(b"abc").iter().map(|b| format!("{b:02x}")).collect::<String>(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
