//! The method-call side of the agent: engaging `java.lang.HeapProxyCalls` at VM_INIT and the natives it
//! calls (`Java_java_lang_HeapProxyCalls_*`): the thread CPU clock, and the name -> id lookups behind the
//! `instr.Counts` test API. The reports are in `method_report.rs`.

use instr_rewriter::probes::Selection;
use std::sync::Mutex;

use jni_sys::{jint, jintArray, jlongArray, jstring};

use crate::jni::Jni;
use crate::state::{agent, lock, Agent};

/// Thread slots of HeapProxyCalls: threads whose tid is below DIRECT_SLOTS own the slot of that number;
/// the OVERFLOW_SLOTS after them are claimed by threads with larger tids and freed at their ThreadEnd.
/// Threads beyond those (alive at once) count in shared rows with atomic adds: exact, untimed, reported.
const DIRECT_SLOTS: jint = 1 << 14;
const OVERFLOW_SLOTS: jint = 1 << 12;

/// What `HeapProxyCalls.<clinit>` reads through its `settings()` native: see that class's `SETTINGS`.
static SETTINGS: Mutex<Option<[i64; 9]>> = Mutex::new(None);

/// Records the settings and calls `HeapProxyCalls.engage()`, whose first call initialises the class with
/// them. `offsets` are Unsafe's `[long base, long scale, ref base, ref scale, ...]`. False when the class is
/// missing or its initialisation failed.
pub fn engage(a: &Agent, jni: Jni, max_methods: jint, offsets: &[i64; 6]) -> bool {
    let Some(class) = *lock(&a.calls_proxy) else {
        return false;
    };
    let times = a.call_times && a.rules.methods();
    let clock = if times && !a.exact_clock {
        start_ticker()
    } else {
        0
    };
    let (direct, all) = if a.rules.methods() {
        (DIRECT_SLOTS, DIRECT_SLOTS + OVERFLOW_SLOTS)
    } else {
        (1, 1)
    };
    *lock(&SETTINGS) = Some([
        times as i64,
        clock,
        max_methods as i64,
        direct as i64,
        all as i64,
        offsets[0],
        offsets[1],
        offsets[2],
        offsets[3],
    ]);
    let Some(m) = jni.static_method(class.0, "engage", "()V") else {
        return false;
    };
    if !jni.call_static_void(class.0, m, &[]) {
        return false;
    }
    // An ending thread hands its call rows over (HeapProxyCalls.retire, through HeapProxy.retireThread, which
    // thread_rows.rs calls from ThreadEnd), so that its slot can serve another thread. lib.rs enables the
    // event only when allocations are counted; the callback is always installed. Without it calls stay
    // exact (threads past the slots count in the shared rows), only slower and untimed.
    if a.rules.methods()
        && a.jvmti
            .set_event_notification_mode(crate::jvmti::event::THREAD_END, crate::jvmti::ENABLE)
            != crate::jvmti::ERROR_NONE
    {
        eprintln!(
            "instr: cannot enable JVMTI THREAD_END: call slots of ended threads are not reused"
        );
    }
    true
}

/// `HeapProxyCalls.settings()`: what engage() recorded, or settings that leave the counters off.
pub fn settings(jni: Jni) -> jlongArray {
    let off = [0, 0, 1, 0, 1, 0, 8, 0, 4];
    jni.new_long_array(&lock(&SETTINGS).unwrap_or(off))
}

/// How often the times-mode wall clock advances (`calls=times` without `clock=exact`).
pub const TICK: std::time::Duration = std::time::Duration::from_micros(100);

/// The times-mode wall clock: nanoseconds since the agent loaded, advanced by one agent thread every
/// [`TICK`] and read by HeapProxyCalls with a single load at its address. A probe that read the OS clock
/// instead would pay `System.nanoTime` at every entry and exit (measured at 35-70 ns on the benchmark VM).
static CLOCK: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(1);

/// Starts the ticker thread (not a Java thread: it never touches the VM) and returns the clock's address.
fn start_ticker() -> i64 {
    let start = std::time::Instant::now();
    let spawned = std::thread::Builder::new()
        .name("instr-clock".into())
        .spawn(move || loop {
            std::thread::sleep(TICK);
            let ns = start.elapsed().as_nanos() as i64 + 1;
            CLOCK.store(ns, std::sync::atomic::Ordering::Relaxed);
        });
    if spawned.is_err() {
        return 0; // no thread: fall back to System.nanoTime
    }
    CLOCK.as_ptr() as i64
}

pub use crate::ffi::libc::thread_cpu_now;

/// `com.example.Foo` or `com/example/Foo` -> `com/example/Foo`.
fn internal(class: &str) -> String {
    class.replace('.', "/")
}

/// `HeapProxyCalls.methodIds(class, name, descriptor)`: the ids of the methods so named (instr.Counts).
pub fn method_ids(jni: Jni, class: jstring, name: jstring, descriptor: jstring) -> jintArray {
    {
        let (Some(a), Some(class), Some(name)) = (agent(), jni.string(class), jni.string(name))
        else {
            return jni.new_int_array_of(&[]);
        };
        let descriptor = jni.string(descriptor);
        let class = internal(&class);
        let ids: Vec<i32> = a
            .ids
            .methods()
            .into_iter()
            .filter(|m| {
                m.class == class
                    && m.name == name
                    && descriptor.as_ref().is_none_or(|d| *d == m.descriptor)
            })
            .map(|m| m.id as i32)
            .collect();
        jni.new_int_array_of(&ids)
    }
}

/// `HeapProxyCalls.classSelected(class)`: whether the rules select methods of the class.
pub fn class_selected(jni: Jni, class: jstring) -> bool {
    match (agent(), jni.string(class)) {
        (Some(a), Some(c)) => a.rules.methods() && a.rules.class_wanted(internal(&c).as_bytes()),
        _ => false,
    }
}

/// `HeapProxyCalls.siteIds(class, method, line)`: the allocation sites there (instr.Counts).
pub fn site_ids(jni: Jni, class: jstring, name: jstring, line: jint) -> jintArray {
    {
        let (Some(a), Some(class), Some(name)) = (agent(), jni.string(class), jni.string(name))
        else {
            return jni.new_int_array_of(&[]);
        };
        let class = internal(&class);
        let methods: std::collections::HashSet<u32> = a
            .ids
            .methods()
            .into_iter()
            .filter(|m| m.class == class && m.name == name)
            .map(|m| m.id)
            .collect();
        let ids: Vec<i32> = a
            .ids
            .sites()
            .into_iter()
            .filter(|s| methods.contains(&s.method))
            .filter(|s| line < 0 || s.line.map(i32::from) == Some(line))
            .map(|s| s.id as i32)
            .collect();
        jni.new_int_array_of(&ids)
    }
}
