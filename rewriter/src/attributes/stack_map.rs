//! StackMapTable (JVMS §4.7.4): the frame model, a fast offset-only relocation that keeps every frame's
//! encoding, and a full decode/encode used when frames must be added.

use std::borrow::Cow;

use crate::bytes::{ByteSink, Cursor};
use crate::constant_pool::ConstantPool;
use crate::error::{bail, Result};
use crate::pool_builder::PoolBuilder;

/// A class named in a frame. Equality is by name; the pool index is remembered so that re-encoding a frame
/// read from the class reuses the exact entry it named.
#[derive(Clone, Debug)]
pub struct ClassRef<'a> {
    pub name: Cow<'a, [u8]>,
    /// The Class constant this came from, or 0 when it must be found or added at encoding time.
    pub index: u16,
}

impl PartialEq for ClassRef<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

/// A verification type (JVMS §4.10.1.2).
#[derive(Clone, Debug, PartialEq)]
pub enum VType<'a> {
    Top,
    Integer,
    Float,
    Double,
    Long,
    Null,
    UninitializedThis,
    Object(ClassRef<'a>),
    /// An object created by the `new` at this bytecode offset and not yet initialised.
    Uninitialized(u16),
}

impl VType<'_> {
    /// Long and Double occupy two local slots (and two stack words).
    pub fn is_wide(&self) -> bool {
        matches!(self, VType::Long | VType::Double)
    }
}

/// How a frame was (or will be) encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameKind {
    Same,
    SameExtended,
    SameLocals1,
    SameLocals1Extended,
    Chop(u8),
    Append(u8),
    Full,
}

/// One frame at an absolute bytecode offset, with its complete locals and stack (long/double as one entry,
/// as in the attribute).
#[derive(Clone, Debug, PartialEq)]
pub struct Frame<'a> {
    pub offset: u32,
    pub locals: Vec<VType<'a>>,
    pub stack: Vec<VType<'a>>,
    /// The encoding it was read with; kept on re-encoding when still valid, so that untouched tables round-trip.
    pub kind: Option<FrameKind>,
}

fn read_vtype<'a>(c: &mut Cursor<'_>, pool: &ConstantPool<'a>) -> Result<VType<'a>> {
    let at = c.offset();
    Ok(match c.u1()? {
        0 => VType::Top,
        1 => VType::Integer,
        2 => VType::Float,
        3 => VType::Double,
        4 => VType::Long,
        5 => VType::Null,
        6 => VType::UninitializedThis,
        7 => {
            let index = c.u2()?;
            match pool.class_name(index) {
                Ok(name) => VType::Object(ClassRef {
                    name: Cow::Borrowed(name),
                    index,
                }),
                Err(_) => bail!(
                    at,
                    "stack map Object type refers to #{index}, which is not a Class"
                ),
            }
        }
        8 => VType::Uninitialized(c.u2()?),
        t => bail!(at, "invalid verification type tag {t} in StackMapTable"),
    })
}

fn skip_vtype(c: &mut Cursor<'_>) -> Result<()> {
    let at = c.offset();
    match c.u1()? {
        0..=6 => Ok(()),
        7 | 8 => c.skip(2),
        t => bail!(at, "invalid verification type tag {t} in StackMapTable"),
    }
}

fn write_vtype(t: &VType<'_>, out: &mut Vec<u8>, pool: &mut PoolBuilder<'_, '_>) -> Result<()> {
    match t {
        VType::Top => out.u1(0),
        VType::Integer => out.u1(1),
        VType::Float => out.u1(2),
        VType::Double => out.u1(3),
        VType::Long => out.u1(4),
        VType::Null => out.u1(5),
        VType::UninitializedThis => out.u1(6),
        VType::Object(class) => {
            out.u1(7);
            let index = if class.index != 0 {
                class.index
            } else {
                pool.class_bytes(&class.name)?
            };
            out.u2(index);
        }
        VType::Uninitialized(offset) => {
            out.u1(8);
            out.u2(*offset);
        }
    }
    Ok(())
}

