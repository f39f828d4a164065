//! The compiled code a stop makes obsolete, unloaded at the stop.
//!
//! JDK 20 removed HotSpot's code sweeper (JDK-8290300). Since then the compiled code a retransformation
//! makes obsolete (every method compiled with the probes in it, after a stop) stays in the code cache
//! until a GC unloads it, which G1 does only in a full collection or at the remark of a concurrent cycle,
//! and a program whose old generation does not fill may see neither for hours. Meanwhile the code compiled
//! again without the probes goes in after it, so the program's hot code is spread over twice the address
//! range it had: h2 on JDK 25 held 7,444 compiled methods in 18 MB after a start and stop against 3,126 in
//! 8.8 MB in a JVM never started, and ran 6-12% slower to the end (bench/README.md, "the code a stop
//! leaves"). JDK 17's sweeper frees it within seconds.
//!
//! So on JDK 20+ a stop ends with two collections: a collection unloads only compiled code that has not run
//! since the marking cycle before it, and the obsolete code ran until the stop. On G1 they are concurrent
//! cycles, whose pauses are short whatever the heap's size; a full GC, the one collection JVMTI offers,
//! stops the program for as long as compacting the whole heap takes. G1 runs a concurrent cycle for
//! `System.gc()` under `-XX:+ExplicitGCInvokesConcurrent` and does nothing under `-XX:+DisableExplicitGC`;
//! both flags are read on each call, so the agent sets them for its two calls and puts them back. Other
//! collectors get JVMTI's full GCs (ZGC's and Shenandoah's are concurrent anyway).

use std::time::Instant;

use crate::ffi::{libjvm, vm_flags, Jni};
use crate::jvmti::ERROR_NONE;
use crate::state::Agent;

/// How the obsolete code was unloaded, for the stop's summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Collections {
    ConcurrentCycles,
    FullGcs,
}

impl std::fmt::Display for Collections {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Collections::ConcurrentCycles => "two concurrent G1 cycles",
            Collections::FullGcs => "two full GCs",
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Released {
    pub by: Collections,
    pub millis: u128,
}

/// Unloads the compiled code a stop made obsolete. None on a VM with a code sweeper, or when the VM
/// refused every way to collect.
pub fn release(a: &Agent, jni: Jni) -> Option<Released> {
    if a.jvmti.jdk_feature() < 20 {
        return None;
    }
    let started = Instant::now();
    let by = if concurrent_cycles(jni) {
        Collections::ConcurrentCycles
    } else if (0..2).all(|_| a.jvmti.force_garbage_collection() == ERROR_NONE) {
        Collections::FullGcs
    } else {
        eprintln!("instr: ForceGarbageCollection failed; the code compiled with the probes stays in the code cache until the VM's next full or concurrent GCs");
        return None;
    };
    Some(Released {
        by,
        millis: started.elapsed().as_millis(),
    })
}

/// Two concurrent cycles on G1, through `System.gc()`'s own entry; false, having collected nothing, on
/// another collector or a VM that does not describe its flags.
fn concurrent_cycles(jni: Jni) -> bool {
    let flag = vm_flags::bool_flag;
    let (Some(g1), Some(concurrent), Some(disabled)) = (
        flag("UseG1GC"),
        flag("ExplicitGCInvokesConcurrent"),
        flag("DisableExplicitGC"),
    ) else {
        return false;
    };
    if !g1.get() {
        return false;
    }
    let was_concurrent = concurrent.replace(true);
    let was_disabled = disabled.replace(false);
    let collected = (0..2).all(|_| libjvm::system_gc(jni));
    disabled.replace(was_disabled);
    concurrent.replace(was_concurrent);
    collected
}
