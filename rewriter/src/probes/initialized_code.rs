//! Where a constructor's `this` is initialised: the code an exit handler may cover.
//!
//! The verifier rejects a handler whose range includes code that runs while `this` is still
//! `uninitializedThis` (the handler frame would need the flag), and it rejects any frame that covers
//! the `super()`/`this()` call itself. So the catch-all of a constructor covers exactly the instructions
//! reached with `this` initialised. Finding them needs the types, not a pattern match: `super(new X())`,
//! a ternary in the arguments, or JDK 22+ statements before `super()` all put code between entry and the
//! call. A forward data flow over the types, first state wins, is enough: verifiable code reaches every
//! instruction with the same initialisation state on every path.

use crate::attributes::stack_map::{initial_locals, VType};
use crate::bytecode::instructions::Instruction;
use crate::bytecode::opcode as op;
use crate::bytes::read_u2;
use crate::classfile::access;
use crate::descriptor::{argument_slots, Params};
use crate::edit::type_flow::walk;
use crate::edit::type_simulation::State;
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
    let insns = m.insns;
    // None: not reached; Some(true): reached with `this` initialised.
    let mut initialised: Vec<Option<bool>> = vec![None; insns.len()];
    let mut calls = Vec::new();
    walk(m, State::from_frame(&initial, &[]), |i, state| {
        let uninitialised = state.locals.contains(&VType::UninitializedThis);
        initialised[i] = Some(!uninitialised);
        let insn = insns[i];
        if uninitialised
            && insn.opcode == op::INVOKESPECIAL
            && receiver(m, insn, state) == Some(&VType::UninitializedThis)
        {
            calls.push(insn.pc);
        }
    })?;
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

/// The object an `invokespecial` at `insn` is called on, from the stack before it.
pub fn receiver<'s, 'a>(
    m: &MethodView<'_, 'a>,
    insn: Instruction,
    state: &'s State<'a>,
) -> Option<&'s VType<'a>> {
    let (_, _, descriptor) = m
        .class
        .pool
        .member_ref(read_u2(m.code.code, insn.pc as usize + 1))
        .ok()?;
    let words = argument_slots(descriptor).ok()? as usize;
    state.stack.iter().rev().nth(words)
}

fn parameter_count(descriptor: &[u8]) -> Option<usize> {
    let mut params = Params::new(descriptor).ok()?;
    let mut n = 0;
    while params.next_type().ok()?.is_some() {
        n += 1;
    }
    Some(n)
}
