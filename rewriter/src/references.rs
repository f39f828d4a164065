//! Constant-pool indexes past the end of the pool, anywhere in a class.
//!
//! Such an index makes a class malformed, and the JVM rejects it (ClassFormatError, or VerifyError for an
//! instruction operand). An edit that appends constants would give the index a meaning: the JVM would then
//! accept the class, or reject it for another reason (naming `java/lang/HeapProxy`). So before a class is
//! written with an extended pool, every index the JVM or reflection may read is checked against the original
//! `constant_pool_count`. Kinds are not checked here: original entries keep their indexes, so an index to the
//! wrong kind of entry stays as wrong as it was, and the JVM reports it as it would have.
//!
//! Instruction operands are not walked here: decoding already records the largest one
//! ([`crate::bytecode::instructions::Decoded::max_pool_index`]), and the caller passes the maximum over the
//! class. A structure this walk cannot read is reported as malformed too, so the class reaches the JVM as it
//! was and the JVM gives its own verdict.

use crate::bytes::Cursor;
use crate::classfile::{Attributes, ClassFile};
use crate::error::{bail, Result};

/// Checks every constant-pool index of `class` against its pool's count; `code_max` is the largest index
/// named by an instruction of any method.
pub fn check_in_range(class: &ClassFile<'_>, code_max: u16) -> Result<()> {
    let mut w = Walk {
        class,
        count: class.pool.count(),
        kinds: [(0, Kind::Opaque); KIND_SLOTS],
    };
    class.pool.check_references_in_range()?;
    if code_max >= w.count {
        bail!(
            0,
            "an instruction names constant #{code_max}, past the end of the pool ({} entries)",
            w.count
        );
    }
    for index in [class.this_class, class.super_class] {
        w.index(index, 0)?;
    }
    w.list(&mut Cursor::new(class.interfaces))?;
    for m in class.fields.iter().chain(&class.methods) {
        w.index(m.name_index, 0)?;
        w.index(m.descriptor_index, 0)?;
        w.attributes(&m.attributes)?;
    }
    w.attributes(&class.attributes)
}

struct Walk<'c, 'a> {
    class: &'c ClassFile<'a>,
    count: u16,
    /// Attribute kinds by name index, direct-mapped (`name_index % KIND_SLOTS`; 0 marks an empty slot, as
    /// index 0 names nothing): a class names each attribute kind through one Utf8 entry, and looking the
    /// name up and comparing it with every known name at each attribute cost more than the walk itself.
    kinds: [(u16, Kind); KIND_SLOTS],
}

const KIND_SLOTS: usize = 16;

/// What the walk does with an attribute, by its name (JVMS §4.7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Unknown attributes are opaque to the JVM too, and are skipped; so are the known ones that hold
    /// no pool index (LineNumberTable and others).
    Opaque,
    OneIndex,
    IndexList,
    EnclosingMethod,
    InnerClasses,
    BootstrapMethods,
    MethodParameters,
    Record,
    Module,
    Annotations,
    ParameterAnnotations,
    TypeAnnotations,
    AnnotationDefault,
    LocalVariables,
    StackMapTable,
    Code,
}

impl Kind {
    fn of(name: &[u8]) -> Kind {
        match name {
            b"ConstantValue" | b"Signature" | b"SourceFile" | b"NestHost" | b"ModuleMainClass" => {
                Kind::OneIndex
            }
            b"Exceptions" | b"NestMembers" | b"PermittedSubclasses" | b"ModulePackages" => {
                Kind::IndexList
            }
            b"EnclosingMethod" => Kind::EnclosingMethod,
            b"InnerClasses" => Kind::InnerClasses,
            b"BootstrapMethods" => Kind::BootstrapMethods,
            b"MethodParameters" => Kind::MethodParameters,
            b"Record" => Kind::Record,
            b"Module" => Kind::Module,
            b"RuntimeVisibleAnnotations" | b"RuntimeInvisibleAnnotations" => Kind::Annotations,
            b"RuntimeVisibleParameterAnnotations" | b"RuntimeInvisibleParameterAnnotations" => {
                Kind::ParameterAnnotations
            }
            b"RuntimeVisibleTypeAnnotations" | b"RuntimeInvisibleTypeAnnotations" => {
                Kind::TypeAnnotations
            }
            b"AnnotationDefault" => Kind::AnnotationDefault,
            b"LocalVariableTable" | b"LocalVariableTypeTable" => Kind::LocalVariables,
            b"StackMapTable" => Kind::StackMapTable,
            b"Code" => Kind::Code,
            _ => Kind::Opaque,
        }
    }
}

