//! The thread and monitor report, hprof-style (`PREFIX.threads.txt`, docs/REPORTS.md): THREADS, MONITOR
//! TIME per monitor class and waiter stack, MONITOR WAIT, MONITOR CLASSES, one TRACE per stack, and the
//! deadlocks found. A pure function of the profile's `threads` section: the agent writes its file with it
//! and `instr` renders the same from the JSON.

use std::fmt::Write as _;

use crate::model::{
    Deadlock, DeadlockThread, DumpThread, Frame, Lock, MonitorDump, Profile, Threads,
};

/// The report of `p`'s threads section; `None` when the thread profiler did not run.
pub fn render(p: &Profile) -> Option<String> {
    p.threads.as_ref().map(|t| render_threads(p.pid, t))
}

/// hprof numbers monitor traces from 300001; so do these, contended stacks first, then waits.
const FIRST_TRACE: u32 = 300_001;

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

fn pct(v: u64, total: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        100.0 * v as f64 / total as f64
    }
}

/// The report of one threads section, for process `pid`.
pub fn render_threads(pid: u32, t: &Threads) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "instr thread and monitor report, pid {pid}, {:.3} s",
        t.time_ns as f64 / 1e9
    );
    let _ = writeln!(s, "\nTHREADS BEGIN ({} threads)", t.threads.len());
    let _ = writeln!(
        s,
        "{:>8} {:>6} {:>7} {:>10} {:>12} {:>10}  {:<12} {:<12} name",
        "id", "daemon", "virtual", "start_ms", "lifetime_ms", "cpu_ms", "group", "parent"
    );
    for r in &t.threads {
        let _ = writeln!(
            s,
            "{:>8} {:>6} {:>7} {:>10.3} {:>12.3}{} {:>10}  {:<12} {:<12} {}",
            r.id,
            r.daemon,
            r.is_virtual,
            ms(r.start_ns),
            ms(r.lifetime_ns),
            if r.end_ns.is_none() { "+" } else { " " },
            r.cpu_ns.map_or("-".into(), |c| format!("{:.3}", ms(c))),
            r.group,
            r.parent_group,
            r.name
        );
    }
    let _ = writeln!(s, "THREADS END (+: alive at exit)");

    let m = &t.monitors;
    // The totals are the rows' sums, not the section's fields: the percentages must add up to what is
    // listed, whatever a hand-edited or filtered file says.
    let total_blocked: u64 = m.contended.iter().map(|c| c.blocked_ns).sum();
    let _ = writeln!(
        s,
        "\nMONITOR TIME BEGIN (total = {:.3} ms blocked in {} contended enters)",
        ms(total_blocked),
        m.contended.iter().map(|c| c.count).sum::<u64>()
    );
    let _ = writeln!(s, "rank   self  accum   count    time_ms trace monitor");
    let mut accum = 0;
    let mut trace = FIRST_TRACE;
    let mut traces: Vec<(u32, &[Frame])> = Vec::new();
    for (i, c) in m.contended.iter().enumerate() {
        accum += c.blocked_ns;
        traces.push((trace, &c.stack));
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
        trace += 1;
    }
    let _ = writeln!(s, "MONITOR TIME END");

    let total_waited: u64 = m.waits.iter().map(|w| w.waited_ns).sum();
    let _ = writeln!(
        s,
        "\nMONITOR WAIT BEGIN (total = {:.3} ms waited in {} waits)",
        ms(total_waited),
        m.waits.iter().map(|w| w.count).sum::<u64>()
    );
    let _ = writeln!(
        s,
        "rank   self  accum   count timeout_ms timed_out notified    time_ms    min_ms trace monitor"
    );
    let mut accum = 0;
    for (i, w) in m.waits.iter().enumerate() {
        accum += w.waited_ns;
        traces.push((trace, &w.stack));
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
        trace += 1;
    }
    let _ = writeln!(s, "MONITOR WAIT END");

    let _ = writeln!(s, "\nMONITOR CLASSES BEGIN");
    let _ = writeln!(
        s,
        "{:>9} {:>11} {:>7} {:>11} {:>9}  class",
        "contended", "blocked_ms", "waits", "waited_ms", "timed_out"
    );
    for c in &m.classes {
        let _ = writeln!(
            s,
            "{:9} {:11.3} {:7} {:11.3} {:9}  {}",
            c.contended,
            ms(c.blocked_ns),
            c.waits,
            ms(c.waited_ns),
            c.timed_out,
            c.class
        );
    }
    let _ = writeln!(s, "MONITOR CLASSES END\n");
    for (n, frames) in traces {
        let _ = writeln!(s, "TRACE {n}:");
        for f in frames {
            let _ = writeln!(s, "\t{}", trace_frame(f));
        }
    }
    if !t.deadlocks.is_empty() {
        s.push('\n');
        deadlocks_text(&mut s, &t.deadlocks);
    }
    s
}

