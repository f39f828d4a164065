//! Adds constants to an existing pool without moving any existing index: the original entries are written
//! verbatim and new ones are appended. The general lookups (`utf8`, `class`, `methodref`, ...) find an
//! existing equal entry first. The probes' own constants use `new_methodref` and `new_integer`, which
//! search only what was appended: the original pool cannot hold a HeapProxy reference, ids are unique,
//! and a duplicate constant would be legal anyway.

use crate::bytes::ByteSink;
use crate::constant_pool::{tag, Constant, ConstantPool};
use crate::error::{Error, Result};

/// The pool of the class being written: the original pool plus appended entries.
///
/// Deduplication compares encoded entries. Appended entries are found through a small open-addressed
/// table keyed by a hash of their bytes. The original pool is never indexed (hashing every entry of every
/// edited class cost a fifth of the probes' time): a constant that refers to an appended entry cannot be
/// in it, and the rest, in practice a few Utf8 names per class, are found by a scan that compares tags
/// and lengths before bytes.
pub struct PoolBuilder<'p, 'a> {
    original: &'p ConstantPool<'a>,
    appended: Vec<u8>,
    /// (pool index, offset in `appended`) of each appended entry, in order.
    appended_at: Vec<(u16, u32)>,
    next_index: u32,
    /// Pool indexes by hash (0: empty slot); power-of-two length, at most half full.
    table: Vec<u16>,
    filled: usize,
    scratch: Vec<u8>,
    /// Indexes remembered by callers that ask for the same constant many times per class.
    memo: [u16; MEMO_SLOTS],
}

/// How many constants [`PoolBuilder::memo`] can remember per class.
pub const MEMO_SLOTS: usize = 15;

/// A multiply-rotate hasher for small integer keys: SipHash's DoS resistance buys nothing here.
#[derive(Default, Clone, Copy)]
pub struct FastHash(u64);

impl std::hash::Hasher for FastHash {
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 29)
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0 = hash_bytes(bytes) ^ self.0.rotate_left(7);
    }
    fn write_u32(&mut self, v: u32) {
        self.0 = (self.0.rotate_left(5) ^ v as u64).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    fn write_i32(&mut self, v: i32) {
        self.write_u32(v as u32);
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }
}

pub type BuildFastHash = std::hash::BuildHasherDefault<FastHash>;

