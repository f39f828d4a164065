//! LineNumberTable, LocalVariableTable and LocalVariableTypeTable (JVMS §4.7.12–14). Edits relocate them
//! by streaming (see `edit::method_writer`); these readers serve listings and tests.

use crate::bytes::Cursor;
use crate::classfile::RawAttribute;
use crate::error::Result;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineNumber {
    pub start_pc: u16,
    pub line: u16,
}

/// An entry of LocalVariableTable or LocalVariableTypeTable (the same layout; the latter holds a signature).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LocalVariable {
    pub start_pc: u16,
    pub length: u16,
    pub name: u16,
    pub descriptor: u16,
    pub index: u16,
}

pub fn read_line_numbers(a: &RawAttribute<'_>) -> Result<Vec<LineNumber>> {
    let mut c = Cursor::at(a.data, a.offset);
    let n = c.u2()? as usize;
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        v.push(LineNumber {
            start_pc: c.u2()?,
            line: c.u2()?,
        });
    }
    c.finish("LineNumberTable")?;
    Ok(v)
}

pub fn read_local_variables(a: &RawAttribute<'_>) -> Result<Vec<LocalVariable>> {
    let mut c = Cursor::at(a.data, a.offset);
    let n = c.u2()? as usize;
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        v.push(LocalVariable {
            start_pc: c.u2()?,
            length: c.u2()?,
            name: c.u2()?,
            descriptor: c.u2()?,
            index: c.u2()?,
        });
    }
    c.finish("LocalVariableTable")?;
    Ok(v)
}
