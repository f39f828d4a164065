//! The sampler's section of a profile (`samples`, written by the agent with `cpu=` or `wall=`, or read
//! from a sample log by `instr report`), and what the reports draw from it: the sampled times merged into
//! the method rows beside the exact call counts, the hprof-style `CPU SAMPLES` text section, the `cpu`
//! and `wall` flame views and their collapsed stacks.
//!
//! Times come from samples, counts from the probes: a method's CPU time is its samples times the
//! sampling interval, an estimate whose error shrinks with the number of samples; its calls are exact.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::flame::{is_jdk, FlameFrame, FlameView, FrameKind};
use crate::model::{MethodRow, Profile};

#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct Samples {
    /// `agct` (AsyncGetCallTrace in a signal handler) or `jvmti` (GetAllStackTraces, at safepoints).
    pub engine: String,
    /// CPU time between two samples of a running thread; 0 when CPU sampling was off.
    #[serde(default)]
    pub cpu_interval_ns: u64,
    /// Wall time between two samples of every thread; 0 when wall sampling was off.
    #[serde(default)]
    pub wall_interval_ns: u64,
    #[serde(default)]
    pub cpu_samples: u64,
    #[serde(default)]
    pub wall_samples: u64,
    /// Samples taken but lost because the ring between the signal handler and the agent was full.
    #[serde(default)]
    pub dropped: u64,
    /// Signals whose stack could not be walked, by reason (AsyncGetCallTrace's error codes).
    #[serde(default)]
    pub failed: BTreeMap<String, u64>,
    /// Frames whose method could not be named (its class was unloaded before the frame was resolved).
    #[serde(default)]
    pub unknown_frames: u64,
    /// Distinct (kind, thread, stack) with their sample counts, the most sampled first.
    #[serde(default)]
    pub stacks: Vec<SampledStack>,
    #[serde(flatten)]
    pub rest: Map<String, Value>,
}

#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct SampledStack {
    /// `cpu` or `wall`.
    pub kind: String,
    pub thread: String,
    pub samples: u64,
    /// The leaf (running) frame first.
    pub frames: Vec<SampledFrame>,
}

#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct SampledFrame {
    pub class: String,
    pub method: String,
    #[serde(default)]
    pub descriptor: String,
    #[serde(default)]
    pub line: Option<i64>,
    /// `java` or `native`: AsyncGetCallTrace reports a method and a bytecode index, which tells native
    /// frames apart but not the interpreter from C1, C2 or an inlined frame.
    #[serde(default, rename = "type")]
    pub frame_type: String,
}

impl SampledFrame {
    fn key(&self) -> (&str, &str, &str) {
        (&self.class, &self.method, &self.descriptor)
    }
}

pub const CPU: &str = "cpu";
pub const WALL: &str = "wall";

/// Per method (class, name, descriptor): self and total samples of one kind. A recursive method is
/// counted once per stack in its total.
fn per_method(s: &Samples, kind: &str) -> HashMap<(String, String, String), (u64, u64)> {
    let mut out: HashMap<(String, String, String), (u64, u64)> = HashMap::new();
    for st in s.stacks.iter().filter(|st| st.kind == kind) {
        let mut seen = HashSet::new();
        for (i, f) in st.frames.iter().enumerate() {
            if !seen.insert(f.key()) {
                continue;
            }
            let key = (f.class.clone(), f.method.clone(), f.descriptor.clone());
            let e = out.entry(key).or_default();
            if i == 0 {
                e.0 += st.samples;
            }
            e.1 += st.samples;
        }
    }
    out
}

