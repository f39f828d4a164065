//! The constant pool as read: an offset table over the original bytes, decoded lazily per entry.

use crate::bytes::{read_u2, Cursor};
use crate::error::{bail, Error, Result};

/// Constant-pool tags (JVMS §4.4, Table 4.4-B).
pub mod tag {
    pub const UTF8: u8 = 1;
    pub const INTEGER: u8 = 3;
    pub const FLOAT: u8 = 4;
    pub const LONG: u8 = 5;
    pub const DOUBLE: u8 = 6;
    pub const CLASS: u8 = 7;
    pub const STRING: u8 = 8;
    pub const FIELDREF: u8 = 9;
    pub const METHODREF: u8 = 10;
    pub const INTERFACE_METHODREF: u8 = 11;
    pub const NAME_AND_TYPE: u8 = 12;
    pub const METHOD_HANDLE: u8 = 15;
    pub const METHOD_TYPE: u8 = 16;
    pub const DYNAMIC: u8 = 17;
    pub const INVOKE_DYNAMIC: u8 = 18;
    pub const MODULE: u8 = 19;
    pub const PACKAGE: u8 = 20;
}

/// One decoded entry. Strings stay as modified-UTF-8 bytes borrowed from the class file.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Constant<'a> {
    Utf8(&'a [u8]),
    Integer(i32),
    /// Raw IEEE bits, so that NaN payloads survive and equality is exact.
    Float(u32),
    Long(i64),
    Double(u64),
    Class {
        name: u16,
    },
    String {
        value: u16,
    },
    Fieldref {
        class: u16,
        name_and_type: u16,
    },
    Methodref {
        class: u16,
        name_and_type: u16,
    },
    InterfaceMethodref {
        class: u16,
        name_and_type: u16,
    },
    NameAndType {
        name: u16,
        descriptor: u16,
    },
    MethodHandle {
        kind: u8,
        reference: u16,
    },
    MethodType {
        descriptor: u16,
    },
    Dynamic {
        bootstrap: u16,
        name_and_type: u16,
    },
    InvokeDynamic {
        bootstrap: u16,
        name_and_type: u16,
    },
    Module {
        name: u16,
    },
    Package {
        name: u16,
    },
}

impl Constant<'_> {
    /// Long and Double take two pool slots (JVMS §4.4.5).
    pub fn is_wide(&self) -> bool {
        matches!(self, Constant::Long(_) | Constant::Double(_))
    }
}

/// Size of an entry, tag included, by tag; 0 marks an invalid tag and `UTF8_SIZE` a length-prefixed one.
const ENTRY_SIZE: [u8; 21] = {
    let mut t = [0u8; 21];
    t[tag::UTF8 as usize] = UTF8_SIZE;
    t[tag::INTEGER as usize] = 5;
    t[tag::FLOAT as usize] = 5;
    t[tag::LONG as usize] = 9;
    t[tag::DOUBLE as usize] = 9;
    t[tag::CLASS as usize] = 3;
    t[tag::STRING as usize] = 3;
    t[tag::METHOD_TYPE as usize] = 3;
    t[tag::MODULE as usize] = 3;
    t[tag::PACKAGE as usize] = 3;
    t[tag::FIELDREF as usize] = 5;
    t[tag::METHODREF as usize] = 5;
    t[tag::INTERFACE_METHODREF as usize] = 5;
    t[tag::NAME_AND_TYPE as usize] = 5;
    t[tag::DYNAMIC as usize] = 5;
    t[tag::INVOKE_DYNAMIC as usize] = 5;
    t[tag::METHOD_HANDLE as usize] = 4;
    t
};
const UTF8_SIZE: u8 = 255;

/// Where an entry holds pool indexes, by tag: two (offset from the tag byte, mask) pairs, the mask 0 where
/// there is no index; every offset + 2 is within the entry (at least 3 bytes). Unusable slots have
/// entry offset 0, the class file's magic number (tag 0xca: no index). The first u2 of Dynamic and
/// InvokeDynamic indexes BootstrapMethods, not the pool.
const REFERENCES: [[(u8, u16); 2]; 256] = {
    const NONE: (u8, u16) = (1, 0);
    let mut t = [[NONE, NONE]; 256];
    let one = [(1, 0xffff), NONE];
    t[tag::CLASS as usize] = one;
    t[tag::STRING as usize] = one;
    t[tag::METHOD_TYPE as usize] = one;
    t[tag::MODULE as usize] = one;
    t[tag::PACKAGE as usize] = one;
    let two = [(1, 0xffff), (3, 0xffff)];
    t[tag::FIELDREF as usize] = two;
    t[tag::METHODREF as usize] = two;
    t[tag::INTERFACE_METHODREF as usize] = two;
    t[tag::NAME_AND_TYPE as usize] = two;
    t[tag::DYNAMIC as usize] = [(3, 0xffff), NONE];
    t[tag::INVOKE_DYNAMIC as usize] = [(3, 0xffff), NONE];
    t[tag::METHOD_HANDLE as usize] = [(2, 0xffff), NONE];
    t
};

