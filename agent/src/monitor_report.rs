//! The thread and monitor report written at VM exit: `PREFIX.threads.txt` (THREADS, hprof-style MONITOR
//! TIME per monitor class and waiter stack, MONITOR WAIT, per-class totals, TRACEs, deadlocks) and
//! `PREFIX.threads.json` (schema `instr-threads/1`, docs/REPORTS.md). Both written atomically.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use jni_sys::jmethodID;
use serde_json::{json, Value};

use crate::deadlocks::{cycle_json, cycles_text, reported_cycles};
use crate::jni::Jni;
use crate::monitors::monitors;
use crate::report::{write_reports, FrameResolver, ResolvedFrame};
use crate::stacks::Frame;
use crate::state::{agent, lock};
use crate::threads::{Profiler, ThreadRecord};

pub fn frame_json(f: &ResolvedFrame) -> Value {
    json!({"class": f.class, "method": f.method, "descriptor": f.descriptor, "file": f.file, "line": f.line})
}

fn frame_line(f: &ResolvedFrame) -> String {
    let place = match (&f.file, f.line) {
        (Some(file), Some(line)) => format!("{file}:{line}"),
        (Some(file), None) => file.clone(),
        (None, Some(line)) => format!("line {line}"),
        (None, None) => "Unknown Source".into(),
    };
    format!("{}.{}({place})", f.class, f.method)
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

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// Writes the report; `end` is the exit time (ns since the agent loaded).
pub fn write(p: &Profiler, jni: Jni, threads: &[ThreadRecord], end: u64) {
    let Some(a) = agent() else { return };
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
            "lifetime_ns": r.end_ns.unwrap_or(end).saturating_sub(r.start_ns),
            "cpu_ns": r.cpu_ns,
        })
    };
    let counts = |m: &BTreeMap<String, u64>| {
        m.iter()
            .map(|(name, n)| json!({"thread": name, "count": n}))
            .collect::<Vec<_>>()
    };
    let json = json!({
        "schema": "instr-threads/1",
        "pid": std::process::id(),
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

    let mut s = String::new();
    let _ = writeln!(
        s,
        "instr thread and monitor report, pid {}, {:.3} s",
        std::process::id(),
        end as f64 / 1e9
    );
    let _ = writeln!(s, "\nTHREADS BEGIN ({} threads)", threads.len());
    let _ = writeln!(
        s,
        "{:>8} {:>6} {:>7} {:>10} {:>12} {:>10}  {:<12} {:<12} name",
        "id", "daemon", "virtual", "start_ms", "lifetime_ms", "cpu_ms", "group", "parent"
    );
    for r in threads {
        let life = r.end_ns.unwrap_or(end).saturating_sub(r.start_ns);
        let _ = writeln!(
            s,
            "{:>8} {:>6} {:>7} {:>10.3} {:>12.3}{} {:>10}  {:<12} {:<12} {}",
            r.id,
            r.daemon,
            r.is_virtual,
            ms(r.start_ns),
            ms(life),
            if r.end_ns.is_none() { "+" } else { " " },
            r.cpu_ns.map_or("-".into(), |c| format!("{:.3}", ms(c))),
            r.group,
            r.parent_group,
            r.name
        );
    }
    let _ = writeln!(s, "THREADS END (+: alive at exit)");

    let total_blocked: u64 = contended.iter().map(|c| c.blocked_ns).sum();
    let _ = writeln!(
        s,
        "\nMONITOR TIME BEGIN (total = {:.3} ms blocked in {} contended enters)",
        ms(total_blocked),
        contended.iter().map(|c| c.count).sum::<u64>()
    );
    let _ = writeln!(s, "rank   self  accum   count    time_ms trace monitor");
    let pct = |v: u64, total: u64| {
        if total == 0 {
            0.0
        } else {
            100.0 * v as f64 / total as f64
        }
    };
    let mut accum = 0;
    let mut trace = 300_000;
    let mut traces: Vec<(u32, &[ResolvedFrame])> = Vec::new();
    for (i, c) in contended.iter().enumerate() {
        accum += c.blocked_ns;
        trace += 1;
        traces.push((trace, &c.frames));
        let _ = writeln!(
            s,
            "{:4} {:5.2}% {:5.2}% {:7} {:10.3} {:5} {} (Java)",
            i + 1,
            pct(c.blocked_ns, total_blocked),
            pct(accum, total_blocked),
            c.count,
            ms(c.blocked_ns),
            trace,
            c.class
        );
    }
    let _ = writeln!(s, "MONITOR TIME END");

    let total_waited: u64 = waits.iter().map(|w| w.waited_ns).sum();
    let _ = writeln!(
        s,
        "\nMONITOR WAIT BEGIN (total = {:.3} ms waited in {} waits)",
        ms(total_waited),
        waits.iter().map(|w| w.count).sum::<u64>()
    );
    let _ = writeln!(
        s,
        "rank   self  accum   count timeout_ms timed_out notified    time_ms    min_ms trace monitor"
    );
    let mut accum = 0;
    for (i, w) in waits.iter().enumerate() {
        accum += w.waited_ns;
        trace += 1;
        traces.push((trace, &w.frames));
        let _ = writeln!(
            s,
            "{:4} {:5.2}% {:5.2}% {:7} {:10} {:9} {:8} {:10.3} {:9.3} {:5} {} (Java)",
            i + 1,
            pct(w.waited_ns, total_waited),
            pct(accum, total_waited),
            w.count,
            w.timeout_ms,
            w.timed_out,
            w.notified,
            ms(w.waited_ns),
            ms(w.min_waited_ns),
            trace,
            w.class
        );
    }
    let _ = writeln!(s, "MONITOR WAIT END");

    let _ = writeln!(s, "\nMONITOR CLASSES BEGIN");
    let _ = writeln!(
        s,
        "{:>9} {:>11} {:>7} {:>11} {:>9}  class",
        "contended", "blocked_ms", "waits", "waited_ms", "timed_out"
    );
    for (name, t) in &classes {
        let _ = writeln!(
            s,
            "{:9} {:11.3} {:7} {:11.3} {:9}  {name}",
            t.contended,
            ms(t.blocked_ns),
            t.waits,
            ms(t.waited_ns),
            t.timed_out
        );
    }
    let _ = writeln!(s, "MONITOR CLASSES END\n");
    for (n, frames) in traces {
        let _ = writeln!(s, "TRACE {n}:");
        for f in frames {
            let _ = writeln!(s, "\t{}", frame_line(f));
        }
    }
    if !cycles.is_empty() {
        s.push('\n');
        cycles_text(&mut s, &cycles);
    }

    write_reports(&[
        (
            format!("{}.threads.json", p.prefix),
            serde_json::to_vec_pretty(&json).unwrap_or_default(),
        ),
        (format!("{}.threads.txt", p.prefix), s.into_bytes()),
    ]);
}