/// Puts the sampled times into the method rows: `self_samples`, `total_samples`, `self_cpu_ns`,
/// `total_cpu_ns` and `ns_per_call_estimated` beside the exact `calls` and `unwinds` of a probed method;
/// a sampled method that was not probed gets a row of its own with `"probed": false` and no count.
/// With wall sampling, `self_wall_samples` and `total_wall_samples` too. Running it again changes
/// nothing.
pub fn merge_into_methods(p: &mut Profile) {
    let Some(s) = &p.samples else { return };
    let cpu = per_method(s, CPU);
    let wall = per_method(s, WALL);
    let interval = s.cpu_interval_ns;
    let (cpu_on, wall_on) = (s.cpu_interval_ns > 0, s.wall_interval_ns > 0);
    let mut index: HashMap<(String, String, String), usize> = p
        .methods
        .iter()
        .enumerate()
        .map(|(i, m)| ((m.class.clone(), m.method.clone(), m.descriptor.clone()), i))
        .collect();
    let mut sampled: Vec<&(String, String, String)> = cpu.keys().chain(wall.keys()).collect();
    sampled.sort();
    sampled.dedup();
    for key in sampled {
        if !index.contains_key(key) {
            let mut rest = Map::new();
            rest.insert("probed".into(), json!(false));
            index.insert(key.clone(), p.methods.len());
            p.methods.push(MethodRow {
                id: None,
                class: key.0.clone(),
                method: key.1.clone(),
                descriptor: key.2.clone(),
                enters: 0,
                unwinds: 0,
                rest,
            });
        }
    }
    for m in &mut p.methods {
        let key = (m.class.clone(), m.method.clone(), m.descriptor.clone());
        let probed = m.rest.get("probed") != Some(&Value::Bool(false));
        // `unwinds` is the row's own field already; `calls` names `enters` as the reports do.
        if probed {
            m.rest.insert("calls".into(), json!(m.enters));
        }
        if cpu_on {
            let (own, total) = cpu.get(&key).copied().unwrap_or((0, 0));
            let (own_ns, total_ns) = (own * interval, total * interval);
            m.rest.insert("self_samples".into(), json!(own));
            m.rest.insert("total_samples".into(), json!(total));
            m.rest.insert("self_cpu_ns".into(), json!(own_ns));
            m.rest.insert("total_cpu_ns".into(), json!(total_ns));
            let per_call = (probed && m.enters > 0).then(|| total_ns / m.enters);
            m.rest
                .insert("ns_per_call_estimated".into(), json!(per_call));
        }
        if wall_on {
            let (own, total) = wall.get(&key).copied().unwrap_or((0, 0));
            m.rest.insert("self_wall_samples".into(), json!(own));
            m.rest.insert("total_wall_samples".into(), json!(total));
        }
    }
}

fn frame_name(f: &SampledFrame) -> String {
    format!("{}.{}", f.class, f.method)
}

/// The `cpu` and `wall` flame views, weighted by samples (the root first), `per_thread`: each stack under
/// its thread's name.
pub fn views(p: &Profile, per_thread: bool) -> Vec<FlameView> {
    let Some(s) = &p.samples else {
        return Vec::new();
    };
    let mut names: HashMap<String, FlameFrame> = HashMap::new();
    let mut frame = |name: String| {
        names
            .entry(name)
            .or_insert_with_key(|n| FlameFrame {
                name: n.as_str().into(),
                kind: if is_jdk(n) {
                    FrameKind::Jdk
                } else {
                    FrameKind::App
                },
            })
            .clone()
    };
    let mut out = Vec::new();
    for (id, title) in [(CPU, "CPU samples"), (WALL, "Wall-clock samples")] {
        let mut merged: BTreeMap<Vec<String>, u64> = BTreeMap::new();
        for st in s.stacks.iter().filter(|st| st.kind == id) {
            let mut path: Vec<String> = Vec::with_capacity(st.frames.len() + 1);
            if per_thread {
                path.push(format!("[{}]", st.thread));
            }
            path.extend(st.frames.iter().rev().map(frame_name));
            *merged.entry(path).or_default() += st.samples;
        }
        if merged.is_empty() {
            continue;
        }
        let stacks: Vec<(Vec<FlameFrame>, u64)> = merged
            .into_iter()
            .map(|(path, value)| (path.into_iter().map(&mut frame).collect(), value))
            .collect();
        out.push(FlameView::from_frames(
            if id == CPU { CPU } else { WALL },
            title,
            "samples",
            stacks,
        ));
    }
    out
}

/// Collapsed stacks of one kind (`cpu` or `wall`), weighted by samples.
pub fn collapsed(p: &Profile, kind: &str, per_thread: bool) -> String {
    views(p, per_thread)
        .iter()
        .find(|v| v.id == kind)
        .map(crate::render::collapsed::render)
        .unwrap_or_default()
}

fn method_label(class: &str, method: &str, descriptor: &str) -> String {
    format!("{class}.{method}{descriptor}")
}