/// Rewrites the table for moved code without decoding locals: each frame keeps its encoding (a compact
/// frame whose delta outgrows 63 becomes its extended form) and `Uninitialized` offsets are remapped.
/// `frame_offset` maps an old frame offset to its new one; `new_offset` maps the offset of a `new` opcode.
/// Returns the new offset of the last frame, if any.
pub fn relocate(
    attribute_data: &[u8],
    base: usize,
    mut frame_offset: impl FnMut(u32) -> Result<u32>,
    mut new_offset: impl FnMut(u32) -> Result<u32>,
    out: &mut Vec<u8>,
) -> Result<Option<u32>> {
    let mut c = Cursor::at(attribute_data, base);
    let n = c.u2()?;
    out.u2(n);
    let mut old_prev: i64 = -1;
    let mut new_prev: i64 = -1;
    // Copies `count` verification types, remapping Uninitialized offsets.
    let mut copy_types = |c: &mut Cursor<'_>, out: &mut Vec<u8>, count: usize| -> Result<()> {
        for _ in 0..count {
            let at = c.offset();
            let tag = c.u1()?;
            out.u1(tag);
            match tag {
                0..=6 => {}
                7 => out.u2(c.u2()?),
                8 => {
                    let old = c.u2()? as u32;
                    out.u2(new_offset(old)? as u16);
                }
                t => bail!(at, "invalid verification type tag {t} in StackMapTable"),
            }
        }
        Ok(())
    };
    for _ in 0..n {
        let at = c.offset();
        let frame_type = c.u1()?;
        let old_delta = match frame_type {
            0..=63 => frame_type as u32,
            64..=127 => frame_type as u32 - 64,
            128..=246 => bail!(at, "reserved stack map frame type {frame_type}"),
            _ => c.u2()? as u32,
        };
        let old_offset = (old_prev + 1 + old_delta as i64) as u32;
        old_prev = old_offset as i64;
        let new_off = frame_offset(old_offset)? as i64;
        let delta = new_off - new_prev - 1;
        if delta < 0 || delta > u16::MAX as i64 {
            bail!(at, "stack map frame at pc {old_offset} cannot be relocated");
        }
        let delta = delta as u16;
        new_prev = new_off;
        match frame_type {
            0..=63 | 251 => {
                if delta <= 63 && frame_type != 251 {
                    out.u1(delta as u8);
                } else {
                    out.u1(251);
                    out.u2(delta);
                }
            }
            64..=127 | 247 => {
                if delta <= 63 && frame_type != 247 {
                    out.u1(64 + delta as u8);
                } else {
                    out.u1(247);
                    out.u2(delta);
                }
                copy_types(&mut c, out, 1)?;
            }
            248..=250 => {
                out.u1(frame_type);
                out.u2(delta);
            }
            252..=254 => {
                out.u1(frame_type);
                out.u2(delta);
                copy_types(&mut c, out, (frame_type - 251) as usize)?;
            }
            _ => {
                out.u1(255);
                out.u2(delta);
                let nl = c.u2()?;
                out.u2(nl);
                copy_types(&mut c, out, nl as usize)?;
                let ns = c.u2()?;
                out.u2(ns);
                copy_types(&mut c, out, ns as usize)?;
            }
        }
    }
    c.finish("StackMapTable")?;
    Ok((new_prev >= 0).then_some(new_prev as u32))
}

/// Encoded size of the frame [`append_handler_frame`] writes.
pub const HANDLER_FRAME_LEN: u32 = 10;

/// Appends, to a table body written by [`relocate`] or [`encode`] that starts at `table_start`, a
/// `full_frame` at `offset` (after every other frame) with no locals and one `class_index` on the stack:
/// the frame of a catch-all handler.
pub fn append_handler_frame(
    out: &mut Vec<u8>,
    table_start: usize,
    last_offset: Option<u32>,
    offset: u32,
    class_index: u16,
) {
    let count = u16::from_be_bytes([out[table_start], out[table_start + 1]]);
    out.patch_u2(table_start, count + 1);
    let delta = match last_offset {
        Some(last) => offset - last - 1,
        None => offset,
    };
    out.u1(255);
    out.u2(delta as u16);
    out.u2(0);
    out.u2(1);
    out.u1(7);
    out.u2(class_index);
}

/// Lists the absolute offsets of every frame, without decoding types.
pub fn frame_offsets(attribute_data: &[u8], base: usize) -> Result<Vec<u32>> {
    let mut c = Cursor::at(attribute_data, base);
    let n = c.u2()?;
    let mut offsets = Vec::with_capacity(n as usize);
    let mut prev: i64 = -1;
    for _ in 0..n {
        let at = c.offset();
        let frame_type = c.u1()?;
        let (delta, types) = match frame_type {
            0..=63 => (frame_type as u32, 0),
            64..=127 => (frame_type as u32 - 64, 1),
            128..=246 => bail!(at, "reserved stack map frame type {frame_type}"),
            247 => (c.u2()? as u32, 1),
            248..=251 => (c.u2()? as u32, 0),
            252..=254 => (c.u2()? as u32, (frame_type - 251) as usize),
            _ => {
                let d = c.u2()? as u32;
                let nl = c.u2()?;
                for _ in 0..nl {
                    skip_vtype(&mut c)?;
                }
                let ns = c.u2()? as usize;
                (d, ns)
            }
        };
        for _ in 0..types {
            skip_vtype(&mut c)?;
        }
        let offset = prev + 1 + delta as i64;
        offsets.push(offset as u32);
        prev = offset;
    }
    c.finish("StackMapTable")?;
    Ok(offsets)
}

