//! Method entry and exit: `push id; invokestatic HeapProxy.methodEnter(int)` at entry, the same with
//! `methodExit` before every return, and a catch-all handler `push id; invokestatic
//! HeapProxy.methodUnwind(int); athrow` for every exception that leaves the method, so that entries
//! always balance exits.
//!
//! The handler's table entry comes after the method's own, so its handlers still catch first.
//!
//! Constructors: the verifier lets no handler cover the `super()`/`this()` call, and a handler over the
//! code before it would need `uninitializedThis` in its frame. So a constructor's entry probe runs right
//! *after* that call ([`analyse_constructor`]) and its handler covers exactly the code from there on.
//! A constructor call therefore counts once its object is initialised: the argument evaluation before
//! `super()`, and the superclass constructor (counted in its own right), belong to the caller, and an
//! exception before or inside `super()` leaves neither an entry nor an exit. Entries always equal
//! exits plus unwinds.
//!
//! What the probes must record decides their shape ([`CallProbes`]): a shadow stack needs every exit,
//! a call count needs only the entry (and, to count exceptional exits, the handler). Leaving out what a
//! mode does not use keeps methods small, which is what the JIT's inlining limits measure.

use super::heap_proxy::{push_int_array, Flavour, Probe};
use super::initialized_code::analyse_constructor;
use crate::bytecode::instructions::{branch_offset, read_switch};
use crate::bytecode::opcode::{self as op, Shape};
use crate::bytes::read_u2;
use crate::classfile::access;
use crate::edit::Insertions;
use crate::error::{Error, Result};
use crate::pool_builder::PoolBuilder;
use crate::rewrite::MethodView;

/// The shape of the method probes, set by the agent's `calls=` mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CallProbes {
    /// `methodEnter`, `methodExit` before every return and the `methodUnwind` handler: every event of
    /// every call, for a shadow stack (`calls=times` with `leaves=timed`, and the tests' counting proxy).
    #[default]
    Traced,
    /// `countCall` at entry and the `countUnwind` handler: calls and exceptional exits, nothing before
    /// returns (`calls=counts`).
    Counted,
    /// `Traced`, except that leaf methods ([`is_leaf`]) are `Counted`: their calls are counted exactly,
    /// and their time, which the 100 us wall clock could not resolve anyway, stays with their caller
    /// (`calls=times`, the default).
    TracedExceptLeaves,
}

/// Longest leaf, in bytes of bytecode: with no call and no backward branch, code this short runs in
/// tens of nanoseconds.
pub const LEAF_MAX_CODE: usize = 100;

/// A method that can call nothing and cannot loop or block: no invoke instruction but the
/// `java.lang.Object` constructor (which carries no method probe), no backward branch or switch target,
/// no exception handler (a handler can jump back), no `jsr`, no monitor, not `synchronized`, and at most
/// [`LEAF_MAX_CODE`] bytes long. Getters, setters, small arithmetic and the constructors of small value
/// classes, which in real programs make most of the calls.
pub fn is_leaf(m: &MethodView<'_, '_>) -> bool {
    let code = m.code.code;
    if code.len() > LEAF_MAX_CODE
        || !m.code.exception_table.is_empty()
        || m.method.access & access::SYNCHRONIZED != 0
    {
        return false;
    }
    m.insns.iter().all(|&insn| match insn.opcode {
        op::INVOKESPECIAL => {
            let index = read_u2(code, insn.pc as usize + 1);
            m.class.pool.member_ref(index).ok() == Some((b"java/lang/Object", b"<init>", b"()V"))
        }
        op::INVOKEVIRTUAL..=op::INVOKEDYNAMIC
        | op::MONITORENTER
        | op::JSR
        | op::JSR_W
        | op::RET => false,
        op::TABLESWITCH | op::LOOKUPSWITCH => {
            let s = read_switch(code, insn.pc);
            s.default > 0 && s.cases.iter().all(|&(_, offset)| offset > 0)
        }
        o if matches!(op::shape(o), Shape::Branch16 | Shape::Branch32) => {
            branch_offset(code, insn) > 0
        }
        _ => true,
    })
}

/// Plans the probes of one method; returns whether its calls are counted only (no shadow frame).
pub fn plan(
    m: &MethodView<'_, '_>,
    method_id: u32,
    shape: CallProbes,
    flavour: Flavour,
    pool: &mut PoolBuilder<'_, '_>,
    out: &mut Insertions,
) -> Result<bool> {
    let counted_only = match shape {
        CallProbes::Traced => false,
        CallProbes::Counted => true,
        CallProbes::TracedExceptLeaves => is_leaf(m),
    };
    let (enter_probe, unwind_probe) = if counted_only {
        (Probe::CountCall, Probe::CountUnwind)
    } else {
        (Probe::MethodEnter, Probe::MethodUnwind)
    };
    // Every snippet is `push id; invokestatic probe` (8 bytes at most), built on the stack.
    let (push_id, id_len) = push_int_array(method_id, pool)?;
    let push_id = &push_id[..id_len];
    let snippet = |probe: Probe, pool: &mut PoolBuilder<'_, '_>| -> Result<([u8; 9], usize)> {
        let mut code = [0u8; 9];
        let n = push_id.len();
        code[..n].copy_from_slice(push_id);
        let index = probe.methodref(flavour, pool)?;
        code[n] = op::INVOKESTATIC;
        code[n + 1..n + 3].copy_from_slice(&index.to_be_bytes());
        Ok((code, n + 3))
    };
    let (enter, len) = snippet(enter_probe, pool)?;
    let enter = &enter[..len];
    let code_len = m.code.code.len() as u32;
    let whole = [(0, code_len)];
    let init;
    let ranges: &[(u32, u32)] = if m.name == b"<init>" && m.class.name() != b"java/lang/Object" {
        init = analyse_constructor(m)?;
        if init.calls.is_empty() {
            return Err(Error::unsupported(
                "constructor has no reachable super()/this() call; no method probes",
            ));
        }
        for &pc in &init.calls {
            out.after(pc, enter);
        }
        &init.ranges
    } else {
        out.at_entry(enter);
        &whole
    };
    if !counted_only {
        let (exit, len) = snippet(Probe::MethodExit, pool)?;
        for insn in m.notable() {
            if op::is_return(insn.opcode) {
                out.before(insn.pc, &exit[..len]);
            }
        }
    }
    out.need_stack(1);
    let (mut handler, len) = snippet(unwind_probe, pool)?;
    handler[len] = op::ATHROW;
    // The exception and the id.
    out.catch_all(ranges, &handler[..len + 1], 2);
    Ok(counted_only)
}