/// A fast 64-bit hash of bytes (multiply-rotate over 8-byte words); not for untrusted keys.
pub(crate) fn hash_bytes(b: &[u8]) -> u64 {
    let mut h = b.len() as u64;
    for chunk in b.chunks(8) {
        let mut w = [0u8; 8];
        w[..chunk.len()].copy_from_slice(chunk);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    h ^ (h >> 29)
}

/// The growable parts of a [`PoolBuilder`], handed from one class to the next so that a thread rewriting
/// class after class allocates them once.
#[derive(Default)]
pub struct PoolBuffers {
    appended: Vec<u8>,
    appended_at: Vec<(u16, u32)>,
    table: Vec<u16>,
    scratch: Vec<u8>,
}

/// A hash table this big or smaller is zeroed for the next class; a bigger one is dropped rather than
/// cleared at every class.
const KEPT_TABLE_LEN: usize = 256;

impl<'p, 'a> PoolBuilder<'p, 'a> {
    pub fn new(original: &'p ConstantPool<'a>) -> Self {
        // Sized for what the probes append to a typical class (their Methodrefs, an id per method), so the
        // buffers are allocated once instead of growing in small steps.
        let buffers = PoolBuffers {
            appended: Vec::with_capacity(512),
            appended_at: Vec::with_capacity(64),
            ..PoolBuffers::default()
        };
        Self::with_buffers(original, buffers)
    }

    /// A builder for `original` that appends into `buffers` (empty, as [`PoolBuilder::into_buffers`]
    /// leaves them).
    pub fn with_buffers(original: &'p ConstantPool<'a>, buffers: PoolBuffers) -> Self {
        debug_assert!(buffers.appended.is_empty() && buffers.table.iter().all(|&i| i == 0));
        PoolBuilder {
            original,
            appended: buffers.appended,
            appended_at: buffers.appended_at,
            next_index: original.count() as u32,
            table: buffers.table,
            filled: 0,
            scratch: buffers.scratch,
            memo: [0; MEMO_SLOTS],
        }
    }

    /// The buffers, emptied for the next class.
    pub fn into_buffers(self) -> PoolBuffers {
        let mut b = PoolBuffers {
            appended: self.appended,
            appended_at: self.appended_at,
            table: self.table,
            scratch: self.scratch,
        };
        b.appended.clear();
        b.appended_at.clear();
        if b.table.len() <= KEPT_TABLE_LEN {
            b.table.fill(0);
        } else {
            b.table = Vec::new();
        }
        b
    }

    pub fn original(&self) -> &'p ConstantPool<'a> {
        self.original
    }

    /// Bytes of the appended entries.
    pub fn appended_len(&self) -> usize {
        self.appended.len()
    }

    /// Whether anything was appended.
    pub fn is_extended(&self) -> bool {
        !self.appended.is_empty()
    }

    /// Writes `constant_pool_count` and all entries.
    pub fn write(&self, out: &mut Vec<u8>) {
        out.u2(self.next_index as u16);
        out.extend_from_slice(self.original.raw_entries());
        out.extend_from_slice(&self.appended);
    }

    /// The index `f` finds or adds, computed once per class and remembered in `slot`.
    pub fn memo(&mut self, slot: usize, f: impl FnOnce(&mut Self) -> Result<u16>) -> Result<u16> {
        if self.memo[slot] == 0 {
            self.memo[slot] = f(self)?;
        }
        Ok(self.memo[slot])
    }

    /// The encoded bytes of entry `index`, original or appended.
    fn entry_bytes(&self, index: u16) -> &[u8] {
        if (index as usize) < self.original.count() as usize {
            return self.original.entry_bytes(index);
        }
        let k = self.appended_at.partition_point(|&(i, _)| i < index);
        let start = self.appended_at[k].1 as usize;
        let end = self
            .appended_at
            .get(k + 1)
            .map_or(self.appended.len(), |&(_, o)| o as usize);
        &self.appended[start..end]
    }

    fn insert(&mut self, index: u16, hash: u64) {
        if (self.filled + 1) * 2 > self.table.len() {
            self.grow();
        }
        let mask = self.table.len() - 1;
        let mut slot = hash as usize & mask;
        while self.table[slot] != 0 {
            slot = (slot + 1) & mask;
        }
        self.table[slot] = index;
        self.filled += 1;
    }

    fn grow(&mut self) {
        let old = std::mem::take(&mut self.table);
        let len = ((self.filled + 1) * 4).next_power_of_two().max(64);
        self.table = vec![0; len];
        let mask = len - 1;
        for index in old.into_iter().filter(|&i| i != 0) {
            let mut slot = hash_bytes(self.entry_bytes(index)) as usize & mask;
            while self.table[slot] != 0 {
                slot = (slot + 1) & mask;
            }
            self.table[slot] = index;
        }
    }

    /// The first original entry whose encoding is `bytes`.
    fn scan_original(&self, bytes: &[u8]) -> Option<u16> {
        self.original.find_encoded(bytes)
    }

    /// Whether `c` names an entry that was appended, so that it cannot be in the original pool.
    fn refers_to_appended(&self, c: &Constant<'_>) -> bool {
        let appended = |i: u16| i >= self.original.count();
        match *c {
            Constant::Utf8(_)
            | Constant::Integer(_)
            | Constant::Float(_)
            | Constant::Long(_)
            | Constant::Double(_) => false,
            Constant::Class { name: a }
            | Constant::String { value: a }
            | Constant::MethodType { descriptor: a }
            | Constant::Module { name: a }
            | Constant::Package { name: a }
            | Constant::MethodHandle { reference: a, .. } => appended(a),
            Constant::Fieldref {
                class: a,
                name_and_type: b,
            }
            | Constant::Methodref {
                class: a,
                name_and_type: b,
            }
            | Constant::InterfaceMethodref {
                class: a,
                name_and_type: b,
            }
            | Constant::NameAndType {
                name: a,
                descriptor: b,
            } => appended(a) || appended(b),
            Constant::Dynamic {
                name_and_type: b, ..
            }
            | Constant::InvokeDynamic {
                name_and_type: b, ..
            } => appended(b),
        }
    }

    fn lookup(&self, bytes: &[u8], hash: u64) -> Option<u16> {
        if self.table.is_empty() {
            return None;
        }
        let mask = self.table.len() - 1;
        let mut slot = hash as usize & mask;
        loop {
            match self.table[slot] {
                0 => return None,
                i if self.entry_bytes(i) == bytes => return Some(i),
                _ => slot = (slot + 1) & mask,
            }
        }
    }

    fn find_or_add(&mut self, c: Constant<'_>) -> Result<u16> {
        self.find_or_append(c, true)
    }

    /// Like `find_or_add`, but with `search_original` false only appended entries are searched.
    fn find_or_append(&mut self, c: Constant<'_>, search_original: bool) -> Result<u16> {
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        encode_constant(&c, &mut scratch);
        let h = hash_bytes(&scratch);
        let found = self.lookup(&scratch, h).or_else(|| {
            if !search_original || self.refers_to_appended(&c) {
                None
            } else {
                self.scan_original(&scratch)
            }
        });
        let result = match found {
            Some(i) => Ok(i),
            None => {
                let slots = if c.is_wide() { 2 } else { 1 };
                if self.next_index + slots > u16::MAX as u32 {
                    Err(Error::unsupported("constant pool is full (65535 entries)"))
                } else {
                    let i = self.next_index as u16;
                    self.next_index += slots;
                    self.appended_at.push((i, self.appended.len() as u32));
                    self.appended.extend_from_slice(&scratch);
                    self.insert(i, h);
                    Ok(i)
                }
            }
        };
        self.scratch = scratch;
        result
    }

    pub fn utf8(&mut self, s: &str) -> Result<u16> {
        self.find_or_add(checked_utf8(s)?)
    }

    /// A Utf8 from modified-UTF-8 bytes taken from a class file.
    pub fn utf8_bytes(&mut self, s: &[u8]) -> Result<u16> {
        self.find_or_add(Constant::Utf8(s))
    }

    pub fn class(&mut self, internal_name: &str) -> Result<u16> {
        let name = self.utf8(internal_name)?;
        self.find_or_add(Constant::Class { name })
    }

    pub fn class_bytes(&mut self, internal_name: &[u8]) -> Result<u16> {
        let name = self.utf8_bytes(internal_name)?;
        self.find_or_add(Constant::Class { name })
    }

    pub fn integer(&mut self, v: i32) -> Result<u16> {
        self.find_or_add(Constant::Integer(v))
    }

    /// Appends an Integer constant without looking for an equal one: probes push each method or site
    /// id once per method, all different, and a duplicate constant would be legal anyway.
    pub fn new_integer(&mut self, v: i32) -> Result<u16> {
        if self.next_index + 1 > u16::MAX as u32 {
            return Err(Error::unsupported("constant pool is full (65535 entries)"));
        }
        let i = self.next_index as u16;
        self.next_index += 1;
        self.appended_at.push((i, self.appended.len() as u32));
        encode_constant(&Constant::Integer(v), &mut self.appended);
        Ok(i)
    }

    pub fn name_and_type(&mut self, name: &str, descriptor: &str) -> Result<u16> {
        let name = self.utf8(name)?;
        let descriptor = self.utf8(descriptor)?;
        self.find_or_add(Constant::NameAndType { name, descriptor })
    }

    /// A Methodref that the original pool is known not to have (a probe's target), found or added
    /// among the appended entries only: the scan of the original pool is skipped.
    pub fn new_methodref(&mut self, class: &str, name: &str, descriptor: &str) -> Result<u16> {
        let class = self.new_class(class)?;
        self.new_methodref_in(class, name, descriptor)
    }

    /// A Class constant the original pool is known not to have, found or added among the appended
    /// entries only.
    pub fn new_class(&mut self, internal_name: &str) -> Result<u16> {
        let name = self.find_or_append(checked_utf8(internal_name)?, false)?;
        self.find_or_append(Constant::Class { name }, false)
    }

    /// [`PoolBuilder::new_methodref`] in the class at index `class`, as [`PoolBuilder::new_class`]
    /// returned it.
    pub fn new_methodref_in(&mut self, class: u16, name: &str, descriptor: &str) -> Result<u16> {
        let name = self.find_or_append(checked_utf8(name)?, false)?;
        let descriptor = self.find_or_append(checked_utf8(descriptor)?, false)?;
        let name_and_type =
            self.find_or_append(Constant::NameAndType { name, descriptor }, false)?;
        self.find_or_append(
            Constant::Methodref {
                class,
                name_and_type,
            },
            false,
        )
    }

    pub fn methodref(&mut self, class: &str, name: &str, descriptor: &str) -> Result<u16> {
        let class = self.class(class)?;
        let name_and_type = self.name_and_type(name, descriptor)?;
        self.find_or_add(Constant::Methodref {
            class,
            name_and_type,
        })
    }
}

/// A Utf8 constant for `s`, which must fit and contain no NUL (modified UTF-8 encodes NUL in two bytes).
fn checked_utf8(s: &str) -> Result<Constant<'_>> {
    if s.len() > u16::MAX as usize || s.bytes().any(|b| b == 0) {
        return Err(Error::unsupported("string cannot be a Utf8 constant"));
    }
    Ok(Constant::Utf8(s.as_bytes()))
}

