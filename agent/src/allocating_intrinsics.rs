//! C2 intrinsics that allocate without running the bytecode the probes are in: the agent turns off the ones
//! whose allocations no probe outside them can count, when it counts allocations from start-up.
//!
//! C2 replaces some JDK methods by code of its own. Where that code allocates, the object or array is made
//! without the probe that the method's bytecode carries, and without the VMObjectAlloc event that the
//! method's native would post. Measured on JDK 17 and 25 (2026-11-29, a loop of 200,000 calls each, C2 against
//! `-Xint`), the counts C2 lost were:
//! - `Arrays.copyOf` and `copyOfRange` of object arrays (`_copyOf`, `_copyOfRange`): the array their bytecode
//!   makes. Every `ArrayList` that grows goes through them. Turned off here: with `Array.newInstance` an
//!   intrinsic again (below), their bytecode compiled by C2 costs about what the intrinsic did.
//! - `StringUTF16.toBytes(char[], int, int)` (`_toBytesStringU`): the byte array of every String made from
//!   chars that are not all Latin-1. Turned off.
//! - `Unsafe.allocateUninitializedArray` (`_allocateUninitializedArray`): the byte array of every `+` of
//!   Strings compiled for JDK 9 and later. Turned off only when the rules count arrays in `Unsafe` (the
//!   shipped rules leave `jdk.internal` out).
//! - `StringBuilder` chains (`OptimizeStringConcat`): C2 builds the String itself and drops the builder's
//!   allocation and constructor, `Object.<init>`'s probe with it, where no site probe sits between the `new`
//!   and the constructor (depth 0, or code whose sites the rules exclude). Turned off.
//! - `Object.clone` (`_clone`) and `Array.newInstance` (`_newArray`): stay intrinsics. For arrays, the
//!   rewriter counts them after each call (`probes::vm_made`), which C2's code cannot skip; turning
//!   `_clone` off cost h2 twice its time (each clone through the native, its event and an upcall). Clones of
//!   instances under C2 are a known gap, in docs/ARCHITECTURE.md ("The probes").
//!
//! `DisableIntrinsic` is a list HotSpot parses when it sets up its compilers, after the agents have loaded;
//! it stops the VM on a name it does not know, so the names here are the ones JDK 17 to 25 have. Only flags
//! the user left at their default are changed.

use std::ffi::CStr;

use instr_rewriter::probes::Selection;
use instr_rules::Rules;

use crate::ffi::vm_flags;

/// What `DisableIntrinsic` gets when the user did not set it: static strings, the lifetime the VM expects
/// of a flag's value.
const DISABLED: &CStr = c"_copyOf,_copyOfRange,_toBytesStringU";
const DISABLED_WITH_UNSAFE: &CStr =
    c"_copyOf,_copyOfRange,_toBytesStringU,_allocateUninitializedArray";

/// Agent_OnLoad only, before the compilers are set up. A flag's new origin is "ergonomic", so
/// `-XX:+PrintFlagsFinal` and `jcmd VM.flags` show that it was changed.
pub fn keep_allocations_in_bytecode(rules: &Rules) {
    if rules.objects() {
        if let Some(f) =
            vm_flags::bool_flag("OptimizeStringConcat").filter(|f| f.is_default() && f.get())
        {
            f.set(false);
        }
    }
    if !rules.arrays() {
        return;
    }
    let unsafe_arrays = Selection::arrays(
        rules,
        b"jdk/internal/misc/Unsafe",
        b"allocateUninitializedArray0",
        b"(Ljava/lang/Class;I)Ljava/lang/Object;",
    );
    if let Some(f) =
        vm_flags::ccstr_flag("DisableIntrinsic").filter(|f| f.is_default() && f.is_empty())
    {
        // HotSpot frees a ccstr flag's old value only when a later setting replaces it, and nothing sets
        // this one after Agent_OnLoad.
        f.set(
            if unsafe_arrays {
                DISABLED_WITH_UNSAFE
            } else {
                DISABLED
            }
            .as_ptr(),
        );
    }
}
