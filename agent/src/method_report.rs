//! Method calls in the reports: read back from `java.lang.HeapProxyCalls` at VM death, then the JSON
//! `methods` and `calls` sections, the text report's `CALLS` (counts) or `CPU TIME` (times) section and,
//! with `calls=times`, `PREFIX.cpu.collapsed` (stacks weighted by exclusive CPU time).
//!
//! In times mode each thread's calling-context tree is all there is: calls and exclusive times per node.
//! A method's exclusive time is the sum over its nodes; its inclusive time is the sum of the subtree
//! times of its outermost nodes (those with no ancestor of the same method), so recursion is counted
//! once and inclusive >= exclusive by construction; an edge caller -> callee is a node and its parent.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use instr_profile::model::{CallPath, Frame, FrameTable};
use jni_sys::{jint, jobject};
use serde_json::{json, Value};

use crate::jni::Jni;
use crate::state::{lock, Agent};

// HeapProxyCalls' layout (java/HeapProxy/java/lang/HeapProxyCalls.java).
const NODE: usize = 8;
const PARENT_METHOD: usize = 0;
const CALLS: usize = 1;
const SELF_WALL: usize = 2;
const SELF_CPU: usize = 3;
const PENDING: usize = 4;
const LOST: usize = 6;
const STATE: usize = 16;
const DEPTH: usize = 0;
const READ_WALL: usize = 2;
const READ_CPU: usize = 3;
const NODES: usize = 4;
const REPAIRED: usize = 6;
const UNMATCHED: usize = 7;
const SKIPPING: usize = 8;
const FIRST_WALL: usize = 9;
const FIRST_CPU: usize = 10;
const READS: usize = 11;
const TRUNCATED: usize = 12;
/// HeapProxyCalls.INTERVAL_NS: wall time between two CPU readings of a thread.
pub const INTERVAL_NS: u64 = 1_000_000;

#[derive(Default, Clone, Copy)]
pub struct Times {
    pub calls: u64,
    pub self_wall: u64,
    pub total_wall: u64,
    pub self_cpu: u64,
    pub total_cpu: u64,
}

impl Times {
    fn add(&mut self, o: &Times) {
        self.calls += o.calls;
        self.self_wall += o.self_wall;
        self.total_wall += o.total_wall;
        self.self_cpu += o.self_cpu;
        self.total_cpu += o.total_cpu;
    }
}

pub struct ThreadCalls {
    pub name: String,
    pub tid: i64,
    /// CPU time measured by the agent between the thread's first event and its last reading.
    pub cpu_measured: u64,
    /// CPU time of the part after the last reading, apportioned with the thread's average CPU/wall ratio.
    pub cpu_tail_estimated: u64,
    pub wall: u64,
    pub depth_at_exit: u64,
    pub repaired: u64,
    pub unmatched: u64,
    pub truncated: u64,
    pub cpu_reads: u64,
    pub methods: BTreeMap<u32, Times>,
    /// (caller method id, 0 for code outside instrumented methods; callee id) -> calls.
    pub edges: HashMap<(u32, u32), u64>,
    /// Frames popped by a repair (their exits were lost), by method.
    pub lost: BTreeMap<u32, u64>,
    /// Frames still on the shadow stack when the report was taken, by method.
    pub on_stack: BTreeMap<u32, u64>,
}

impl ThreadCalls {
    /// Adds the tree's calls to the thread's counts (whose rows hold only unwinds and the calls of frames
    /// the tree could not hold), and derives the normal exits of the timed methods.
    fn add_counts(&self, counts: &mut BTreeMap<u32, Counts>, counted_only: impl Fn(u32) -> bool) {
        for (&id, t) in &self.methods {
            counts.entry(id).or_default().enters += t.calls;
        }
        for (&id, c) in counts.iter_mut() {
            if counted_only(id) {
                continue;
            }
            let ended = c
                .enters
                .saturating_sub(self.on_stack.get(&id).copied().unwrap_or(0));
            let lost = self.lost.get(&id).copied().unwrap_or(0);
            c.exits = ended.saturating_sub(c.unwinds + lost);
        }
    }
}

#[derive(Default, Clone, Copy)]
pub struct Counts {
    pub enters: u64,
    /// Normal exits, times mode only: derived from the shadow stack's bookkeeping, since every frame ends
    /// by exactly one of a normal exit, an unwind, a repair (lost) or is still on the stack.
    pub exits: u64,
    pub unwinds: u64,
}

