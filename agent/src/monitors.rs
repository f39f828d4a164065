//! Monitor contention and waits: the four JVMTI monitor events, aggregated per monitor class and waiter
//! stack (MONITOR TIME), and forwarded to the XML trace when it is on.
//!
//! Cost: JVMTI reports only *contended* enters (a thread found the monitor owned and is about to block)
//! and waits, so an uncontended `synchronized` never reaches the agent. Each event takes the waiter's
//! stack (GetStackTrace), the monitor's class and hash code; the owner of a contended monitor needs
//! GetObjectMonitorUsage, a VM operation (a safepoint), so outside the trace it is looked up at most once
//! per `OWNER_INTERVAL_NS`.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use jni_sys::{jlong, jobject};

use crate::ffi::events::Handlers;
use crate::jni::Jni;
use crate::jvmti::{jthread, FrameInfo};
use crate::report::java_name;
use crate::stacks::Frame;
use crate::state::lock;
use crate::threads::{now, profiler, thread_id, thread_name, Profiler};

/// Outside the XML trace, the owner of a contended monitor is looked up at most this often.
pub const OWNER_INTERVAL_NS: u64 = 10_000_000;

#[derive(Clone, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub struct ContendKey {
    pub class: String,
    pub frames: Vec<Frame>,
}

#[derive(Clone, Debug, Default)]
pub struct ContendStats {
    pub count: u64,
    pub blocked_ns: u64,
    pub max_blocked_ns: u64,
    /// Owner thread name -> times it was seen owning the monitor when a waiter arrived.
    pub owners: BTreeMap<String, u64>,
    /// Waiter thread name -> times it blocked here.
    pub waiters: BTreeMap<String, u64>,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub struct WaitKey {
    pub class: String,
    pub frames: Vec<Frame>,
    /// The `wait(timeout)` argument in milliseconds; 0 is `wait()`.
    pub timeout_ms: i64,
}

#[derive(Clone, Debug, Default)]
pub struct WaitStats {
    pub count: u64,
    pub timed_out: u64,
    pub notified: u64,
    pub waited_ns: u64,
    pub min_waited_ns: u64,
    pub max_waited_ns: u64,
    pub waiters: BTreeMap<String, u64>,
}

struct Pending {
    start: u64,
    class: String,
    frames: Vec<Frame>,
    timeout_ms: i64,
    thread: String,
}

#[derive(Default)]
pub struct Monitors {
    entering: Mutex<HashMap<i64, Pending>>,
    waiting: Mutex<HashMap<i64, Pending>>,
    pub contended: Mutex<HashMap<ContendKey, ContendStats>>,
    pub waits: Mutex<HashMap<WaitKey, WaitStats>>,
    last_owner_lookup: AtomicU64,
    /// jmethodID -> whether it is one of `java.lang.Object`'s wait methods (skipped in waiter stacks).
    object_wait: Mutex<HashMap<usize, bool>>,
}

pub fn monitors() -> &'static Monitors {
    static M: OnceLock<Monitors> = OnceLock::new();
    M.get_or_init(Default::default)
}

/// Forgets the enters and waits under way (`stop monitors`): with the events off their ends never come.
pub fn forget_pending() {
    let m = monitors();
    lock(&m.entering).clear();
    lock(&m.waiting).clear();
}

pub fn register(handlers: &mut Handlers) {
    handlers.monitor_contended_enter = Some(contended_enter);
    handlers.monitor_contended_entered = Some(contended_entered);
    handlers.monitor_wait = Some(monitor_wait);
    handlers.monitor_waited = Some(monitor_waited);
}

/// The class of an object, as a Java name.
pub fn class_of(p: &Profiler, jni: Jni, o: jobject) -> String {
    let c = jni.object_class(o);
    if c.is_null() {
        return "?".into();
    }
    let name = p
        .jvmti
        .class_signature(c)
        .map(|s| java_name(&s))
        .unwrap_or_else(|| "?".into());
    jni.delete_local(c);
    name
}

/// The current thread's top frames, skipping `java.lang.Object`'s wait methods when `skip_wait`.
fn waiter_frames(p: &Profiler, skip_wait: bool) -> Vec<Frame> {
    let mut buf = [FrameInfo {
        method: std::ptr::null_mut(),
        location: 0,
    }; 72];
    let want = (p.depth + if skip_wait { 4 } else { 0 }).min(buf.len());
    let n = p.jvmti.stack_trace(0, &mut buf[..want]);
    let mut frames = &buf[..n];
    if skip_wait {
        while let Some(f) = frames.first() {
            if !is_object_wait(p, f.method) {
                break;
            }
            frames = &frames[1..];
        }
    }
    frames
        .iter()
        .take(p.depth)
        .map(|f| (f.method as usize, f.location))
        .collect()
}

fn is_object_wait(p: &Profiler, method: jni_sys::jmethodID) -> bool {
    let m = monitors();
    if let Some(&known) = lock(&m.object_wait).get(&(method as usize)) {
        return known;
    }
    let name = p.jvmti.method_name(method).map(|n| n.0).unwrap_or_default();
    let class = p
        .jvmti
        .method_declaring_class(method)
        .and_then(|c| p.jvmti.class_signature(c))
        .unwrap_or_default();
    let wait = class == "Ljava/lang/Object;" && name.starts_with("wait");
    lock(&m.object_wait).insert(method as usize, wait);
    wait
}

/// The agent's own monitors, as global references: the `LOCK`s of HeapProxyAllocs and HeapProxyCalls, which a
/// thread holds while its ThreadEnd hands its rows over and a reader holds while it sums them. Two of the
/// program's threads ending at once contend on one: that is the agent's contention, not the program's, so
/// the monitor events leave these out (the monitor profile and the XML trace show the program's alone).
static OWN_LOCKS: OnceLock<Vec<usize>> = OnceLock::new();

