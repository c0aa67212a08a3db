//! The messages of a distributed graph and the encoding of keys and values.
//!
//! A message is `[kind: u8][index: u32 LE][key length: u32 LE][key][value]` for an item,
//! `[kind][index][tag]` for a tag and `[kind][error message, UTF-8]` for an abort; `index`
//! is the collection's registration number (the same on every rank, since every rank
//! builds the same graph). Keys, tags and values are encoded with serde and bincode's
//! compact options (variable-length integers). Bulk `f64` data goes through [`F64s`],
//! which serializes its elements as one run of raw bytes (no per-element work); the ranks
//! of one job share the byte order (one binary on one kind of machine).

use serde::de::{self, DeserializeOwned, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Message kinds.
pub(crate) const ITEM: u8 = 0;
pub(crate) const TAG: u8 = 1;
pub(crate) const ABORT: u8 = 2;

fn opts() -> impl bincode::Options {
    use bincode::Options;
    bincode::DefaultOptions::new().with_varint_encoding().with_little_endian()
}

/// Appends `v`'s encoding to `out`.
pub(crate) fn encode<T: Serialize + ?Sized>(v: &T, out: &mut Vec<u8>) -> Result<(), String> {
    use bincode::Options;
    opts().serialize_into(out, v).map_err(|e| format!("cannot encode a message: {e}"))
}

/// Decodes `bytes` (exactly one value).
pub(crate) fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, String> {
    use bincode::Options;
    opts().deserialize(bytes).map_err(|e| format!("cannot decode a message: {e}"))
}

/// An item message: `key` and `value` encoded behind the header.
pub(crate) fn item_message<K: Serialize, V: Serialize>(
    index: u32,
    key: &K,
    value: &V,
) -> Result<Vec<u8>, String> {
    let mut out = vec![ITEM];
    out.extend_from_slice(&index.to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    encode(key, &mut out)?;
    let klen = u32::try_from(out.len() - 9).map_err(|_| "an item key of 4 GiB or more".to_string())?;
    out[5..9].copy_from_slice(&klen.to_le_bytes());
    encode(value, &mut out)?;
    Ok(out)
}

/// A tag message.
pub(crate) fn tag_message<K: Serialize>(index: u32, tag: &K) -> Result<Vec<u8>, String> {
    let mut out = vec![TAG];
    out.extend_from_slice(&index.to_le_bytes());
    encode(tag, &mut out)?;
    Ok(out)
}

/// An abort message carrying the error.
pub(crate) fn abort_message(error: &str) -> Vec<u8> {
    let mut out = vec![ABORT];
    out.extend_from_slice(error.as_bytes());
    out
}

/// A message split into its parts.
pub(crate) enum Parsed<'a> {
    /// Collection `index`, then the encoded key and value.
    Item(u32, &'a [u8], &'a [u8]),
    /// Step collection `index`, then the encoded tag.
    Tag(u32, &'a [u8]),
    /// Another rank failed (the message's text is its error, for whoever reads the bytes;
    /// the failing rank reports the error itself at the end of the wait).
    Abort,
}

/// Splits a message (checking its header).
pub(crate) fn parse(bytes: &[u8]) -> Result<Parsed<'_>, String> {
    let bad = || format!("a malformed message of {} bytes", bytes.len());
    let u32_at = |at: usize| -> Result<u32, String> {
        let b: [u8; 4] = bytes.get(at..at + 4).ok_or_else(bad)?.try_into().map_err(|_| bad())?;
        Ok(u32::from_le_bytes(b))
    };
    match bytes.first() {
        Some(&ITEM) => {
            let index = u32_at(1)?;
            let klen = u32_at(5)? as usize;
            let key = bytes.get(9..9 + klen).ok_or_else(bad)?;
            Ok(Parsed::Item(index, key, &bytes[9 + klen..]))
        }
        Some(&TAG) => Ok(Parsed::Tag(u32_at(1)?, &bytes[5..])),
        Some(&ABORT) => Ok(Parsed::Abort),
        _ => Err(bad()),
    }
}

/// `f64`s that serialize as one run of raw bytes (8 per element, native order): tiles travel
/// at memcpy cost instead of one serializer call per element.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct F64s(pub Vec<f64>);

/// The bytes of `v`.
pub fn f64_bytes(v: &[f64]) -> &[u8] {
    // SAFETY: `f64` has no padding and every byte of it is initialized; `u8` has alignment 1;
    // the returned slice covers exactly the `v.len() * 8` bytes of `v` and borrows `v`.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

/// The bytes of `v`, writable (every byte pattern is some `f64`).
pub fn f64_bytes_mut(v: &mut [f64]) -> &mut [u8] {
    // SAFETY: as in `f64_bytes`; in addition the slice borrows `v` mutably (no alias), and any
    // bytes written through it form valid `f64`s (every bit pattern is one).
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

/// `f64`s from their bytes (as written by [`f64_bytes`]); `None` if the length is not a
/// multiple of 8.
pub fn f64s_from_bytes(b: &[u8]) -> Option<Vec<f64>> {
    if !b.len().is_multiple_of(8) {
        return None;
    }
    let mut v = vec![0.0f64; b.len() / 8];
    // SAFETY: `v` owns `b.len()` bytes of storage (len/8 f64s) that do not overlap `b`;
    // every bit pattern is a valid `f64`, so writing arbitrary bytes into it is sound.
    unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), v.as_mut_ptr().cast::<u8>(), b.len()) };
    Some(v)
}

impl Serialize for F64s {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(f64_bytes(&self.0))
    }
}

struct F64sVisitor;

impl<'de> Visitor<'de> for F64sVisitor {
    type Value = F64s;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("the raw bytes of f64s (a multiple of 8)")
    }
    fn visit_bytes<E: de::Error>(self, b: &[u8]) -> Result<F64s, E> {
        f64s_from_bytes(b).map(F64s).ok_or_else(|| E::invalid_length(b.len(), &self))
    }
}

impl<'de> Deserialize<'de> for F64s {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<F64s, D::Error> {
        d.deserialize_bytes(F64sVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip() {
        let v = F64s(vec![1.5, -0.0, f64::MAX, 3.25e-300]);
        let m = item_message(7, &(3usize, 4usize, 5usize), &(v.clone(), 9u32)).unwrap();
        // header 9 + key 3 varint bytes + value: 1 length byte + 32 raw + 1
        assert_eq!(m.len(), 9 + 3 + 1 + 32 + 1);
        match parse(&m).unwrap() {
            Parsed::Item(i, k, val) => {
                assert_eq!(i, 7);
                assert_eq!(decode::<(usize, usize, usize)>(k).unwrap(), (3, 4, 5));
                let (w, n): (F64s, u32) = decode(val).unwrap();
                assert_eq!((w, n), (v, 9));
            }
            _ => panic!("not an item"),
        }
        match parse(&tag_message(2, &"t".to_string()).unwrap()).unwrap() {
            Parsed::Tag(2, t) => assert_eq!(decode::<String>(t).unwrap(), "t"),
            _ => panic!("not a tag"),
        }
        let a = abort_message("boom");
        assert_eq!(&a[1..], b"boom");
        assert!(matches!(parse(&a).unwrap(), Parsed::Abort));
        assert!(parse(&[9]).is_err());
        assert!(parse(&[ITEM, 0, 0]).is_err());
        assert!(f64s_from_bytes(&[0; 7]).is_none());
        assert!(decode::<F64s>(&[3, 1, 2, 3]).is_err(), "3 bytes are no f64s");
    }
}
