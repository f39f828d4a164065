//! The XML event trace (docs/XML-TRACE.md), in the spirit of the TPTP/JVMPI heap and thread profilers:
//! one element per event, streamed to a file as events happen.
//!
//! Producers format a whole element and put it on a bounded queue; an agent thread (RunAgentThread) takes
//! the queue in batches and appends them to the file, so the file only ever receives whole elements.
//! Java threads wait when the queue is full (nothing is lost, memory stays bounded); callbacks that must
//! not block (GC start/finish on the VM thread, OBJECT_FREE) drop the element instead and count it. At
//! VM_DEATH (which `System.exit` from any thread runs) the queue is drained and the root element closed,
//! so the file is well-formed; only `Runtime.halt` or a crash can leave it open.

// Object handles are opaque and only passed back to the VM (see jni.rs).
#![allow(clippy::not_unsafe_ptr_arg_deref)]
use std::collections::{HashMap, VecDeque};
use std::fmt::Write as _;
use std::fs::File;
use std::io::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::Duration;

use instr_rules::ThreadRules;
use jni_sys::{jclass, jlong, jobject, JNIEnv};

use crate::jni::Jni;
use crate::jvmti::{jthread, Env, EventCallbacks};
use crate::jvmti_ext::{event, AgentThreadFn, ClassFn};
use crate::report::java_name;
use crate::state::lock;
use crate::threads::{new_agent_thread, now, profiler, thread_id, Profiler, ThreadRecord};

/// Elements queued before producers wait (or, for the non-blocking ones, drop).
pub const QUEUE_CAPACITY: usize = 16 * 1024;
/// Tags of traced objects have this bit set; tags without it belong to the live-object tracker.
pub const TRACE_TAG_BIT: i64 = 1 << 62;

struct Queue {
    elements: VecDeque<String>,
    closed: bool,
}

struct Trace {
    queue: Mutex<Queue>,
    not_empty: Condvar,
    not_full: Condvar,
    file: Mutex<Option<File>>,
    /// True once the writer thread runs: only then may producers wait for room.
    writer_running: AtomicBool,
    dropped: AtomicU64,
    next_object: AtomicU64,
    next_class: AtomicU64,
    /// Class name -> classId.
    classes: Mutex<HashMap<String, u64>>,
    /// Dense class index (HeapProxyAllocs) -> (classId, class name), for allocations.
    slots: Mutex<HashMap<i32, (u64, String)>>,
    allocations: bool,
}

static TRACE: OnceLock<Trace> = OnceLock::new();

/// Whether the trace is on.
pub fn on() -> bool {
    TRACE.get().is_some()
}

impl Trace {
    /// Queues one element. `may_wait`: the caller may block until there is room.
    fn push(&self, element: String, may_wait: bool) {
        let mut q = lock(&self.queue);
        if q.closed {
            return;
        }
        while q.elements.len() >= QUEUE_CAPACITY {
            if !may_wait || !self.writer_running.load(Ordering::Acquire) {
                self.dropped.fetch_add(1, Ordering::Relaxed);
                return;
            }
            q = self
                .not_full
                .wait_timeout(q, Duration::from_millis(100))
                .unwrap_or_else(|p| p.into_inner())
                .0;
            if q.closed {
                return;
            }
        }
        q.elements.push_back(element);
        drop(q);
        self.not_empty.notify_one();
    }
}

/// Appends whole elements to the file.
fn write(file: &mut File, batch: &[String]) {
    if batch.is_empty() {
        return;
    }
    let mut bytes = Vec::with_capacity(batch.iter().map(|e| e.len()).sum());
    for e in batch {
        bytes.extend_from_slice(e.as_bytes());
    }
    if let Err(e) = file.write_all(&bytes) {
        eprintln!("instr: cannot write the XML trace: {e}");
    }
}

/// Opens the trace file at load time and writes the prolog; fails with the reason if it cannot.
/// `allocations`: whether object allocations and frees are traced.
pub fn open(path: &str, allocations: bool) -> Result<(), String> {
    let mut f =
        File::create(path).map_err(|e| format!("cannot write the XML trace {path}: {e}"))?;
    let prolog = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<TRACE version=\"1\" pid=\"{}\" timeUnit=\"ns\">\n",
        std::process::id()
    );
    f.write_all(prolog.as_bytes())
        .map_err(|e| format!("cannot write the XML trace {path}: {e}"))?;
    let _ = TRACE.set(Trace {
        queue: Mutex::new(Queue {
            elements: VecDeque::new(),
            closed: false,
        }),
        not_empty: Condvar::new(),
        not_full: Condvar::new(),
        file: Mutex::new(Some(f)),
        writer_running: AtomicBool::new(false),
        dropped: AtomicU64::new(0),
        next_object: AtomicU64::new(1),
        next_class: AtomicU64::new(1),
        classes: Mutex::new(HashMap::new()),
        slots: Mutex::new(HashMap::new()),
        allocations,
    });
    Ok(())
}

