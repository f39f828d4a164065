//! Adds constants to an existing pool without moving any existing index: the original entries are written
//! verbatim and new ones are appended. Lookups find an existing equal entry first, so probes never
//! duplicate a constant the class already has.

use std::collections::HashMap;

use crate::bytes::ByteSink;
use crate::constant_pool::{tag, Constant, ConstantPool};
use crate::error::{Error, Result};

/// The identity of a constant, as used for deduplication.
#[derive(Clone, PartialEq, Eq, Hash)]
enum Key {
    Utf8(Vec<u8>),
    Integer(i32),
    Float(u32),
    Long(i64),
    Double(u64),
    /// Tag plus up to two u16 operands (and the handle kind folded into the first word).
    Ref(u8, u32, u16),
}

fn key_of(c: &Constant<'_>) -> Key {
    match *c {
        Constant::Utf8(s) => Key::Utf8(s.to_vec()),
        Constant::Integer(v) => Key::Integer(v),
        Constant::Float(v) => Key::Float(v),
        Constant::Long(v) => Key::Long(v),
        Constant::Double(v) => Key::Double(v),
        Constant::Class { name } => Key::Ref(tag::CLASS, name as u32, 0),
        Constant::String { value } => Key::Ref(tag::STRING, value as u32, 0),
        Constant::Fieldref {
            class,
            name_and_type,
        } => Key::Ref(tag::FIELDREF, class as u32, name_and_type),
        Constant::Methodref {
            class,
            name_and_type,
        } => Key::Ref(tag::METHODREF, class as u32, name_and_type),
        Constant::InterfaceMethodref {
            class,
            name_and_type,
        } => Key::Ref(tag::INTERFACE_METHODREF, class as u32, name_and_type),
        Constant::NameAndType { name, descriptor } => {
            Key::Ref(tag::NAME_AND_TYPE, name as u32, descriptor)
        }
        Constant::MethodHandle { kind, reference } => {
            Key::Ref(tag::METHOD_HANDLE, kind as u32, reference)
        }
        Constant::MethodType { descriptor } => Key::Ref(tag::METHOD_TYPE, descriptor as u32, 0),
        Constant::Dynamic {
            bootstrap,
            name_and_type,
        } => Key::Ref(tag::DYNAMIC, bootstrap as u32, name_and_type),
        Constant::InvokeDynamic {
            bootstrap,
            name_and_type,
        } => Key::Ref(tag::INVOKE_DYNAMIC, bootstrap as u32, name_and_type),
        Constant::Module { name } => Key::Ref(tag::MODULE, name as u32, 0),
        Constant::Package { name } => Key::Ref(tag::PACKAGE, name as u32, 0),
    }
}

/// The pool of the class being written: the original pool plus appended entries.
pub struct PoolBuilder<'p, 'a> {
    original: &'p ConstantPool<'a>,
    appended: Vec<u8>,
    next_index: u32,
    /// Built on the first lookup, so a class that adds nothing never pays for hashing its pool.
    index: Option<HashMap<Key, u16>>,
}

impl<'p, 'a> PoolBuilder<'p, 'a> {
    pub fn new(original: &'p ConstantPool<'a>) -> Self {
        PoolBuilder {
            original,
            appended: Vec::new(),
            next_index: original.count() as u32,
            index: None,
        }
    }

    pub fn original(&self) -> &'p ConstantPool<'a> {
        self.original
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

    fn index(&mut self) -> &mut HashMap<Key, u16> {
        let original = self.original;
        self.index.get_or_insert_with(|| {
            let mut map = HashMap::with_capacity(original.count() as usize);
            for i in 1..original.count() {
                if let Ok(c) = original.get(i) {
                    map.entry(key_of(&c)).or_insert(i);
                }
            }
            map
        })
    }

    fn find_or_add(&mut self, c: Constant<'_>) -> Result<u16> {
        let key = key_of(&c);
        if let Some(&i) = self.index().get(&key) {
            return Ok(i);
        }
        let slots = if c.is_wide() { 2 } else { 1 };
        if self.next_index + slots > u16::MAX as u32 {
            return Err(Error::unsupported("constant pool is full (65535 entries)"));
        }
        let i = self.next_index as u16;
        self.next_index += slots;
        encode_constant(&c, &mut self.appended);
        self.index().insert(key, i);
        Ok(i)
    }

    pub fn utf8(&mut self, s: &str) -> Result<u16> {
        if s.len() > u16::MAX as usize || s.bytes().any(|b| b == 0) {
            return Err(Error::unsupported("string cannot be a Utf8 constant"));
        }
        self.find_or_add(Constant::Utf8(s.as_bytes()))
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

    pub fn name_and_type(&mut self, name: &str, descriptor: &str) -> Result<u16> {
        let name = self.utf8(name)?;
        let descriptor = self.utf8(descriptor)?;
        self.find_or_add(Constant::NameAndType { name, descriptor })
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
        _ => {
            let Key::Ref(t, a, b) = key_of(c) else {
                unreachable!()
            };
            out.u1(t);
            out.u2(a as u16);
            if matches!(
                t,
                tag::FIELDREF
                    | tag::METHODREF
                    | tag::INTERFACE_METHODREF
                    | tag::NAME_AND_TYPE
                    | tag::DYNAMIC
                    | tag::INVOKE_DYNAMIC
            ) {
                out.u2(b);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bytes::Cursor;

    fn read_pool(bytes: &[u8]) -> ConstantPool<'_> {
        ConstantPool::read(bytes, &mut Cursor::new(bytes)).unwrap()
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
