//! `Agent_OnAttach`: the agent loaded into a running VM (`instr attach PID`, `jcmd PID JVMTI.agent_load`).
//!
//! It does what start-up does, late: the same options and set-up as `Agent_OnLoad` with the live phase's
//! capabilities (lib.rs, `Phase::Attach`) and HeapProxy defined, on the attach listener thread. The rest
//! runs on the agent's control thread (control.rs), off the application threads, because HotSpot finds
//! an attached agent's native methods only once `Agent_OnAttach` has returned: HeapProxy is engaged when
//! its natives link, and then, unless `start=off`, the rules' probes are switched on by retransforming
//! `java.lang.Object` and the loaded classes the rules select (switches.rs). What could not be
//! retransformed is reported by count on the program's stderr and by `instr ctl PID status`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use jni_sys::jvalue;

use crate::ffi::java_vm::JavaVm;
use crate::ffi::Jni;
use crate::state::{agent, lock};
use crate::switches::{self, Probe};

/// `start=on` (the default) at attach: the probes go on once HeapProxy is engaged.
static START_PROBES: AtomicBool = AtomicBool::new(true);

/// How long the control thread waits for HotSpot to link the agent's natives after `Agent_OnAttach`.
const LINK_WAIT: Duration = Duration::from_secs(10);

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
    START_PROBES.store(run_time.start, Ordering::Relaxed);
    crate::threads::vm_init(jni);
    crate::define_proxy(jni);
    if !crate::control::start_with(jni, after_attach) {
        return Err("cannot start the agent's thread; nothing will be counted".into());
    }
    Ok(())
}

/// On the control thread, once `Agent_OnAttach` has returned.
fn after_attach(jni: Jni) {
    let Some(a) = agent() else { return };
    if !Probe::Alloc.in_rules(&a.rules) && !Probe::Methods.in_rules(&a.rules) {
        return; // nothing to rewrite: HeapProxy was not defined, and nothing calls it
    }
    if !natives_linked(jni) {
        eprintln!(
            "instr: the agent's native methods did not link within {} s; nothing will be counted",
            LINK_WAIT.as_secs()
        );
        return;
    }
    crate::engage(jni);
    if !START_PROBES.load(Ordering::Relaxed) {
        eprintln!("instr: attached with every probe off (start=off)");
        return;
    }
    for probe in [Probe::Alloc, Probe::Methods] {
        if !probe.in_rules(&a.rules) {
            continue;
        }
        match switches::switch(a, jni, probe, true, None) {
            Ok(summary) => eprintln!("instr: attached; {} on: {summary}", probe.name()),
            Err(e) => eprintln!("instr: attached, but {} is off: {e}", probe.name()),
        }
    }
}

/// Waits until a call of `HeapProxy.control` reaches the agent. A failed lookup throws
/// UnsatisfiedLinkError and is retried on the next call; engaging first would fail the class
/// initialisers that call natives, for good.
fn natives_linked(jni: Jni) -> bool {
    let Some(a) = agent() else { return false };
    let Some(proxy) = *lock(&a.proxy) else {
        return false;
    };
    let Some(control) =
        jni.static_method(proxy.0, "control", "(Ljava/lang/String;)Ljava/lang/String;")
    else {
        return false;
    };
    let deadline = std::time::Instant::now() + LINK_WAIT;
    while std::time::Instant::now() < deadline {
        let Some(command) = jni.new_string("help") else {
            return false;
        };
        let answer = jni.call_static_object(proxy.0, control, &[jvalue { l: command }]);
        jni.delete_local(command);
        if let Some(answer) = answer {
            jni.delete_local(answer);
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    false
}