/// Installs the trace's own callbacks (class load; object free when allocations are traced).
/// The trace's callbacks (its OBJECT_FREE goes through lib.rs's one dispatcher, object_free.rs).
pub fn register(callbacks: &mut EventCallbacks, _rules: &ThreadRules) {
    callbacks.set(event::CLASS_LOAD, class_load as ClassFn);
}

/// Starts the writer (an agent thread) at VM_INIT.
pub fn start_writer(p: &Profiler, jni: Jni) {
    let Some(thread) = new_agent_thread(jni, "instr-trace-writer") else {
        eprintln!("instr: cannot create the trace writer thread; the XML trace is written at exit");
        return;
    };
    if p.jvmti
        .run_agent_thread(thread, writer_main as AgentThreadFn, 5)
        != crate::jvmti::ERROR_NONE
    {
        eprintln!("instr: cannot start the trace writer thread; the XML trace is written at exit");
    }
    jni.delete_local(thread);
}

unsafe extern "system" fn writer_main(_: Env, _: *mut JNIEnv, _: *mut std::ffi::c_void) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let Some(t) = TRACE.get() else { return };
        t.writer_running.store(true, Ordering::Release);
        loop {
            // The file lock is held from taking a batch to writing it, so close() (which takes the
            // rest of the queue, then the file) always writes after this batch, never in between.
            let mut file = lock(&t.file);
            let Some(f) = file.as_mut() else { break };
            let batch: Vec<String> = {
                let mut q = lock(&t.queue);
                while q.elements.is_empty() && !q.closed {
                    q = t
                        .not_empty
                        .wait_timeout(q, Duration::from_millis(200))
                        .unwrap_or_else(|p| p.into_inner())
                        .0;
                }
                if q.closed {
                    break;
                }
                q.elements.drain(..).collect()
            };
            t.not_full.notify_all();
            write(f, &batch);
        }
        t.writer_running.store(false, Ordering::Release);
    }));
}

/// VM_DEATH: drains the queue, closes the root element and the file.
pub fn close() {
    let Some(t) = TRACE.get() else { return };
    let rest: Vec<String> = {
        let mut q = lock(&t.queue);
        if q.closed {
            return;
        }
        q.closed = true;
        q.elements.drain(..).collect()
    };
    t.not_full.notify_all();
    t.not_empty.notify_all();
    let mut file = lock(&t.file);
    let mut tail = String::new();
    for e in &rest {
        tail.push_str(e);
    }
    let _ = writeln!(
        tail,
        "<traceEnd time=\"{}\" dropped=\"{}\"/>\n</TRACE>",
        now(),
        t.dropped.load(Ordering::Relaxed)
    );
    if let Some(mut f) = file.take() {
        if let Err(e) = f.write_all(tail.as_bytes()).and_then(|_| f.sync_all()) {
            eprintln!("instr: cannot finish the XML trace: {e}");
        }
    }
}

fn emit(element: String, may_wait: bool) {
    if let Some(t) = TRACE.get() {
        t.push(element, may_wait);
    }
}

/// Escapes an attribute value; characters XML 1.0 cannot carry become `?`.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => {
                let _ = write!(out, "&#{};", c as u32);
            }
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('?'),
            c => out.push(c),
        }
    }
    out
}

pub fn thread_started(r: &ThreadRecord) {
    if TRACE.get().is_none() {
        return;
    }
    emit(
        format!(
            "<threadStart threadId=\"{}\" threadName=\"{}\" groupName=\"{}\" parentName=\"{}\" daemon=\"{}\" virtual=\"{}\" time=\"{}\"{}/>\n",
            r.id,
            escape(&r.name),
            escape(&r.group),
            escape(&r.parent_group),
            r.daemon,
            r.is_virtual,
            r.start_ns,
            if r.before_init { " beforeInit=\"true\"" } else { "" }
        ),
        true,
    );
}

pub fn thread_ended(r: &ThreadRecord, time: u64, at_exit: bool) {
    if TRACE.get().is_none() {
        return;
    }
    let cpu = r
        .cpu_ns
        .map(|c| format!(" cpuTime=\"{c}\""))
        .unwrap_or_default();
    emit(
        format!(
            "<threadEnd threadId=\"{}\" time=\"{time}\"{cpu}{}/>\n",
            r.id,
            if at_exit { " atExit=\"true\"" } else { "" }
        ),
        true,
    );
}

fn class_id(t: &Trace, name: &str) -> (u64, bool) {
    let mut classes = lock(&t.classes);
    if let Some(&id) = classes.get(name) {
        return (id, false);
    }
    let id = t.next_class.fetch_add(1, Ordering::Relaxed);
    classes.insert(name.to_string(), id);
    (id, true)
}

unsafe extern "system" fn class_load(_: Env, env: *mut JNIEnv, thread: jthread, class: jclass) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let (Some(p), Some(t)) = (profiler(), TRACE.get()) else {
            return;
        };
        let Some(sig) = p.jvmti.class_signature(class) else {
            return;
        };
        let name = java_name(&sig);
        let (id, new) = class_id(t, &name);
        if new {
            let tid = thread_id(p, Jni(env), thread);
            emit(
                format!(
                    "<classDef classId=\"{id}\" className=\"{}\" threadId=\"{tid}\" time=\"{}\"/>\n",
                    escape(&name),
                    now()
                ),
                true,
            );
        }
    }));
}

