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
//!
//! A start at run time (`start=off`, attach) comes too late for that list. It turns the same intrinsics
//! off for the compilations from then on with a compiler directive, the run-time form of the list
//! (compiler_directive.rs), and writes `OptimizeStringConcat`, which C2 reads at each
//! compilation; the stop takes both back. Code compiled before the start with an intrinsic in it must go
//! too. A retransformation throws away the compiled code that inlined a method of the class, but C2 records
//! no such dependency on an intrinsic it used in place of a call: so the start also retransforms the loaded
//! classes that call one directly where the rules count what it makes ([`compiles_to_one`]), rewritten or
//! not, and with them the code that inlined their methods.

use std::ffi::CStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use instr_rewriter::bytecode::opcode as op;
use instr_rewriter::bytes::read_u2;
use instr_rewriter::constant_pool::ConstantPool;
use instr_rewriter::probes::Selection;
use instr_rules::Rules;

use crate::compiler_directive;
use crate::ffi::{vm_flags, Jni};

/// What `DisableIntrinsic` gets when the user did not set it: static strings, the lifetime the VM expects
/// of a flag's value.
const DISABLED: &CStr = c"_copyOf,_copyOfRange,_toBytesStringU";
const DISABLED_WITH_UNSAFE: &CStr =
    c"_copyOf,_copyOfRange,_toBytesStringU,_allocateUninitializedArray";

/// What Agent_OnLoad turned off for the VM's whole life: a run-time start has nothing to add there.
static CONCAT_OFF_FROM_LOAD: AtomicBool = AtomicBool::new(false);
static ARRAYS_OFF_FROM_LOAD: AtomicBool = AtomicBool::new(false);

/// Agent_OnLoad only, before the compilers are set up. A flag's new origin is "ergonomic", so
/// `-XX:+PrintFlagsFinal` and `jcmd VM.flags` show that it was changed.
pub fn keep_allocations_in_bytecode(rules: &Rules) {
    if rules.objects() {
        if let Some(f) =
            vm_flags::bool_flag("OptimizeStringConcat").filter(|f| f.is_default() && f.get())
        {
            f.set(false);
            CONCAT_OFF_FROM_LOAD.store(true, Ordering::Relaxed);
        }
    }
    if !rules.arrays() {
        return;
    }
    if let Some(f) =
        vm_flags::ccstr_flag("DisableIntrinsic").filter(|f| f.is_default() && f.is_empty())
    {
        // HotSpot frees a ccstr flag's old value only when a later setting replaces it, and nothing sets
        // this one after Agent_OnLoad.
        f.set(disabled_for(rules).as_ptr());
        ARRAYS_OFF_FROM_LOAD.store(true, Ordering::Relaxed);
    }
}

fn disabled_for(rules: &Rules) -> &'static CStr {
    let unsafe_arrays = Selection::arrays(
        rules,
        b"jdk/internal/misc/Unsafe",
        b"allocateUninitializedArray0",
        b"(Ljava/lang/Class;I)Ljava/lang/Object;",
    );
    if unsafe_arrays {
        DISABLED_WITH_UNSAFE
    } else {
        DISABLED
    }
}

/// What a run-time start changed, for the stop to put back.
struct ChangedAtStart {
    /// `OptimizeStringConcat` was on and is off.
    string_concat: bool,
    /// The directive is on the VM's stack.
    directive: bool,
}

static CHANGED_AT_START: Mutex<ChangedAtStart> = Mutex::new(ChangedAtStart {
    string_concat: false,
    directive: false,
});

/// At a run-time start of allocation counting, before its retransformation: the compilations from now on
/// keep the allocations in bytecode, as Agent_OnLoad's flags would have. Returns what could not be done,
/// as one line for the program's stderr; the counts under C2 are then low where the intrinsics run.
pub fn keep_allocations_in_bytecode_from_now(jni: Jni, rules: &Rules) -> Option<String> {
    let mut changed = CHANGED_AT_START.lock().unwrap_or_else(|e| e.into_inner());
    if rules.objects() && !changed.string_concat && !CONCAT_OFF_FROM_LOAD.load(Ordering::Relaxed) {
        if let Some(f) = vm_flags::bool_flag("OptimizeStringConcat").filter(|f| f.get()) {
            f.replace(false);
            changed.string_concat = true;
        }
    }
    if !counts_arrays_of_intrinsics(rules)
        || changed.directive
        || ARRAYS_OFF_FROM_LOAD.load(Ordering::Relaxed)
    {
        return None;
    }
    // Said before the push, while the stack holds only what was there.
    let hidden = compiler_directive::count(jni).filter(|&n| n > 1).map(|n| {
        format!(
            "while allocation counting is on, C2 uses none of the {} compiler directive(s) added before \
             (the agent's, which turns the allocating intrinsics off, matches every method)",
            n - 1
        )
    });
    match add_directive(jni, rules) {
        Ok(()) => {
            changed.directive = true;
            hidden
        }
        Err(e) => Some(format!(
            "cannot turn C2's allocating intrinsics off (counts under C2 may be low): {e}"
        )),
    }
}

