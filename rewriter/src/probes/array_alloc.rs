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
    let mut lines: Option<Vec<LineNumber>> = None;
    let mut code = Vec::with_capacity(8);
    for &insn in m.insns {
        if !is_array_allocation(insn.opcode) {
            continue;
        }
        let lines = lines.get_or_insert_with(|| line_table(m));
        let site = ids.site_id(method_id, insn.pc, || {
            (line_at(lines, insn.pc), array_type(m, insn))
        });
        code.clear();
        code.push(op::DUP);
        push_int(site, pool, &mut code)?;
        Probe::ArrayAlloc.call(flavour, pool, &mut code)?;
        out.after(insn.pc, &code);
    }
    out.need_stack(2);
    Ok(())
}

fn line_table(m: &MethodView<'_, '_>) -> Vec<LineNumber> {
    m.code
        .attributes
        .iter()
        .find(|a| m.class.attribute_name(a) == names::LINE_NUMBER_TABLE)
        .and_then(|a| read_line_numbers(&a).ok())
        .unwrap_or_default()
}

/// The line of the entry with the greatest start at or before `pc` (tables need not be sorted).
fn line_at(lines: &[LineNumber], pc: u32) -> Option<u16> {
    lines
        .iter()
        .filter(|l| l.start_pc as u32 <= pc)
        .max_by_key(|l| l.start_pc)
        .map(|l| l.line)
}

/// Descriptor of the array type the instruction creates, for reports.
fn array_type(m: &MethodView<'_, '_>, insn: Instruction) -> String {
    let code = m.code.code;
    let pc = insn.pc as usize;
    let class_operand = || {
        m.class
            .pool
            .class_name(read_u2(code, pc + 1))
            .map(|n| String::from_utf8_lossy(n).into_owned())
            .unwrap_or_else(|_| "?".into())
    };
    match insn.opcode {
        op::NEWARRAY => match code[pc + 1] {
            4 => "[Z",
            5 => "[C",
            6 => "[F",
            7 => "[D",
            8 => "[B",
            9 => "[S",
            10 => "[I",
            11 => "[J",
            _ => "[?",
        }
        .to_string(),
        op::ANEWARRAY => {
            let element = class_operand();
            if element.starts_with('[') {
                format!("[{element}")
            } else {
                format!("[L{element};")
            }
        }
        _ => class_operand(),
    }
}
