//! Monitor dumps and deadlock detection: every thread with its stack, the monitors it owns and what it
//! waits for; the wait-for graph built from them; its cycles.
//!
//! Runs on one agent thread ("instr-monitor-watcher", RunAgentThread at VM_INIT), woken by a JVMTI
//! DataDumpRequest (SIGQUIT, `jcmd PID JVMTI.data_dump`: a full dump) or every `watch_ms` (a deadlock
//! check that writes only when it finds a new cycle). Edges: a thread blocked entering a monitor waits
//! for the thread that owns it (GetOwnedMonitorStackDepthInfo of every thread, compared by IsSameObject);
//! a thread parked with a `java.util.concurrent` blocker (`LockSupport.getBlocker`) that is an
//! `AbstractOwnableSynchronizer` waits for its `exclusiveOwnerThread` (ReentrantLock, the write lock of
//! ReentrantReadWriteLock). Read locks, semaphores and latches have no owner and make no edge. Threads
//! are not suspended: a cycle is reported only when two snapshots taken one after the other both have it.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::Duration;

use instr_profile::model::MonitorDump;
use instr_profile::render::threads_text;
use jni_sys::{jobject, jvalue};
use serde_json::{json, Value};

use crate::jni::Jni;
use crate::jvmti::FrameInfo;
use crate::jvmti_ext::state;
use crate::monitor_report::frame_json;
use crate::monitors::class_of;
use crate::report::{FrameResolver, ResolvedFrame};
use crate::report_files::write_reports;
use crate::state::{agent, lock};
use crate::threads::{new_agent_thread, now, profiler, thread_id, Profiler};

const STACK_DEPTH: usize = 64;

#[derive(Clone, Debug)]
pub struct Monitor {
    pub class: String,
    pub hash: i32,
    /// `monitor` (synchronized) or `ownable synchronizer` (java.util.concurrent).
    pub kind: &'static str,
    /// Frame (0 = top) that locked it; -1 when not known.
    pub depth: i32,
}

#[derive(Clone, Debug)]
pub struct Waiting {
    /// `enter` (blocked on synchronized), `wait` (Object.wait) or `park` (java.util.concurrent).
    pub kind: &'static str,
    pub monitor: Monitor,
    /// Index of the owning thread in the snapshot.
    pub owner: Option<usize>,
    /// The owning thread's id and name.
    pub owner_thread: Option<(i64, String)>,
}

#[derive(Clone, Debug)]
pub struct ThreadView {
    pub id: i64,
    pub name: String,
    pub daemon: bool,
    pub state: &'static str,
    pub frames: Vec<ResolvedFrame>,
    pub owned: Vec<Monitor>,
    pub waiting: Option<Waiting>,
}

/// A deadlock: thread indexes in wait-for order (each waits for the next; the last for the first).
#[derive(Clone, Debug)]
pub struct Cycle {
    pub threads: Vec<ThreadView>,
}

impl Cycle {
    fn ids(&self) -> Vec<i64> {
        let mut ids: Vec<i64> = self.threads.iter().map(|t| t.id).collect();
        ids.sort();
        ids
    }
}

struct Watcher {
    wake: Mutex<(bool, bool)>, // (dump requested, stop)
    cv: Condvar,
    running: AtomicBool,
    /// Cycles reported so far (their sorted thread ids), and the cycles themselves.
    reported: Mutex<(BTreeSet<Vec<i64>>, Vec<Cycle>)>,
}

fn watcher() -> &'static Watcher {
    static W: OnceLock<Watcher> = OnceLock::new();
    W.get_or_init(|| Watcher {
        wake: Mutex::new((false, false)),
        cv: Condvar::new(),
        running: AtomicBool::new(false),
        reported: Mutex::new((BTreeSet::new(), Vec::new())),
    })
}

/// Every deadlock found so far (for the exit report).
pub fn reported_cycles() -> Vec<Cycle> {
    lock(&watcher().reported).1.clone()
}

/// SIGQUIT or `jcmd PID JVMTI.data_dump` (lib.rs dispatches the event here and to the reports).
pub fn data_dump_request() {
    let w = watcher();
    lock(&w.wake).0 = true;
    w.cv.notify_all();
}

pub fn start_watcher(p: &Profiler, jni: Jni) {
    let Some(thread) = new_agent_thread(jni, "instr-monitor-watcher") else {
        eprintln!("instr: cannot create the monitor watcher thread; no monitor dumps");
        return;
    };
    if crate::ffi::events::run_agent_thread(p.jvmti, thread, watcher_main, 5)
        != crate::jvmti::ERROR_NONE
    {
        eprintln!("instr: cannot start the monitor watcher thread; no monitor dumps");
    }
    jni.delete_local(thread);
}

