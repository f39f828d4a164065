//! The class-file model and its reader. Reading borrows: members and attributes are views into the
//! input, so a class that nothing edits can be written back byte for byte.

use crate::bytes::{read_u2, Cursor};
use crate::constant_pool::ConstantPool;
use crate::error::{bail, Result};

/// Newest class-file major version this reader accepts (JDK 25 = 69, with headroom for preview builds).
pub const MAX_MAJOR_VERSION: u16 = 70;
pub const MIN_MAJOR_VERSION: u16 = 45;

pub mod access {
    pub const PUBLIC: u16 = 0x0001;
    pub const PRIVATE: u16 = 0x0002;
    pub const STATIC: u16 = 0x0008;
    pub const FINAL: u16 = 0x0010;
    pub const SYNCHRONIZED: u16 = 0x0020;
    pub const BRIDGE: u16 = 0x0040;
    pub const NATIVE: u16 = 0x0100;
    pub const INTERFACE: u16 = 0x0200;
    pub const ABSTRACT: u16 = 0x0400;
    pub const SYNTHETIC: u16 = 0x1000;
    pub const MODULE: u16 = 0x8000;
}

/// An attribute whose body is kept as the original bytes.
#[derive(Clone, Copy, Debug)]
pub struct RawAttribute<'a> {
    pub name_index: u16,
    pub data: &'a [u8],
    /// Absolute offset of `data` in the class file, for error messages.
    pub offset: usize,
}

/// A field or method.
#[derive(Clone, Debug)]
pub struct Member<'a> {
    pub access: u16,
    pub name_index: u16,
    pub descriptor_index: u16,
    pub attributes: Attributes<'a>,
    /// The whole `field_info`/`method_info`, copied through when the member is not edited.
    pub raw: &'a [u8],
}

/// A parsed class file.
#[derive(Clone)]
pub struct ClassFile<'a> {
    pub minor_version: u16,
    pub major_version: u16,
    pub pool: ConstantPool<'a>,
    pub access: u16,
    pub this_class: u16,
    pub super_class: u16,
    /// `interfaces_count` and the indexes, as read.
    pub interfaces: &'a [u8],
    pub fields: Vec<Member<'a>>,
    pub methods: Vec<Member<'a>>,
    pub attributes: Attributes<'a>,
    /// The `fields_count` through `methods` region, copied through when no method is edited.
    pub members_raw: &'a [u8],
    /// The internal name of `this_class`, resolved once: edits ask for it at every method.
    name: &'a [u8],
}

impl<'a> ClassFile<'a> {
    pub fn read(bytes: &'a [u8]) -> Result<Self> {
        let mut c = Cursor::new(bytes);
        if c.u4()? != 0xCAFE_BABE {
            bail!(0, "not a class file: bad magic number");
        }
        let minor_version = c.u2()?;
        let major_version = c.u2()?;
        if !(MIN_MAJOR_VERSION..=MAX_MAJOR_VERSION).contains(&major_version) {
            bail!(
                6,
                "unsupported class file version {major_version}.{minor_version}"
            );
        }
        let pool = ConstantPool::read(bytes, &mut c)?;
        let access = c.u2()?;
        let this_class = c.u2()?;
        let super_class = c.u2()?;
        let interfaces_start = c.offset();
        let interfaces_count = c.u2()? as usize;
        c.skip(interfaces_count * 2)?;
        let interfaces = &bytes[interfaces_start..c.offset()];
        let members_start = c.offset();
        let fields = read_members(bytes, &mut c)?;
        let methods = read_members(bytes, &mut c)?;
        let members_raw = &bytes[members_start..c.offset()];
        let attributes = Attributes::read(&mut c)?;
        c.finish("the class file")?;
        // The one reference every caller follows, so it is checked here. Everything else is checked where
        // it is used: every pool lookup returns a `Result`, so a class with a dangling index fails cleanly
        // when (and only when) an edit needs that entry, and untouched classes pay nothing.
        // [`ConstantPool::validate`] checks all.
        let Ok(name) = pool.class_name(this_class) else {
            bail!(0, "this_class #{this_class} is not a Class constant");
        };
        Ok(ClassFile {
            minor_version,
            major_version,
            pool,
            access,
            this_class,
            super_class,
            interfaces,
            fields,
            methods,
            attributes,
            members_raw,
            name,
        })
    }