impl Walk<'_, '_> {
    #[inline]
    fn index(&self, index: u16, at: usize) -> Result<()> {
        if index >= self.count {
            bail!(
                at,
                "constant pool index #{index} is past the end of the pool ({} entries)",
                self.count
            );
        }
        Ok(())
    }

    #[inline]
    fn u2(&self, c: &mut Cursor<'_>) -> Result<()> {
        let at = c.offset();
        let index = c.u2()?;
        self.index(index, at)
    }

    /// A u2 count followed by that many indexes.
    fn list(&self, c: &mut Cursor<'_>) -> Result<()> {
        for _ in 0..c.u2()? {
            self.u2(c)?;
        }
        Ok(())
    }

    fn attributes(&mut self, attributes: &Attributes<'_>) -> Result<()> {
        let mut codes = 0;
        for a in attributes {
            // The name index sits 6 bytes before the body.
            self.index(a.name_index, a.offset - 6)?;
            let kind = self.kind(a.name_index);
            if kind == Kind::Code {
                codes += 1;
                if codes > 1 {
                    bail!(a.offset, "a second Code attribute");
                }
            }
            let mut c = Cursor::at(a.data, a.offset);
            self.attribute(kind, &mut c)?;
            if !c.is_empty() {
                let name = self.class.attribute_name(&a);
                c.finish(&String::from_utf8_lossy(name))?;
            }
        }
        Ok(())
    }

    fn kind(&mut self, name_index: u16) -> Kind {
        let slot = &mut self.kinds[name_index as usize % KIND_SLOTS];
        if slot.0 != name_index || name_index == 0 {
            *slot = (
                name_index,
                Kind::of(self.class.pool.utf8(name_index).unwrap_or(b"")),
            );
        }
        slot.1
    }

    /// The indexes inside one attribute; the caller checks that nothing is left after them (opaque
    /// attributes are not read at all).
    fn attribute(&mut self, kind: Kind, c: &mut Cursor<'_>) -> Result<()> {
        match kind {
            Kind::OneIndex => self.u2(c)?,
            Kind::IndexList => self.list(c)?,
            Kind::EnclosingMethod => {
                self.u2(c)?;
                self.u2(c)?;
            }
            Kind::InnerClasses => {
                for _ in 0..c.u2()? {
                    for _ in 0..3 {
                        self.u2(c)?;
                    }
                    c.skip(2)?;
                }
            }
            Kind::BootstrapMethods => {
                for _ in 0..c.u2()? {
                    self.u2(c)?;
                    self.list(c)?;
                }
            }
            Kind::MethodParameters => {
                for _ in 0..c.u1()? {
                    self.u2(c)?;
                    c.skip(2)?;
                }
            }
            Kind::Record => {
                for _ in 0..c.u2()? {
                    self.u2(c)?;
                    self.u2(c)?;
                    let nested = Attributes::read(c)?;
                    self.attributes(&nested)?;
                }
            }
            Kind::Module => self.module(c)?,
            Kind::Annotations => {
                for _ in 0..c.u2()? {
                    self.annotation(c, 0)?;
                }
            }
            Kind::ParameterAnnotations => {
                for _ in 0..c.u1()? {
                    for _ in 0..c.u2()? {
                        self.annotation(c, 0)?;
                    }
                }
            }
            Kind::TypeAnnotations => {
                for _ in 0..c.u2()? {
                    self.type_annotation(c)?;
                }
            }
            Kind::AnnotationDefault => self.element_value(c, 0)?,
            Kind::LocalVariables => {
                for _ in 0..c.u2()? {
                    c.skip(4)?;
                    self.u2(c)?;
                    self.u2(c)?;
                    c.skip(2)?;
                }
            }
            Kind::StackMapTable => self.stack_map(c)?,
            Kind::Code => {
                c.skip(4)?; // max_stack, max_locals
                let length = c.u4()? as usize;
                c.skip(length)?;
                for _ in 0..c.u2()? {
                    c.skip(6)?;
                    self.u2(c)?; // catch_type, 0 for any
                }
                let nested = Attributes::read(c)?;
                self.attributes(&nested)?;
            }
            Kind::Opaque => c.skip(c.remaining())?,
        }
        Ok(())
    }

