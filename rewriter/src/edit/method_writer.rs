//! Writes the new `Code` attribute of an edited method: the code array with insertions and widened
//! branches, and every structure that holds a bytecode offset, relocated.

use super::insertions::{Insertions, Place};
use super::layout::{Event, Layout};
use super::stack_depth::{self, DescriptorWords};
use super::widening_frames;
use crate::attributes::code::CodeAttribute;
use crate::attributes::names;
use crate::attributes::stack_map::{self, HANDLER_FRAME_LEN};
use crate::attributes::type_annotations::{self, OffsetMap};
use crate::bytecode::instructions::{branch_offset, read_switch, switch_padding, Instruction};
use crate::bytecode::opcode::{self as op, Shape};
use crate::bytes::{ByteSink, Cursor};
use crate::classfile::{ClassFile, Member, RawAttribute};
use crate::error::{bail, Error, Result};
use crate::pool_builder::PoolBuilder;

// Memo slots of the constants every handler needs, above the probes' (probes/heap_proxy.rs).
const MEMO_THROWABLE: usize = crate::probes::heap_proxy::MEMO_PROXY_CLASS + 1;
const MEMO_STACK_MAP_TABLE: usize = MEMO_THROWABLE + 1;
const _: () = assert!(MEMO_STACK_MAP_TABLE < crate::pool_builder::MEMO_SLOTS);

/// How StackMapTable frames are carried over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameMode {
    /// Re-address frames in their encoded form (fast); decode fully only when frames must be added.
    Relocate,
    /// Always decode every frame and encode it again (tests use this to prove the frame model lossless).
    Rebuild,
}

/// Everything about the method being written that the relocation needs.
pub struct MethodInput<'m, 'a> {
    pub class: &'m ClassFile<'a>,
    pub method: &'m Member<'a>,
    pub code: &'m CodeAttribute<'a>,
    pub insns: &'m [Instruction],
    /// Indexes into `insns` of the branches and switches, in order.
    pub specials: &'m [u32],
    /// One bit per code byte, set where an instruction starts.
    pub starts: &'m [u64],
}

