//! A profile as weighted stacks: one [`FlameView`] per thing measured. Flame graphs (HTML, SVG),
//! pprof and the collapsed files are all drawn from these, so every output adds up to the same totals.

use std::collections::HashMap;
use std::sync::Arc;

use crate::model::{Frame, Profile};

/// What a frame is, for its colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FrameKind {
    /// A method of the JDK (`java.`, `javax.`, `jdk.`, `sun.`, `com.sun.`).
    Jdk,
    /// A method of the application.
    App,
    /// The class a stack ends in: the allocated class of an allocation stack, the monitor's class of a
    /// contention or wait stack.
    Allocated,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FlameFrame {
    /// Shared by every stack and view that shows the frame: a profile has few distinct frames and
    /// many stacks.
    pub name: Arc<str>,
    pub kind: FrameKind,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FlameStack {
    /// The outermost frame first, the leaf last.
    pub frames: Vec<FlameFrame>,
    pub value: u64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FlameView {
    /// A stable key: `objects`, `bytes`, `live_objects`, `live_bytes`, `calls`, `cpu`, `wall`,
    /// `monitors`, `waits`.
    pub id: &'static str,
    /// What the page shows: "Allocated objects".
    pub title: &'static str,
    /// The unit of the values: `objects`, `bytes`, `calls`, `nanoseconds`.
    pub unit: &'static str,
    pub stacks: Vec<FlameStack>,
}

impl FlameView {
    pub fn total(&self) -> u64 {
        self.stacks.iter().map(|s| s.value).sum()
    }
}

/// Whether a class name is the JDK's.
pub fn is_jdk(class: &str) -> bool {
    ["java.", "javax.", "jdk.", "sun.", "com.sun."]
        .iter()
        .any(|p| class.starts_with(p))
}

/// Frames made once per distinct method, shared by reference count.
#[derive(Default)]
struct Frames<'p> {
    by_frame: HashMap<(&'p str, &'p str), FlameFrame>,
    by_name: HashMap<&'p str, FlameFrame>,
}

impl<'p> Frames<'p> {
    fn method(&mut self, f: &'p Frame) -> FlameFrame {
        self.by_frame
            .entry((f.class.as_str(), f.method.as_str()))
            .or_insert_with(|| FlameFrame {
                name: f.name().into(),
                kind: kind_of(&f.class),
            })
            .clone()
    }

    /// A frame known by its `Class.method` name only (call paths).
    fn named(&mut self, name: &'p str) -> FlameFrame {
        self.by_name
            .entry(name)
            .or_insert_with(|| FlameFrame {
                name: name.into(),
                kind: kind_of(name),
            })
            .clone()
    }

    fn allocated(&mut self, class: &'p str) -> FlameFrame {
        let f = self.named(class);
        FlameFrame {
            kind: FrameKind::Allocated,
            ..f
        }
    }
}

fn kind_of(class: &str) -> FrameKind {
    if is_jdk(class) {
        FrameKind::Jdk
    } else {
        FrameKind::App
    }
}

/// Every view the profile has data for, in the order a page offers them. Views with nothing in them are
/// left out.
pub fn views<'p>(p: &'p Profile) -> Vec<FlameView> {
    let mut frames: Frames<'p> = Frames::default();
    // Allocation stacks, made once and shared by the four allocation views: (frames, [objects, bytes,
    // live objects, live bytes]). By site and stack when there are sites, else by class alone.
    let allocations: Vec<(Vec<FlameFrame>, [Option<u64>; 4])> = if !p.sites.is_empty() {
        p.sites
            .iter()
            .map(|s| {
                let mut stack: Vec<FlameFrame> =
                    s.stack.iter().rev().map(|f| frames.method(f)).collect();
                stack.push(frames.allocated(&s.class));
                (
                    stack,
                    [Some(s.count), Some(s.bytes), s.live_instances, s.live_bytes],
                )
            })
            .collect()
    } else {
        p.classes
            .iter()
            .map(|c| {
                (
                    vec![frames.allocated(&c.class)],
                    [
                        Some(c.instances),
                        Some(c.bytes),
                        c.live_instances,
                        c.live_bytes,
                    ],
                )
            })
            .collect()
    };
    let calls: Vec<(Vec<FlameFrame>, [Option<u64>; 3])> = p
        .calls
        .iter()
        .flat_map(|c| &c.paths)
        .map(|c| {
            (
                c.frames.iter().map(|n| frames.named(n)).collect(),
                [Some(c.calls), Some(c.self_cpu_ns), Some(c.self_wall_ns)],
            )
        })
        .collect();
    // Monitor stacks end in the monitor's class, as allocation stacks end in the allocated class: the
    // graph then shows which lock a method waited for, and two locks taken at one place stay apart.
    let mut monitor_stack = |stack: &'p [Frame], class: &'p str| -> Vec<FlameFrame> {
        let mut out: Vec<FlameFrame> = stack.iter().rev().map(|f| frames.method(f)).collect();
        out.push(frames.allocated(class));
        out
    };
    let monitors = p.threads.as_ref().map(|t| &t.monitors);
    let contended: Vec<(Vec<FlameFrame>, [Option<u64>; 1])> = monitors
        .iter()
        .flat_map(|m| &m.contended)
        .map(|c| (monitor_stack(&c.stack, &c.class), [Some(c.blocked_ns)]))
        .collect();
    let waits: Vec<(Vec<FlameFrame>, [Option<u64>; 1])> = monitors
        .iter()
        .flat_map(|m| &m.waits)
        .map(|w| (monitor_stack(&w.stack, &w.class), [Some(w.waited_ns)]))
        .collect();
    let mut out = Vec::new();
    let mut push = |id, title, unit, stacks: Vec<FlameStack>| {
        if !stacks.is_empty() {
            out.push(FlameView {
                id,
                title,
                unit,
                stacks,
            });
        }
    };
    fn pick<const N: usize>(
        rows: &[(Vec<FlameFrame>, [Option<u64>; N])],
        k: usize,
    ) -> Vec<FlameStack> {
        rows.iter()
            .filter_map(|(frames, values)| {
                let value = values[k].filter(|&v| v > 0)?;
                Some(FlameStack {
                    frames: frames.clone(),
                    value,
                })
            })
            .collect()
    }
    push(
        "objects",
        "Allocated objects",
        "objects",
        pick(&allocations, 0),
    );
    push("bytes", "Allocated bytes", "bytes", pick(&allocations, 1));
    push(
        "live_objects",
        "Live objects",
        "objects",
        pick(&allocations, 2),
    );
    push("live_bytes", "Live bytes", "bytes", pick(&allocations, 3));
    push("calls", "Calls", "calls", pick(&calls, 0));
    // With the sampler on, CPU and wall time come from its samples (calls=times is refused then).
    let sampled = crate::samples::views(p, false);
    if sampled.is_empty() {
        push("cpu", "CPU time", "nanoseconds", pick(&calls, 1));
        push("wall", "Wall time", "nanoseconds", pick(&calls, 2));
    }
    for v in sampled {
        push(v.id, v.title, v.unit, v.stacks);
    }
    // Contended enters by the time they blocked (pprof's `delay`), and waits by the time waited, apart:
    // a wait is the program's choice, blocking its cost.
    push(
        "monitors",
        "Monitor time",
        "nanoseconds",
        pick(&contended, 0),
    );
    push("waits", "Monitor wait time", "nanoseconds", pick(&waits, 0));
    out
}
