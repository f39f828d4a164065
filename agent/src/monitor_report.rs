//! The thread profiler's part of the profile: the `threads` section of `PREFIX.json` (threads, monitor
//! contention and waits per monitor class and waiter stack, per-class totals, deadlocks), and the files
//! written from it at VM exit, `PREFIX.threads.json` (schema `instr-threads/1`, docs/REPORTS.md) and
//! `PREFIX.threads.txt` (rendered by `instr-profile`, as `instr report` would). Both written atomically.

use std::collections::BTreeMap;
use std::sync::Mutex;

use instr_profile::model::Threads;
use instr_profile::render::threads_text;
use jni_sys::jmethodID;
use serde_json::{json, Value};

use crate::deadlocks::{cycle_json, reported_cycles};
use crate::jni::Jni;
use crate::monitors::monitors;
use crate::report::{FrameResolver, ResolvedFrame};
use crate::report_files::write_reports;
use crate::stacks::Frame;
use crate::state::{agent, lock};
use crate::threads::{Profiler, ThreadRecord};

pub fn frame_json(f: &ResolvedFrame) -> Value {
    json!({"class": f.class, "method": f.method, "descriptor": f.descriptor, "file": f.file, "line": f.line})
}

struct Contended {
    class: String,
    count: u64,
    blocked_ns: u64,
    max_blocked_ns: u64,
    owners: BTreeMap<String, u64>,
    waiters: BTreeMap<String, u64>,
    frames: Vec<ResolvedFrame>,
}

struct Waited {
    class: String,
    timeout_ms: i64,
    count: u64,
    timed_out: u64,
    notified: u64,
    waited_ns: u64,
    min_waited_ns: u64,
    max_waited_ns: u64,
    waiters: BTreeMap<String, u64>,
    frames: Vec<ResolvedFrame>,
}

#[derive(Default)]
struct ClassTotals {
    contended: u64,
    blocked_ns: u64,
    waits: u64,
    waited_ns: u64,
    timed_out: u64,
}

/// What the report shows of a frame (class, method, descriptor, file, line): the key entries merge by.
type FrameShown = (String, String, String, Option<String>, Option<i64>);

fn shown(frames: &[ResolvedFrame]) -> Vec<FrameShown> {
    frames
        .iter()
        .map(|f| {
            (
                f.class.clone(),
                f.method.clone(),
                f.descriptor.clone(),
                f.file.clone(),
                f.line,
            )
        })
        .collect()
}

/// Adds per-thread counts (owners or waiters) into `into`.
fn add_names(into: &mut BTreeMap<String, u64>, from: &BTreeMap<String, u64>) {
    for (name, n) in from {
        *into.entry(name.clone()).or_default() += n;
    }
}

/// The section at VM exit, kept by `write` for the exit's `PREFIX.json` (report.rs), which is written
/// after the thread profiler has stopped.
static AT_EXIT: Mutex<Option<Threads>> = Mutex::new(None);

/// The section `write` made at VM exit, once.
pub fn at_exit() -> Option<Threads> {
    lock(&AT_EXIT).take()
}

