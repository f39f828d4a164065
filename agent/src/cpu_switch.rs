//! `start cpu [INTERVAL]` and `stop cpu` (`instr ctl`, `instr.Control`): the CPU sampler (sampler.rs)
//! started and stopped while the program runs.
//!
//! Two things the sampler otherwise gets at VM_INIT and ThreadStart have to be made at the start:
//! - jmethodIDs for the methods of every class loaded by then (AsyncGetCallTrace names no method without
//!   one): GetClassMethods over GetLoadedClasses, as at VM_INIT;
//! - a CPU timer for every Java thread already running. A thread's timer is normally made on the thread
//!   itself at its start; here the control thread makes them, one per OS thread id on that thread's CPU
//!   clock (signals.rs, `arm_cpu_timer_of`). JVMTI does not give OS thread ids, so the ids are those of
//!   `/proc/self/task` whose name (HotSpot names each Java thread's OS thread after it, cut to 15
//!   bytes) is that of a Java thread GetAllThreads lists, and the main thread, which the launcher starts
//!   unnamed: the thread that ran Agent_OnLoad, or when attached any thread of the process's own name but
//!   the first. Such a thread never registered its JNIEnv, so the signal
//!   handler asks the VM for it (GetEnv). A thread of the VM that happens to share such a name gets a
//!   timer too; its signals find no JNIEnv and are counted as failures, never as samples.
//!
//! `stop cpu` deletes every timer, turns the signal handler into a no-op, disables the sampler's events
//! and ends its drain thread: nothing of it runs until the next `start cpu`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI32, Ordering};

use crate::ffi::Jni;
use crate::jvmti::{capability, Capabilities, ERROR_NONE};
use crate::state::{lock, Agent};

/// The interval when `start cpu` names none: the sampler's usual 10 ms.
const DEFAULT_NS: u64 = 10_000_000;
/// One switch at a time: the socket's thread and the Java API may ask together.
static SWITCHING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// `start cpu`, `start cpu 1ms`, `start cpu cpu=1ms`.
pub fn start(a: &Agent, jni: Jni, words: &[&str]) -> Result<String, String> {
    let _one_at_a_time = lock(&SWITCHING);
    let cpu_ns = parse_interval(words)?;
    if crate::sampler::running() {
        return Ok("cpu was already on".into());
    }
    crate::ffi::signals::sigprof_is_free().map_err(|e| format!("cpu: {e}"))?;
    if a.call_times {
        return Err(
            "cpu: calls=times measures time already; the sampler and it are not used together"
                .into(),
        );
    }
    let bit = capability::GENERATE_COMPILED_METHOD_LOAD_EVENTS;
    if !a.jvmti.potential_capabilities().has(bit)
        || a.jvmti.add_capabilities(&Capabilities::default().with(bit)) != ERROR_NONE
    {
        return Err(format!(
            "this VM does not offer the JVMTI capability {} now",
            capability::name(bit)
        ));
    }
    crate::ffi::signals::find_unregistered_threads(a.java_vm.raw());
    let running = running_threads(a, jni);
    let armed = crate::sampler::start_at_run_time(a.jvmti, &a.rules, cpu_ns, jni, &running)?;
    Ok(format!(
        "cpu on: a sample every {} us of each thread's CPU time; {armed} threads running now, later ones from their start",
        cpu_ns / 1000
    ))
}

/// `stop cpu`.
pub fn stop(a: &Agent, jni: Jni) -> Result<String, String> {
    let _one_at_a_time = lock(&SWITCHING);
    if !crate::sampler::running() {
        return Ok("cpu was already off".into());
    }
    let s = a.rules.sampling();
    if s.wall_ns > 0 || s.engine != instr_rules::SamplingEngine::Agct {
        return Err(
            "cpu: the sampler was chosen at load with wall= or engine=jvmti; stop cpu stops the CPU sampler alone"
                .into(),
        );
    }
    // ThreadStart and ThreadEnd stay on for those who enabled them at load: the thread profiler, and
    // the allocation rows that an ending thread hands over (lib.rs).
    let t = a.rules.threads().enabled;
    let counting = a.rules.objects() || a.rules.arrays();
    let timers = crate::sampler::stop_at_run_time(jni, (t, t || counting));
    Ok(format!(
        "cpu off: {timers} timers deleted; what was sampled stays in the reports"
    ))
}

