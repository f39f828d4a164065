//! The XML event trace (docs/XML-TRACE.md), in the spirit of the TPTP/JVMPI heap and thread profilers:
//! one element per event, streamed to a file as events happen.
//!
//! Java threads format a whole element and put it on a bounded queue; an agent thread (RunAgentThread)
//! takes the queue in batches and appends them to the file, so the file only ever receives whole
//! elements. Java threads wait when the queue is full (nothing is lost, memory stays bounded).
//!
//! The callbacks that may not allocate, lock or wait (GC start/finish on the VM thread inside the pause,
//! OBJECT_FREE on the service thread) write a fixed-size record into a preallocated lock-free ring
//! (event_ring.rs) instead, and drop and count it when the ring is full. The queue's mutex is a lock Java
//! threads hold, so taking it inside a pause could stall the pause or deadlock with a Java thread that
//! holds it and waits for the safepoint. The ring is drained, and its records formatted, by whoever next
//! takes the queue's lock: a Java thread queueing an element, the writer (at least every
//! `WRITER_POLL`), or `close`. So the file keeps the order in which events were recorded.
//!
//! At VM_DEATH (which `System.exit` from any thread runs) the ring and the queue are drained and the root
//! element closed, so the file is well-formed; only `Runtime.halt` or a crash can leave it open.

use std::collections::{HashMap, VecDeque};
use std::fmt::Write as _;
use std::fs::File;
use std::io::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::Duration;

use instr_rules::ThreadRules;
use jni_sys::{jclass, jlong, jobject};

use crate::event_ring::{EventRing, Kind, Record};
use crate::ffi::events::Handlers;
use crate::jni::Jni;
use crate::jvmti::jthread;
use crate::report::java_name;
use crate::state::lock;
use crate::threads::{new_agent_thread, now, profiler, thread_id, Profiler, ThreadRecord};