/// Writes the body of the new Code attribute (without its name and length) into `out`. `events` is a
/// buffer the caller keeps from method to method, so the layout allocates nothing per method;
/// `descriptor_words` is kept from method to method of one class.
pub fn write_code(
    m: &MethodInput<'_, '_>,
    ins: &Insertions,
    frames: FrameMode,
    pool: &mut PoolBuilder<'_, '_>,
    out: &mut Vec<u8>,
    events: &mut Vec<Event>,
    descriptor_words: &mut DescriptorWords,
) -> Result<()> {
    let code = m.code;
    let layout = Layout::compute(
        code.code,
        code.code_offset,
        m.insns,
        m.specials,
        m.starts,
        ins,
        std::mem::take(events),
    )?;
    // The catch-all handler, if any, goes right after the relocated code.
    let handler_pc = layout.code_length;
    let code_length = handler_pc + ins.handler.len() as u32;
    if code_length > 65535 {
        return Err(Error::unsupported(format!(
            "method would grow to {code_length} bytes, over the 65535-byte limit; left unedited"
        )));
    }
    let max_stack = code
        .max_stack
        .checked_add(ins.extra_stack)
        .ok_or_else(|| Error::unsupported("max_stack overflow"))?
        .max(ins.handler_stack);
    let class = m.class;
    // Older classes are checked by the type-inferencing verifier, which has no frames to make the depth a
    // linear walk: for them a too-small max_stack may still be hidden by the raise.
    if max_stack > code.max_stack && class.major_version >= 50 {
        let stack_map = code
            .attributes
            .iter()
            .find(|a| class.attribute_name(a) == names::STACK_MAP_TABLE)
            .map(|a| (a.data, a.offset));
        let depth =
            stack_depth::max_depth(code.code, m.insns, &class.pool, stack_map, descriptor_words)?;
        if depth > code.max_stack as u32 {
            bail!(
                code.code_offset,
                "max_stack {} is below the {depth} words the code needs",
                code.max_stack
            );
        }
    }
    out.u2(max_stack);
    out.u2(code.max_locals);
    out.u4(code_length);
    let code_start = out.len();
    emit_code(m, ins, &layout, out);
    debug_assert_eq!(out.len() - code_start, layout.code_length as usize);
    out.extend_from_slice(&ins.handler);

    let handler_entries = if ins.handler.is_empty() {
        0
    } else {
        ins.handler_ranges.len()
    };
    out.u2((code.exception_table.len() + handler_entries) as u16);
    for h in &code.exception_table {
        for pc in [h.start_pc, h.end_pc, h.handler_pc] {
            if !layout.is_boundary(pc as u32) {
                bail!(
                    code.code_offset,
                    "exception table names pc {pc}, which is not an instruction"
                );
            }
        }
        out.u2(layout.target(h.start_pc as u32) as u16);
        out.u2(layout.target(h.end_pc as u32) as u16);
        out.u2(layout.target(h.handler_pc as u32) as u16);
        out.u2(h.catch_type);
    }
    for &(start, end) in &ins.handler_ranges[..handler_entries] {
        if !layout.is_boundary(start) || !layout.is_boundary(end) || start >= end {
            bail!(
                code.code_offset,
                "catch-all range [{start}, {end}) does not lie on instruction boundaries"
            );
        }
        out.u2(layout.target(start) as u16);
        out.u2(layout.target(end) as u16);
        out.u2(handler_pc as u16);
        out.u2(0);
    }

    // The handler needs a frame, except in class files older than 50, which have no StackMapTable.
    let handler_frame = (handler_entries > 0 && class.major_version >= 50)
        .then(|| pool.memo(MEMO_THROWABLE, |p| p.class("java/lang/Throwable")))
        .transpose()?;
    let mut has_stack_map = false;
    let count_at = out.len();
    out.u2(code.attributes.len() as u16);
    for a in &code.attributes {
        let a = &a;
        out.u2(a.name_index);
        let len_at = out.len();
        out.u4(0);
        let body_start = out.len();
        let name = class.attribute_name(a);
        if name == names::STACK_MAP_TABLE {
            has_stack_map = true;
            let last = if frames == FrameMode::Relocate && !layout.any_widened() {
                // Frames come in ascending order: each lookup starts where the last one ended.
                let mut hint = 0;
                stack_map::relocate(
                    a.data,
                    a.offset,
                    |pc| frame_target(&layout, &mut hint, pc, a.offset),
                    |pc| new_instruction(&layout, code.code, pc, a.offset),
                    out,
                )?
            } else {
                widening_frames::rebuild(m, a, &layout, pool, out)?
            };
            if let Some(throwable) = handler_frame {
                stack_map::append_handler_frame(out, body_start, last, handler_pc, throwable);
            }
        } else if name == names::LINE_NUMBER_TABLE {
            relocate_line_numbers(a, &layout, out)?;
        } else if name == names::LOCAL_VARIABLE_TABLE || name == names::LOCAL_VARIABLE_TYPE_TABLE {
            relocate_local_variables(a, &layout, out)?;
        } else if name == names::RUNTIME_VISIBLE_TYPE_ANNOTATIONS
            || name == names::RUNTIME_INVISIBLE_TYPE_ANNOTATIONS
        {
            let mut map = AnnotationOffsets {
                layout: &layout,
                code: code.code,
                base: a.offset,
            };
            type_annotations::relocate(a.data, a.offset, &mut map, out)?;
        } else {
            out.extend_from_slice(a.data);
        }
        let len = (out.len() - body_start) as u32;
        out.patch_u4(len_at, len);
    }
    if let (Some(throwable), false) = (handler_frame, has_stack_map) {
        // A method without branches has no table; the handler makes it need one.
        out.patch_u2(count_at, code.attributes.len() as u16 + 1);
        out.u2(pool.memo(MEMO_STACK_MAP_TABLE, |p| p.utf8("StackMapTable"))?);
        out.u4(2 + HANDLER_FRAME_LEN);
        let table_start = out.len();
        out.u2(0);
        stack_map::append_handler_frame(out, table_start, None, handler_pc, throwable);
    }
    *events = layout.events;
    Ok(())
}

/// Streams a LineNumberTable with its start offsets mapped.
fn relocate_line_numbers(
    a: &RawAttribute<'_>,
    layout: &Layout<'_>,
    out: &mut Vec<u8>,
) -> Result<()> {
    let mut c = Cursor::at(a.data, a.offset);
    let n = c.u2()?;
    out.u2(n);
    // Tables are usually in pc order; the hint makes that case a forward walk.
    let mut hint = 0;
    for _ in 0..n {
        let at = c.offset();
        let start = c.u2()?;
        // HotSpot rejects these (ClassFormatError); mapping one would make it a valid pc.
        if start as u32 >= layout.code_len() {
            bail!(at, "LineNumberTable start_pc {start} is not in the code");
        }
        out.u2(layout.loose_target_from(&mut hint, start as u32) as u16);
        out.u2(c.u2()?);
    }
    c.finish("LineNumberTable")
}

/// Streams a LocalVariableTable or LocalVariableTypeTable with its ranges mapped.
fn relocate_local_variables(
    a: &RawAttribute<'_>,
    layout: &Layout<'_>,
    out: &mut Vec<u8>,
) -> Result<()> {
    let mut c = Cursor::at(a.data, a.offset);
    let n = c.u2()?;
    out.u2(n);
    let mut hints = (0, 0);
    for _ in 0..n {
        let at = c.offset();
        let start = c.u2()? as u32;
        let length = c.u2()? as u32;
        // HotSpot's parser rejects a range outside the code, and its verifier one that does not start
        // and end on instructions (ClassFormatError both): mapping such a range would clamp it into the
        // code, or move the pcs the error names.
        let end = start + length;
        if !layout.is_instruction(start) || !layout.is_boundary(end) {
            bail!(
                at,
                "local variable range [{start}, {end}) does not lie on instructions"
            );
        }
        let s = layout.loose_target_from(&mut hints.0, start);
        let e = layout
            .loose_target_from(&mut hints.1, start + length)
            .max(s);
        out.u2(s as u16);
        out.u2((e - s) as u16);
        out.extend_from_slice(c.bytes(6)?);
    }
    c.finish("LocalVariableTable")
}

