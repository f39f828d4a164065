//! After a stop, C2 waits a while before it compiles again, so that what it compiles then has profiles.
//!
//! A stop redefines every class the probes changed. Each of their methods starts again as a new method:
//! no compiled code, no profile (a MethodData), no counters. The compiled code that had inlined one of them
//! is thrown away too (deoptimized), but a deoptimization keeps the method's own profile and counters,
//! and HotSpot's tiered policy sends a method whose profile already counts more than C2's thresholds
//! straight back to C2, without profiling it again at tier 3 first. So within milliseconds of the stop C2
//! compiles the program's hot methods again, inlining the redefined methods while those have run a handful
//! of times and have no branch, type or call profile: C2 compiles their branches as if either way were
//! likely and their virtual calls as calls. That code is never compiled again, as nothing throws it away,
//! and a JVM started and stopped stayed 2-5% slower than one never started long after its JIT had gone
//! quiet (bench/README.md, 2026-11-28 and 2026-12-01).
//!
//! So the stop raises C2's thresholds (`Tier4InvocationThreshold`, `Tier4MinInvocationThreshold`,
//! `Tier4CompileThreshold`, `Tier4BackEdgeThreshold`: the policy reads them at every decision) out of
//! reach before its first redefinition, and puts them back a while after its last. Meanwhile the methods
//! it deoptimizes, and the redefined ones, run at tier 3, whose code profiles; when the thresholds are back,
//! the next counter overflow of each sends it to C2 with the profile that tier built, as in a JVM never
//! started. A start ends the hold at once: the on-window's speed is the program's too. Methods already in
//! C2's queue, and those with nothing to profile, compile as before.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use crate::ffi::vm_flags;

/// The thresholds C2's admission reads: from tier 3 (calls, and calls with loops), and for a loop (OSR).
const THRESHOLDS: [&str; 4] = [
    "Tier4InvocationThreshold",
    "Tier4MinInvocationThreshold",
    "Tier4CompileThreshold",
    "Tier4BackEdgeThreshold",
];

/// Out of reach of any counter: HotSpot's invocation and backedge counters stop below 2^31.
const OUT_OF_REACH: isize = i32::MAX as isize;

/// How long after the stop's last redefinition the thresholds stay raised, unless `recompile-hold=` says.
pub const DEFAULT_SETTLE: Duration = Duration::from_secs(3);

/// `recompile-hold=`, in milliseconds; 0: no hold.
static SETTLE_MS: AtomicU64 = AtomicU64::new(DEFAULT_SETTLE.as_millis() as u64);

pub fn configure(settle: Duration) {
    SETTLE_MS.store(settle.as_millis() as u64, Ordering::Release);
}

pub fn settle() -> Duration {
    Duration::from_millis(SETTLE_MS.load(Ordering::Acquire))
}

/// The thresholds' values before the hold, by name, while one is on.
static HELD: Mutex<Option<Vec<(&str, isize)>>> = Mutex::new(None);

/// Bumped by each hold and release, so that a hold's timer ends only its own hold.
static GENERATION: AtomicU64 = AtomicU64::new(0);

/// Raises C2's thresholds out of reach, if a hold is configured and this VM describes all four as `intx`
/// flags; false if not, having changed nothing. A hold already on stays on.
pub fn hold() -> bool {
    if settle().is_zero() {
        return false;
    }
    let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    GENERATION.fetch_add(1, Ordering::AcqRel);
    if held.is_some() {
        return true;
    }
    let Some(flags) = THRESHOLDS
        .iter()
        .map(|name| vm_flags::intx_flag(name))
        .collect::<Option<Vec<_>>>()
    else {
        return false;
    };
    *held = Some(
        THRESHOLDS
            .iter()
            .zip(flags)
            .map(|(name, f)| (*name, f.replace(OUT_OF_REACH)))
            .collect(),
    );
    true
}

/// Ends the hold `settle()` from now, on a thread of its own, unless another hold or a release comes first.
pub fn release_after() {
    let settle = settle();
    let generation = GENERATION.load(Ordering::Acquire);
    let spawned = std::thread::Builder::new()
        .name("instr-recompile-hold".into())
        .spawn(move || {
            std::thread::sleep(settle);
            if GENERATION.load(Ordering::Acquire) == generation {
                release();
            }
        });
    if spawned.is_err() {
        // Without a timer, the thresholds go back now rather than never.
        release();
    }
}

/// Puts the thresholds back as they were, if a hold is on.
pub fn release() {
    let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    GENERATION.fetch_add(1, Ordering::AcqRel);
    for (name, was) in held.take().into_iter().flatten() {
        if let Some(f) = vm_flags::intx_flag(name) {
            f.replace(was);
        }
    }
}

/// Whether a hold is on, for `status`.
pub fn is_held() -> bool {
    HELD.lock().unwrap_or_else(|e| e.into_inner()).is_some()
}