/// The pool of a class file being read. Index 0 and the slot after a Long/Double are unusable.
#[derive(Clone)]
pub struct ConstantPool<'a> {
    /// The whole class file; entry offsets are absolute so that errors point at the right byte.
    class_bytes: &'a [u8],
    /// Absolute offset of each entry's tag byte; 0 for unusable slots.
    offsets: Vec<u32>,
    /// The entries' bytes exactly as read (everything after `constant_pool_count`).
    raw: &'a [u8],
}

impl<'a> ConstantPool<'a> {
    /// A pool on its own, `constant_pool_count` first: what JVMTI's GetConstantPool gives (with the count
    /// put in front), and what tests build.
    pub fn read_alone(bytes: &'a [u8]) -> Result<Self> {
        Self::read(bytes, &mut Cursor::new(bytes))
    }

    /// Reads the pool starting at `constant_pool_count`; the cursor is left just after the pool.
    pub fn read(class_bytes: &'a [u8], cursor: &mut Cursor<'a>) -> Result<Self> {
        let count = cursor.u2()?;
        if count == 0 {
            bail!(cursor.offset() - 2, "constant_pool_count is 0");
        }
        let start = cursor.offset();
        let mut offsets = vec![0u32; count as usize];
        // One table lookup per entry instead of a match and a bounds check per field: the pool scan is a
        // tenth of the whole rewrite.
        let mut at = start;
        let mut last = start;
        let mut index = 1usize;
        while index < count as usize {
            let Some(&t) = class_bytes.get(at) else {
                bail!(at, "unexpected end of data in constant pool entry #{index}");
            };
            offsets[index] = at as u32;
            let size = match ENTRY_SIZE.get(t as usize).copied().unwrap_or(0) {
                0 => bail!(at, "invalid constant pool tag {t} for entry #{index}"),
                UTF8_SIZE => match class_bytes.get(at + 1..at + 3) {
                    Some(len) => 3 + read_u2(len, 0) as usize,
                    None => bail!(at, "unexpected end of data in constant pool entry #{index}"),
                },
                size => size as usize,
            };
            if t == tag::LONG || t == tag::DOUBLE {
                if index + 1 >= count as usize {
                    bail!(at, "8-byte constant #{index} is the last pool slot");
                }
                index += 1;
            }
            last = at;
            at += size;
            index += 1;
        }
        if at > class_bytes.len() {
            bail!(
                last,
                "unexpected end of data in the last constant pool entry"
            );
        }
        cursor.skip(at - start)?;
        let raw = &class_bytes[start..cursor.offset()];
        Ok(ConstantPool {
            class_bytes,
            offsets,
            raw,
        })
    }

    /// `constant_pool_count`: one more than the highest index.
    pub fn count(&self) -> u16 {
        self.offsets.len() as u16
    }