impl Counts {
    fn add(&mut self, o: &Counts) {
        self.enters += o.enters;
        self.exits += o.exits;
        self.unwinds += o.unwinds;
    }
}

/// One thread's counts (counts mode).
pub struct ThreadCounts {
    pub name: String,
    pub tid: i64,
    pub counts: BTreeMap<u32, Counts>,
}

pub struct Calls {
    pub on: bool,
    pub times: bool,
    pub counts: BTreeMap<u32, Counts>,
    pub thread_counts: Vec<ThreadCounts>,
    pub threads: Vec<ThreadCalls>,
    /// All threads' trees merged, for the collapsed stacks.
    pub stacks: Merged,
    /// `pkg.Class.method` by method id, for the collapsed stacks.
    pub names: HashMap<u32, String>,
    pub dropped: Vec<i64>,
}

fn long_region(jni: Jni, array: jobject, len: usize) -> Vec<i64> {
    jni.long_region(array, len)
}

/// Adds into `row` the rows of `slot` that `HeapProxyCalls.reserve` replaced with longer ones
/// (`replacedEnters`): their thread may have added to them after they were replaced.
fn add_replaced_rows(jni: Jni, replaced: jobject, slot: jint, row: &mut Vec<i64>) {
    if replaced.is_null() {
        return;
    }
    let rows = jni.object_array_element(replaced, slot);
    if rows.is_null() {
        return;
    }
    for k in 0..jni.array_length(rows) {
        let r = jni.object_array_element(rows, k);
        let values = long_region(jni, r, usize::MAX);
        jni.delete_local(r);
        if row.len() < values.len() {
            row.resize(values.len(), 0);
        }
        for (sum, v) in row.iter_mut().zip(values) {
            *sum += v;
        }
    }
    jni.delete_local(rows);
}

fn static_array(jni: Jni, class: jobject, name: &str, sig: &str) -> jobject {
    match jni.static_field(class, name, sig) {
        Some(f) => jni.static_object(class, f),
        None => std::ptr::null_mut(),
    }
}

/// `Thread.name` and `Thread.tid`, read as fields so that no Java code runs (JDK 17 and 25 both have them).
fn thread_identity(jni: Jni, thread: jobject) -> (String, i64) {
    let Some(thread_class) = jni.find_class("java/lang/Thread") else {
        return ("?".into(), -1);
    };
    let name = jni
        .field(thread_class, "name", "Ljava/lang/String;")
        .and_then(|f| jni.object_field(thread, f))
        .and_then(|s| {
            let name = jni.string(s);
            jni.delete_local(s);
            name
        })
        .unwrap_or_else(|| "?".to_string());
    let tid = jni
        .field(thread_class, "tid", "J")
        .map_or(-1, |f| jni.long_field(thread, f));
    jni.delete_local(thread_class);
    jni.clear_exception();
    (name, tid)
}