/// A TRACE line's frame, as hprof wrote them: `Class.method(File.java:12)`.
pub(crate) fn trace_frame(f: &Frame) -> String {
    let place = match (&f.file, f.line) {
        (Some(file), Some(line)) => format!("{file}:{line}"),
        (Some(file), None) => file.clone(),
        (None, Some(line)) => format!("line {line}"),
        (None, None) => "Unknown Source".into(),
    };
    format!("{}.{}({place})", f.class, f.method)
}

/// A deadlocked thread's frame, as a Java thread dump writes it (a line without a file is unknown there).
fn dump_frame(f: &Frame) -> String {
    let place = match (&f.file, f.line) {
        (Some(file), Some(line)) => format!("{file}:{line}"),
        (Some(file), None) => file.clone(),
        _ => "Unknown Source".into(),
    };
    format!("{}.{}({place})", f.class, f.method)
}

fn lock_text(l: &Lock) -> String {
    format!("<{}@{:x}>", l.class, l.id as u32)
}

/// A monitor dump's text (`PREFIX.monitors.txt`): its header, the deadlocks, then every thread as in a
/// Java thread dump, with the monitors locked at each frame.
pub fn monitor_dump_text(d: &MonitorDump) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "instr monitor dump, pid {}, {}, {:.3} s after start\n",
        d.pid,
        d.reason,
        d.time_ns as f64 / 1e9
    );
    deadlocks_text(&mut s, &d.deadlocks);
    let _ = writeln!(s, "\nMONITOR DUMP BEGIN ({} threads)", d.threads.len());
    for t in &d.threads {
        dump_thread_text(&mut s, t);
    }
    let _ = writeln!(s, "MONITOR DUMP END");
    s
}

fn dump_thread_text(s: &mut String, t: &DumpThread) {
    let waiting = t.waiting_for.as_ref().map(|w| {
        let owner = w
            .owner
            .as_ref()
            .map(|o| format!(" held by \"{}\" id={}", o.name, o.id))
            .unwrap_or_default();
        (Some(w.kind.as_str()), &w.monitor, owner)
    });
    let d = &t.thread;
    thread_block(
        s,
        (&d.name, d.id, d.daemon, &d.state),
        waiting,
        &d.stack,
        &t.owned,
    );
}

/// A thread as in a Java thread dump: the header, what it waits for (the wait's kind, the lock, who
/// holds it), then its frames with the locks taken at each, and the locks held at no known frame.
fn thread_block(
    s: &mut String,
    (name, id, daemon, state): (&str, i64, bool, &str),
    waiting: Option<(Option<&str>, &Lock, String)>,
    stack: &[Frame],
    holds: &[Lock],
) {
    let daemon = if daemon { " daemon" } else { "" };
    let _ = writeln!(s, "\"{name}\" id={id}{daemon} {state}");
    if let Some((kind, lock, owner)) = waiting {
        let what = match kind {
            Some("enter") => "waiting to lock",
            Some("wait") => "waiting on",
            _ => "parked waiting for",
        };
        let _ = writeln!(s, "    {what} {}{owner}", lock_text(lock));
    }
    for (i, f) in stack.iter().enumerate() {
        let _ = writeln!(s, "\tat {}", dump_frame(f));
        for l in holds.iter().filter(|l| l.depth == i as i32) {
            let _ = writeln!(s, "\t- locked {}", lock_text(l));
        }
    }
    for l in holds.iter().filter(|l| l.depth < 0) {
        let _ = writeln!(s, "\t- holds {} ({})", lock_text(l), l.kind);
    }
    s.push('\n');
}

/// The deadlocks, as in the agent's monitor dumps (`PREFIX.monitors.txt`).
pub fn deadlocks_text(s: &mut String, deadlocks: &[Deadlock]) {
    let _ = writeln!(s, "DEADLOCKS BEGIN ({} found)", deadlocks.len());
    for (k, d) in deadlocks.iter().enumerate() {
        let _ = writeln!(s, "Deadlock {} ({} threads):", k + 1, d.threads.len());
        for t in &d.threads {
            let m = t.waiting_for.as_ref().map(lock_text).unwrap_or_default();
            let _ = writeln!(
                s,
                "  \"{}\" id={} waits for {m} held by \"{}\" id={}",
                t.name, t.id, t.held_by.name, t.held_by.id
            );
        }
        for t in &d.threads {
            thread_text(s, t);
        }
    }
    let _ = writeln!(s, "DEADLOCKS END");
}

/// A deadlocked thread as in a Java thread dump: the header, what it waits for (held by the next thread
/// of the cycle), then its frames with the locks taken at each.
fn thread_text(s: &mut String, t: &DeadlockThread) {
    let waiting = t.waiting_for.as_ref().map(|w| {
        let owner = format!(" held by \"{}\" id={}", t.held_by.name, t.held_by.id);
        (w.wait.as_deref(), w, owner)
    });
    thread_block(
        s,
        (&t.name, t.id, t.daemon, &t.state),
        waiting,
        &t.stack,
        &t.holds,
    );
}