    fn module(&self, c: &mut Cursor<'_>) -> Result<()> {
        self.u2(c)?; // name
        c.skip(2)?; // flags
        self.u2(c)?; // version, 0 for none
        for _ in 0..c.u2()? {
            self.u2(c)?; // requires
            c.skip(2)?;
            self.u2(c)?; // version
        }
        for _exports_then_opens in 0..2 {
            for _ in 0..c.u2()? {
                self.u2(c)?; // package
                c.skip(2)?;
                self.list(c)?; // to modules
            }
        }
        self.list(c)?; // uses
        for _ in 0..c.u2()? {
            self.u2(c)?; // service
            self.list(c)?; // implementations
        }
        Ok(())
    }

    fn annotation(&self, c: &mut Cursor<'_>, depth: u32) -> Result<()> {
        self.u2(c)?; // type
        for _ in 0..c.u2()? {
            self.u2(c)?; // element name
            self.element_value(c, depth + 1)?;
        }
        Ok(())
    }

    fn element_value(&self, c: &mut Cursor<'_>, depth: u32) -> Result<()> {
        if depth > 256 {
            bail!(c.offset(), "annotation element values nested too deeply");
        }
        let at = c.offset();
        match c.u1()? {
            b'B' | b'C' | b'D' | b'F' | b'I' | b'J' | b'S' | b'Z' | b's' | b'c' => self.u2(c),
            b'e' => {
                self.u2(c)?;
                self.u2(c)
            }
            b'@' => self.annotation(c, depth),
            b'[' => {
                for _ in 0..c.u2()? {
                    self.element_value(c, depth + 1)?;
                }
                Ok(())
            }
            t => bail!(at, "invalid annotation element tag {t:#04x}"),
        }
    }

    fn type_annotation(&self, c: &mut Cursor<'_>) -> Result<()> {
        let at = c.offset();
        match c.u1()? {
            0x00 | 0x01 | 0x16 => c.skip(1)?,
            0x10 | 0x17 | 0x42..=0x46 => c.skip(2)?,
            0x11 | 0x12 => c.skip(2)?,
            0x13..=0x15 => {}
            0x40 | 0x41 => {
                let n = c.u2()? as usize;
                c.skip(n * 6)?;
            }
            0x47..=0x4b => c.skip(3)?,
            t => bail!(at, "invalid type annotation target {t:#04x}"),
        }
        let path = c.u1()? as usize;
        c.skip(path * 2)?;
        self.annotation(c, 0)
    }

    fn stack_map(&self, c: &mut Cursor<'_>) -> Result<()> {
        for _ in 0..c.u2()? {
            let at = c.offset();
            let t = c.u1()?;
            let (skip, types) = match t {
                0..=63 => (0, 0),
                64..=127 => (0, 1),
                247 => (2, 1),
                248..=251 => (2, 0),
                252..=254 => (2, (t - 251) as u16),
                255 => {
                    c.skip(2)?;
                    let locals = c.u2()?;
                    self.verification_types(c, locals)?;
                    (0, c.u2()?)
                }
                _ => bail!(at, "invalid stack map frame type {t}"),
            };
            c.skip(skip)?;
            self.verification_types(c, types)?;
        }
        Ok(())
    }

    fn verification_types(&self, c: &mut Cursor<'_>, n: u16) -> Result<()> {
        for _ in 0..n {
            let at = c.offset();
            match c.u1()? {
                0..=6 => {}
                7 => self.u2(c)?,
                8 => c.skip(2)?,
                t => bail!(at, "invalid verification type tag {t} in StackMapTable"),
            }
        }
        Ok(())
    }
}