/// Reads every counter and, in times mode, every thread's tree.
pub fn collect(a: &Agent, jni: Jni) -> Calls {
    let mut calls = Calls {
        on: a.rules.methods(),
        times: a.call_times && a.rules.methods(),
        counts: BTreeMap::new(),
        thread_counts: Vec::new(),
        threads: Vec::new(),
        stacks: Merged::default(),
        names: HashMap::new(),
        dropped: Vec::new(),
    };
    let Some(class) = *lock(&a.calls_proxy) else {
        return calls;
    };
    let class = class.0;
    // Held while reading, as HeapProxyCalls' own readers do: a thread that ends meanwhile moves its counts to
    // slot 0 under this lock, so each is read exactly once.
    let lock_object = static_array(jni, class, "LOCK", "[J");
    let locked = !lock_object.is_null() && monitor(jni, lock_object, true);
    calls.dropped = jni.static_longs(class, "dropped");
    let owners = static_array(jni, class, "owners", "[Ljava/lang/Thread;");
    let rows = ["enters", "unwinds"].map(|name| static_array(jni, class, name, "[[J"));
    let replaced = static_array(jni, class, "replacedEnters", "[[[J");
    let trees = ["states", "nodes"].map(|name| static_array(jni, class, name, "[[J"));
    let times = calls.times && trees.iter().all(|t| !t.is_null());
    let mut names = MethodNames::new(a);
    if !owners.is_null() && rows.iter().all(|t| !t.is_null()) {
        for slot in 0..jni.array_length(owners) {
            let owner = jni.object_array_element(owners, slot);
            let (name, tid) = if !owner.is_null() {
                let identity = thread_identity(jni, owner);
                jni.delete_local(owner);
                identity
            } else if slot == 0 {
                // Slot 0 is no thread's: the rows and merged tree of the threads that ended (if any did).
                let row = jni.object_array_element(rows[0], 0);
                let held = !row.is_null();
                jni.delete_local(row);
                if !held {
                    continue;
                }
                (ENDED_THREADS.to_string(), 0)
            } else {
                continue;
            };
            let element = |table: jobject, len: usize| {
                let row = jni.object_array_element(table, slot);
                let values = long_region(jni, row, len);
                jni.delete_local(row);
                values
            };
            // A thread's rows by method id: entries, exceptional exits.
            let [mut enters, unwinds] = rows.map(|t| element(t, usize::MAX));
            add_replaced_rows(jni, replaced, slot, &mut enters);
            let at = |row: &[i64], id: usize| row.get(id).copied().unwrap_or(0).max(0) as u64;
            let mut mine: BTreeMap<u32, Counts> = BTreeMap::new();
            for id in 1..enters.len().max(unwinds.len()) {
                let k = Counts {
                    enters: at(&enters, id),
                    exits: 0,
                    unwinds: at(&unwinds, id),
                };
                if k.enters + k.unwinds > 0 {
                    mine.insert(id as u32, k);
                }
            }
            if times {
                let st = element(trees[0], usize::MAX);
                let count = st.get(NODES).copied().unwrap_or(0).max(0) as usize;
                let n = element(trees[1], count * NODE);
                if st.len() > TRUNCATED {
                    let t = thread_calls(name.clone(), tid, &st, &n, &mut names, &mut calls.stacks);
                    t.add_counts(&mut mine, |id| counted_only(a, id));
                    calls.threads.push(t);
                }
            }
            for (&id, k) in &mine {
                calls.counts.entry(id).or_default().add(k);
            }
            calls.thread_counts.push(ThreadCounts {
                name,
                tid,
                counts: mine,
            });
        }
    }
    // Threads that had no slot counted in the shared pages (atomic adds), untimed: exact all the same.
    let shared = ["sharedEnters", "sharedUnwinds", "sharedExits"]
        .map(|name| flat_pages(jni, static_array(jni, class, name, "[[J")));
    let mut slotless: BTreeMap<u32, Counts> = BTreeMap::new();
    let at = |row: &[i64], id: usize| row.get(id).copied().unwrap_or(0).max(0) as u64;
    for id in 1..shared.iter().map(Vec::len).max().unwrap_or(0) {
        let k = Counts {
            enters: at(&shared[0], id),
            exits: at(&shared[2], id),
            unwinds: at(&shared[1], id),
        };
        if k.enters + k.exits + k.unwinds > 0 {
            slotless.insert(id as u32, k);
        }
    }
    if !slotless.is_empty() {
        for (&id, k) in &slotless {
            calls.counts.entry(id).or_default().add(k);
        }
        calls.thread_counts.push(ThreadCounts {
            name: SLOTLESS_THREADS.to_string(),
            tid: -1,
            counts: slotless,
        });
    }
    if locked {
        monitor(jni, lock_object, false);
    }
    jni.delete_local(lock_object);
    calls.names = names.short;
    for o in rows.into_iter().chain(trees).chain([owners]) {
        jni.delete_local(o);
    }
    calls.warn();
    calls
}

/// The `threads` entry of the threads that ended: their counts and, in times mode, their trees merged.
pub const ENDED_THREADS: &str = "(ended threads)";
/// The `threads` entry of the calls of threads that had no slot: counted exactly, not timed.
pub const SLOTLESS_THREADS: &str = "(threads without a slot)";

/// JNI MonitorEnter (`enter`) or MonitorExit on `o`; false if it failed.
fn monitor(jni: Jni, o: jobject, enter: bool) -> bool {
    jni.monitor(o, enter)
}

/// A `long[][]` of pages of equal length (null pages: zeros) as one vector, by page order.
fn flat_pages(jni: Jni, pages: jobject) -> Vec<i64> {
    let mut out = Vec::new();
    if pages.is_null() {
        return out;
    }
    let mut width = 0;
    for p in 0..jni.array_length(pages) {
        let page = jni.object_array_element(pages, p);
        if page.is_null() {
            continue;
        }
        let values = long_region(jni, page, usize::MAX);
        jni.delete_local(page);
        width = width.max(values.len());
        let start = p as usize * width;
        if out.len() < start + values.len() {
            out.resize(start + values.len(), 0);
        }
        out[start..start + values.len()].copy_from_slice(&values);
    }
    jni.delete_local(pages);
    out
}