/// The section, as JSON: `threads` as they are (the alive ones with their CPU time so far), every monitor
/// counted so far, the deadlocks found; `time` is when it is taken (ns since the agent loaded).
pub fn section(p: &Profiler, jni: Jni, threads: &[ThreadRecord], time: u64) -> Option<Value> {
    let a = agent()?;
    let mut resolver = FrameResolver::new(a);
    let mut resolve = |frames: &[Frame]| -> Vec<ResolvedFrame> {
        frames
            .iter()
            .map(|&(m, loc)| resolver.resolve(jni, m as jmethodID, loc))
            .collect()
    };
    let m = monitors();
    // The events are aggregated by (jmethodID, bytecode index) frames, the report shows lines: waiters at two
    // indexes of one line (two monitorenters, a loop's back edge) or two jmethodIDs of one method would be two
    // entries that look the same. So the entries are merged again by what the report shows.
    let mut by_shown: BTreeMap<(String, Vec<FrameShown>), Contended> = BTreeMap::new();
    for (k, s) in lock(&m.contended).iter().filter(|(_, s)| s.count > 0) {
        let frames = resolve(&k.frames);
        let c = by_shown
            .entry((k.class.clone(), shown(&frames)))
            .or_insert_with(|| Contended {
                class: k.class.clone(),
                count: 0,
                blocked_ns: 0,
                max_blocked_ns: 0,
                owners: BTreeMap::new(),
                waiters: BTreeMap::new(),
                frames,
            });
        c.count += s.count;
        c.blocked_ns += s.blocked_ns;
        c.max_blocked_ns = c.max_blocked_ns.max(s.max_blocked_ns);
        add_names(&mut c.owners, &s.owners);
        add_names(&mut c.waiters, &s.waiters);
    }
    let mut contended: Vec<Contended> = by_shown.into_values().collect();
    contended.sort_by(|x, y| {
        y.blocked_ns
            .cmp(&x.blocked_ns)
            .then_with(|| y.count.cmp(&x.count))
            .then_with(|| x.class.cmp(&y.class))
    });
    // Waits likewise, by class, shown stack and timeout.
    let mut by_shown: BTreeMap<(String, Vec<FrameShown>, i64), Waited> = BTreeMap::new();
    for (k, s) in lock(&m.waits).iter().filter(|(_, s)| s.count > 0) {
        let frames = resolve(&k.frames);
        let w = by_shown
            .entry((k.class.clone(), shown(&frames), k.timeout_ms))
            .or_insert_with(|| Waited {
                class: k.class.clone(),
                timeout_ms: k.timeout_ms,
                count: 0,
                timed_out: 0,
                notified: 0,
                waited_ns: 0,
                min_waited_ns: u64::MAX,
                max_waited_ns: 0,
                waiters: BTreeMap::new(),
                frames,
            });
        w.count += s.count;
        w.timed_out += s.timed_out;
        w.notified += s.notified;
        w.waited_ns += s.waited_ns;
        w.min_waited_ns = w.min_waited_ns.min(s.min_waited_ns);
        w.max_waited_ns = w.max_waited_ns.max(s.max_waited_ns);
        add_names(&mut w.waiters, &s.waiters);
    }
    let mut waits: Vec<Waited> = by_shown.into_values().collect();
    waits.sort_by(|x, y| {
        y.waited_ns
            .cmp(&x.waited_ns)
            .then_with(|| x.class.cmp(&y.class))
    });
    let mut classes: BTreeMap<String, ClassTotals> = BTreeMap::new();
    for c in &contended {
        let t = classes.entry(c.class.clone()).or_default();
        t.contended += c.count;
        t.blocked_ns += c.blocked_ns;
    }
    for w in &waits {
        let t = classes.entry(w.class.clone()).or_default();
        t.waits += w.count;
        t.waited_ns += w.waited_ns;
        t.timed_out += w.timed_out;
    }
    let cycles = reported_cycles();

    let thread_json = |r: &ThreadRecord| {
        json!({
            "id": r.id, "name": r.name, "group": r.group, "parent_group": r.parent_group,
            "daemon": r.daemon, "virtual": r.is_virtual, "before_init": r.before_init,
            "start_ns": r.start_ns, "end_ns": r.end_ns, "alive_at_exit": r.end_ns.is_none(),
            "lifetime_ns": r.end_ns.unwrap_or(time).saturating_sub(r.start_ns),
            "cpu_ns": r.cpu_ns,
        })
    };
    let counts = |m: &BTreeMap<String, u64>| {
        m.iter()
            .map(|(name, n)| json!({"thread": name, "count": n}))
            .collect::<Vec<_>>()
    };
    let json = json!({
        "time_ns": time,
        "monitors_on": p.rules.monitors,
        "virtual_threads_reported": p.virtual_threads,
        "threads": threads.iter().map(thread_json).collect::<Vec<_>>(),
        "monitors": {
            "total_blocked_ns": contended.iter().map(|c| c.blocked_ns).sum::<u64>(),
            "total_waited_ns": waits.iter().map(|w| w.waited_ns).sum::<u64>(),
            "contended": contended.iter().map(|c| json!({
                "class": c.class, "count": c.count, "blocked_ns": c.blocked_ns,
                "max_blocked_ns": c.max_blocked_ns, "owners": counts(&c.owners),
                "waiters": counts(&c.waiters),
                "stack": c.frames.iter().map(frame_json).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "waits": waits.iter().map(|w| json!({
                "class": w.class, "timeout_ms": w.timeout_ms, "count": w.count,
                "timed_out": w.timed_out, "notified": w.notified, "waited_ns": w.waited_ns,
                "min_waited_ns": w.min_waited_ns, "max_waited_ns": w.max_waited_ns,
                "waiters": counts(&w.waiters),
                "stack": w.frames.iter().map(frame_json).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "classes": classes.iter().map(|(name, t)| json!({
                "class": name, "contended": t.contended, "blocked_ns": t.blocked_ns,
                "waits": t.waits, "waited_ns": t.waited_ns, "timed_out": t.timed_out,
            })).collect::<Vec<_>>(),
        },
        "deadlocks": cycles.iter().map(cycle_json).collect::<Vec<_>>(),
    });

    Some(json)
}

/// Writes `PREFIX.threads.json` and `PREFIX.threads.txt` at VM exit (`end`: ns since the agent loaded),
/// and keeps the section for the exit's `PREFIX.json`.
pub fn write(p: &Profiler, jni: Jni, threads: &[ThreadRecord], end: u64) {
    let Some(section) = section(p, jni, threads, end) else {
        return;
    };
    let pid = std::process::id();
    // The text is rendered from the typed section, as `instr` renders it from `PREFIX.json`: one
    // renderer, so the two cannot drift.
    let typed: Option<Threads> = match serde_json::from_value(section.clone()) {
        Ok(t) => Some(t),
        Err(e) => {
            eprintln!("instr: internal error: the thread report is not a profile section ({e}); {}.threads.txt not written", p.prefix);
            None
        }
    };
    let mut file = section;
    file["schema"] = json!("instr-threads/1");
    file["pid"] = json!(pid);
    let mut files = vec![(
        format!("{}.threads.json", p.prefix),
        serde_json::to_vec_pretty(&file).unwrap_or_default(),
    )];
    if let Some(typed) = typed {
        files.push((
            format!("{}.threads.txt", p.prefix),
            threads_text::render_threads(pid, &typed).into_bytes(),
        ));
        *lock(&AT_EXIT) = Some(typed);
    }
    write_reports(files);
}