fn is_main(tid: i32) -> bool {
    match MAIN_TID.load(Ordering::Relaxed) {
        0 => tid != std::process::id() as i32,
        main => tid == main,
    }
}

fn parse_interval(words: &[&str]) -> Result<u64, String> {
    let value = match words {
        [] => return Ok(DEFAULT_NS),
        [w] => w.strip_prefix("cpu=").unwrap_or(w),
        _ => return Err("start cpu: one interval at most, e.g. start cpu 1ms".into()),
    };
    match instr_rules::parse_interval(value) {
        Ok(0) => Err(format!(
            "start cpu {value}: the interval must be more than 0"
        )),
        Ok(ns) => Ok(ns),
        Err(e) => Err(format!("start cpu {value}: {e}")),
    }
}

/// The OS id of the thread that ran Agent_OnLoad, 0 when attached: the thread that becomes Java's `main`
/// (the `java` launcher creates the VM on it; an embedding program on its own first thread).
static MAIN_TID: AtomicI32 = AtomicI32::new(0);

/// From Agent_OnLoad: this thread is the one Java will call `main`.
pub fn note_main_thread() {
    MAIN_TID.store(crate::ffi::signals::current_tid(), Ordering::Relaxed);
}

/// The OS ids (and names) of the Java threads running now, but the agent's own (see the module
/// comment for how they are found).
fn running_threads(a: &Agent, jni: Jni) -> Vec<(i32, String)> {
    // Java name cut as the OS name is -> the Java names.
    let mut java: HashMap<String, Vec<String>> = HashMap::new();
    for thread in a.jvmti.all_threads() {
        if let Some(info) = a.jvmti.thread_info(thread) {
            jni.delete_local(info.group);
            if !info.name.starts_with("instr-") {
                java.entry(os_name(&info.name)).or_default().push(info.name);
            }
        }
        jni.delete_local(thread);
    }
    let comm = |path: &std::path::Path| {
        std::fs::read_to_string(path)
            .map(|s| s.trim_end_matches('\n').to_string())
            .unwrap_or_default()
    };
    let process = comm(std::path::Path::new("/proc/self/comm"));
    let main = java.get("main").and_then(|names| names.first().cloned());
    let mut out = Vec::new();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return out;
    };
    for task in tasks.flatten() {
        let Some(tid) = task
            .file_name()
            .to_str()
            .and_then(|t| t.parse::<i32>().ok())
        else {
            continue;
        };
        let name = comm(&task.path().join("comm"));
        match java.get(&name) {
            Some(names) => out.push((tid, names.first().cloned().unwrap_or(name))),
            // The `main` thread keeps the process's OS name. Known by its id when the agent was loaded
            // at start-up; when attached, any thread of that name but the first: a native thread the
            // program started from `main` has it too, and it would be sampled (and its first sample
            // touch libjvm's thread-local storage in the signal handler).
            None if name == process && is_main(tid) => {
                out.push((tid, main.clone().unwrap_or(name)))
            }
            None => {}
        }
    }
    out
}

/// The name Linux keeps for a thread named `name`: its first 15 bytes (on a character boundary).
fn os_name(name: &str) -> String {
    let mut end = name.len().min(15);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    name[..end].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_and_names() {
        assert_eq!(parse_interval(&[]), Ok(DEFAULT_NS));
        assert_eq!(parse_interval(&["1ms"]), Ok(1_000_000));
        assert_eq!(parse_interval(&["cpu=250us"]), Ok(250_000));
        assert!(parse_interval(&["often"])
            .unwrap_err()
            .contains("start cpu often"));
        assert!(parse_interval(&["1ms", "2ms"]).is_err());
        assert_eq!(os_name("pool-1-thread-12"), "pool-1-thread-1");
        assert_eq!(os_name("main"), "main");
        assert_eq!(os_name("ééééééééé"), "ééééééé");
    }
}