/// Encodes one entry as it appears in the pool.
fn encode_constant(c: &Constant<'_>, out: &mut Vec<u8>) {
    match *c {
        Constant::Utf8(s) => {
            out.u1(tag::UTF8);
            out.u2(s.len() as u16);
            out.extend_from_slice(s);
        }
        Constant::Integer(v) => {
            out.u1(tag::INTEGER);
            out.u4(v as u32);
        }
        Constant::Float(v) => {
            out.u1(tag::FLOAT);
            out.u4(v);
        }
        Constant::Long(v) => {
            out.u1(tag::LONG);
            out.extend_from_slice(&v.to_be_bytes());
        }
        Constant::Double(v) => {
            out.u1(tag::DOUBLE);
            out.extend_from_slice(&v.to_be_bytes());
        }
        Constant::MethodHandle { kind, reference } => {
            out.u1(tag::METHOD_HANDLE);
            out.u1(kind);
            out.u2(reference);
        }
        Constant::Class { name } => ref1(out, tag::CLASS, name),
        Constant::String { value } => ref1(out, tag::STRING, value),
        Constant::MethodType { descriptor } => ref1(out, tag::METHOD_TYPE, descriptor),
        Constant::Module { name } => ref1(out, tag::MODULE, name),
        Constant::Package { name } => ref1(out, tag::PACKAGE, name),
        Constant::Fieldref {
            class,
            name_and_type,
        } => ref2(out, tag::FIELDREF, class, name_and_type),
        Constant::Methodref {
            class,
            name_and_type,
        } => ref2(out, tag::METHODREF, class, name_and_type),
        Constant::InterfaceMethodref {
            class,
            name_and_type,
        } => ref2(out, tag::INTERFACE_METHODREF, class, name_and_type),
        Constant::NameAndType { name, descriptor } => {
            ref2(out, tag::NAME_AND_TYPE, name, descriptor)
        }
        Constant::Dynamic {
            bootstrap,
            name_and_type,
        } => ref2(out, tag::DYNAMIC, bootstrap, name_and_type),
        Constant::InvokeDynamic {
            bootstrap,
            name_and_type,
        } => ref2(out, tag::INVOKE_DYNAMIC, bootstrap, name_and_type),
    }
}

