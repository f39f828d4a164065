//! A forward data flow over a method's types: every reachable instruction is visited once, with the
//! locals and stack the first path to reach it brings. In verifiable code every path reaches an
//! instruction with compatible types, and initialisation states (`uninitialized(pc)`,
//! `uninitializedThis`) must match exactly, so the first state answers the questions the probes ask:
//! "is `this` initialised here?" and "what does this `<init>` call initialise?".

use crate::attributes::stack_map::{ClassRef, VType};
use crate::bytecode::instructions::{branch_offset, read_switch, Instruction};
use crate::bytecode::opcode::{self as op, Shape};
use crate::edit::type_simulation::{step, Context, State};
use crate::error::Result;
use crate::rewrite::MethodView;
use std::borrow::Cow;

/// Calls `visit(index, state)` for every reachable instruction, with the state before it.
pub fn walk<'a>(
    m: &MethodView<'_, 'a>,
    initial: State<'a>,
    mut visit: impl FnMut(usize, &State<'a>),
) -> Result<()> {
    let class = m.class;
    let cx = Context {
        pool: &class.pool,
        this_class: class.name(),
        code: m.code.code,
        base: m.code.code_offset,
    };
    let insns = m.insns;
    let index_of = |pc: u32| insns.binary_search_by_key(&pc, |i| i.pc).ok();
    // Each instruction is queued at most once: the first state to reach it is the one that counts.
    let mut queued = vec![false; insns.len()];
    let mut visited = vec![false; insns.len()];
    queued[0] = true;
    let mut work: Vec<(usize, State<'a>)> = vec![(0, initial)];
    while let Some((mut i, mut state)) = work.pop() {
        while i < insns.len() && !visited[i] {
            visited[i] = true;
            let insn = insns[i];
            visit(i, &state);
            for h in &m.code.exception_table {
                if (h.start_pc as u32..h.end_pc as u32).contains(&insn.pc) {
                    match index_of(h.handler_pc as u32) {
                        Some(k) if !queued[k] => {
                            queued[k] = true;
                            let mut s = state.clone();
                            s.stack.clear();
                            s.stack.push(throwable());
                            work.push((k, s));
                        }
                        _ => {}
                    }
                }
            }
            // Stepped in place: the state is cloned only where control splits.
            let before_jsr = matches!(insn.opcode, op::JSR | op::JSR_W).then(|| state.clone());
            match insn.opcode {
                // The return address is a reference-like word; its exact type does not matter here.
                op::JSR | op::JSR_W => state.stack.push(VType::Null),
                op::ATHROW | op::RET => {}
                o if op::is_return(o) => {}
                _ => step(&cx, &mut state, insn)?,
            }
            if matches!(
                op::shape(insn.opcode),
                Shape::Branch16 | Shape::Branch32 | Shape::TableSwitch | Shape::LookupSwitch
            ) {
                for target in targets(m.code.code, insn) {
                    match index_of(target) {
                        Some(k) if !queued[k] => {
                            queued[k] = true;
                            work.push((k, state.clone()));
                        }
                        _ => {}
                    }
                }
            }
            if op::ends_flow(insn.opcode) {
                break;
            }
            // A subroutine returns to the instruction after its jsr with the caller's state.
            if let Some(s) = before_jsr {
                state = s;
            }
            if i + 1 < insns.len() {
                queued[i + 1] = true;
            }
            i += 1;
        }
    }
    Ok(())
}

fn throwable<'a>() -> VType<'a> {
    VType::Object(ClassRef {
        name: Cow::Borrowed(b"java/lang/Throwable"),
        index: 0,
    })
}

/// Branch and switch targets of one instruction, as absolute offsets.
fn targets(code: &[u8], insn: Instruction) -> Vec<u32> {
    let at = |offset: i32| (insn.pc as i64 + offset as i64) as u32;
    match op::shape(insn.opcode) {
        Shape::Branch16 | Shape::Branch32 => vec![at(branch_offset(code, insn))],
        Shape::TableSwitch | Shape::LookupSwitch => {
            let s = read_switch(code, insn.pc);
            std::iter::once(s.default)
                .chain(s.cases.iter().map(|c| c.1))
                .map(at)
                .collect()
        }
        _ => Vec::new(),
    }
}