/// The text report's `CPU SAMPLES` section (and `WALL SAMPLES` with wall sampling), hprof's layout with
/// the exact call count beside the samples: rank, self, accum, samples, calls, trace, method. A method's
/// trace is the stack that sampled it most; the traces follow the table.
pub fn text(s: &mut String, p: &Profile) {
    let Some(samples) = &p.samples else { return };
    let calls: HashMap<(&str, &str, &str), Option<u64>> = p
        .methods
        .iter()
        .map(|m| {
            let probed = m.rest.get("probed") != Some(&Value::Bool(false));
            (
                (m.class.as_str(), m.method.as_str(), m.descriptor.as_str()),
                (probed && p.calls.is_some()).then_some(m.enters),
            )
        })
        .collect();
    for (kind, section, interval) in [
        (CPU, "CPU SAMPLES", samples.cpu_interval_ns),
        (WALL, "WALL SAMPLES", samples.wall_interval_ns),
    ] {
        if interval == 0 {
            continue;
        }
        // Stacks of this kind across threads, and per leaf method its self samples and top stack.
        let mut by_stack: HashMap<&[SampledFrame], u64> = HashMap::new();
        for st in samples.stacks.iter().filter(|st| st.kind == kind) {
            *by_stack.entry(&st.frames).or_default() += st.samples;
        }
        let mut stacks: Vec<(&[SampledFrame], u64)> = by_stack.into_iter().collect();
        // A total order, so that the report is the same from the agent and from `instr report`.
        stacks.sort_by(|a, b| {
            b.1.cmp(&a.1)
                .then_with(|| a.0.len().cmp(&b.0.len()))
                .then_with(|| frame_order(a.0).cmp(&frame_order(b.0)))
        });
        let total: u64 = stacks.iter().map(|x| x.1).sum();
        let mut leaves: Vec<((&str, &str, &str), u64, usize)> = Vec::new();
        let mut leaf_index: HashMap<(&str, &str, &str), usize> = HashMap::new();
        for (trace, (frames, n)) in stacks.iter().enumerate() {
            let Some(leaf) = frames.first() else { continue };
            match leaf_index.get(&leaf.key()) {
                Some(&i) => leaves[i].1 += n,
                None => {
                    leaf_index.insert(leaf.key(), leaves.len());
                    leaves.push((leaf.key(), *n, trace));
                }
            }
        }
        leaves.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let _ = writeln!(
            s,
            "\n{section} BEGIN (total = {total}; one sample per {:.3} ms of {} time; engine {}; calls exact)",
            interval as f64 / 1e6,
            if kind == CPU { "a thread's CPU" } else { "wall" },
            samples.engine
        );
        let _ = writeln!(
            s,
            " rank   self  accum      samples        calls  trace  method"
        );
        let mut accum = 0;
        for (rank, (key, n, trace)) in leaves.iter().enumerate() {
            accum += n;
            let count = match calls.get(key).copied().flatten() {
                Some(c) => c.to_string(),
                None => "-".to_string(),
            };
            let _ = writeln!(
                s,
                "{:5} {:5.2}% {:5.2}% {:12} {:>12} {:6}  {}",
                rank + 1,
                pct(*n, total),
                pct(accum, total),
                n,
                count,
                300_001 + trace,
                method_label(key.0, key.1, key.2)
            );
        }
        let _ = writeln!(s, "{section} END");
        let mut shown: Vec<usize> = leaves.iter().map(|l| l.2).collect();
        shown.sort_unstable();
        for trace in shown {
            let (frames, n) = stacks[trace];
            let _ = writeln!(s, "TRACE {} ({kind}, {n} samples):", 300_001 + trace);
            for f in frames {
                let line = f.line.map_or("Unknown line".to_string(), |l| l.to_string());
                let native = if f.frame_type == "native" {
                    ", native"
                } else {
                    ""
                };
                let _ = writeln!(s, "\t{}.{}({line}{native})", f.class, f.method);
            }
        }
    }
    let failed: u64 = samples.failed.values().sum();
    if samples.dropped > 0 || failed > 0 || samples.unknown_frames > 0 {
        let reasons: Vec<String> = samples
            .failed
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        let _ = writeln!(
            s,
            "SAMPLES NOT COUNTED: {} dropped (ring full), {failed} walks failed ({}), {} frames of unknown methods",
            samples.dropped,
            if reasons.is_empty() { "none".to_string() } else { reasons.join(", ") },
            samples.unknown_frames
        );
    }
}

