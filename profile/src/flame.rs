//! A profile as weighted stacks: one [`FlameView`] per thing measured. Flame graphs (HTML, SVG),
//! pprof and the collapsed files are all drawn from these, so every output adds up to the same totals.

use crate::model::Profile;

/// What a frame is, for its colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FrameKind {
    /// A method of the JDK (`java.`, `javax.`, `jdk.`, `sun.`, `com.sun.`).
    Jdk,
    /// A method of the application.
    App,
    /// The allocated class, the leaf of an allocation stack.
    Allocated,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FlameFrame {
    pub name: String,
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
    /// A stable key: `objects`, `bytes`, `live_objects`, `live_bytes`, `calls`, `cpu`, `wall`.
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

fn method_frame(class: &str, name: String) -> FlameFrame {
    let kind = if is_jdk(class) {
        FrameKind::Jdk
    } else {
        FrameKind::App
    };
    FlameFrame { name, kind }
}

/// Every view the profile has data for, in the order a page offers them. Views with nothing in them are
/// left out.
pub fn views(p: &Profile) -> Vec<FlameView> {
    let mut out = Vec::new();
    // Allocations: by site and stack when there are sites, else by class alone.
    let alloc =
        |value: &dyn Fn(u64, u64, Option<u64>, Option<u64>) -> Option<u64>| -> Vec<FlameStack> {
            if !p.sites.is_empty() {
                p.sites
                    .iter()
                    .filter_map(|s| {
                        let v = value(s.count, s.bytes, s.live_instances, s.live_bytes)?;
                        let mut frames: Vec<FlameFrame> = s
                            .stack
                            .iter()
                            .rev()
                            .map(|f| method_frame(&f.class, f.name()))
                            .collect();
                        frames.push(FlameFrame {
                            name: s.class.clone(),
                            kind: FrameKind::Allocated,
                        });
                        Some(FlameStack { frames, value: v })
                    })
                    .collect()
            } else {
                p.classes
                    .iter()
                    .filter_map(|c| {
                        let v = value(c.instances, c.bytes, c.live_instances, c.live_bytes)?;
                        Some(FlameStack {
                            frames: vec![FlameFrame {
                                name: c.class.clone(),
                                kind: FrameKind::Allocated,
                            }],
                            value: v,
                        })
                    })
                    .collect()
            }
        };
    let mut push = |id, title, unit, stacks: Vec<FlameStack>| {
        let stacks: Vec<FlameStack> = stacks.into_iter().filter(|s| s.value > 0).collect();
        if !stacks.is_empty() {
            out.push(FlameView {
                id,
                title,
                unit,
                stacks,
            });
        }
    };
    push(
        "objects",
        "Allocated objects",
        "objects",
        alloc(&|n, _, _, _| Some(n)),
    );
    push(
        "bytes",
        "Allocated bytes",
        "bytes",
        alloc(&|_, b, _, _| Some(b)),
    );
    push(
        "live_objects",
        "Live objects",
        "objects",
        alloc(&|_, _, l, _| l),
    );
    push("live_bytes", "Live bytes", "bytes", alloc(&|_, _, _, l| l));
    if let Some(calls) = &p.calls {
        let path = |f: &dyn Fn(&crate::model::CallPath) -> u64| -> Vec<FlameStack> {
            calls
                .paths
                .iter()
                .map(|c| FlameStack {
                    frames: c
                        .frames
                        .iter()
                        .map(|n| method_frame(n, n.clone()))
                        .collect(),
                    value: f(c),
                })
                .collect()
        };
        push("calls", "Calls", "calls", path(&|c| c.calls));
        push("cpu", "CPU time", "nanoseconds", path(&|c| c.self_cpu_ns));
        push(
            "wall",
            "Wall time",
            "nanoseconds",
            path(&|c| c.self_wall_ns),
        );
    }
    out
}