pub fn stop_watcher() {
    let w = watcher();
    lock(&w.wake).1 = true;
    w.cv.notify_all();
}

fn watcher_main(jni: Jni) {
    {
        let w = watcher();
        w.running.store(true, Ordering::Release);
        while let Some(p) = profiler().filter(|p| p.monitor_info) {
            let period = if p.rules.watch_ms > 0 {
                Duration::from_millis(p.rules.watch_ms as u64)
            } else {
                Duration::from_secs(3600)
            };
            let requested = {
                let mut g = lock(&w.wake);
                if !g.0 && !g.1 {
                    g =
                        w.cv.wait_timeout(g, period)
                            .unwrap_or_else(|e| e.into_inner())
                            .0;
                }
                if g.1 {
                    break;
                }
                std::mem::replace(&mut g.0, false)
            };
            if requested {
                dump(p, jni, "data dump request", true);
            } else if p.rules.watch_ms > 0 {
                dump(p, jni, "deadlock watcher", false);
            }
        }
        w.running.store(false, Ordering::Release);
    }
}

/// Takes a snapshot and looks for deadlocks. `always`: write the dump even when no new cycle is found.
fn dump(p: &Profiler, jni: Jni, reason: &str, always: bool) {
    if !jni.push_frame(4096) {
        return;
    }
    let first = snapshot(p, jni);
    let mut cycles = find_cycles(&first);
    let mut threads = first;
    if !cycles.is_empty() {
        // Confirm on a second snapshot: threads are not suspended, so a transient state could look
        // like a cycle.
        let second = snapshot(p, jni);
        let again: BTreeSet<Vec<i64>> = find_cycles(&second).iter().map(Cycle::ids).collect();
        cycles.retain(|c| again.contains(&c.ids()));
        threads = second;
    }
    let w = watcher();
    let new: Vec<&Cycle> = {
        let mut r = lock(&w.reported);
        let new: Vec<&Cycle> = cycles.iter().filter(|c| !r.0.contains(&c.ids())).collect();
        for c in &new {
            r.0.insert(c.ids());
            r.1.push((*c).clone());
        }
        new
    };
    if always || !new.is_empty() {
        let all = reported_cycles();
        let path = format!("{}.monitors", p.prefix);
        let json = dump_json(reason, &threads, &all);
        // The text is rendered from the JSON's typed form by instr-profile, as `instr` would.
        let text = match serde_json::from_value::<MonitorDump>(json.clone()) {
            Ok(d) => threads_text::monitor_dump_text(&d),
            Err(e) => format!("instr: internal error: the monitor dump is not one ({e})\n"),
        };
        write_reports(vec![
            (
                format!("{path}.json"),
                serde_json::to_vec_pretty(&json).unwrap_or_default(),
            ),
            (format!("{path}.txt"), text.into_bytes()),
        ]);
        for c in new {
            let names: Vec<String> = c
                .threads
                .iter()
                .map(|t| format!("\"{}\"", t.name))
                .collect();
            eprintln!(
                "instr: deadlock of {} threads ({}); see {path}.txt",
                c.threads.len(),
                names.join(", ")
            );
        }
        if always && cycles.is_empty() {
            eprintln!(
                "instr: monitor dump of {} threads written to {path}.txt",
                threads.len()
            );
        }
    }
    jni.pop_frame();
}

/// `instr ctl PID threads` (every thread, its stack and monitors, and the deadlocks) or `deadlocks` (the
/// deadlocks alone), as text, from one snapshot taken now. Nothing is written to a file.
pub fn text_now(jni: Jni, every_thread: bool) -> Result<String, String> {
    let p = crate::threads::profiler()
        .filter(|p| p.monitor_info)
        .ok_or(
        "the thread profiler is off: load the agent with threads=on (or monitors=on) at start-up",
    )?;
    if !jni.push_frame(4096) {
        return Err("no room for the snapshot's local references".into());
    }
    let threads = snapshot(p, jni);
    let cycles = find_cycles(&threads);
    // The same JSON form and renderer as PREFIX.monitors.txt.
    let json = dump_json("instr ctl", &threads, &cycles);
    jni.pop_frame();
    let dump = serde_json::from_value::<MonitorDump>(json)
        .map_err(|e| format!("internal error: the monitor dump is not one ({e})"))?;
    Ok(if every_thread {
        threads_text::monitor_dump_text(&dump)
    } else {
        let mut s = String::new();
        threads_text::deadlocks_text(&mut s, &dump.deadlocks);
        s
    })
}