/// One thread's tree -> per-method times and edges (and its collapsed stacks into `stacks`).
fn thread_calls(
    name: String,
    tid: i64,
    st: &[i64],
    n: &[i64],
    names: &mut MethodNames,
    merged: &mut Merged,
) -> ThreadCalls {
    let count = n.len() / NODE;
    let field = |i: usize, f: usize| n[i * NODE + f].max(0) as u64;
    let parent = |i: usize| ((n[i * NODE + PARENT_METHOD] >> 32) as usize).min(i.saturating_sub(1));
    let method = |i: usize| {
        if i == 0 {
            0
        } else {
            n[i * NODE + PARENT_METHOD] as u32
        }
    };
    // The part after the last CPU reading: apportioned with the thread's average ratio.
    let measured = (st[READ_CPU] - st[FIRST_CPU]).max(0) as u64;
    let measured_wall = (st[READ_WALL] - st[FIRST_WALL]).max(0) as u64;
    let mut self_cpu: Vec<u64> = (0..count).map(|i| field(i, SELF_CPU)).collect();
    let mut tail = 0u64;
    // No reading yet: the ratio is unknown, and CPU time cannot exceed wall time.
    let (ratio_cpu, ratio_wall) = if measured_wall > 0 && measured <= measured_wall {
        (measured as u128, measured_wall as u128)
    } else {
        (1, 1)
    };
    {
        for (i, cpu) in self_cpu.iter_mut().enumerate() {
            let pending = field(i, PENDING) as u128;
            let share = (pending * ratio_cpu / ratio_wall) as u64;
            *cpu += share;
            tail += share;
        }
    }
    // Subtree sums: a child is always made after its parent, so one reverse pass suffices.
    let mut sub_wall: Vec<u64> = (0..count).map(|i| field(i, SELF_WALL)).collect();
    let mut sub_cpu = self_cpu.clone();
    for i in (1..count).rev() {
        let p = parent(i);
        sub_wall[p] += sub_wall[i];
        sub_cpu[p] += sub_cpu[i];
    }
    // Outermost nodes (no ancestor of the same method), by one depth-first walk with a count of the
    // methods on the current path: linear in the tree, whatever its depth.
    let mut first_child = vec![usize::MAX; count];
    let mut next_sibling = vec![usize::MAX; count];
    for i in (1..count).rev() {
        let p = parent(i);
        next_sibling[i] = first_child[p];
        first_child[p] = i;
    }
    let mut outermost = vec![false; count];
    let mut on_path: HashMap<u32, u32> = HashMap::new();
    let mut walk: Vec<(usize, bool)> = vec![(0, true)];
    while let Some((i, entering)) = walk.pop() {
        let m = method(i);
        if entering {
            let c = on_path.entry(m).or_default();
            outermost[i] = *c == 0;
            *c += 1;
            walk.push((i, false));
            let mut k = first_child[i];
            while k != usize::MAX {
                walk.push((k, true));
                k = next_sibling[k];
            }
        } else if let Some(c) = on_path.get_mut(&m) {
            *c -= 1;
        }
    }
    let mut methods: BTreeMap<u32, Times> = BTreeMap::new();
    let mut edges: HashMap<(u32, u32), u64> = HashMap::new();
    let mut lost: BTreeMap<u32, u64> = BTreeMap::new();
    let mut global = vec![0u32; count];
    for i in 1..count {
        let m = method(i);
        let outermost = outermost[i];
        global[i] = merged.child(global[parent(i)], m);
        let g = global[i] as usize;
        merged.cpu[g] += self_cpu[i];
        merged.calls[g] += field(i, CALLS);
        merged.wall[g] += field(i, SELF_WALL);
        names.short(m);
        let t = methods.entry(m).or_default();
        t.calls += field(i, CALLS);
        t.self_wall += field(i, SELF_WALL);
        t.self_cpu += self_cpu[i];
        if outermost {
            t.total_wall += sub_wall[i];
            t.total_cpu += sub_cpu[i];
        }
        *edges.entry((method(parent(i)), m)).or_default() += field(i, CALLS);
        if field(i, LOST) > 0 {
            *lost.entry(m).or_default() += field(i, LOST);
        }
    }
    let depth = st[DEPTH].max(0) as usize;
    let on_stack = st
        .iter()
        .skip(STATE)
        .take(depth)
        .fold(BTreeMap::new(), |mut on, &frame| {
            *on.entry(frame as u32).or_default() += 1;
            on
        });
    ThreadCalls {
        name,
        tid,
        cpu_measured: measured,
        cpu_tail_estimated: tail,
        wall: measured_wall,
        depth_at_exit: depth as u64,
        repaired: st[REPAIRED].max(0) as u64,
        unmatched: st[UNMATCHED].max(0) as u64,
        truncated: (st[TRUNCATED].max(0) + st[SKIPPING].max(0)) as u64,
        cpu_reads: st[READS].max(0) as u64,
        methods,
        edges,
        lost,
        on_stack,
    }
}

