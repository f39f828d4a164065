//! `Agent_OnAttach`: the agent loaded into a running VM (`instr attach PID`, `jcmd PID JVMTI.agent_load`).
//!
//! It does what start-up does, late, on the attach listener thread (not an application thread): the same
//! options and set-up as `Agent_OnLoad` with the live phase's capabilities (lib.rs, `Phase::Attach`),
//! HeapProxy defined and engaged at once, the control socket opened, and then, unless `start=off`, the
//! rules' probes switched on by retransforming `java.lang.Object` and the loaded classes the rules select
//! (switches.rs). What could not be retransformed is reported by count.

use crate::ffi::java_vm::JavaVm;
use crate::state::agent;
use crate::switches::{self, Probe};

pub fn attach(vm: JavaVm, options: &str) -> Result<(), String> {
    if agent().is_some() {
        // One agent per VM: its options were fixed by the first load; the socket controls it.
        eprintln!(
            "instr: already loaded in this JVM; these options are ignored: use `instr ctl {}`",
            std::process::id()
        );
        return Ok(());
    }
    let jni = vm
        .jni()
        .ok_or("the attaching thread has no JNI environment")?;
    let run_time = crate::load_in(vm, options, crate::Phase::Attach)?;
    let a = agent().ok_or("the agent was not installed")?;
    crate::threads::vm_init(jni);
    crate::engage(jni);
    crate::control::start(jni);
    if !run_time.start {
        eprintln!("instr: attached with every probe off (start=off)");
        return Ok(());
    }
    for probe in [Probe::Alloc, Probe::Methods] {
        if !probe.in_rules(&a.rules) {
            continue;
        }
        match switches::switch(a, jni, probe, true) {
            Ok(summary) => eprintln!("instr: attached; {} on: {summary}", probe.name()),
            Err(e) => eprintln!("instr: attached, but {} is off: {e}", probe.name()),
        }
    }
    Ok(())
}