/// Elements queued before Java threads wait for room.
pub const QUEUE_CAPACITY: usize = 16 * 1024;
/// Records the GC and OBJECT_FREE callbacks can leave before the ring is drained (32 bytes each).
pub const RING_CAPACITY: usize = 16 * 1024;
/// The largest `trace-ring`.
pub const MAX_RING: u32 = 1 << 24;
/// The writer drains the ring at least this often when no element wakes it.
const WRITER_POLL: Duration = Duration::from_millis(50);
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
    /// Elements dropped from the queue: a full queue before the writer ran.
    dropped: AtomicU64,
    /// GC start/finish and OBJECT_FREE records, drained into `queue` under its lock.
    ring: EventRing,
    /// Set first thing in `close`: GC and free events from then on are after `traceEnd` and not recorded.
    closing: AtomicBool,
    /// A GC whose start was recorded has not finished: `close` waits for its finish, so that the trace
    /// never ends between the two.
    in_gc: AtomicBool,
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
    /// Queues one element (Java and agent threads only), after what the ring holds; waits for room while
    /// the writer runs.
    fn push(&self, element: String) {
        let mut q = lock(&self.queue);
        if q.closed {
            return;
        }
        self.drain_ring(&mut q);
        while q.elements.len() >= QUEUE_CAPACITY {
            if !self.writer_running.load(Ordering::Acquire) {
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

    /// Formats the ring's records onto the queue. Holding the queue's lock makes this the ring's one
    /// consumer. The queue may pass its capacity by at most the ring's: those records were taken already.
    fn drain_ring(&self, q: &mut Queue) {
        self.ring.drain(|r| q.elements.push_back(format_record(r)));
    }
}

/// The element of a ring record.
fn format_record(r: Record) -> String {
    match r.kind {
        Kind::GcStart => format!("<gcStart time=\"{}\"/>\n", r.time),
        Kind::GcFinish => format!("<gcFinish time=\"{}\"/>\n", r.time),
        Kind::ObjectFree => format!("<objFree objId=\"{}\" time=\"{}\"/>\n", r.value, r.time),
    }
}

/// The trace file's path, and whether a write to it failed: the trace is streamed, so a failed write
/// (a full disk) would leave it cut off mid-element. The first failure removes the file and stops the
/// trace, with one line on stderr: a trace is whole or absent, like every report.
static PATH: OnceLock<String> = OnceLock::new();
static FAILED: AtomicBool = AtomicBool::new(false);

fn failed(e: std::io::Error) {
    if !FAILED.swap(true, Ordering::AcqRel) {
        let path = PATH.get().map_or("", String::as_str);
        let _ = std::fs::remove_file(path);
        eprintln!(
            "instr: cannot write the XML trace {path}: {e}; the trace is removed and stopped"
        );
    }
}

/// Appends whole elements to the file.
fn write(file: &mut File, batch: &[String]) {
    if batch.is_empty() || FAILED.load(Ordering::Acquire) {
        return;
    }
    let mut bytes = Vec::with_capacity(batch.iter().map(|e| e.len()).sum());
    for e in batch {
        bytes.extend_from_slice(e.as_bytes());
    }
    if let Err(e) = file.write_all(&bytes) {
        failed(e);
    }
}

/// Opens the trace file at load time and writes the prolog; fails with the reason if it cannot.
/// `allocations`: whether object allocations and frees are traced.
pub fn open(path: &str, allocations: bool, ring: u32) -> Result<(), String> {
    let mut f =
        File::create(path).map_err(|e| format!("cannot write the XML trace {path}: {e}"))?;
    let prolog = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<TRACE version=\"1\" pid=\"{}\" timeUnit=\"ns\">\n",
        std::process::id()
    );
    f.write_all(prolog.as_bytes()).map_err(|e| {
        let _ = std::fs::remove_file(path);
        format!("cannot write the XML trace {path}: {e}")
    })?;
    let _ = PATH.set(path.to_string());
    let ring_capacity = match ring {
        0 => RING_CAPACITY,
        n => n as usize,
    };
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
        ring: EventRing::new(ring_capacity),
        closing: AtomicBool::new(false),
        in_gc: AtomicBool::new(false),
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
pub fn register(handlers: &mut Handlers, _rules: &ThreadRules) {
    handlers.class_load = Some(class_load);
}

/// Starts the writer (an agent thread) at VM_INIT.
pub fn start_writer(p: &Profiler, jni: Jni) {
    let Some(thread) = new_agent_thread(jni, "instr-trace-writer") else {
        eprintln!("instr: cannot create the trace writer thread; the XML trace is written at exit");
        return;
    };
    if crate::ffi::events::run_agent_thread(p.jvmti, thread, writer_main, 5)
        != crate::jvmti::ERROR_NONE
    {
        eprintln!("instr: cannot start the trace writer thread; the XML trace is written at exit");
    }
    jni.delete_local(thread);
}

/// Clears `writer_running` however the writer ends, a panic included: producers wait for room only while
/// it is set, so a flag left behind would make every traced event wait forever.
struct WriterRunning<'a>(&'a AtomicBool);

impl Drop for WriterRunning<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
        if let Some(t) = TRACE.get() {
            t.not_full.notify_all();
        }
    }
}

