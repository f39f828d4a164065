//! C2 intrinsics that allocate without running the bytecode the probes are in: the ones that can be turned
//! off cheaply are, when the agent counts allocations from start-up.
//!
//! C2 replaces some JDK methods by code of its own. Where that code allocates, the object or array is made
//! without the probe that the method's bytecode carries, and without the VMObjectAlloc event that the
//! method's native would post. Measured on JDK 17 and 25 (2026-11-29, a loop of 200,000 calls each, C2 against
//! `-Xint`), the counts C2 lost were:
//! - `Arrays.copyOf` and `copyOfRange` of object arrays (`_copyOf`, `_copyOfRange`): the `new Object[]` in
//!   their bytecode is skipped. Every `ArrayList` that grows goes through them.
//! - `Object.clone` (`_clone`), of arrays and of objects: the native that posts VMObjectAlloc is not called.
//! - `Array.newInstance` (`_newArray`): the same.
//! - `StringBuilder` chains (`OptimizeStringConcat`): C2 builds the String itself and drops the builder's
//!   allocation and constructor, `Object.<init>`'s probe with it, where no site probe sits between the `new`
//!   and the constructor (depth 0, or code whose sites the rules exclude).
//!
//! `OptimizeStringConcat` (a bool C2 reads when it compiles) and `DisableIntrinsic=_newArray` (a list HotSpot
//! parses when it sets up its compilers, after the agents have loaded) cost h2 nothing measurable (24.7 and
//! 25.9 s of CPU against 24.6, JDK 25, one run each). `clone` and `copyOf` stay intrinsics: turning them off
//! (`InlineObjectCopy`, or `DisableIntrinsic=_clone` alone) made h2 cost 2.0 times as much, because each
//! clone then goes through the native, its VMObjectAlloc event and the agent's upcall, and
//! `_copyOf,_copyOfRange` 1.17 times. Their C2 counts are a known gap, in docs/ARCHITECTURE.md ("The probes").
//! Only flags the user left at their default are changed.

use std::ffi::CStr;

use crate::ffi::vm_flags;

/// What `DisableIntrinsic` gets when the user did not set it.
const DISABLED: &CStr = c"_newArray";

/// Turns off the two cheap ones: the StringBuilder optimisation and `Array.newInstance`. Agent_OnLoad only, before the compilers are set up. A flag's new
/// origin is "ergonomic", so `-XX:+PrintFlagsFinal` and `jcmd VM.flags` show that it was changed.
pub fn keep_allocations_in_bytecode() {
    if let Some(f) =
        vm_flags::bool_flag("OptimizeStringConcat").filter(|f| f.is_default() && f.get())
    {
        f.set(false);
    }
    if let Some(f) =
        vm_flags::ccstr_flag("DisableIntrinsic").filter(|f| f.is_default() && f.is_empty())
    {
        // A string with the static lifetime the VM expects of a flag's value; HotSpot frees a ccstr flag's
        // old value only when a later setting replaces it, and nothing sets this one after Agent_OnLoad.
        f.set(DISABLED.as_ptr());
    }
}