/// Decodes every frame with complete locals, starting from the method's implicit initial frame.
pub fn decode<'a>(
    attribute_data: &[u8],
    base: usize,
    pool: &ConstantPool<'a>,
    initial_locals: &[VType<'a>],
) -> Result<Vec<Frame<'a>>> {
    let mut c = Cursor::at(attribute_data, base);
    let n = c.u2()?;
    let mut frames: Vec<Frame<'a>> = Vec::with_capacity(n as usize);
    let mut locals: Vec<VType<'a>> = initial_locals.to_vec();
    let mut prev: i64 = -1;
    for _ in 0..n {
        let at = c.offset();
        let frame_type = c.u1()?;
        let mut stack = Vec::new();
        let (delta, kind) = match frame_type {
            0..=63 => (frame_type as u32, FrameKind::Same),
            64..=127 => {
                stack.push(read_vtype(&mut c, pool)?);
                (frame_type as u32 - 64, FrameKind::SameLocals1)
            }
            128..=246 => bail!(at, "reserved stack map frame type {frame_type}"),
            247 => {
                let d = c.u2()? as u32;
                stack.push(read_vtype(&mut c, pool)?);
                (d, FrameKind::SameLocals1Extended)
            }
            248..=250 => {
                let k = 251 - frame_type;
                if (k as usize) > locals.len() {
                    bail!(
                        at,
                        "chop frame removes {k} locals but only {} exist",
                        locals.len()
                    );
                }
                locals.truncate(locals.len() - k as usize);
                (c.u2()? as u32, FrameKind::Chop(k))
            }
            251 => (c.u2()? as u32, FrameKind::SameExtended),
            252..=254 => {
                let d = c.u2()? as u32;
                for _ in 0..frame_type - 251 {
                    locals.push(read_vtype(&mut c, pool)?);
                }
                (d, FrameKind::Append(frame_type - 251))
            }
            _ => {
                let d = c.u2()? as u32;
                let nl = c.u2()?;
                locals.clear();
                for _ in 0..nl {
                    locals.push(read_vtype(&mut c, pool)?);
                }
                let ns = c.u2()?;
                for _ in 0..ns {
                    stack.push(read_vtype(&mut c, pool)?);
                }
                (d, FrameKind::Full)
            }
        };
        let offset = prev + 1 + delta as i64;
        prev = offset;
        frames.push(Frame {
            offset: offset as u32,
            locals: locals.clone(),
            stack,
            kind: Some(kind),
        });
    }
    c.finish("StackMapTable")?;
    Ok(frames)
}