/// Called once HeapProxy is engaged (its halves are initialised then).
pub fn remember_own_locks(jni: Jni) {
    let locks = ["java/lang/HeapProxyAllocs", "java/lang/HeapProxyCalls"]
        .into_iter()
        .filter_map(|name| {
            let class = jni.find_class(name)?;
            let lock = jni
                .static_field(class, "LOCK", "[J")
                .map(|f| jni.static_object(class, f));
            jni.delete_local(class);
            let lock = lock.filter(|o| !o.is_null())?;
            let global = jni.new_global(lock);
            jni.delete_local(lock);
            Some(global as usize)
        })
        .collect();
    let _ = OWN_LOCKS.set(locks);
}

fn is_own_lock(jni: Jni, o: jobject) -> bool {
    OWN_LOCKS
        .get()
        .is_some_and(|locks| locks.iter().any(|&l| jni.is_same_object(o, l as jobject)))
}

fn contended_enter(jni: Jni, thread: jthread, o: jobject) {
    {
        if is_own_lock(jni, o) {
            return;
        }
        let Some(p) = profiler() else { return };
        let m = monitors();
        let tid = thread_id(p, jni, thread);
        let class = class_of(p, jni, o);
        let hash = p.jvmti.object_hash(o);
        let start = now();
        let frames = if p.rules.monitors {
            waiter_frames(p, false)
        } else {
            Vec::new()
        };
        let key = ContendKey {
            class: class.clone(),
            frames: frames.clone(),
        };
        // The owner is always read for the first enter of a (class, stack) and in the trace; otherwise
        // sampled. Never while OBJECT_FREE may be posted: the lookup is a safepoint, and one requested
        // then can hang the VM's exit (object_free::may_post).
        let first = p.rules.monitors && !lock(&m.contended).contains_key(&key);
        let tracing = crate::xml_trace::on();
        let last = m.last_owner_lookup.load(Ordering::Relaxed);
        let owner = if !crate::object_free::may_post()
            && (tracing
                || first
                || (start.saturating_sub(last) >= OWNER_INTERVAL_NS
                    && m.last_owner_lookup
                        .compare_exchange(last, start, Ordering::Relaxed, Ordering::Relaxed)
                        .is_ok()))
        {
            p.jvmti.monitor_owner(o).map(|owner| {
                let r = (thread_id(p, jni, owner), thread_name(p, owner));
                jni.delete_local(owner);
                r
            })
        } else {
            None
        };
        crate::xml_trace::contended_enter(tid, hash, &class, owner.as_ref().map(|o| o.0), start);
        let name = thread_name(p, thread);
        if let Some((_, owner_name)) = owner {
            *lock(&m.contended)
                .entry(key)
                .or_default()
                .owners
                .entry(owner_name)
                .or_default() += 1;
        }
        lock(&m.entering).insert(
            tid,
            Pending {
                start,
                class,
                frames,
                timeout_ms: 0,
                thread: name,
            },
        );
    }
}

fn contended_entered(jni: Jni, thread: jthread, o: jobject) {
    {
        let Some(p) = profiler() else { return };
        let m = monitors();
        let tid = thread_id(p, jni, thread);
        let t = now();
        let Some(pending) = lock(&m.entering).remove(&tid) else {
            return;
        };
        let blocked = t.saturating_sub(pending.start);
        crate::xml_trace::contended_entered(tid, p.jvmti.object_hash(o), blocked, t);
        if !p.rules.monitors {
            return;
        }
        let mut table = lock(&m.contended);
        let s = table
            .entry(ContendKey {
                class: pending.class,
                frames: pending.frames,
            })
            .or_default();
        s.count += 1;
        s.blocked_ns += blocked;
        s.max_blocked_ns = s.max_blocked_ns.max(blocked);
        *s.waiters.entry(pending.thread).or_default() += 1;
    }
}

fn monitor_wait(jni: Jni, thread: jthread, o: jobject, timeout: jlong) {
    {
        let Some(p) = profiler() else { return };
        let tid = thread_id(p, jni, thread);
        let class = class_of(p, jni, o);
        let start = now();
        crate::xml_trace::monitor_wait(tid, p.jvmti.object_hash(o), &class, timeout, start);
        let frames = if p.rules.monitors {
            waiter_frames(p, true)
        } else {
            Vec::new()
        };
        lock(&monitors().waiting).insert(
            tid,
            Pending {
                start,
                class,
                frames,
                timeout_ms: timeout,
                thread: thread_name(p, thread),
            },
        );
    }
}

fn monitor_waited(jni: Jni, thread: jthread, o: jobject, timed_out: bool) {
    {
        let Some(p) = profiler() else { return };
        let m = monitors();
        let tid = thread_id(p, jni, thread);
        let t = now();
        let Some(pending) = lock(&m.waiting).remove(&tid) else {
            return;
        };
        let waited = t.saturating_sub(pending.start);
        crate::xml_trace::monitor_waited(tid, p.jvmti.object_hash(o), timed_out, waited, t);
        if !p.rules.monitors {
            return;
        }
        let mut table = lock(&m.waits);
        let s = table
            .entry(WaitKey {
                class: pending.class,
                frames: pending.frames,
                timeout_ms: pending.timeout_ms,
            })
            .or_default();
        s.min_waited_ns = if s.count == 0 {
            waited
        } else {
            s.min_waited_ns.min(waited)
        };
        s.count += 1;
        if timed_out {
            s.timed_out += 1;
        } else {
            s.notified += 1;
        }
        s.waited_ns += waited;
        s.max_waited_ns = s.max_waited_ns.max(waited);
        *s.waiters.entry(pending.thread).or_default() += 1;
    }
}
