//! The self-test edit: a `nop` at every method entry, before every return and after every array
//! allocation. It changes no behaviour, so any failure it causes is a relocation bug.

use crate::bytecode::opcode as op;
use crate::edit::Insertions;
use crate::error::Result;
use crate::pool_builder::PoolBuilder;
use crate::rewrite::{MethodEdit, MethodView};

pub struct NopEdit;

impl MethodEdit for NopEdit {
    fn plan(
        &self,
        m: &MethodView<'_, '_>,
        _pool: &mut PoolBuilder<'_, '_>,
        out: &mut Insertions,
    ) -> Result<()> {
        out.at_entry(&[op::NOP]);
        for insn in m.notable() {
            match insn.opcode {
                o if op::is_return(o) => out.before(insn.pc, &[op::NOP]),
                op::NEWARRAY | op::ANEWARRAY | op::MULTIANEWARRAY => out.after(insn.pc, &[op::NOP]),
                _ => {}
            }
        }
        Ok(())
    }
}

/// Leaves every method as it is; with `force_reencode` it drives the full re-encoding path.
pub struct NoEdit;

impl MethodEdit for NoEdit {
    fn plan(
        &self,
        _: &MethodView<'_, '_>,
        _: &mut PoolBuilder<'_, '_>,
        _: &mut Insertions,
    ) -> Result<()> {
        Ok(())
    }
}
