//! Every array allocated by bytecode: after each `newarray`, `anewarray` and `multianewarray`,
//! `dup; push site; invokestatic HeapProxy.arrayAlloc(Object, int)`. The site id names the allocating
//! instruction statically (see [`IdRegistry`]), so the agent needs no stack walk for the top frame.
//! For `multianewarray` only the outer array is reported; the agent walks the sub-arrays.

use super::heap_proxy::{push_int, Flavour, Probe};
use super::ids::IdRegistry;
use crate::attributes::debug_tables::{read_line_numbers, LineNumber};
use crate::attributes::names;
use crate::bytecode::instructions::Instruction;
use crate::bytecode::opcode as op;
use crate::bytes::read_u2;
use crate::edit::Insertions;
use crate::error::Result;
use crate::pool_builder::PoolBuilder;
use crate::rewrite::MethodView;

pub fn is_array_allocation(opcode: u8) -> bool {
    matches!(opcode, op::NEWARRAY | op::ANEWARRAY | op::MULTIANEWARRAY)
}

pub fn plan(
    m: &MethodView<'_, '_>,
    method_id: u32,
    ids: &IdRegistry,
    flavour: Flavour,
    pool: &mut PoolBuilder<'_, '_>,
    out: &mut Insertions,
) -> Result<()> {
    let mut sites = m.notable().filter(|i| is_array_allocation(i.opcode));
    let count = sites.clone().count() as u32;
    if count == 0 {
        return Ok(());
    }
    // Described once per method, in code order; nothing is allocated when the block already exists.
    let mut lines = None;
    let mut described = sites.clone();
    let first = ids.site_ids(method_id, count, |_, out| {
        let insn = described.next().expect("count sites");
        array_type(m, insn, out);
        let lines = lines.get_or_insert_with(|| line_table(m));
        (insn.pc, line_at(lines, insn.pc))
    });
    let mut code = Vec::with_capacity(8);
    for k in 0..count {
        let insn = sites.next().expect("count sites");
        code.clear();
        code.push(op::DUP);
        push_int(first + k, pool, &mut code)?;
        Probe::ArrayAlloc.call(flavour, pool, &mut code)?;
        out.after(insn.pc, &code);
    }
    out.need_stack(2);
    Ok(())
}

/// The method's line table sorted by start (class files need not sort it).
fn line_table(m: &MethodView<'_, '_>) -> Vec<LineNumber> {
    let mut lines = m
        .code
        .attributes
        .iter()
        .find(|a| m.class.attribute_name(a) == names::LINE_NUMBER_TABLE)
        .and_then(|a| read_line_numbers(&a).ok())
        .unwrap_or_default();
    lines.sort_by_key(|l| l.start_pc);
    lines
}

/// The line of the entry with the greatest start at or before `pc`.
fn line_at(lines: &[LineNumber], pc: u32) -> Option<u16> {
    let k = lines.partition_point(|l| l.start_pc as u32 <= pc);
    k.checked_sub(1).map(|k| lines[k].line)
}

/// Appends the descriptor of the array type the instruction creates, for reports.
fn array_type(m: &MethodView<'_, '_>, insn: Instruction, out: &mut Vec<u8>) {
    let code = m.code.code;
    let pc = insn.pc as usize;
    let class_operand = || {
        m.class
            .pool
            .class_name(read_u2(code, pc + 1))
            .unwrap_or(b"?")
    };
    match insn.opcode {
        op::NEWARRAY => {
            out.extend_from_slice(op::newarray_descriptor(code[pc + 1]).unwrap_or(b"[?"))
        }
        op::ANEWARRAY => {
            let element = class_operand();
            out.push(b'[');
            if element.first() == Some(&b'[') {
                out.extend_from_slice(element);
            } else {
                out.push(b'L');
                out.extend_from_slice(element);
                out.push(b';');
            }
        }
        _ => out.extend_from_slice(class_operand()),
    }
}
