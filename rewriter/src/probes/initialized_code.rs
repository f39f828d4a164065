//! Where a constructor's `this` is initialised: the code an exit handler may cover.
//!
//! The verifier rejects a handler whose range includes code that runs while `this` is still
//! `uninitializedThis` (the handler frame would need the flag), and it rejects any frame that covers
//! the `super()`/`this()` call itself. So the catch-all of a constructor covers exactly the instructions
//! reached with `this` initialised. Finding them needs the types, not a pattern match: `super(new X())`,
//! a ternary in the arguments, or JDK 22+ statements before `super()` all put code between entry and the
//! call. A forward data flow over the types, first state wins, is enough: verifiable code reaches every
//! instruction with the same initialisation state on every path.

use crate::bytecode::instructions::{branch_offset, read_switch, Instruction};
use crate::bytecode::opcode::{self as op, Shape};
use crate::classfile::access;
use crate::edit::type_simulation::{step, Context, State};
use std::borrow::Cow;

use crate::attributes::stack_map::{initial_locals, ClassRef, VType};
use crate::bytes::read_u2;
use crate::descriptor::Params;
use crate::error::Result;
use crate::rewrite::MethodView;

/// Where `this` gets and has been initialised in a constructor.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Initialization {
    /// Offsets of the `invokespecial <init>` calls that initialise `this` (one in javac output).
    pub calls: Vec<u32>,
    /// Ranges `[start, end)` of original offsets reached with `this` initialised, merged where
    /// adjacent. Unreached code is left out.
    pub ranges: Vec<(u32, u32)>,
}

pub fn analyse_constructor(m: &MethodView<'_, '_>) -> Result<Initialization> {
    if let Some(init) = plain_super_call(m) {
        return Ok(init);
    }
    let class = m.class;
    let is_static = m.method.access & access::STATIC != 0;
    let initial = initial_locals(
        class.name(),
        class.this_class,
        m.name,
        m.descriptor,
        is_static,
    )?;
    let cx = Context {
        pool: &class.pool,
        this_class: class.name(),
        code: m.code.code,
        base: m.code.code_offset,
    };
    let insns = m.insns;
    let index_of = |pc: u32| insns.binary_search_by_key(&pc, |i| i.pc).ok();
    // None: not reached yet; Some(true): reached with `this` initialised.
    let mut initialised: Vec<Option<bool>> = vec![None; insns.len()];
    // Each instruction is queued at most once: the first state to reach it is the one that counts.
    let mut queued = vec![false; insns.len()];
    queued[0] = true;
    let mut calls = Vec::new();
    let mut work: Vec<(usize, State<'_>)> = vec![(0, State::from_frame(&initial, &[]))];
    while let Some((mut i, mut state)) = work.pop() {
        while i < insns.len() && initialised[i].is_none() {
            let insn = insns[i];
            let uninitialised = state.locals.contains(&VType::UninitializedThis);
            initialised[i] = Some(!uninitialised);
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
            if uninitialised
                && insn.opcode == op::INVOKESPECIAL
                && !state.locals.contains(&VType::UninitializedThis)
            {
                calls.push(insn.pc);
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
    let mut ranges: Vec<(u32, u32)> = Vec::new();
    for (k, insn) in insns.iter().enumerate() {
        if initialised[k] != Some(true) {
            continue;
        }
        let end = insn.pc + insn.len;
        match ranges.last_mut() {
            Some(last) if last.1 == insn.pc => last.1 = end,
            _ => ranges.push((insn.pc, end)),
        }
    }
    calls.sort_unstable();
    calls.dedup();
    Ok(Initialization { calls, ranges })
}

fn throwable<'a>() -> VType<'a> {
    VType::Object(ClassRef {
        name: Cow::Borrowed(b"java/lang/Throwable"),
        index: 0,
    })
}

/// The shape javac gives most constructors: `aload_0`, the arguments loaded straight from locals, and
/// `invokespecial <init>` first (`super()`, `super(a, b)`, `this(x)`), and no handler touching those
/// instructions. The call's receiver is `this` (one load per parameter sits above it), so the call
/// initialises it; nothing can branch back into the prefix in verifiable code (the state there has
/// `this` uninitialised), so everything after the call runs with `this` initialised, and the data flow
/// is not needed.
fn plain_super_call(m: &MethodView<'_, '_>) -> Option<Initialization> {
    let code = m.code.code;
    if code.first() != Some(&op::ALOAD_0) {
        return None;
    }
    let (mut pc, mut loads) = (1, 0);
    loop {
        pc += match *code.get(pc)? {
            op::ILOAD..=op::ALOAD => 2,
            op::ILOAD_0..=op::ALOAD_3 => 1,
            op::INVOKESPECIAL => break,
            _ => return None,
        };
        loads += 1;
    }
    let end = pc + 3;
    if code.len() <= end {
        return None;
    }
    let (_, name, descriptor) = m.class.pool.member_ref(read_u2(code, pc + 1)).ok()?;
    if name != b"<init>" || parameter_count(descriptor)? != loads {
        return None;
    }
    let handler_near = m
        .code
        .exception_table
        .iter()
        .any(|h| (h.start_pc as usize) < end || (h.handler_pc as usize) < end);
    (!handler_near).then(|| Initialization {
        calls: vec![pc as u32],
        ranges: vec![(end as u32, code.len() as u32)],
    })
}

fn parameter_count(descriptor: &[u8]) -> Option<usize> {
    let mut params = Params::new(descriptor).ok()?;
    let mut n = 0;
    while params.next_type().ok()?.is_some() {
        n += 1;
    }
    Some(n)
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
