//! Start-up with class-data sharing (CDS) kept on (issue 17): `early=off`, and `early=auto` (the default)
//! on JDK 25 and later, or when the rules leave the JDK's start-up classes alone; `early=on` is the old way.
//!
//! HotSpot maps its CDS archive only if no agent environment then both holds
//! `can_generate_early_class_hook_events` and has the class hook enabled (`FileMapInfo::initialize`, JDK 17
//! and 25), and a hello world starts 20-25 ms later without the archive. That capability is what lets the
//! hook see the VM's first classes (`Object` among them) as they load, so without it those classes must be
//! retransformed once HeapProxy can be called.
//!
//! Rewriting at load the classes that come after them, before VM_INIT, is not safe with the archive on:
//! on JDK 25 a rewritten `java.lang.IndexOutOfBoundsException` or `ArrayIndexOutOfBoundsException` (loaded
//! in the start phase) crashes the first compiler thread, which meets the archived instances of the
//! class that was replaced. So no class is touched before VM_INIT: the agent loads as with `start=off`, and
//! at VM_INIT, before any application code, it defines HeapProxy, switches the rules' probes on much as
//! `instr ctl PID start` would (switches.rs: one retransformation of the selected loaded classes, after
//! which the hook rewrites each class as it loads), and only then engages HeapProxy, as `early=on` does. A redefined class keeps its `InstanceKlass`, so what the
//! archive points at stays valid.
//!
//! What is counted does not change: nothing is counted before VM_INIT in either mode (the Early probes of
//! `early=on` return at once until HeapProxy is engaged).

use std::sync::atomic::{AtomicBool, Ordering};

use crate::ffi::Jni;
use crate::state::agent;
use instr_rewriter::probes::Selection;
use instr_rules::Rules;

static AT_VM_INIT: AtomicBool = AtomicBool::new(false);

/// At load: whether the probes are to go on at VM_INIT.
pub fn configure(at_vm_init: bool) {
    AT_VM_INIT.store(at_vm_init, Ordering::Relaxed);
}

/// VM_INIT, before HeapProxy is engaged: HeapProxy defined, the rules' probes on and the loaded classes
/// they select rewritten (switches.rs). A failure is one `instr:` line; the program runs on, with what
/// could be switched.
pub fn start_probes(jni: Jni) {
    if !AT_VM_INIT.swap(false, Ordering::Relaxed) {
        return;
    }
    let Some(a) = agent() else { return };
    crate::define_proxy(jni);
    if crate::state::lock(&a.proxy).is_none() {
        return; // nothing could call it: define_proxy said so
    }
    match crate::switches::start_unengaged(a, jni) {
        Ok(summary) if summary.failed > 0 => eprintln!("instr: probes on at start-up: {summary}"),
        Ok(_) => {}
        Err(e) => eprintln!("instr: the probes are off: {e}"),
    }
}

/// Classes every JVM loads, and allocates in, before VM_INIT. Rules that select any of them select most
/// of the ~250 such classes (rules/default.yaml does), and retransforming those at VM_INIT costs about
/// what CDS saves (bench/README.md, 2026-11-25, "start-up with class-data sharing"); rules that select
/// none leave little but `java.lang.Object` to retransform, and CDS saves 25-30 ms of a hello world.
const START_UP_CLASSES: &[&[u8]] = &[
    b"java/lang/String",
    b"java/lang/StringBuilder",
    b"java/util/HashMap",
    b"java/util/ArrayList",
    b"java/util/concurrent/ConcurrentHashMap",
];

/// The first JDK on which `early=auto` keeps the archive whatever the rules select. From JDK 25 on, losing
/// the archive costs a long run more than retransforming the start-up classes at VM_INIT does: in four runs
/// of the kit with `rules/default.yaml` (bench/README.md, 2026-11-27 to 2026-11-29) `early=off` cost less
/// than the early hook in geomean every time, and fop stayed under 1.25x only with it. On JDK 17 the two
/// alternated. A hello world pays for it at start-up (about 12 ms on JDK 25), as a test suite's JVMs do.
const KEEPS_ARCHIVE_FROM: u32 = 25;

/// `early=auto`: the early class hook, and no CDS, when the rules select the JDK's start-up classes on a
/// JDK before `KEEPS_ARCHIVE_FROM`. `jdk` is the feature release (0 when unknown: treated as old).
pub fn early_pays(rules: &Rules, jdk: u32) -> bool {
    jdk < KEEPS_ARCHIVE_FROM && START_UP_CLASSES.iter().any(|c| rules.class_wanted(c))
}

#[cfg(test)]
mod tests {
    use instr_rules::Rules;

    #[test]
    fn auto_keeps_the_archive_from_jdk_25_and_for_rules_that_leave_the_jdk_alone() {
        let default = Rules::parse(include_str!("../../rules/default.yaml"), "default").unwrap();
        assert!(super::early_pays(&default, 17));
        assert!(!super::early_pays(&default, 25));
        let app = Rules::parse(
            "probes: [objects, arrays]\nallocations:\n  include: [\"com.example.**\"]\n",
            "app",
        )
        .unwrap();
        assert!(!super::early_pays(&app, 17));
        assert!(!super::early_pays(&app, 25));
    }
}