fn state_name(s: i32) -> &'static str {
    if s & state::ALIVE == 0 {
        if s & state::TERMINATED != 0 {
            "TERMINATED"
        } else {
            "NEW"
        }
    } else if s & state::BLOCKED_ON_MONITOR_ENTER != 0 {
        "BLOCKED"
    } else if s & state::WAITING != 0 {
        if s & state::WAITING_WITH_TIMEOUT != 0 {
            "TIMED_WAITING"
        } else {
            "WAITING"
        }
    } else {
        "RUNNABLE"
    }
}

struct Raw {
    thread: jobject,
    state: i32,
    owned: Vec<(jobject, i32)>,
    /// What it waits for: (kind, object).
    waiting: Option<(&'static str, jobject)>,
}

/// Every live platform thread: stack, owned monitors, what it waits for and who owns that.
pub fn snapshot(p: &Profiler, jni: Jni) -> Vec<ThreadView> {
    let Some(a) = agent() else { return Vec::new() };
    let mut resolver = FrameResolver::new(a);
    let aos = jni.find_class("java/util/concurrent/locks/AbstractOwnableSynchronizer");
    let owner_field = aos.and_then(|c| jni.field(c, "exclusiveOwnerThread", "Ljava/lang/Thread;"));
    let lock_support = jni.find_class("java/util/concurrent/locks/LockSupport");
    let get_blocker = lock_support
        .and_then(|c| jni.static_method(c, "getBlocker", "(Ljava/lang/Thread;)Ljava/lang/Object;"));
    let threads = p.jvmti.all_threads();
    let mut raw: Vec<Raw> = threads
        .iter()
        .map(|&t| {
            let s = p.jvmti.thread_state(t);
            let waiting = if s & state::BLOCKED_ON_MONITOR_ENTER != 0 {
                p.jvmti.contended_monitor(t).map(|m| ("enter", m))
            } else if s & state::IN_OBJECT_WAIT != 0 {
                p.jvmti.contended_monitor(t).map(|m| ("wait", m))
            } else if s & state::PARKED != 0 {
                match (lock_support, get_blocker) {
                    (Some(ls), Some(gb)) => jni
                        .call_static_object(ls, gb, &[jvalue { l: t }])
                        .map(|b| ("park", b)),
                    _ => None,
                }
            } else {
                None
            };
            Raw {
                thread: t,
                state: s,
                owned: p.jvmti.owned_monitors(t),
                waiting,
            }
        })
        .collect();
    let index_of = |thread: jobject, raw: &[Raw]| {
        raw.iter()
            .position(|r| jni.is_same_object(r.thread, thread))
    };
    let monitor = |o: jobject, kind: &'static str, depth: i32| Monitor {
        class: class_of(p, jni, o),
        hash: p.jvmti.object_hash(o),
        kind,
        depth,
    };
    // Owners of the things waited for; j.u.c locks held are added to their owner's list.
    let mut waits: Vec<Option<Waiting>> = Vec::with_capacity(raw.len());
    let mut extra_owned: Vec<(usize, Monitor)> = Vec::new();
    for r in &raw {
        let w = r.waiting.map(|(kind, o)| {
            let (owner, m) = match kind {
                "enter" => (
                    raw.iter().position(|other| {
                        other.owned.iter().any(|&(m, _)| jni.is_same_object(m, o))
                    }),
                    monitor(o, "monitor", -1),
                ),
                "park" => {
                    let owner = match (aos, owner_field) {
                        (Some(c), Some(f)) if jni.is_instance_of(o, c) => {
                            jni.object_field(o, f).and_then(|t| index_of(t, &raw))
                        }
                        _ => None,
                    };
                    let m = monitor(o, "ownable synchronizer", -1);
                    if let Some(i) = owner {
                        extra_owned.push((i, m.clone()));
                    }
                    (owner, m)
                }
                _ => (None, monitor(o, "monitor", -1)),
            };
            Waiting {
                kind,
                monitor: m,
                owner,
                owner_thread: None,
            }
        });
        waits.push(w);
    }
    let mut views: Vec<ThreadView> = raw
        .iter_mut()
        .zip(waits)
        .map(|(r, waiting)| {
            let info = p.jvmti.thread_info(r.thread);
            let mut buf = [FrameInfo {
                method: std::ptr::null_mut(),
                location: 0,
            }; STACK_DEPTH];
            let n = p.jvmti.thread_stack(r.thread, &mut buf);
            let frames = buf[..n]
                .iter()
                .map(|f| resolver.resolve(jni, f.method, f.location))
                .collect();
            let owned = r
                .owned
                .iter()
                .map(|&(o, depth)| monitor(o, "monitor", depth))
                .collect();
            ThreadView {
                id: thread_id(p, jni, r.thread),
                name: info.as_ref().map(|i| i.name.clone()).unwrap_or_default(),
                daemon: info.is_some_and(|i| i.daemon),
                state: state_name(r.state),
                frames,
                owned,
                waiting,
            }
        })
        .collect();
    let names: Vec<(i64, String)> = views.iter().map(|v| (v.id, v.name.clone())).collect();
    for v in &mut views {
        if let Some(w) = v.waiting.as_mut() {
            w.owner_thread = w.owner.map(|o| names[o].clone());
        }
    }
    for (i, m) in extra_owned {
        if !views[i]
            .owned
            .iter()
            .any(|o| o.hash == m.hash && o.class == m.class)
        {
            views[i].owned.push(m);
        }
    }
    views
}