fn writer_main(_: Jni) {
    {
        let Some(t) = TRACE.get() else { return };
        t.writer_running.store(true, Ordering::Release);
        let _running = WriterRunning(&t.writer_running);
        loop {
            // The file lock is held from taking a batch to writing it, so close() (which takes the
            // rest of the queue, then the file) always writes after this batch, never in between.
            let mut file = lock(&t.file);
            let Some(f) = file.as_mut() else { break };
            let batch: Vec<String> = {
                let mut q = lock(&t.queue);
                loop {
                    if q.closed {
                        break;
                    }
                    t.drain_ring(&mut q);
                    if !q.elements.is_empty() {
                        break;
                    }
                    q = t
                        .not_empty
                        .wait_timeout(q, WRITER_POLL)
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
    }
}

/// VM_DEATH: drains the ring and the queue, closes the root element and the file.
pub fn close() {
    let Some(t) = TRACE.get() else { return };
    // With `gc`'s order of the same two flags (SeqCst both sides), either that GC's start sees `closing`
    // and is not recorded, or this sees `in_gc` and waits for its finish: no gcStart without its gcFinish.
    // This thread runs in native code, which a pause does not stop; the wait is bounded all the same.
    t.closing.store(true, Ordering::SeqCst);
    let deadline = std::time::Instant::now() + Duration::from_secs(2);
    while t.in_gc.load(Ordering::SeqCst) && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    let rest: Vec<String> = {
        let mut q = lock(&t.queue);
        if q.closed {
            return;
        }
        q.closed = true;
        t.drain_ring(&mut q);
        q.elements.drain(..).collect()
    };
    t.not_full.notify_all();
    t.not_empty.notify_all();
    let mut file = lock(&t.file);
    let mut tail = String::new();
    for e in &rest {
        tail.push_str(e);
    }
    let (starts, finishes, frees) = (
        t.ring.dropped(Kind::GcStart),
        t.ring.dropped(Kind::GcFinish),
        t.ring.dropped(Kind::ObjectFree),
    );
    let dropped = t.dropped.load(Ordering::Relaxed) + starts + finishes + frees;
    let _ = writeln!(
        tail,
        "<traceEnd time=\"{}\" dropped=\"{dropped}\" gcStartsDropped=\"{starts}\" gcFinishesDropped=\"{finishes}\" objFreesDropped=\"{frees}\"/>\n</TRACE>",
        now(),
    );
    if dropped > 0 {
        eprintln!(
            "instr: the XML trace dropped {dropped} events (gcStart {starts}, gcFinish {finishes}, objFree {frees}; see traceEnd)"
        );
    }
    if let Some(mut f) = file.take() {
        if !FAILED.load(Ordering::Acquire) {
            if let Err(e) = f.write_all(tail.as_bytes()).and_then(|_| f.sync_all()) {
                failed(e);
            }
        }
    }
}

fn emit(element: String) {
    if let Some(t) = TRACE.get() {
        t.push(element);
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
    emit(format!(
        "<threadEnd threadId=\"{}\" time=\"{time}\"{cpu}{}/>\n",
        r.id,
        if at_exit { " atExit=\"true\"" } else { "" }
    ));
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

fn class_load(jni: Jni, thread: jthread, class: jclass) {
    {
        let (Some(p), Some(t)) = (profiler(), TRACE.get()) else {
            return;
        };
        let Some(sig) = p.jvmti.class_signature(class) else {
            return;
        };
        let name = java_name(&sig);
        let (id, new) = class_id(t, &name);
        if new {
            let tid = thread_id(p, jni, thread);
            emit(format!(
                "<classDef classId=\"{id}\" className=\"{}\" threadId=\"{tid}\" time=\"{}\"/>\n",
                escape(&name),
                now()
            ));
        }
    }
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
                emit(format!(
                    "<classDef classId=\"{cid}\" className=\"{}\" time=\"{}\"/>\n",
                    escape(&name),
                    now()
                ));
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

/// OBJECT_FREE for a tag with `TRACE_TAG_BIT` (service thread, or a thread in a JVMTI heap function: no
/// JNI). One ring record: no allocation, no lock, no wait.
pub fn object_freed(tag: jlong) {
    let Some(t) = TRACE.get() else { return };
    if t.closing.load(Ordering::Relaxed) {
        return;
    }
    t.ring.push(Record {
        kind: Kind::ObjectFree,
        time: now(),
        value: (tag & !TRACE_TAG_BIT) as u64,
    });
    // A collection can free many traced objects at once: past half full, wake the writer rather than
    // leave the rest to its poll. Condvar::notify_one is a futex wake: no lock is taken.
    if t.ring.len() >= t.ring.capacity() / 2 {
        t.not_empty.notify_one();
    }
}

/// GC start and finish (VM thread, inside the pause). Atomics, a clock read and one ring record: no
/// allocation, no lock, no JNI or JVMTI call.
pub fn gc(start: bool) {
    let Some(t) = TRACE.get() else { return };
    if start {
        // See close(): the flag is raised before `closing` is read.
        t.in_gc.store(true, Ordering::SeqCst);
        if t.closing.load(Ordering::SeqCst) {
            t.in_gc.store(false, Ordering::SeqCst);
            return;
        }
        t.ring.push(Record {
            kind: Kind::GcStart,
            time: now(),
            value: 0,
        });
    } else if t.in_gc.load(Ordering::SeqCst) {
        // Only the finish of a recorded start; pushed before the flag falls, so that close() drains it.
        t.ring.push(Record {
            kind: Kind::GcFinish,
            time: now(),
            value: 0,
        });
        t.in_gc.store(false, Ordering::SeqCst);
    }
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
    );
}
