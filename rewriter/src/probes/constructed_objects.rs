//! Where each object created by a `new` is finished: the `invokespecial <init>` that initialises it,
//! when the finished object is then on top of the stack (javac's `new C; dup; ...; invokespecial
//! C.<init>` leaves the duplicate there). Live tracking needs the object with its site, and an
//! uninitialised object cannot be passed to a method, so the probe goes right after that call.
//!
//! Matching `new` and `<init>` by position is not enough: the arguments can hold other `new`s,
//! branches and, outside javac, any stack shuffling. The types decide instead: at the call the
//! receiver must be `uninitialized(p)` and the word under it `uninitialized(p)` too, for the same
//! `new` at `p`. Then, after the call, that word is the constructed object on every path.

use crate::attributes::stack_map::{initial_locals, VType};
use crate::bytecode::opcode as op;
use crate::classfile::access;
use crate::edit::type_flow::walk;
use crate::edit::type_simulation::State;
use crate::error::Result;
use crate::rewrite::MethodView;

use super::initialized_code::receiver;

/// `(offset of the new, offset of the invokespecial that initialises its object)`, by `new` offset.
pub fn constructed_objects(m: &MethodView<'_, '_>) -> Result<Vec<(u32, u32)>> {
    let class = m.class;
    let initial = initial_locals(
        class.name(),
        class.this_class,
        m.name,
        m.descriptor,
        m.method.access & access::STATIC != 0,
    )?;
    let insns = m.insns;
    let mut found = Vec::new();
    walk(m, State::from_frame(&initial, &[]), |i, state| {
        let insn = insns[i];
        if insn.opcode != op::INVOKESPECIAL {
            return;
        }
        let Some(&VType::Uninitialized(new_pc)) = receiver(m, insn, state) else {
            return;
        };
        let words = state.stack.len();
        let below = state
            .stack
            .iter()
            .rev()
            .position(|t| *t == VType::Uninitialized(new_pc))
            .map(|k| words - 1 - k);
        // The receiver is the first match from the top; the copy must be the word right under it.
        if let Some(r) = below {
            if r >= 1 && state.stack[r - 1] == VType::Uninitialized(new_pc) {
                found.push((new_pc as u32, insn.pc));
            }
        }
    })?;
    found.sort_unstable();
    Ok(found)
}