    /// The entries' original bytes, for copying through unchanged.
    pub fn raw_entries(&self) -> &'a [u8] {
        self.raw
    }

    /// Decodes entry `index`.
    pub fn get(&self, index: u16) -> Result<Constant<'a>> {
        let at = match self.offsets.get(index as usize) {
            Some(&at) if at != 0 => at as usize,
            _ => bail!(0, "constant pool index #{index} is not a valid entry"),
        };
        let b = self.class_bytes;
        let u2 = |k: usize| read_u2(b, at + k);
        let u4 =
            |k: usize| u32::from_be_bytes([b[at + k], b[at + k + 1], b[at + k + 2], b[at + k + 3]]);
        let u8_ = |k: usize| ((u4(k) as u64) << 32) | u4(k + 4) as u64;
        Ok(match b[at] {
            tag::UTF8 => Constant::Utf8(&b[at + 3..at + 3 + u2(1) as usize]),
            tag::INTEGER => Constant::Integer(u4(1) as i32),
            tag::FLOAT => Constant::Float(u4(1)),
            tag::LONG => Constant::Long(u8_(1) as i64),
            tag::DOUBLE => Constant::Double(u8_(1)),
            tag::CLASS => Constant::Class { name: u2(1) },
            tag::STRING => Constant::String { value: u2(1) },
            tag::FIELDREF => Constant::Fieldref {
                class: u2(1),
                name_and_type: u2(3),
            },
            tag::METHODREF => Constant::Methodref {
                class: u2(1),
                name_and_type: u2(3),
            },
            tag::INTERFACE_METHODREF => Constant::InterfaceMethodref {
                class: u2(1),
                name_and_type: u2(3),
            },
            tag::NAME_AND_TYPE => Constant::NameAndType {
                name: u2(1),
                descriptor: u2(3),
            },
            tag::METHOD_HANDLE => Constant::MethodHandle {
                kind: b[at + 1],
                reference: u2(2),
            },
            tag::METHOD_TYPE => Constant::MethodType { descriptor: u2(1) },
            tag::DYNAMIC => Constant::Dynamic {
                bootstrap: u2(1),
                name_and_type: u2(3),
            },
            tag::INVOKE_DYNAMIC => Constant::InvokeDynamic {
                bootstrap: u2(1),
                name_and_type: u2(3),
            },
            tag::MODULE => Constant::Module { name: u2(1) },
            tag::PACKAGE => Constant::Package { name: u2(1) },
            _ => unreachable!("tags were validated when the pool was read"),
        })
    }

    /// The encoded bytes of entry `index` (tag included) as they are in the class file; empty for an
    /// unusable slot.
    pub fn entry_bytes(&self, index: u16) -> &'a [u8] {
        let at = match self.offsets.get(index as usize) {
            Some(&at) if at != 0 => at as usize,
            _ => return &[],
        };
        let b = self.class_bytes;
        let len = match ENTRY_SIZE[b[at] as usize] {
            UTF8_SIZE => 3 + read_u2(b, at + 1) as usize,
            n => n as usize,
        };
        &b[at..at + len]
    }

    /// The first entry whose encoding (tag included) is `encoded`. A linear scan that rejects on the tag
    /// and the first two bytes before comparing more.
    pub fn find_encoded(&self, encoded: &[u8]) -> Option<u16> {
        if encoded.len() < 3 {
            return None;
        }
        let b = self.class_bytes;
        let head = [encoded[0], encoded[1], encoded[2]];
        self.offsets
            .iter()
            .enumerate()
            .skip(1)
            .find_map(|(i, &at)| {
                let at = at as usize;
                (at != 0 && b[at..at + 3] == head && b.get(at..at + encoded.len()) == Some(encoded))
                    .then_some(i as u16)
            })
    }

    /// The tag byte of entry `index`, or `None` for an unusable slot.
    pub fn tag(&self, index: u16) -> Option<u8> {
        match self.offsets.get(index as usize) {
            Some(&at) if at != 0 => Some(self.class_bytes[at as usize]),
            _ => None,
        }
    }

    /// Offset of entry `index` when it has tag `t`. The lookups below ask this before decoding a whole
    /// [`Constant`]: names are looked up at every method and attribute, and the general decoder is a
    /// 17-way match.
    #[inline]
    fn offset_if(&self, index: u16, t: u8) -> Option<usize> {
        match self.offsets.get(index as usize) {
            Some(&at) if at != 0 && self.class_bytes[at as usize] == t => Some(at as usize),
            _ => None,
        }
    }

    /// The modified-UTF-8 bytes of a Utf8 entry.
    #[inline]
    pub fn utf8(&self, index: u16) -> Result<&'a [u8]> {
        match self.offset_if(index, tag::UTF8) {
            Some(at) => {
                let b = self.class_bytes;
                Ok(&b[at + 3..at + 3 + read_u2(b, at + 1) as usize])
            }
            None => self.utf8_error(index),
        }
    }

    /// The decoding path, reached only when the entry is not a Utf8: it builds the error.
    #[cold]
    fn utf8_error(&self, index: u16) -> Result<&'a [u8]> {
        match self.get(index)? {
            Constant::Utf8(s) => Ok(s),
            other => Err(Error::malformed(
                0,
                format!("constant #{index} is {other:?}, expected Utf8"),
            )),
        }
    }

    /// A Utf8 entry as text, for messages and listings (lossy on invalid or modified UTF-8).
    pub fn text(&self, index: u16) -> String {
        match self.utf8(index) {
            Ok(s) => String::from_utf8_lossy(s).into_owned(),
            Err(_) => format!("#{index}?"),
        }
    }

    /// The internal name of a Class entry, for example `java/lang/Object` or `[I`.
    #[inline]
    pub fn class_name(&self, index: u16) -> Result<&'a [u8]> {
        match self.offset_if(index, tag::CLASS) {
            Some(at) => self.utf8(read_u2(self.class_bytes, at + 1)),
            None => self.class_name_error(index),
        }
    }

    /// The decoding path, reached only when the entry is not a Class: it builds the error.
    #[cold]
    fn class_name_error(&self, index: u16) -> Result<&'a [u8]> {
        match self.get(index)? {
            Constant::Class { name } => self.utf8(name),
            other => Err(Error::malformed(
                0,
                format!("constant #{index} is {other:?}, expected Class"),
            )),
        }
    }

    /// The descriptor of a Fieldref, Methodref, InterfaceMethodref or InvokeDynamic, straight from the
    /// offsets: the stack-depth walk asks this at every field access and invoke of an edited method.
    #[inline]
    pub fn reference_descriptor(&self, index: u16) -> Result<&'a [u8]> {
        self.utf8(self.reference_descriptor_index(index)?)
    }

    /// The index of that descriptor (not checked to be a Utf8 entry).
    #[inline]
    pub fn reference_descriptor_index(&self, index: u16) -> Result<u16> {
        let b = self.class_bytes;
        let name_and_type = match self.offsets.get(index as usize) {
            Some(&at)
                if at != 0
                    && matches!(
                        b[at as usize],
                        tag::FIELDREF..=tag::INTERFACE_METHODREF | tag::INVOKE_DYNAMIC
                    ) =>
            {
                read_u2(b, at as usize + 3)
            }
            _ => bail!(0, "constant #{index} is not a member reference"),
        };
        match self.offset_if(name_and_type, tag::NAME_AND_TYPE) {
            Some(at) => Ok(read_u2(b, at + 3)),
            None => bail!(0, "constant #{name_and_type} is not a NameAndType"),
        }
    }

    /// Class, name and descriptor of a Fieldref, Methodref or InterfaceMethodref.
    pub fn member_ref(&self, index: u16) -> Result<(&'a [u8], &'a [u8], &'a [u8])> {
        match self.get(index)? {
            Constant::Fieldref {
                class,
                name_and_type,
            }
            | Constant::Methodref {
                class,
                name_and_type,
            }
            | Constant::InterfaceMethodref {
                class,
                name_and_type,
            } => {
                let (name, descriptor) = self.name_and_type(name_and_type)?;
                Ok((self.class_name(class)?, name, descriptor))
            }
            other => Err(Error::malformed(
                0,
                format!("constant #{index} is {other:?}, expected a member reference"),
            )),
        }
    }

    /// Name and descriptor of a NameAndType entry.
    pub fn name_and_type(&self, index: u16) -> Result<(&'a [u8], &'a [u8])> {
        match self.get(index)? {
            Constant::NameAndType { name, descriptor } => {
                Ok((self.utf8(name)?, self.utf8(descriptor)?))
            }
            other => Err(Error::malformed(
                0,
                format!("constant #{index} is {other:?}, expected NameAndType"),
            )),
        }
    }

    /// Name and descriptor behind an InvokeDynamic or Dynamic entry.
    pub fn dynamic(&self, index: u16) -> Result<(&'a [u8], &'a [u8])> {
        match self.get(index)? {
            Constant::InvokeDynamic { name_and_type, .. }
            | Constant::Dynamic { name_and_type, .. } => self.name_and_type(name_and_type),
            other => Err(Error::malformed(
                0,
                format!("constant #{index} is {other:?}, expected a dynamic constant"),
            )),
        }
    }

    /// Fails if an entry refers to an index at or past `constant_pool_count`. Such a class is malformed, but
    /// only as long as the pool does not grow: an edit that appends entries would give the dangling index a
    /// meaning, and the JVM a class it accepts, or rejects differently. Kinds are not checked: original
    /// entries never move, so a reference to the wrong kind of entry stays as wrong as it was.
    pub fn check_references_in_range(&self) -> Result<()> {
        let count = self.offsets.len();
        let b = self.class_bytes;
        // The tags come in no order, so a table and a maximum cost less than a match per entry (an
        // indirect jump, mispredicted about every other time); the match below only runs to name the
        // entry once a bad index is known. Every read lies inside its entry (`REFERENCES`).
        let mut worst = 0u16;
        for &at in &self.offsets[1..] {
            let at = at as usize;
            let [(o1, m1), (o2, m2)] = REFERENCES[b[at] as usize];
            let first = read_u2(b, at + o1 as usize) & m1;
            let second = read_u2(b, at + o2 as usize) & m2;
            worst = worst.max(first).max(second);
        }
        if (worst as usize) < count {
            return Ok(());
        }
        for (index, &at) in self.offsets.iter().enumerate().skip(1) {
            let at = at as usize;
            if at == 0 {
                continue;
            }
            let (first, second) = match b[at] {
                tag::CLASS | tag::STRING | tag::METHOD_TYPE | tag::MODULE | tag::PACKAGE => {
                    (read_u2(b, at + 1), 0)
                }
                tag::FIELDREF | tag::METHODREF | tag::INTERFACE_METHODREF | tag::NAME_AND_TYPE => {
                    (read_u2(b, at + 1), read_u2(b, at + 3))
                }
                // The first u2 of these is an index into BootstrapMethods, which edits never extend.
                tag::DYNAMIC | tag::INVOKE_DYNAMIC => (read_u2(b, at + 3), 0),
                tag::METHOD_HANDLE => (read_u2(b, at + 2), 0),
                _ => continue,
            };
            if first as usize >= count || second as usize >= count {
                bail!(
                    at,
                    "constant #{index} refers to #{}, past the end of the pool ({count} entries)",
                    first.max(second)
                );
            }
        }
        Ok(())
    }

    /// Checks that every reference inside the pool points at an entry of the right kind, so that later
    /// lookups through these entries cannot fail on a well-formed class.
    pub fn validate(&self) -> Result<()> {
        for index in 1..self.count() {
            let Some(t) = self.tag(index) else { continue };
            let at = self.offsets[index as usize] as usize;
            let expect = |i: u16, want: &[u8], what: &str| -> Result<()> {
                match self.tag(i) {
                    Some(t) if want.contains(&t) => Ok(()),
                    _ => Err(Error::malformed(
                        at,
                        format!("constant #{index} refers to #{i}, which is not {what}"),
                    )),
                }
            };
            match self.get(index)? {
                Constant::Class { name }
                | Constant::Module { name }
                | Constant::Package { name } => expect(name, &[tag::UTF8], "Utf8")?,
                Constant::String { value } => expect(value, &[tag::UTF8], "Utf8")?,
                Constant::MethodType { descriptor } => expect(descriptor, &[tag::UTF8], "Utf8")?,
                Constant::NameAndType { name, descriptor } => {
                    expect(name, &[tag::UTF8], "Utf8")?;
                    expect(descriptor, &[tag::UTF8], "Utf8")?;
                }
                Constant::Fieldref {
                    class,
                    name_and_type,
                }
                | Constant::Methodref {
                    class,
                    name_and_type,
                }
                | Constant::InterfaceMethodref {
                    class,
                    name_and_type,
                } => {
                    expect(class, &[tag::CLASS], "Class")?;
                    expect(name_and_type, &[tag::NAME_AND_TYPE], "NameAndType")?;
                }
                Constant::Dynamic { name_and_type, .. }
                | Constant::InvokeDynamic { name_and_type, .. } => {
                    expect(name_and_type, &[tag::NAME_AND_TYPE], "NameAndType")?
                }
                Constant::MethodHandle { kind, reference } => {
                    if !(1..=9).contains(&kind) {
                        bail!(
                            at,
                            "constant #{index} has invalid method handle kind {kind}"
                        );
                    }
                    let want: &[u8] = match kind {
                        1..=4 => &[tag::FIELDREF],
                        5 | 8 => &[tag::METHODREF],
                        9 => &[tag::INTERFACE_METHODREF],
                        _ => &[tag::METHODREF, tag::INTERFACE_METHODREF],
                    };
                    expect(reference, want, "a matching member reference")?;
                }
                _ => {}
            }
            let _ = t;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(entries: &[u8], count: u16) -> (Vec<u8>, usize) {
        let mut b = count.to_be_bytes().to_vec();
        b.extend_from_slice(entries);
        (b, 0)
    }

    #[test]
    fn long_takes_two_slots_and_tags_are_kept() {
        let (b, _) = pool(
            &[tag::LONG, 0, 0, 0, 0, 0, 0, 0, 42, tag::UTF8, 0, 1, b'x'],
            4,
        );
        let mut c = Cursor::new(&b);
        let p = ConstantPool::read(&b, &mut c).unwrap();
        assert_eq!(p.get(1).unwrap(), Constant::Long(42));
        assert!(p.get(2).is_err());
        assert_eq!(p.utf8(3).unwrap(), b"x");
        assert!(c.is_empty());
    }

    #[test]
    fn unknown_tag_names_the_entry() {
        let (b, _) = pool(&[21, 0, 0], 2);
        let err = ConstantPool::read_alone(&b).err().unwrap();
        assert_eq!(
            err.to_string(),
            "invalid constant pool tag 21 for entry #1 at offset 0x2"
        );
    }
}