    /// The internal name of this class, for example `java/lang/String`.
    pub fn name(&self) -> &'a [u8] {
        self.name
    }

    pub fn attribute_name(&self, a: &RawAttribute<'_>) -> &'a [u8] {
        self.pool.utf8(a.name_index).unwrap_or(b"")
    }

    /// Finds a member attribute by name.
    pub fn member_attribute<'m>(&self, m: &'m Member<'a>, name: &[u8]) -> Option<RawAttribute<'a>> {
        m.attributes.iter().find(|a| self.attribute_name(a) == name)
    }
}

fn read_members<'a>(bytes: &'a [u8], c: &mut Cursor<'a>) -> Result<Vec<Member<'a>>> {
    let count = c.u2()? as usize;
    let mut members = Vec::with_capacity(count);
    for _ in 0..count {
        let start = c.offset();
        let access = c.u2()?;
        let name_index = c.u2()?;
        let descriptor_index = c.u2()?;
        let attributes = Attributes::read(c)?;
        members.push(Member {
            access,
            name_index,
            descriptor_index,
            attributes,
            raw: &bytes[start..c.offset()],
        });
    }
    Ok(members)
}

/// An `attributes_count` and its attributes, as a view over the original bytes. The extent is checked once
/// when read; iterating decodes the 6-byte headers again, which costs less than storing them (most
/// members are never looked at).
#[derive(Clone, Copy, Debug)]
pub struct Attributes<'a> {
    count: u16,
    /// The attributes, without the count.
    data: &'a [u8],
    /// Absolute offset of `data` in the class file.
    offset: usize,
}

impl<'a> Attributes<'a> {
    pub(crate) fn read(c: &mut Cursor<'a>) -> Result<Self> {
        let count = c.u2()?;
        let start = c.position();
        let offset = c.offset();
        let all = c.rest();
        for _ in 0..count {
            c.skip(2)?;
            let len = c.u4()? as usize;
            c.skip(len)?;
        }
        let data = &all[..c.position() - start];
        Ok(Attributes {
            count,
            data,
            offset,
        })
    }

    pub fn len(&self) -> usize {
        self.count as usize
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    pub fn iter(&self) -> AttributeIter<'a> {
        AttributeIter {
            left: self.count,
            data: self.data,
            pos: 0,
            offset: self.offset,
        }
    }
}

impl<'a> IntoIterator for &Attributes<'a> {
    type Item = RawAttribute<'a>;
    type IntoIter = AttributeIter<'a>;
    fn into_iter(self) -> AttributeIter<'a> {
        self.iter()
    }
}

pub struct AttributeIter<'a> {
    left: u16,
    data: &'a [u8],
    pos: usize,
    offset: usize,
}

impl<'a> Iterator for AttributeIter<'a> {
    type Item = RawAttribute<'a>;

    #[inline]
    fn next(&mut self) -> Option<RawAttribute<'a>> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        // The extent was checked by `Attributes::read`, so these reads are in bounds.
        let p = self.pos;
        let name_index = read_u2(self.data, p);
        let len = u32::from_be_bytes([
            self.data[p + 2],
            self.data[p + 3],
            self.data[p + 4],
            self.data[p + 5],
        ]) as usize;
        let start = p + 6;
        self.pos = start + len;
        Some(RawAttribute {
            name_index,
            data: &self.data[start..start + len],
            offset: self.offset + start,
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left as usize, Some(self.left as usize))
    }
}

impl ExactSizeIterator for AttributeIter<'_> {}