/// The cycles of the wait-for graph (each thread waits for at most one other), each starting at its
/// thread with the smallest id.
pub fn find_cycles(threads: &[ThreadView]) -> Vec<Cycle> {
    let next = |i: usize| {
        threads[i]
            .waiting
            .as_ref()
            .filter(|w| w.kind != "wait")
            .and_then(|w| w.owner)
    };
    let mut seen: BTreeSet<Vec<i64>> = BTreeSet::new();
    let mut cycles = Vec::new();
    for start in 0..threads.len() {
        let mut path = vec![start];
        let mut at = start;
        while let Some(n) = next(at) {
            if let Some(pos) = path.iter().position(|&x| x == n) {
                let mut cycle: Vec<usize> = path[pos..].to_vec();
                let min = (0..cycle.len())
                    .min_by_key(|&k| threads[cycle[k]].id)
                    .unwrap_or(0);
                cycle.rotate_left(min);
                let c = Cycle {
                    threads: cycle.iter().map(|&k| threads[k].clone()).collect(),
                };
                if seen.insert(c.ids()) {
                    cycles.push(c);
                }
                break;
            }
            if path.len() > threads.len() {
                break;
            }
            path.push(n);
            at = n;
        }
    }
    cycles
}

fn monitor_json(m: &Monitor) -> Value {
    json!({"class": m.class, "id": m.hash, "kind": m.kind, "depth": m.depth})
}

fn thread_json(t: &ThreadView) -> Value {
    let waiting = t.waiting.as_ref().map(|w| {
        json!({
            "kind": w.kind,
            "monitor": monitor_json(&w.monitor),
            "owner": w.owner_thread.as_ref().map(|(id, name)| json!({"id": id, "name": name})),
        })
    });
    json!({
        "id": t.id, "name": t.name, "daemon": t.daemon, "state": t.state,
        "owned": t.owned.iter().map(monitor_json).collect::<Vec<_>>(),
        "waiting_for": waiting,
        "stack": t.frames.iter().map(frame_json).collect::<Vec<_>>(),
    })
}

pub fn cycle_json(c: &Cycle) -> Value {
    let n = c.threads.len();
    json!({
        "threads": c.threads.iter().enumerate().map(|(i, t)| {
            let next = &c.threads[(i + 1) % n];
            json!({
                "id": t.id, "name": t.name, "daemon": t.daemon, "state": t.state,
                "waiting_for": t.waiting.as_ref().map(|w| {
                    let mut v = monitor_json(&w.monitor);
                    v["wait"] = json!(w.kind);
                    v
                }),
                "held_by": {"id": next.id, "name": next.name},
                "holds": t.owned.iter().map(monitor_json).collect::<Vec<_>>(),
                "stack": t.frames.iter().map(frame_json).collect::<Vec<_>>(),
            })
        }).collect::<Vec<_>>(),
    })
}

fn dump_json(reason: &str, threads: &[ThreadView], cycles: &[Cycle]) -> Value {
    json!({
        "schema": "instr-monitors/1",
        "pid": std::process::id(),
        "reason": reason,
        "time_ns": now(),
        "threads": threads.iter().map(thread_json).collect::<Vec<_>>(),
        "deadlocks": cycles.iter().map(cycle_json).collect::<Vec<_>>(),
    })
}
