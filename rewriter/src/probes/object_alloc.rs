//! Every object: `aload_0; invokestatic HeapProxy.objectAlloc(Object)` at the entry of
//! `java.lang.Object.<init>`. `this` may be passed here before any `super()`: Object has no superclass,
//! so its `this` starts out initialised (JVMS 4.10.1.6). Local 0 is only read, never stored: HotSpot's
//! rewriter relies on that for Object's constructor.

use super::heap_proxy::{Flavour, Probe};
use crate::bytecode::opcode as op;
use crate::edit::Insertions;
use crate::error::Result;
use crate::pool_builder::PoolBuilder;

pub fn is_object_constructor(class: &[u8], method: &[u8], descriptor: &[u8]) -> bool {
    class == b"java/lang/Object" && method == b"<init>" && descriptor == b"()V"
}

pub fn plan(flavour: Flavour, pool: &mut PoolBuilder<'_, '_>, out: &mut Insertions) -> Result<()> {
    let mut code = vec![op::ALOAD_0];
    Probe::ObjectAlloc.call(flavour, pool, &mut code)?;
    out.at_entry(&code);
    out.need_stack(1);
    Ok(())
}
