//! Runtime[In]VisibleTypeAnnotations on a Code attribute (JVMS §4.7.20): only the bytecode offsets inside
//! the target_info change when code moves; everything else is copied as is.

use crate::bytes::{ByteSink, Cursor};
use crate::error::{bail, Result};

/// Maps the offsets a type annotation holds.
pub trait OffsetMap {
    /// An offset that names an instruction (`new`, `instanceof`, a cast, a method reference…).
    fn instruction(&mut self, pc: u32) -> Result<u32>;
    /// The start of a local variable's live range, and its end (exclusive).
    fn range(&mut self, start: u32, end: u32) -> Result<(u32, u32)>;
}

/// Copies a Code-level type annotations attribute body with every offset remapped.
pub fn relocate(
    data: &[u8],
    base: usize,
    map: &mut impl OffsetMap,
    out: &mut Vec<u8>,
) -> Result<()> {
    let mut c = Cursor::at(data, base);
    let n = c.u2()?;
    out.u2(n);
    for _ in 0..n {
        let at = c.offset();
        let target_type = c.u1()?;
        out.u1(target_type);
        match target_type {
            0x40 | 0x41 => {
                let len = c.u2()?;
                out.u2(len);
                for _ in 0..len {
                    let start = c.u2()? as u32;
                    let length = c.u2()? as u32;
                    let index = c.u2()?;
                    let (s, e) = map.range(start, start + length)?;
                    out.u2(s as u16);
                    out.u2((e - s) as u16);
                    out.u2(index);
                }
            }
            0x42 => out.u2(c.u2()?),
            0x43..=0x46 => out.u2(map.instruction(c.u2()? as u32)? as u16),
            0x47..=0x4b => {
                out.u2(map.instruction(c.u2()? as u32)? as u16);
                out.u1(c.u1()?);
            }
            other => bail!(
                at,
                "type annotation target {other:#04x} is not valid on a Code attribute"
            ),
        }
        let start = c.position();
        let path_length = c.u1()? as usize;
        c.skip(path_length * 2)?;
        c.skip(2)?; // type_index
        let pairs = c.u2()?;
        for _ in 0..pairs {
            c.skip(2)?;
            skip_element_value(&mut c, 0)?;
        }
        out.extend_from_slice(&data[start..c.position()]);
    }
    c.finish("type annotations")
}

fn skip_element_value(c: &mut Cursor<'_>, depth: u32) -> Result<()> {
    if depth > 64 {
        bail!(c.offset(), "annotation element values nested too deeply");
    }
    let at = c.offset();
    match c.u1()? {
        b'B' | b'C' | b'D' | b'F' | b'I' | b'J' | b'S' | b'Z' | b's' | b'c' => c.skip(2),
        b'e' => c.skip(4),
        b'@' => {
            c.skip(2)?;
            let pairs = c.u2()?;
            for _ in 0..pairs {
                c.skip(2)?;
                skip_element_value(c, depth + 1)?;
            }
            Ok(())
        }
        b'[' => {
            let n = c.u2()?;
            for _ in 0..n {
                skip_element_value(c, depth + 1)?;
            }
            Ok(())
        }
        t => bail!(at, "invalid annotation element tag {t:#04x}"),
    }
}
