//! The `Code` attribute (JVMS §4.7.3): limits, the code array, the exception table and nested attributes.

use crate::bytes::Cursor;
use crate::classfile::{Attributes, RawAttribute};
use crate::error::{bail, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExceptionHandler {
    pub start_pc: u16,
    pub end_pc: u16,
    pub handler_pc: u16,
    /// 0 catches everything (`finally`).
    pub catch_type: u16,
}

#[derive(Clone, Debug)]
pub struct CodeAttribute<'a> {
    pub max_stack: u16,
    pub max_locals: u16,
    pub code: &'a [u8],
    /// Absolute offset of `code` in the class file.
    pub code_offset: usize,
    pub exception_table: Vec<ExceptionHandler>,
    pub attributes: Attributes<'a>,
}

impl<'a> CodeAttribute<'a> {
    pub fn read(attribute: &RawAttribute<'a>) -> Result<Self> {
        let mut c = Cursor::at(attribute.data, attribute.offset);
        let max_stack = c.u2()?;
        let max_locals = c.u2()?;
        let code_length = c.u4()? as usize;
        if code_length == 0 || code_length > 65535 {
            bail!(
                c.offset() - 4,
                "code_length {code_length} is not in 1..=65535"
            );
        }
        let code_offset = c.offset();
        let code = c.bytes(code_length)?;
        let n = c.u2()? as usize;
        let mut exception_table = Vec::with_capacity(n);
        for _ in 0..n {
            let at = c.offset();
            let h = ExceptionHandler {
                start_pc: c.u2()?,
                end_pc: c.u2()?,
                handler_pc: c.u2()?,
                catch_type: c.u2()?,
            };
            if h.start_pc >= h.end_pc
                || h.end_pc as usize > code_length
                || h.handler_pc as usize >= code_length
            {
                bail!(
                    at,
                    "exception table entry [{}, {}) -> {} is out of range",
                    h.start_pc,
                    h.end_pc,
                    h.handler_pc
                );
            }
            exception_table.push(h);
        }
        let attributes = Attributes::read(&mut c)?;
        c.finish("the Code attribute")?;
        Ok(CodeAttribute {
            max_stack,
            max_locals,
            code,
            code_offset,
            exception_table,
            attributes,
        })
    }
}
