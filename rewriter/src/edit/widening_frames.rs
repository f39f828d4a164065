//! StackMapTable rebuilding: decode every frame, re-address it, add the frames that widened conditional
//! branches need at their new fall-through targets, and encode the table again. Returns the new offset of
//! the last frame.

use super::layout::Layout;
use super::method_writer::MethodInput;
use super::type_simulation::{step, Context, State};
use crate::attributes::stack_map::{self, Frame, VType};
use crate::bytecode::opcode as op;
use crate::classfile::{access, RawAttribute};
use crate::error::{bail, Result};
use crate::pool_builder::PoolBuilder;

pub fn rebuild(
    m: &MethodInput<'_, '_>,
    attribute: &RawAttribute<'_>,
    layout: &Layout<'_>,
    pool: &mut PoolBuilder<'_, '_>,
    out: &mut Vec<u8>,
) -> Result<Option<u32>> {
    let class = m.class;
    let name = class.pool.utf8(m.method.name_index)?;
    let descriptor = class.pool.utf8(m.method.descriptor_index)?;
    let is_static = m.method.access & access::STATIC != 0;
    let initial =
        stack_map::initial_locals(class.name(), class.this_class, name, descriptor, is_static)?;
    let mut frames = stack_map::decode(attribute.data, attribute.offset, &class.pool, &initial)?;

    let mut added = Vec::new();
    for i in layout.widened() {
        let insn = m.insns[i];
        if !op::is_conditional(insn.opcode) {
            continue;
        }
        let next = insn.pc + insn.len;
        if frames.binary_search_by_key(&next, |f| f.offset).is_ok() {
            continue;
        }
        added.push(frame_after(m, &frames, &initial, i)?);
    }

    for f in frames.iter_mut().chain(added.iter_mut()) {
        if !layout.is_instruction(f.offset) {
            bail!(
                attribute.offset,
                "stack map frame at pc {}, which is not an instruction",
                f.offset
            );
        }
        f.offset = layout.target(f.offset);
        for t in f.locals.iter_mut().chain(f.stack.iter_mut()) {
            if let VType::Uninitialized(pc) = t {
                if !layout.is_instruction(*pc as u32)
                    || m.code.code.get(*pc as usize) != Some(&op::NEW)
                {
                    bail!(
                        attribute.offset,
                        "Uninitialized({pc}) does not name a new instruction"
                    );
                }
                *pc = layout.at(*pc as u32) as u16;
            }
        }
    }
    if !added.is_empty() {
        frames.extend(added);
        frames.sort_by_key(|f| f.offset);
    }
    stack_map::encode(&frames, &initial, pool, out)?;
    Ok(frames.last().map(|f| f.offset))
}

/// The frame at the fall-through of conditional branch `insns[branch]`: the state of the nearest frame
/// at or before it, run forward through the straight-line code up to and including the branch.
fn frame_after<'a>(
    m: &MethodInput<'_, 'a>,
    frames: &[Frame<'a>],
    initial: &[VType<'a>],
    branch: usize,
) -> Result<Frame<'a>> {
    let pc = m.insns[branch].pc;
    let (start_pc, mut state) = match frames.partition_point(|f| f.offset <= pc) {
        0 => (0, State::from_frame(initial, &[])),
        k => (
            frames[k - 1].offset,
            State::from_frame(&frames[k - 1].locals, &frames[k - 1].stack),
        ),
    };
    let first = m.insns.partition_point(|i| i.pc < start_pc);
    let cx = Context {
        pool: &m.class.pool,
        this_class: m.class.name(),
        code: m.code.code,
        base: m.code.code_offset,
    };
    for insn in &m.insns[first..=branch] {
        step(&cx, &mut state, *insn)?;
    }
    let (locals, stack) = state.to_frame();
    Ok(Frame {
        offset: m.insns[branch].pc + m.insns[branch].len,
        locals,
        stack,
        kind: None,
    })
}
