//! The thread profiler's table and life cycle: every thread's id, name, group, parent group, daemon flag,
//! start and end, CPU time; and the entry points lib.rs calls (capabilities, callbacks, VM_INIT, VM_DEATH)
//! for the whole thread and monitor profiler (monitors.rs, deadlocks.rs, xml_trace.rs, monitor_report.rs).
//! Nothing here runs unless the rules have a `threads` section or an inline option turns it on.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use instr_rules::{Rules, ThreadRules};
use jni_sys::{jobject, jvalue};

use crate::ffi::events::Handlers;
use crate::jni::Jni;
use crate::jvmti::{jthread, Capabilities, Jvmti, ERROR_NONE};
use crate::jvmti_ext::{capability, event};
use crate::state::lock;

/// One thread's life.
#[derive(Clone, Debug)]
pub struct ThreadRecord {
    /// `Thread.getId()`: unique for the life of the VM.
    pub id: i64,
    pub name: String,
    pub group: String,
    /// The name of the group's parent group (what JVMPI and hprof call the thread's parent).
    pub parent_group: String,
    pub daemon: bool,
    pub is_virtual: bool,
    /// Nanoseconds since the agent loaded.
    pub start_ns: u64,
    pub end_ns: Option<u64>,
    pub cpu_ns: Option<u64>,
    /// Already running when the profiler started watching (VM_INIT): its start time is VM_INIT's.
    pub before_init: bool,
}

/// The fewest frames a waiter's stack keeps, whatever the allocation depth.
const MONITOR_STACK_DEPTH: u32 = 8;

pub struct Profiler {
    pub jvmti: Jvmti,
    pub rules: ThreadRules,
    /// Frames recorded per waiter stack.
    pub depth: usize,
    /// The report prefix (`%p` expanded).
    pub prefix: String,
    pub threads: Mutex<BTreeMap<i64, ThreadRecord>>,
    /// Cleared at VM_DEATH: late events are ignored.
    pub live: AtomicBool,
    /// Whether the VM reports virtual threads (JDK 21+ with can_support_virtual_threads).
    pub virtual_threads: bool,
    /// jmethodID of `Thread.getId()` (or `threadId()`), once looked up.
    thread_id_method: AtomicUsize,
    /// Whether owned monitors can be listed (the start-up capabilities of monitor dumps and deadlocks);
    /// not for the monitor profiler `start monitors` sets up in a running VM (monitor_switch.rs).
    pub monitor_info: bool,
}

static PROFILER: OnceLock<Profiler> = OnceLock::new();
static EPOCH: OnceLock<Instant> = OnceLock::new();

/// The profiler, when the rules turned it on.
pub fn profiler() -> Option<&'static Profiler> {
    PROFILER.get().filter(|p| p.live.load(Ordering::Acquire))
}