/// Call trees of several threads merged: node 0 is the root; a node is (parent, method).
#[derive(Default)]
pub struct Merged {
    index: HashMap<(u32, u32), u32>,
    parent: Vec<u32>,
    method: Vec<u32>,
    cpu: Vec<u64>,
    /// Exact calls and self wall nanoseconds per node, for the calls and wall flame graphs.
    calls: Vec<u64>,
    wall: Vec<u64>,
}

impl Merged {
    fn child(&mut self, parent: u32, method: u32) -> u32 {
        if self.parent.is_empty() {
            self.push(0, 0);
        }
        let next = self.parent.len() as u32;
        let id = *self.index.entry((parent, method)).or_insert(next);
        if id == next {
            self.push(parent, method);
        }
        id
    }

    fn push(&mut self, parent: u32, method: u32) {
        self.parent.push(parent);
        self.method.push(method);
        self.cpu.push(0);
        self.calls.push(0);
        self.wall.push(0);
    }

    /// The path of node `i`, the outermost method first.
    fn path(&self, mut i: usize) -> Vec<u32> {
        let mut path = Vec::new();
        while i != 0 {
            path.push(self.method[i]);
            i = self.parent[i] as usize;
        }
        path.reverse();
        path
    }
}

/// Collapsed-stack lines written at most: the paths with the most CPU time; the rest are summed into one
/// line so that the total stays right.
pub const MAX_COLLAPSED_LINES: usize = 200_000;

/// Method names by id, looked up once.
struct MethodNames<'a> {
    a: &'a Agent,
    short: HashMap<u32, String>,
}

impl<'a> MethodNames<'a> {
    fn new(a: &'a Agent) -> Self {
        MethodNames {
            a,
            short: HashMap::new(),
        }
    }

    /// `pkg.Class.method`, as flame-graph tools show frames.
    fn short(&mut self, id: u32) -> String {
        let a = self.a;
        self.short
            .entry(id)
            .or_insert_with(|| match a.ids.method(id) {
                Some(m) => format!("{}.{}", m.class.replace('/', "."), m.name),
                None => format!("method#{id}"),
            })
            .clone()
    }
}

fn method_json(a: &Agent, id: u32) -> Value {
    match a.ids.method(id) {
        Some(m) => {
            json!({"id": id, "class": m.class.replace('/', "."), "method": m.name, "descriptor": m.descriptor})
        }
        None => json!({"id": id}),
    }
}

fn times_json(v: &mut Value, t: &Times) {
    v["calls"] = json!(t.calls);
    v["self_cpu_ns"] = json!(t.self_cpu);
    v["total_cpu_ns"] = json!(t.total_cpu);
    v["self_wall_ns"] = json!(t.self_wall);
    v["total_wall_ns"] = json!(t.total_wall);
}

/// Whether the method's probes count its calls only (a leaf under `calls=times`): no shadow frame, no
/// time of its own, no edge.
fn counted_only(a: &Agent, id: u32) -> bool {
    a.ids.method(id).is_some_and(|m| m.counted_only)
}

/// Each warning of `Calls::warn` is printed at most once per run (reports may be written several times).
static WARNED: [std::sync::atomic::AtomicBool; 3] =
    [const { std::sync::atomic::AtomicBool::new(false) }; 3];

