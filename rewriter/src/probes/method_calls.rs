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

use super::heap_proxy::{push_int_array, Flavour, Probe};
use super::initialized_code::analyse_constructor;
use crate::bytecode::opcode as op;
use crate::edit::Insertions;
use crate::error::{Error, Result};
use crate::pool_builder::PoolBuilder;
use crate::rewrite::MethodView;

pub fn plan(
    m: &MethodView<'_, '_>,
    method_id: u32,
    flavour: Flavour,
    pool: &mut PoolBuilder<'_, '_>,
    out: &mut Insertions,
) -> Result<()> {
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
    let (enter, len) = snippet(Probe::MethodEnter, pool)?;
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
    let (exit, len) = snippet(Probe::MethodExit, pool)?;
    for insn in m.notable() {
        if op::is_return(insn.opcode) {
            out.before(insn.pc, &exit[..len]);
        }
    }
    out.need_stack(1);
    let (mut handler, len) = snippet(Probe::MethodUnwind, pool)?;
    handler[len] = op::ATHROW;
    // The exception and the id.
    out.catch_all(ranges, &handler[..len + 1], 2);
    Ok(())
}