fn ref1(out: &mut Vec<u8>, t: u8, a: u16) {
    out.u1(t);
    out.u2(a);
}

fn ref2(out: &mut Vec<u8>, t: u8, a: u16, b: u16) {
    out.u1(t);
    out.u2(a);
    out.u2(b);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_pool(bytes: &[u8]) -> ConstantPool<'_> {
        ConstantPool::read_alone(bytes).unwrap()
    }

    #[test]
    fn finds_existing_entries_and_appends_new_ones_after_the_old() {
        // #1 Utf8 "A", #2 Class #1
        let bytes = [0, 3, tag::UTF8, 0, 1, b'A', tag::CLASS, 0, 1];
        let pool = read_pool(&bytes);
        let mut b = PoolBuilder::new(&pool);
        assert_eq!(b.class("A").unwrap(), 2);
        assert!(!b.is_extended());
        assert_eq!(b.class("B").unwrap(), 4);
        assert_eq!(b.class("B").unwrap(), 4);
        let mut out = Vec::new();
        b.write(&mut out);
        let again = read_pool(&out);
        assert_eq!(again.count(), 5);
        assert_eq!(again.class_name(4).unwrap(), b"B");
        assert_eq!(&out[2..bytes.len()], &bytes[2..]);
    }

    #[test]
    fn wide_constants_take_two_indexes() {
        let bytes = [0, 1];
        let pool = read_pool(&bytes);
        let mut b = PoolBuilder::new(&pool);
        let l = b.find_or_add(Constant::Long(5)).unwrap();
        let u = b.utf8("x").unwrap();
        assert_eq!((l, u), (1, 3));
    }
}