/// Nanoseconds since the profiler was set up.
pub fn now() -> u64 {
    EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// Applies the inline options `threads=on|off`, `monitors=on|off`, `deadlocks=MS`, `trace=PATH`,
/// `trace-allocs=on|off` and `trace-ring=N` over the rules' `threads` section. Each but `threads=off` turns the profiler on.
pub fn apply_options(rules: &mut Rules, options: &[(&str, &str)]) -> Result<(), String> {
    if options.is_empty() {
        return Ok(());
    }
    let mut t = rules.threads().clone();
    let on_off = |key: &str, value: &str| match value {
        "on" | "true" => Ok(true),
        "off" | "false" => Ok(false),
        _ => Err(format!("{key}={value}: expected on or off")),
    };
    for &(key, value) in options {
        match key {
            "threads" => t.enabled = on_off(key, value)?,
            "monitors" => t.monitors = on_off(key, value)?,
            "deadlocks" => {
                t.watch_ms = value.parse().map_err(|_| {
                    format!("deadlocks={value}: expected the watch interval in milliseconds (0: on demand only)")
                })?
            }
            "trace" => t.trace = Some(value.to_string()),
            "trace-allocs" => t.trace_allocations = on_off(key, value)?,
            "trace-ring" => {
                t.trace_ring = value
                    .parse()
                    .ok()
                    .filter(|n| (1..=crate::xml_trace::MAX_RING).contains(n))
                    .ok_or_else(|| {
                        format!(
                            "trace-ring={value}: expected a number of records from 1 to {}",
                            crate::xml_trace::MAX_RING
                        )
                    })?
            }
            _ => unreachable!("options.rs passes only these keys"),
        }
        if key != "threads" {
            t.enabled = true;
        }
    }
    if !t.enabled {
        t = ThreadRules::default();
    }
    rules.set_threads(t).map_err(|e| e.to_string())?;
    Ok(())
}

/// The capabilities that find owned monitors (monitor dumps and deadlocks). HotSpot grants them only
/// while loading, so they are asked for whenever the profiler is on, dumps being possible at any time.
/// Their cost: C2 (JDK 16+) marks the safepoints where a non-escaping object is in scope, so that
/// JVMTI can find an eliminated lock's monitor; before JDK 16 they disabled escape analysis.
pub const MONITOR_INFO_CAPABILITIES: [u32; 4] = [
    capability::GET_OWNED_MONITOR_INFO,
    capability::GET_OWNED_MONITOR_STACK_DEPTH_INFO,
    capability::GET_CURRENT_CONTENDED_MONITOR,
    capability::GET_MONITOR_INFO,
];

/// The capabilities the `threads` rules need: required ones (the agent refuses to start without them) and
/// optional ones (used when offered).
pub fn wanted_capabilities(t: &ThreadRules) -> (Vec<u32>, Vec<u32>) {
    if !t.enabled {
        return (Vec::new(), Vec::new());
    }
    let mut required = vec![
        capability::GET_CURRENT_THREAD_CPU_TIME,
        capability::GET_THREAD_CPU_TIME,
    ];
    required.extend(MONITOR_INFO_CAPABILITIES);
    if t.monitors || t.trace.is_some() {
        required.push(capability::GENERATE_MONITOR_EVENTS);
    }
    if t.trace_allocations {
        required.push(capability::TAG_OBJECTS);
        required.push(capability::GENERATE_OBJECT_FREE_EVENTS);
    }
    (required, vec![capability::SUPPORT_VIRTUAL_THREADS])
}

/// Adds the profiler's capabilities to `caps` (checked against `potential`).
pub fn add_capabilities(
    t: &ThreadRules,
    potential: &Capabilities,
    mut caps: Capabilities,
) -> Result<Capabilities, String> {
    let (required, optional) = wanted_capabilities(t);
    for bit in required {
        if !potential.has(bit) {
            return Err(format!(
                "this VM does not offer the JVMTI capability {} (needed by the thread profiler)",
                capability::name(bit)
            ));
        }
        caps = caps.with(bit);
    }
    for bit in optional {
        if potential.has(bit) {
            caps = caps.with(bit);
        }
    }
    Ok(caps)
}

/// Sets up the profiler after AddCapabilities, and installs its callbacks into `callbacks`. Does nothing
/// when the rules leave it off.
pub fn install(jvmti: Jvmti, rules: &Rules, caps: &Capabilities, handlers: &mut Handlers) {
    let t = rules.threads();
    if !t.enabled {
        return;
    }
    now();
    let pid = std::process::id();
    let _ = PROFILER.set(Profiler {
        jvmti,
        rules: t.clone(),
        // Waiter stacks are walked once per contention or wait event, which is rare and cheap next to the
        // wait itself, so they keep MONITOR_STACK_DEPTH frames even when allocation sites need only one.
        depth: rules.depth().clamp(MONITOR_STACK_DEPTH, 64) as usize,
        prefix: rules.output_path(pid),
        threads: Mutex::new(BTreeMap::new()),
        live: AtomicBool::new(true),
        virtual_threads: caps.has(capability::SUPPORT_VIRTUAL_THREADS),
        thread_id_method: AtomicUsize::new(0),
        monitor_info: true,
    });
    // THREAD_START and THREAD_END are lib.rs's: they also adopt the thread into the call rows and hand its
    // allocation rows over, and call thread_started and thread_ended.
    handlers.virtual_thread_start = Some(virtual_thread_start);
    handlers.virtual_thread_end = Some(virtual_thread_end);
    if t.monitors || t.trace.is_some() {
        crate::monitors::register(handlers);
    }
    if t.trace.is_some() {
        crate::xml_trace::register(handlers, t);
    }
}

/// The monitor profiler alone, set up while the VM runs (`start monitors`, monitor_switch.rs) with the
/// capabilities of the live phase: contention and waits, without monitor dumps or deadlock checks. The
/// threads running now are recorded by name; false when a profiler is set up already.
pub fn install_monitors_only(jvmti: Jvmti, rules: &Rules, jni: Jni) -> bool {
    now();
    let t = ThreadRules {
        enabled: true,
        monitors: true,
        ..ThreadRules::default()
    };
    let installed = PROFILER
        .set(Profiler {
            jvmti,
            rules: t,
            depth: rules.depth().clamp(MONITOR_STACK_DEPTH, 64) as usize,
            prefix: rules.output_path(std::process::id()),
            threads: Mutex::new(BTreeMap::new()),
            live: AtomicBool::new(true),
            virtual_threads: false,
            thread_id_method: AtomicUsize::new(0),
            monitor_info: false,
        })
        .is_ok();
    if let (true, Some(p)) = (installed, profiler()) {
        record_running(p, jni);
    }
    installed
}

/// Enables the profiler's events (after SetEventCallbacks).
pub fn enable_events(jvmti: Jvmti) -> Result<(), String> {
    let Some(p) = PROFILER.get() else {
        return Ok(());
    };
    // DATA_DUMP_REQUEST is always on: lib.rs dispatches it to the heap reports and to the watcher.
    let mut events = vec![event::THREAD_START, event::THREAD_END];
    if p.virtual_threads {
        events.extend([event::VIRTUAL_THREAD_START, event::VIRTUAL_THREAD_END]);
    }
    if p.rules.monitors || p.rules.trace.is_some() {
        events.extend([
            event::MONITOR_CONTENDED_ENTER,
            event::MONITOR_CONTENDED_ENTERED,
            event::MONITOR_WAIT,
            event::MONITOR_WAITED,
        ]);
    }
    if p.rules.trace.is_some() {
        events.push(event::CLASS_LOAD);
    }
    for e in events {
        if jvmti.set_event(e, true) != ERROR_NONE {
            return Err(format!("cannot enable JVMTI event {e}"));
        }
    }
    if p.rules.trace.is_some()
        && p.rules.trace_allocations
        && crate::object_free::set_enabled(jvmti, true) != ERROR_NONE
    {
        return Err(format!("cannot enable JVMTI event {}", event::OBJECT_FREE));
    }
    Ok(())
}

/// Checks at load time that the profiler's output can be written.
pub fn check_outputs(rules: &Rules) -> Result<(), String> {
    match &rules.threads().trace {
        Some(template) if rules.threads().enabled => crate::xml_trace::open(
            &instr_rules::expand_template(template, std::process::id()),
            rules.threads().trace_allocations,
            rules.threads().trace_ring,
        ),
        _ => Ok(()),
    }
}

/// VM_INIT: records the threads already running and starts the agent threads.
pub fn vm_init(jni: Jni) {
    let Some(p) = profiler() else { return };
    record_running(p, jni);
    crate::deadlocks::start_watcher(p, jni);
    if p.rules.trace.is_some() {
        crate::xml_trace::start_writer(p, jni);
    }
}

/// Records the threads alive now, as started at this moment.
fn record_running(p: &Profiler, jni: Jni) {
    let t = now();
    for thread in p.jvmti.all_threads() {
        if let Some(mut r) = describe(p, jni, thread, false) {
            r.before_init = true;
            r.start_ns = t;
            if let std::collections::btree_map::Entry::Vacant(e) = lock(&p.threads).entry(r.id) {
                crate::xml_trace::thread_started(&r);
                e.insert(r);
            }
        }
        jni.delete_local(thread);
    }
}

/// VM_DEATH: closes every thread still alive, writes PREFIX.threads.txt and .json, and closes the trace.
pub fn vm_death(jni: Jni) {
    let Some(p) = profiler() else { return };
    // From here on events are ignored: a thread ending now (the watcher, for one) is closed below.
    p.live.store(false, Ordering::Release);
    let t = now();
    let cpu = alive_cpu(p, jni);
    crate::deadlocks::stop_watcher();
    {
        let mut threads = lock(&p.threads);
        for r in threads.values_mut().filter(|r| r.end_ns.is_none()) {
            r.cpu_ns = cpu.get(&r.id).copied().or(r.cpu_ns);
            crate::xml_trace::thread_ended(r, t, true);
        }
    }
    let threads: Vec<ThreadRecord> = lock(&p.threads).values().cloned().collect();
    crate::monitor_report::write(p, jni, &threads, t);
    crate::xml_trace::close();
}

/// The CPU time so far of every live platform thread, by id.
fn alive_cpu(p: &Profiler, jni: Jni) -> BTreeMap<i64, u64> {
    let mut cpu = BTreeMap::new();
    for thread in p.jvmti.all_threads() {
        let id = thread_id(p, jni, thread);
        if let Some(c) = p.jvmti.thread_cpu_time(thread) {
            cpu.insert(id, c as u64);
        }
        jni.delete_local(thread);
    }
    cpu
}

/// The profile's `threads` section as it is now, for a report made on demand while the program runs:
/// the live threads with their CPU time so far (the table itself is left as it is). `None` when the
/// profiler is off or has stopped.
pub fn section_now(jni: Jni) -> Option<instr_profile::model::Threads> {
    let p = profiler()?;
    let t = now();
    let cpu = alive_cpu(p, jni);
    let threads: Vec<ThreadRecord> = lock(&p.threads)
        .values()
        .map(|r| ThreadRecord {
            cpu_ns: match r.end_ns {
                None => cpu.get(&r.id).copied().or(r.cpu_ns),
                Some(_) => r.cpu_ns,
            },
            ..r.clone()
        })
        .collect();
    let section = crate::monitor_report::section(p, jni, &threads, t)?;
    serde_json::from_value(section).ok()
}

/// `Thread.getId()` of `thread`, through JNI (-1 if it cannot be read).
pub fn thread_id(p: &Profiler, jni: Jni, thread: jthread) -> i64 {
    // Before the live phase an exception raised by JNI would be fatal (Throwable is not initialised).
    if thread.is_null() || p.jvmti.get_phase() != crate::jvmti::PHASE_LIVE {
        return -1;
    }
    let mut m = p.thread_id_method.load(Ordering::Acquire);
    if m == 0 {
        if let Some(c) = jni.find_class("java/lang/Thread") {
            // getId() exists on every JDK (deprecated from 19 in favour of the final threadId()).
            m = jni.method(c, "getId", "()J").map_or(0, |m| m as usize);
            jni.delete_local(c);
            p.thread_id_method.store(m, Ordering::Release);
        }
    }
    if m == 0 || thread.is_null() {
        return -1;
    }
    jni.call_long(thread, m as jni_sys::jmethodID, &[])
        .unwrap_or(-1)
}

/// A thread's name, by JVMTI (empty if unknown).
pub fn thread_name(p: &Profiler, thread: jthread) -> String {
    p.jvmti
        .thread_info(thread)
        .map(|i| i.name)
        .unwrap_or_default()
}

fn describe(p: &Profiler, jni: Jni, thread: jthread, is_virtual: bool) -> Option<ThreadRecord> {
    let id = thread_id(p, jni, thread);
    let info = p.jvmti.thread_info(thread)?;
    let (mut group, mut parent_group) = (String::new(), String::new());
    if !info.group.is_null() {
        if let Some((parent, name)) = p.jvmti.thread_group_info(info.group) {
            group = name;
            if !parent.is_null() {
                parent_group = p
                    .jvmti
                    .thread_group_info(parent)
                    .map(|(grand, n)| {
                        jni.delete_local(grand);
                        n
                    })
                    .unwrap_or_default();
                jni.delete_local(parent);
            }
        }
        jni.delete_local(info.group);
    }
    Some(ThreadRecord {
        id,
        name: info.name,
        group,
        parent_group,
        daemon: info.daemon,
        is_virtual,
        start_ns: now(),
        end_ns: None,
        cpu_ns: None,
        before_init: false,
    })
}

fn started(jni: Jni, thread: jthread, is_virtual: bool) {
    {
        let Some(p) = profiler() else { return };
        if let Some(r) = describe(p, jni, thread, is_virtual) {
            let mut threads = lock(&p.threads);
            match threads.get_mut(&r.id) {
                // The main thread's THREAD_START comes after VM_INIT, which already recorded it.
                Some(known) if known.end_ns.is_none() => {
                    known.name = r.name;
                }
                _ => {
                    crate::xml_trace::thread_started(&r);
                    threads.insert(r.id, r);
                }
            }
        }
    }
}

fn ended(jni: Jni, thread: jthread, is_virtual: bool) {
    {
        let Some(p) = profiler() else { return };
        let id = thread_id(p, jni, thread);
        // The callback runs on the ending thread itself; a virtual thread has no CPU time of its own.
        let cpu = if is_virtual {
            None
        } else {
            p.jvmti.current_thread_cpu_time().map(|c| c as u64)
        };
        let t = now();
        let mut threads = lock(&p.threads);
        // A thread whose start was not reported (JDK 25 reports none for agent threads): it is
        // recorded now, with a start, so that every end in the trace has its start.
        let r = threads.entry(id).or_insert_with(|| {
            let r = describe(p, jni, thread, is_virtual).unwrap_or(ThreadRecord {
                id,
                name: thread_name(p, thread),
                group: String::new(),
                parent_group: String::new(),
                daemon: false,
                is_virtual,
                start_ns: t,
                end_ns: None,
                cpu_ns: None,
                before_init: false,
            });
            let r = ThreadRecord {
                before_init: true,
                ..r
            };
            crate::xml_trace::thread_started(&r);
            r
        });
        if r.end_ns.is_some() {
            return;
        }
        r.cpu_ns = cpu;
        r.end_ns = Some(t);
        crate::xml_trace::thread_ended(r, t, false);
    }
}

/// The profiler's part of ThreadStart (lib.rs owns the callback). Does nothing when the profiler is off.
pub fn thread_started(jni: Jni, thread: jthread) {
    started(jni, thread, false);
}

/// The profiler's part of ThreadEnd (lib.rs owns the callback). Does nothing when the profiler is off.
pub fn thread_ended(jni: Jni, thread: jthread) {
    ended(jni, thread, false);
}

fn virtual_thread_start(jni: Jni, thread: jthread) {
    started(jni, thread, true);
}

fn virtual_thread_end(jni: Jni, thread: jthread) {
    ended(jni, thread, true);
}

/// Creates an unstarted `java.lang.Thread` named `name` for RunAgentThread (a local reference).
pub fn new_agent_thread(jni: Jni, name: &str) -> Option<jobject> {
    let class = jni.find_class("java/lang/Thread")?;
    let ctor = jni.method(class, "<init>", "(Ljava/lang/String;)V")?;
    let n = jni.new_string(name)?;
    let t = jni.new_object(class, ctor, &[jvalue { l: n }]);
    jni.delete_local(n);
    jni.delete_local(class);
    t
}

#[cfg(test)]
mod tests {
    use crate::options::{parse, Parsed};

    fn threads(options: &str) -> Result<instr_rules::ThreadRules, String> {
        match parse(options)? {
            Parsed::Run(s) => Ok(s.rules.threads().clone()),
            Parsed::Help => panic!("help"),
        }
    }

    #[test]
    fn inline_options() {
        assert!(!threads("depth=2").unwrap().enabled);
        let t = threads("threads=on").unwrap();
        assert!(t.enabled && !t.monitors && t.trace.is_none());
        let t = threads("monitors=on,deadlocks=250").unwrap();
        assert!(t.enabled && t.monitors);
        assert_eq!(t.watch_ms, 250);
        let t = threads("trace=/tmp/t-%p.xml,trace-allocs=on,depth=0").unwrap();
        assert_eq!(t.trace.as_deref(), Some("/tmp/t-%p.xml"));
        assert!(t.trace_allocations);
        let Ok(Parsed::Run(s)) = parse("trace=t.xml,trace-allocs=on,depth=0") else {
            panic!()
        };
        assert_eq!(
            s.rules.depth(),
            0,
            "the trace's allocations need no stack walk"
        );
        assert!(!threads("monitors=on,threads=off").unwrap().enabled);
        assert!(threads("monitors=maybe")
            .unwrap_err()
            .contains("monitors=maybe"));
        assert!(threads("deadlocks=soon")
            .unwrap_err()
            .contains("deadlocks=soon"));
        assert!(threads("deadlocks=99999999")
            .unwrap_err()
            .contains("out of range"));
        assert!(threads("trace=a%q").unwrap_err().contains("%q"));
        assert!(threads("trace-allocs=on,live=5")
            .unwrap_err()
            .contains("live="));
    }
}