fn frame_target(layout: &Layout<'_>, hint: &mut usize, pc: u32, base: usize) -> Result<u32> {
    if !layout.is_instruction(pc) {
        bail!(
            base,
            "stack map frame at pc {pc}, which is not an instruction"
        );
    }
    Ok(layout.target_from(hint, pc))
}

fn new_instruction(layout: &Layout<'_>, code: &[u8], pc: u32, base: usize) -> Result<u32> {
    if !layout.is_instruction(pc) || code.get(pc as usize) != Some(&op::NEW) {
        bail!(base, "Uninitialized({pc}) does not name a new instruction");
    }
    Ok(layout.at(pc))
}

fn loose_range(layout: &Layout<'_>, start: u32, end: u32) -> (u32, u32) {
    let s = layout.loose_target(start);
    let e = layout.loose_target(end).max(s);
    (s, e)
}

struct AnnotationOffsets<'l> {
    layout: &'l Layout<'l>,
    code: &'l [u8],
    base: usize,
}

impl OffsetMap for AnnotationOffsets<'_> {
    fn instruction(&mut self, pc: u32) -> Result<u32> {
        if !self.layout.is_instruction(pc) || pc as usize >= self.code.len() {
            bail!(
                self.base,
                "type annotation names pc {pc}, which is not an instruction"
            );
        }
        Ok(self.layout.at(pc))
    }
    fn range(&mut self, start: u32, end: u32) -> Result<(u32, u32)> {
        Ok(loose_range(self.layout, start, end))
    }
}

/// Writes the new code array: original bytes are copied in runs between events; at each event the
/// inserted code is written and the instruction re-encoded.
fn emit_code(m: &MethodInput<'_, '_>, ins: &Insertions, layout: &Layout<'_>, out: &mut Vec<u8>) {
    let code = m.code.code;
    out.extend_from_slice(&ins.entry);
    let points = &ins.points;
    let mut p = 0;
    let mut copied = 0usize;
    for e in &layout.events {
        let insn = m.insns[e.insn];
        let pc = insn.pc;
        out.extend_from_slice(&code[copied..pc as usize]);
        copied = (pc + insn.len) as usize;
        while p < points.len() && points[p].pc == pc && points[p].place == Place::Before {
            out.extend_from_slice(ins.snippet(&points[p]));
            p += 1;
        }
        write_instruction(code, insn, e, layout, out);
        while p < points.len() && points[p].pc == pc && points[p].place == Place::After {
            out.extend_from_slice(ins.snippet(&points[p]));
            p += 1;
        }
    }
    out.extend_from_slice(&code[copied..]);
}

/// Re-encodes one instruction at its new position.
fn write_instruction(
    code: &[u8],
    insn: Instruction,
    event: &Event,
    layout: &Layout<'_>,
    out: &mut Vec<u8>,
) {
    let pc = insn.pc;
    let widened = event.widened;
    let here = event.new_pc() as i64;
    let target = |offset: i32| layout.target((pc as i64 + offset as i64) as u32) as i64 - here;
    match op::shape(insn.opcode) {
        Shape::Branch16 => {
            let t = target(branch_offset(code, insn));
            if !widened {
                out.u1(insn.opcode);
                out.u2(t as i16 as u16);
            } else if insn.opcode == op::GOTO || insn.opcode == op::JSR {
                out.u1(if insn.opcode == op::GOTO {
                    op::GOTO_W
                } else {
                    op::JSR_W
                });
                out.u4(t as i32 as u32);
            } else {
                // if<!cond> skips the goto_w that now carries the original jump.
                out.u1(op::inverse_condition(insn.opcode));
                out.u2(8);
                out.u1(op::GOTO_W);
                out.u4((t - 3) as i32 as u32);
            }
        }
        Shape::Branch32 => {
            out.u1(insn.opcode);
            out.u4(target(branch_offset(code, insn)) as i32 as u32);
        }
        Shape::TableSwitch | Shape::LookupSwitch => {
            let s = read_switch(code, pc);
            out.u1(insn.opcode);
            for _ in 0..switch_padding(here as u32) {
                out.u1(0);
            }
            out.u4(target(s.default) as i32 as u32);
            match s.range {
                Some((low, high)) => {
                    out.u4(low as u32);
                    out.u4(high as u32);
                    for (_, offset) in &s.cases {
                        out.u4(target(*offset) as i32 as u32);
                    }
                }
                None => {
                    out.u4(s.cases.len() as u32);
                    for (key, offset) in &s.cases {
                        out.u4(*key as u32);
                        out.u4(target(*offset) as i32 as u32);
                    }
                }
            }
        }
        _ => out.extend_from_slice(&code[pc as usize..(pc + insn.len) as usize]),
    }
}