/// Whether `rules` count an array one of the intrinsics makes: the sites are in the JDK classes that hold
/// them, so rules that leave those out (`include=` the application's packages) count none, and a start
/// with them leaves C2 its intrinsics.
fn counts_arrays_of_intrinsics(rules: &Rules) -> bool {
    rules.arrays()
        && (ARRAY_INTRINSICS
            .iter()
            .any(|(class, _, _)| rules.allocations_may_select(class))
            || disabled_for(rules) == DISABLED_WITH_UNSAFE)
}

/// What the current run-time start turned off, for [`compiles_to_one`].
#[derive(Clone, Copy, Default)]
pub struct TurnedOff {
    arrays: bool,
    string_concat: bool,
}

impl TurnedOff {
    pub fn any(self) -> bool {
        self.arrays || self.string_concat
    }
}

pub fn turned_off_at_start() -> TurnedOff {
    let changed = CHANGED_AT_START.lock().unwrap_or_else(|e| e.into_inner());
    TurnedOff {
        arrays: changed.directive,
        string_concat: changed.string_concat,
    }
}

/// The methods C2 replaces with an allocating intrinsic of [`DISABLED`], as their callers name them.
const ARRAY_INTRINSICS: &[(&[u8], &[u8], &[u8])] = &[
    (
        b"java/util/Arrays",
        b"copyOf",
        b"([Ljava/lang/Object;ILjava/lang/Class;)[Ljava/lang/Object;",
    ),
    (
        b"java/util/Arrays",
        b"copyOfRange",
        b"([Ljava/lang/Object;IILjava/lang/Class;)[Ljava/lang/Object;",
    ),
    (b"java/lang/StringUTF16", b"toBytes", b"([CII)[B"),
];

/// Whether C2 may have compiled the call at `pc` of `code`, in a method of a class `rules` do or do not
/// select (`caller_selected`), into an allocation that `off` turned off and that `rules` count:
/// - a direct call of an allocating intrinsic whose own class the rules select, as the array is counted
///   by the probe in its bytecode, whoever calls it;
/// - in a class the rules select, the `toString()` that ends a StringBuilder chain, as the builder is
///   counted where the chain makes it (C2 builds the String itself, and its code depends on no method of
///   the chain).
///
/// `Unsafe.allocateUninitializedArray0` is left out: only `Unsafe` calls it, and a start that counts arrays
/// there retransforms `Unsafe`.
pub fn compiles_to_one(
    off: TurnedOff,
    rules: &Rules,
    caller_selected: bool,
    pool: &ConstantPool<'_>,
    code: &[u8],
    pc: usize,
) -> bool {
    let opcode = code[pc];
    if !matches!(opcode, op::INVOKESTATIC | op::INVOKEVIRTUAL) || pc + 2 >= code.len() {
        return false;
    }
    let Ok((class, name, descriptor)) = pool.member_ref(read_u2(code, pc + 1)) else {
        return false;
    };
    match opcode {
        op::INVOKESTATIC => {
            off.arrays
                && ARRAY_INTRINSICS.contains(&(class, name, descriptor))
                && rules.allocations_may_select(class)
        }
        _ => {
            off.string_concat
                && caller_selected
                && matches!(
                    class,
                    b"java/lang/StringBuilder" | b"java/lang/StringBuffer"
                )
                && name == b"toString"
                && descriptor == b"()Ljava/lang/String;"
        }
    }
}

/// Whether a class may call something [`compiles_to_one`] looks for, without reading its code: not when
/// the start turned no array intrinsic off (the rules count none of their arrays) and the rules leave the
/// class out.
pub fn may_call_one(off: TurnedOff, caller_selected: bool) -> bool {
    off.arrays || (off.string_concat && caller_selected)
}

/// At the stop: the compilers choose as they did before the start.
pub fn let_compilers_choose_again(jni: Jni) -> Option<String> {
    let mut changed = CHANGED_AT_START.lock().unwrap_or_else(|e| e.into_inner());
    if std::mem::take(&mut changed.string_concat) {
        if let Some(f) = vm_flags::bool_flag("OptimizeStringConcat") {
            f.replace(true);
        }
    }
    if !changed.directive {
        return None;
    }
    // The directive the start added is the top one unless someone added another since; HotSpot's stack
    // has no way to name one.
    match compiler_directive::pop(jni) {
        Ok(()) => {
            changed.directive = false;
            None
        }
        // Kept as added: the next start adds none, and the next stop tries again.
        Err(e) => Some(format!(
            "cannot remove the compiler directive the start added: {e}"
        )),
    }
}

/// Pushes a directive for every method that turns the intrinsics off in C2, the user's own
/// `DisableIntrinsic` list kept in it (a directive's list replaces the flag's for the methods it matches).
fn add_directive(jni: Jni, rules: &Rules) -> Result<(), String> {
    let users = vm_flags::ccstr_flag("DisableIntrinsic")
        .ok_or("this VM does not describe its DisableIntrinsic flag")?
        .text();
    let ours = disabled_for(rules).to_string_lossy();
    if users.is_empty() {
        compiler_directive::push_disabling(jni, &ours)
    } else {
        compiler_directive::push_disabling(jni, &format!("{users},{ours}"))
    }
}