/// An object allocation the rules record (called from `HeapProxy.objectStack`): an `objAlloc` element,
/// and a tag with `TRACE_TAG_BIT` so that its free is traced too.
pub fn object_allocated(jni: Jni, o: jobject, slot: i32) {
    let (Some(p), Some(t)) = (profiler(), TRACE.get()) else {
        return;
    };
    if !t.allocations {
        return;
    }
    let known = lock(&t.slots).get(&slot).cloned();
    let (cid, name) = match known {
        Some(k) => k,
        None => {
            let name = crate::monitors::class_of(p, jni, o);
            let (cid, new) = class_id(t, &name);
            if new {
                emit(
                    format!(
                        "<classDef classId=\"{cid}\" className=\"{}\" time=\"{}\"/>\n",
                        escape(&name),
                        now()
                    ),
                    true,
                );
            }
            lock(&t.slots).insert(slot, (cid, name.clone()));
            (cid, name)
        }
    };
    let obj = t.next_object.fetch_add(1, Ordering::Relaxed);
    p.jvmti.set_tag(o, TRACE_TAG_BIT | obj as i64);
    let size = p.jvmti.object_size(o).unwrap_or(0);
    let tid = current_thread_id(p, jni);
    emit(
        format!(
            "<objAlloc objId=\"{obj}\" classId=\"{cid}\" className=\"{}\" size=\"{size}\" threadId=\"{tid}\" isArray=\"false\" time=\"{}\"/>\n",
            escape(&name),
            now()
        ),
        true,
    );
}

fn current_thread_id(p: &Profiler, jni: Jni) -> i64 {
    thread_local! {
        static ID: std::cell::Cell<i64> = const { std::cell::Cell::new(i64::MIN) };
    }
    // Platform threads keep their id; a virtual thread runs on carriers, so it is asked each time.
    let cached = ID.with(|c| c.get());
    if cached != i64::MIN && !p.virtual_threads {
        return cached;
    }
    if p.jvmti.get_phase() != crate::jvmti::PHASE_LIVE {
        return -1;
    }
    let Some(class) = jni.find_class("java/lang/Thread") else {
        return -1;
    };
    let id = jni
        .static_method(class, "currentThread", "()Ljava/lang/Thread;")
        .and_then(|m| jni.call_static_object(class, m, &[]))
        .map(|t| {
            let id = thread_id(p, jni, t);
            jni.delete_local(t);
            id
        })
        .unwrap_or(-1);
    jni.delete_local(class);
    ID.with(|c| c.set(id));
    id
}

/// OBJECT_FREE for a tag with `TRACE_TAG_BIT` (service thread: no JNI, must not block).
pub fn object_freed(tag: jlong) {
    let Some(t) = TRACE.get() else { return };
    t.push(
        format!(
            "<objFree objId=\"{}\" time=\"{}\"/>\n",
            tag & !TRACE_TAG_BIT,
            now()
        ),
        false,
    );
}

/// GC start and finish (VM thread at a safepoint: must not block).
pub fn gc(start: bool) {
    let Some(t) = TRACE.get() else { return };
    let name = if start { "gcStart" } else { "gcFinish" };
    t.push(format!("<{name} time=\"{}\"/>\n", now()), false);
}

pub fn contended_enter(tid: i64, object: i32, class: &str, owner: Option<i64>, time: u64) {
    if TRACE.get().is_none() {
        return;
    }
    let owner = owner
        .map(|o| format!(" ownerThreadId=\"{o}\""))
        .unwrap_or_default();
    emit(
        format!(
            "<monContendedEnter threadId=\"{tid}\" objId=\"{object}\" className=\"{}\"{owner} time=\"{time}\"/>\n",
            escape(class)
        ),
        true,
    );
}

pub fn contended_entered(tid: i64, object: i32, blocked_ns: u64, time: u64) {
    if TRACE.get().is_none() {
        return;
    }
    emit(
        format!(
            "<monContendedEntered threadId=\"{tid}\" objId=\"{object}\" blockedTime=\"{blocked_ns}\" time=\"{time}\"/>\n"
        ),
        true,
    );
}

pub fn monitor_wait(tid: i64, object: i32, class: &str, timeout_ms: i64, time: u64) {
    if TRACE.get().is_none() {
        return;
    }
    emit(
        format!(
            "<monWait threadId=\"{tid}\" objId=\"{object}\" className=\"{}\" timeout=\"{timeout_ms}\" time=\"{time}\"/>\n",
            escape(class)
        ),
        true,
    );
}

pub fn monitor_waited(tid: i64, object: i32, timed_out: bool, waited_ns: u64, time: u64) {
    if TRACE.get().is_none() {
        return;
    }
    emit(
        format!(
            "<monWaited threadId=\"{tid}\" objId=\"{object}\" timedOut=\"{timed_out}\" waitedTime=\"{waited_ns}\" time=\"{time}\"/>\n"
        ),
        true,
    );
}