/// The frames as sortable keys: a total order on stacks, so that the report is the same whether the agent
/// or `instr report` renders it.
fn frame_order(frames: &[SampledFrame]) -> Vec<(&str, &str, &str, Option<i64>)> {
    frames
        .iter()
        .map(|f| {
            (
                f.class.as_str(),
                f.method.as_str(),
                f.descriptor.as_str(),
                f.line,
            )
        })
        .collect()
}

fn pct(v: u64, total: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        100.0 * v as f64 / total as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(class: &str, method: &str) -> SampledFrame {
        SampledFrame {
            class: class.into(),
            method: method.into(),
            descriptor: "()V".into(),
            line: Some(3),
            frame_type: "java".into(),
        }
    }

    fn profile() -> Profile {
        let mut p = Profile {
            schema: crate::model::SCHEMA.into(),
            ..Default::default()
        };
        p.methods.push(MethodRow {
            id: Some(1),
            class: "A".into(),
            method: "hot".into(),
            descriptor: "()V".into(),
            enters: 30,
            unwinds: 1,
            rest: Map::new(),
        });
        p.methods.push(MethodRow {
            id: Some(2),
            class: "A".into(),
            method: "never".into(),
            descriptor: "()V".into(),
            enters: 5,
            unwinds: 0,
            rest: Map::new(),
        });
        p.calls = Some(Default::default());
        p.samples = Some(Samples {
            engine: "agct".into(),
            cpu_interval_ns: 1_000_000,
            cpu_samples: 10,
            stacks: vec![
                SampledStack {
                    kind: CPU.into(),
                    thread: "t1".into(),
                    samples: 6,
                    frames: vec![frame("A", "hot"), frame("A", "main")],
                },
                SampledStack {
                    kind: CPU.into(),
                    thread: "t2".into(),
                    samples: 4,
                    frames: vec![frame("A", "main")],
                },
            ],
            ..Default::default()
        });
        p
    }

    #[test]
    fn merged_rows_have_exact_counts_beside_sampled_times() {
        let mut p = profile();
        merge_into_methods(&mut p);
        let once = p.clone();
        merge_into_methods(&mut p);
        assert_eq!(p, once, "merging twice changes nothing");
        let reread = Profile::from_json(&p.to_json()).expect("the merged profile reads back");
        assert_eq!(reread, p);
        let row = |name: &str| p.methods.iter().find(|m| m.method == name).unwrap();
        let hot = row("hot");
        assert_eq!(hot.rest["calls"], json!(30));
        assert_eq!(hot.rest["self_samples"], json!(6));
        assert_eq!(hot.rest["total_cpu_ns"], json!(6_000_000));
        assert_eq!(hot.rest["ns_per_call_estimated"], json!(200_000));
        let never = row("never");
        assert_eq!(never.rest["total_samples"], json!(0));
        assert_eq!(never.rest["calls"], json!(5));
        let main = row("main");
        assert_eq!(main.rest["probed"], json!(false));
        assert_eq!(main.rest["self_samples"], json!(4));
        assert_eq!(main.rest["total_samples"], json!(10));
        assert_eq!(main.rest["ns_per_call_estimated"], Value::Null);
        assert!(main.rest.get("calls").is_none());
    }

    #[test]
    fn views_and_text_add_up_to_the_samples() {
        let mut p = profile();
        merge_into_methods(&mut p);
        assert_eq!(collapsed(&p, CPU, false), "A.main 4\nA.main;A.hot 6\n");
        assert_eq!(
            collapsed(&p, CPU, true),
            "[t1];A.main;A.hot 6\n[t2];A.main 4\n"
        );
        assert_eq!(collapsed(&p, WALL, false), "");
        let mut t = String::new();
        text(&mut t, &p);
        assert!(t.contains("CPU SAMPLES BEGIN (total = 10;"), "{t}");
        assert!(t.contains("60.00% 60.00%            6           30"), "{t}");
        assert!(
            t.contains("40.00% 100.00%            4            -"),
            "{t}"
        );
    }
}