impl Calls {
    /// One `instr:` line on stderr for what the counters could not take exactly as asked: events not counted
    /// at all, and in times mode calls counted but not timed.
    fn warn(&self) {
        let dropped = |i: usize| self.dropped.get(i).copied().unwrap_or(0);
        let once = |i: usize| !WARNED[i].swap(true, std::sync::atomic::Ordering::Relaxed);
        if dropped(0) > 0 && once(0) {
            eprintln!(
                "instr: {} method-probe events had a method id out of range and were not counted (dropped_events)",
                dropped(0)
            );
        }
        // Calls of threads without a slot (before their tid is set, or more alive at once than the
        // slots) are counted exactly, only not timed: JSON `untimed_thread_events` says how many, and
        // nothing is lost, so it is no warning.
        if self.times && dropped(2) > 0 && once(2) {
            eprintln!(
                "instr: {} call paths beyond the call-tree limit were counted exactly but not timed",
                dropped(2)
            );
        }
    }

    /// The counted-only methods a thread called, for its entry in times mode's `threads`.
    fn counted_only_calls<'s>(
        &'s self,
        a: &'s Agent,
        tid: i64,
    ) -> impl Iterator<Item = Value> + 's {
        self.thread_counts
            .iter()
            .filter(move |t| t.tid == tid)
            .flat_map(|t| t.counts.iter())
            .filter(|&(&id, _)| counted_only(a, id))
            .map(|(&id, c)| {
                let mut v = method_json(a, id);
                v["calls"] = json!(c.enters);
                v["unwinds"] = json!(c.unwinds);
                v["timed"] = json!(false);
                v
            })
    }

    /// Times per method over all threads.
    pub fn totals(&self) -> BTreeMap<u32, Times> {
        let mut all: BTreeMap<u32, Times> = BTreeMap::new();
        for t in &self.threads {
            for (id, m) in &t.methods {
                all.entry(*id).or_default().add(m);
            }
        }
        all
    }

    /// Sets the report's `methods` (per method: counts, and times in times mode) and `calls` sections.
    pub fn add_to_json(&self, a: &Agent, report: &mut Value) {
        let totals = self.totals();
        let mut methods = Vec::new();
        for (&id, c) in &self.counts {
            let mut v = method_json(a, id);
            v["enters"] = json!(c.enters);
            v["unwinds"] = json!(c.unwinds);
            if self.times && counted_only(a, id) {
                // No exit probe: a leaf cannot block, so every call not unwound has returned.
                v["exits"] = json!(c.enters.saturating_sub(c.unwinds));
                v["calls"] = json!(c.enters);
                v["timed"] = json!(false);
            } else if self.times {
                v["exits"] = json!(c.exits);
                times_json(&mut v, &totals.get(&id).copied().unwrap_or_default());
            }
            methods.push(v);
        }
        report["methods"] = Value::Array(methods);
        let mode = match (self.on, self.times) {
            (false, _) => "off",
            (true, false) => "counts",
            (true, true) => "times",
        };
        let mut section = json!({
            "mode": mode,
            "dropped_events": self.dropped.first().copied().unwrap_or(0),
            "untimed_thread_events": self.dropped.get(1).copied().unwrap_or(0),
            "slow_path_entries": self.dropped.get(3).copied().unwrap_or(0),
        });
        if !self.times {
            section["threads"] = self
                .thread_counts
                .iter()
                .map(|t| {
                    json!({
                        "name": t.name, "tid": t.tid,
                        "methods": t.counts.iter().map(|(&id, c)| {
                            let mut v = method_json(a, id);
                            v["calls"] = json!(c.enters);
                            v["unwinds"] = json!(c.unwinds);
                            v
                        }).collect::<Vec<_>>(),
                    })
                })
                .collect();
        }
        if self.times {
            section["cpu_interval_ns"] = json!(INTERVAL_NS);
            section["threads"] = self
                .threads
                .iter()
                .map(|t| {
                    json!({
                        "name": t.name, "tid": t.tid,
                        "cpu_ns": t.cpu_measured + t.cpu_tail_estimated,
                        "cpu_measured_ns": t.cpu_measured,
                        "cpu_tail_estimated_ns": t.cpu_tail_estimated,
                        "wall_ns": t.wall,
                        "self_cpu_ns_sum": t.methods.values().map(|m| m.self_cpu).sum::<u64>(),
                        "cpu_reads": t.cpu_reads,
                        "depth_at_exit": t.depth_at_exit,
                        "repaired_frames": t.repaired,
                        "unmatched_exits": t.unmatched,
                        "untimed_frames": t.truncated,
                        "methods": t.methods.iter().map(|(&id, m)| {
                            let mut v = method_json(a, id);
                            times_json(&mut v, m);
                            v
                        }).chain(self.counted_only_calls(a, t.tid)).collect::<Vec<_>>(),
                    })
                })
                .collect();
            let mut edges: BTreeMap<(u32, u32), u64> = BTreeMap::new();
            for t in &self.threads {
                for (k, c) in &t.edges {
                    *edges.entry(*k).or_default() += c;
                }
            }
            section["edges"] = edges
                .iter()
                .map(|(&(caller, callee), &count)| {
                    json!({
                        "caller": if caller == 0 { Value::Null } else { method_json(a, caller) },
                        "callee": method_json(a, callee),
                        "count": count,
                    })
                })
                .collect();
        }
        report["calls"] = section;
    }

    /// Every path of the merged call trees with its exact calls and self CPU and wall time (the
    /// profile's `calls.paths`, from which the calls, CPU and wall flame graphs are drawn), its frames
    /// numbered in `table`. The paths with the most calls first, at most MAX_COLLAPSED_LINES of them;
    /// the rest are summed into one `(other paths)` entry, so every total stays exact. None outside
    /// times mode.
    pub fn paths(&self, a: &Agent, table: &mut FrameTable) -> Vec<CallPath> {
        if !self.times {
            return Vec::new();
        }
        let t = &self.stacks;
        let mut nodes: Vec<usize> = (1..t.parent.len())
            .filter(|&i| t.calls[i] > 0 || t.cpu[i] > 0)
            .collect();
        nodes.sort_by(|&x, &y| t.calls[y].cmp(&t.calls[x]).then(x.cmp(&y)));
        // Each method's frame once: a call path's frame is the method, without a line.
        let mut frame_of: HashMap<u32, u32> = HashMap::new();
        let mut frame = |m: u32| -> u32 {
            *frame_of.entry(m).or_insert_with(|| {
                table.intern(match a.ids.method(m) {
                    Some(info) => Frame {
                        class: info.class.replace('/', "."),
                        method: info.name,
                        descriptor: info.descriptor,
                        file: None,
                        line: None,
                    },
                    None => Frame::from_name(self.names.get(&m).map_or("?", String::as_str)),
                })
            })
        };
        let mut out: Vec<CallPath> = nodes
            .iter()
            .take(MAX_COLLAPSED_LINES)
            .map(|&i| CallPath {
                frames: t.path(i).into_iter().map(&mut frame).collect(),
                calls: t.calls[i],
                self_cpu_ns: t.cpu[i],
                self_wall_ns: t.wall[i],
            })
            .collect();
        let rest = &nodes[nodes.len().min(MAX_COLLAPSED_LINES)..];
        if !rest.is_empty() {
            let sum = |v: &[u64]| rest.iter().map(|&i| v[i]).sum::<u64>();
            out.push(CallPath {
                frames: vec![table.intern(Frame::from_name("(other paths)"))],
                calls: sum(&t.calls),
                self_cpu_ns: sum(&t.cpu),
                self_wall_ns: sum(&t.wall),
            });
        }
        out
    }

    /// `PREFIX.cpu.collapsed`: one line per call path, root first, weighted by exclusive CPU ns.
    pub fn to_collapsed(&self) -> String {
        let t = &self.stacks;
        let mut nodes: Vec<usize> = (1..t.cpu.len()).filter(|&i| t.cpu[i] > 0).collect();
        nodes.sort_by(|&x, &y| t.cpu[y].cmp(&t.cpu[x]).then(x.cmp(&y)));
        let rest: u64 = nodes
            .iter()
            .skip(MAX_COLLAPSED_LINES)
            .map(|&i| t.cpu[i])
            .sum();
        let mut lines: Vec<(String, u64)> = Vec::new();
        let mut path = Vec::new();
        for &i in nodes.iter().take(MAX_COLLAPSED_LINES) {
            path.clear();
            path.extend(t.path(i));
            let text: Vec<&str> = path
                .iter()
                .map(|m| self.names.get(m).map(String::as_str).unwrap_or("?"))
                .collect();
            lines.push((text.join(";"), t.cpu[i]));
        }
        if rest > 0 {
            lines.push(("(other paths)".to_string(), rest));
        }
        lines.sort();
        let mut s = String::new();
        for (path, ns) in lines {
            let _ = writeln!(s, "{path} {ns}");
        }
        s
    }
}