/// Whether `kind` can express `frame` after a frame with locals `prev`.
fn kind_fits(kind: FrameKind, prev: &[VType<'_>], frame: &Frame<'_>, delta: u32) -> bool {
    let same_locals = frame.locals == prev;
    match kind {
        FrameKind::Same => delta <= 63 && frame.stack.is_empty() && same_locals,
        FrameKind::SameExtended => frame.stack.is_empty() && same_locals,
        FrameKind::SameLocals1 => delta <= 63 && frame.stack.len() == 1 && same_locals,
        FrameKind::SameLocals1Extended => frame.stack.len() == 1 && same_locals,
        FrameKind::Chop(k) => {
            frame.stack.is_empty()
                && prev.len() == frame.locals.len() + k as usize
                && prev[..frame.locals.len()] == frame.locals[..]
        }
        FrameKind::Append(k) => {
            frame.stack.is_empty()
                && frame.locals.len() == prev.len() + k as usize
                && frame.locals[..prev.len()] == prev[..]
        }
        FrameKind::Full => true,
    }
}

/// The most compact encoding of `frame` after `prev`.
fn compact_kind(prev: &[VType<'_>], frame: &Frame<'_>, delta: u32) -> FrameKind {
    let mut candidates = vec![
        FrameKind::Same,
        FrameKind::SameExtended,
        FrameKind::SameLocals1,
        FrameKind::SameLocals1Extended,
    ];
    if frame.locals.len() < prev.len() {
        candidates.push(FrameKind::Chop(
            (prev.len() - frame.locals.len()).min(4) as u8
        ));
    } else if frame.locals.len() > prev.len() {
        candidates.push(FrameKind::Append(
            (frame.locals.len() - prev.len()).min(4) as u8
        ));
    }
    candidates
        .into_iter()
        .find(|&k| {
            !matches!(k, FrameKind::Chop(4) | FrameKind::Append(4))
                && kind_fits(k, prev, frame, delta)
        })
        .unwrap_or(FrameKind::Full)
}

/// Encodes `frames` (sorted by offset) as a StackMapTable body. Each frame keeps its recorded kind when
/// that still fits; new or changed frames get the most compact kind.
pub fn encode(
    frames: &[Frame<'_>],
    initial_locals: &[VType<'_>],
    pool: &mut PoolBuilder<'_, '_>,
    out: &mut Vec<u8>,
) -> Result<()> {
    out.u2(frames.len() as u16);
    let mut prev_locals: &[VType<'_>] = initial_locals;
    let mut prev_offset: i64 = -1;
    for frame in frames {
        let delta = (frame.offset as i64 - prev_offset - 1) as u32;
        prev_offset = frame.offset as i64;
        let kind = match frame.kind {
            Some(k) if kind_fits(k, prev_locals, frame, delta) => k,
            Some(FrameKind::Same)
                if kind_fits(FrameKind::SameExtended, prev_locals, frame, delta) =>
            {
                FrameKind::SameExtended
            }
            Some(FrameKind::SameLocals1)
                if kind_fits(FrameKind::SameLocals1Extended, prev_locals, frame, delta) =>
            {
                FrameKind::SameLocals1Extended
            }
            _ => compact_kind(prev_locals, frame, delta),
        };
        match kind {
            FrameKind::Same => out.u1(delta as u8),
            FrameKind::SameLocals1 => out.u1(64 + delta as u8),
            FrameKind::SameExtended => {
                out.u1(251);
                out.u2(delta as u16);
            }
            FrameKind::SameLocals1Extended => {
                out.u1(247);
                out.u2(delta as u16);
            }
            FrameKind::Chop(k) => {
                out.u1(251 - k);
                out.u2(delta as u16);
            }
            FrameKind::Append(k) => {
                out.u1(251 + k);
                out.u2(delta as u16);
                for t in &frame.locals[prev_locals.len()..] {
                    write_vtype(t, out, pool)?;
                }
            }
            FrameKind::Full => {
                out.u1(255);
                out.u2(delta as u16);
                out.u2(frame.locals.len() as u16);
                for t in &frame.locals {
                    write_vtype(t, out, pool)?;
                }
                out.u2(frame.stack.len() as u16);
            }
        }
        match kind {
            FrameKind::SameLocals1 | FrameKind::SameLocals1Extended | FrameKind::Full => {
                for t in &frame.stack {
                    write_vtype(t, out, pool)?;
                }
            }
            _ => {}
        }
        prev_locals = &frame.locals;
    }
    Ok(())
}

/// The locals of a method's implicit first frame (JVMS §4.10.1.6), in frame form (long/double one entry).
pub fn initial_locals<'a>(
    class_name: &'a [u8],
    this_index: u16,
    method_name: &[u8],
    descriptor: &'a [u8],
    is_static: bool,
) -> Result<Vec<VType<'a>>> {
    let mut locals = Vec::new();
    if !is_static {
        if method_name == b"<init>" && class_name != b"java/lang/Object" {
            locals.push(VType::UninitializedThis);
        } else {
            locals.push(VType::Object(ClassRef {
                name: Cow::Borrowed(class_name),
                index: this_index,
            }));
        }
    }
    let mut d = crate::descriptor::Params::new(descriptor)?;
    while let Some(t) = d.next_type()? {
        locals.push(crate::descriptor::vtype_of(t));
    }
    Ok(locals)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relocation_widens_same_frame_when_delta_grows() {
        // one same_frame at pc 10
        let table = [0u8, 1, 10];
        let mut out = Vec::new();
        relocate(&table, 0, |pc| Ok(pc + 100), Ok, &mut out).unwrap();
        assert_eq!(out, [0, 1, 251, 0, 110]);
    }

    #[test]
    fn relocation_remaps_uninitialized() {
        // same_locals_1_stack_item at pc 5 with Uninitialized(2)
        let table = [0u8, 1, 64 + 5, 8, 0, 2];
        let mut out = Vec::new();
        relocate(&table, 0, |pc| Ok(pc + 1), |pc| Ok(pc + 1), &mut out).unwrap();
        assert_eq!(out, [0, 1, 64 + 6, 8, 0, 3]);
    }
}
