//! A profile as weighted stacks: one [`FlameView`] per thing measured. Flame graphs (HTML, SVG),
//! pprof and the collapsed files are all drawn from these, so every output adds up to the same totals.

use std::collections::HashMap;
use std::sync::Arc;

use crate::fast_hash::Fx;
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
    pub name: Arc<str>,
    pub kind: FrameKind,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FlameStack {
    /// Indexes into the view's [`FlameView::frames`], the outermost frame first, the leaf last. Shared
    /// by the views drawn from one row (the objects and bytes of a site, the calls, CPU and wall time of
    /// a call path), so a renderer can tell them the same stack by pointer.
    pub frames: Arc<[u32]>,
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
    /// Each distinct (name, kind) once: the frames the stacks index. The views of one profile share one
    /// table.
    pub frames: Arc<Vec<FlameFrame>>,
    pub stacks: Vec<FlameStack>,
}

impl FlameView {
    pub fn total(&self) -> u64 {
        self.stacks.iter().map(|s| s.value).sum()
    }

    /// The frames of one of this view's stacks, the outermost first.
    pub fn frames_of<'a>(
        &'a self,
        stack: &'a FlameStack,
    ) -> impl DoubleEndedIterator<Item = &'a FlameFrame> + ExactSizeIterator + 'a {
        stack.frames.iter().map(|&i| &self.frames[i as usize])
    }

    /// A view of stacks given frame by frame (the outermost first): the frames are numbered here. For
    /// views made by hand (tests, the diff); [`views`] numbers a profile's frames once for all its views.
    pub fn from_frames(
        id: &'static str,
        title: &'static str,
        unit: &'static str,
        stacks: impl IntoIterator<Item = (Vec<FlameFrame>, u64)>,
    ) -> FlameView {
        let mut table = FlameTable::default();
        let stacks = stacks
            .into_iter()
            .map(|(frames, value)| FlameStack {
                frames: frames
                    .into_iter()
                    .map(|f| table.intern(&f.name, f.kind))
                    .collect(),
                value,
            })
            .collect();
        FlameView {
            id,
            title,
            unit,
            frames: Arc::new(table.frames),
            stacks,
        }
    }
}

/// A stack (flame frame ids, the outermost first) and its values in the views drawn from its row.
type Row<const N: usize> = (Arc<[u32]>, [Option<u64>; N]);

/// Whether a class name is the JDK's.
pub fn is_jdk(class: &str) -> bool {
    ["java.", "javax.", "jdk.", "sun.", "com.sun."]
        .iter()
        .any(|p| class.starts_with(p))
}

/// Numbers flame frames, each distinct (name, kind) once.
#[derive(Default)]
struct FlameTable {
    frames: Vec<FlameFrame>,
    index: HashMap<(Arc<str>, FrameKind), u32, Fx>,
}

impl FlameTable {
    fn intern(&mut self, name: &str, kind: FrameKind) -> u32 {
        // Looked up by an owned key: this runs once per distinct frame of the profile's table or per
        // site's class, not per frame of every stack.
        let key: (Arc<str>, FrameKind) = (name.into(), kind);
        if let Some(&i) = self.index.get(&key) {
            return i;
        }
        let i = self.frames.len() as u32;
        self.frames.push(FlameFrame {
            name: key.0.clone(),
            kind,
        });
        self.index.insert(key, i);
        i
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
    let mut table = FlameTable::default();
    // The flame frame of each frame of the profile's table: a method is one flame frame whatever the
    // line, so frames of one method at several lines become one.
    let by_frame: Vec<u32> = p
        .frames
        .iter()
        .map(|f| table.intern(&f.name(), kind_of(&f.class)))
        .collect();
    // The allocated (or monitor) class of each row: one lookup by `&str` per row, no allocation.
    let mut by_class: HashMap<&'p str, u32, Fx> = HashMap::default();
    let mut class_id = |table: &mut FlameTable, class: &'p str| -> u32 {
        *by_class
            .entry(class)
            .or_insert_with(|| table.intern(class, FrameKind::Allocated))
    };
    // Allocation stacks, made once and shared by the four allocation views: (frames, [objects, bytes,
    // live objects, live bytes]). By site and stack when there are sites, else by class alone.
    let allocations: Vec<Row<4>> = if !p.sites.is_empty() {
        p.sites
            .iter()
            .map(|s| {
                let stack: Arc<[u32]> = s
                    .stack
                    .iter()
                    .rev()
                    .map(|&f| by_frame[f as usize])
                    .chain([class_id(&mut table, &s.class)])
                    .collect();
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
                    Arc::from([class_id(&mut table, &c.class)]),
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
    let calls: Vec<Row<3>> = p
        .calls
        .iter()
        .flat_map(|c| &c.paths)
        .map(|c| {
            (
                c.frames.iter().map(|&f| by_frame[f as usize]).collect(),
                [Some(c.calls), Some(c.self_cpu_ns), Some(c.self_wall_ns)],
            )
        })
        .collect();
    // Monitor stacks end in the monitor's class, as allocation stacks end in the allocated class: the
    // graph then shows which lock a method waited for, and two locks taken at one place stay apart.
    let mut monitor_stack =
        |table: &mut FlameTable, stack: &[Frame], class: &'p str| -> Arc<[u32]> {
            let mut out: Vec<u32> = stack
                .iter()
                .rev()
                .map(|f| table.intern(&f.name(), kind_of(&f.class)))
                .collect();
            out.push(class_id(table, class));
            out.into()
        };
    let monitors = p.threads.as_ref().map(|t| &t.monitors);
    let contended: Vec<Row<1>> = monitors
        .iter()
        .flat_map(|m| &m.contended)
        .map(|c| {
            (
                monitor_stack(&mut table, &c.stack, &c.class),
                [Some(c.blocked_ns)],
            )
        })
        .collect();
    let waits: Vec<Row<1>> = monitors
        .iter()
        .flat_map(|m| &m.waits)
        .map(|w| {
            (
                monitor_stack(&mut table, &w.stack, &w.class),
                [Some(w.waited_ns)],
            )
        })
        .collect();
    let frames = Arc::new(table.frames);
    let mut out = Vec::new();
    let mut push = |id, title, unit, stacks: Vec<FlameStack>| {
        if !stacks.is_empty() {
            out.push(FlameView {
                id,
                title,
                unit,
                frames: frames.clone(),
                stacks,
            });
        }
    };
    fn pick<const N: usize>(rows: &[Row<N>], k: usize) -> Vec<FlameStack> {
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
    // Contended enters by the time they blocked (pprof's `delay`), and waits by the time waited, apart:
    // a wait is the program's choice, blocking its cost.
    push(
        "monitors",
        "Monitor time",
        "nanoseconds",
        pick(&contended, 0),
    );
    push("waits", "Monitor wait time", "nanoseconds", pick(&waits, 0));
    // The sampled views (their own frame table) where the timed ones would be: before the monitors.
    let at = out
        .iter()
        .position(|v| v.id == "monitors" || v.id == "waits")
        .unwrap_or(out.len());
    out.splice(at..at, sampled);
    out
}
