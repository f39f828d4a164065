//! The difference of two profiles: what grew and what shrank, per class, per allocation site (class and
//! stack) and per method, from the exact counts, so a CI job can fail when a change allocates or calls
//! more than before (`instr diff --fail-over N`).
//!
//! Rows are matched by name, never by the agent's ids (ids are numbered in load order and differ
//! between runs):
//! - classes by the class name;
//! - sites by the allocated class and the stack's class, method and descriptor. Files and line numbers
//!   are left out of the key: an edit above a method moves its lines, and the site would show as one
//!   that vanished and one that appeared. Sites that differ only by line are summed.
//! - methods by class, name and descriptor;
//! - monitors (the thread profiler's section) by class: contended enters with the time they blocked,
//!   and waits with the time they waited. Shown, never counted by `--fail-over`: contention depends
//!   on timing.
//!
//! Each row has a count (instances, allocations at the site, calls) and, for allocations, bytes. A row
//! *grew* when its count did, or when its count stayed the same and its bytes grew; likewise *shrank*.
//! Rows are ordered by the size of the change in count, then in bytes, then by name.
//!
//! [`flame`] draws the differential flame graph: for each view the profiles share (objects, bytes,
//! calls, CPU...) one view of the growth per stack (stacks whose value grew, weighted by how much) and
//! one of the shrinkage, for the HTML page. A stack that grew in one place and shrank in another of its
//! descendants shows in both views: each is an ordinary flame graph of positive weights, which every
//! flame-graph renderer draws.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use crate::flame::{self, FlameFrame, FlameView};
use crate::model::Profile;

/// What a row is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Class,
    Site,
    Method,
    Monitor,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Class => "class",
            Kind::Site => "site",
            Kind::Method => "method",
            Kind::Monitor => "monitor",
        }
    }
}

/// One class, site or method present in either profile, with a change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub kind: Kind,
    /// The class name; the site as `root;...;allocating method;allocated class` (collapsed-stack
    /// order); the method as `class.name(descriptor)`.
    pub name: String,
    pub count_before: u64,
    pub count_after: u64,
    pub bytes_before: u64,
    pub bytes_after: u64,
}

impl Change {
    pub fn count_delta(&self) -> i128 {
        self.count_after as i128 - self.count_before as i128
    }

    pub fn bytes_delta(&self) -> i128 {
        self.bytes_after as i128 - self.bytes_before as i128
    }

    /// By how much the row grew (0 when it shrank): the count's growth.
    pub fn growth(&self) -> u64 {
        self.count_after.saturating_sub(self.count_before)
    }

    pub fn grew(&self) -> bool {
        self.count_delta() > 0 || (self.count_delta() == 0 && self.bytes_delta() > 0)
    }
}

/// Every row that changed, each list ordered largest change first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diff {
    pub before_pid: u32,
    pub after_pid: u32,
    pub classes: Vec<Change>,
    pub sites: Vec<Change>,
    pub methods: Vec<Change>,
    /// Per monitor class (thread profiler): contended enters and the nanoseconds they blocked
    /// (`blocked on CLASS`), `Object.wait` calls and the nanoseconds they waited (`waited on CLASS`).
    /// Contention depends on timing, so these rows are shown but never fail `--fail-over`.
    pub monitors: Vec<Change>,
}

type Rows = BTreeMap<String, (u64, u64)>;

fn changes(kind: Kind, before: Rows, mut after: Rows) -> Vec<Change> {
    let mut out = Vec::new();
    for (name, (cb, bb)) in before {
        let (ca, ba) = after.remove(&name).unwrap_or((0, 0));
        out.push(Change {
            kind,
            name,
            count_before: cb,
            count_after: ca,
            bytes_before: bb,
            bytes_after: ba,
        });
    }
    out.extend(after.into_iter().map(|(name, (ca, ba))| Change {
        kind,
        name,
        count_before: 0,
        count_after: ca,
        bytes_before: 0,
        bytes_after: ba,
    }));
    out.retain(|c| c.count_delta() != 0 || c.bytes_delta() != 0);
    // The name last: a total order, so the text is the same on every run.
    out.sort_by(|a, b| {
        b.count_delta()
            .abs()
            .cmp(&a.count_delta().abs())
            .then(b.bytes_delta().abs().cmp(&a.bytes_delta().abs()))
            .then(a.name.cmp(&b.name))
    });
    out
}

fn classes(p: &Profile) -> Rows {
    let mut rows = Rows::new();
    for c in &p.classes {
        let r = rows.entry(c.class.clone()).or_default();
        r.0 += c.instances;
        r.1 += c.bytes;
    }
    rows
}

fn sites(p: &Profile) -> Rows {
    let mut rows = Rows::new();
    for s in &p.sites {
        let mut names: Vec<String> = p
            .stack(&s.stack)
            .rev()
            .map(|f| format!("{}.{}{}", f.class, f.method, f.descriptor))
            .collect();
        names.push(s.class.clone());
        let r = rows.entry(names.join(";")).or_default();
        r.0 += s.count;
        r.1 += s.bytes;
    }
    rows
}

fn monitors(p: &Profile) -> Rows {
    let mut rows = Rows::new();
    for c in p.threads.iter().flat_map(|t| &t.monitors.classes) {
        if c.contended > 0 || c.blocked_ns > 0 {
            let r = rows.entry(format!("blocked on {}", c.class)).or_default();
            r.0 += c.contended;
            r.1 += c.blocked_ns;
        }
        if c.waits > 0 || c.waited_ns > 0 {
            let r = rows.entry(format!("waited on {}", c.class)).or_default();
            r.0 += c.waits;
            r.1 += c.waited_ns;
        }
    }
    rows
}

fn methods(p: &Profile) -> Rows {
    let mut rows = Rows::new();
    for m in &p.methods {
        let name = format!("{}.{}{}", m.class, m.method, m.descriptor);
        rows.entry(name).or_default().0 += m.enters;
    }
    rows
}

/// Compares two profiles.
pub fn compare(before: &Profile, after: &Profile) -> Diff {
    Diff {
        before_pid: before.pid,
        after_pid: after.pid,
        classes: changes(Kind::Class, classes(before), classes(after)),
        sites: changes(Kind::Site, sites(before), sites(after)),
        methods: changes(Kind::Method, methods(before), methods(after)),
        monitors: changes(Kind::Monitor, monitors(before), monitors(after)),
    }
}

impl Diff {
    /// Every row whose count grew by more than `n`, classes first, then sites, then methods (monitor
    /// rows never: how often threads collide depends on timing, not only on the program).
    pub fn grown_over(&self, n: u64) -> Vec<&Change> {
        self.classes
            .iter()
            .chain(&self.sites)
            .chain(&self.methods)
            .filter(|c| c.growth() > n)
            .collect()
    }

    pub fn is_empty(&self) -> bool {
        self.classes.is_empty()
            && self.sites.is_empty()
            && self.methods.is_empty()
            && self.monitors.is_empty()
    }

    /// The tables, one section per kind of row (a section with no change is left out).
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "instr profile diff, before pid {}, after pid {}",
            self.before_pid, self.after_pid
        );
        if self.is_empty() {
            let _ = writeln!(s, "\nno differences in classes, sites or methods");
            return s;
        }
        section(
            &mut s,
            "CLASSES",
            "instances and bytes allocated per class",
            ("objs", Some("bytes")),
            &self.classes,
        );
        section(
            &mut s,
            "SITES",
            "allocations per site and stack, root;...;allocated class",
            ("count", Some("bytes")),
            &self.sites,
        );
        section(
            &mut s,
            "METHODS",
            "calls per method",
            ("calls", None),
            &self.methods,
        );
        section(
            &mut s,
            "MONITORS",
            "contended enters and waits per monitor class, and their nanoseconds",
            ("count", Some("ns")),
            &self.monitors,
        );
        s
    }
}

fn signed(v: i128) -> String {
    if v > 0 {
        format!("+{v}")
    } else {
        v.to_string()
    }
}

/// One table: `unit` names the count, `second` the other number (bytes, nanoseconds) when there is one.
fn section(
    s: &mut String,
    title: &str,
    what: &str,
    (unit, second): (&str, Option<&str>),
    rows: &[Change],
) {
    if rows.is_empty() {
        return;
    }
    let grew = rows.iter().filter(|c| c.grew()).count();
    let _ = writeln!(
        s,
        "\n{title} BEGIN ({what}; {grew} grew, {} shrank; largest change first)",
        rows.len() - grew
    );
    let _ = write!(
        s,
        " rank {:>12} {:>12} {:>12}",
        format!("{unit} +/-"),
        "before",
        "after"
    );
    if let Some(second) = second {
        let _ = write!(
            s,
            " {:>12} {:>12} {:>12}",
            format!("{second} +/-"),
            "before",
            "after"
        );
    }
    let _ = writeln!(s, "  {}", Kind::name(rows[0].kind));
    for (i, c) in rows.iter().enumerate() {
        let _ = write!(
            s,
            "{:5} {:>12} {:12} {:12}",
            i + 1,
            signed(c.count_delta()),
            c.count_before,
            c.count_after
        );
        if second.is_some() {
            let _ = write!(
                s,
                " {:>12} {:12} {:12}",
                signed(c.bytes_delta()),
                c.bytes_before,
                c.bytes_after
            );
        }
        let _ = writeln!(s, "  {}", c.name);
    }
    let _ = writeln!(s, "{title} END");
}

/// The text table of the differences.
pub fn text(before: &Profile, after: &Profile) -> String {
    compare(before, after).to_text()
}

/// The views of a differential flame graph, ids and titles: for each view of a profile, the growth and
/// the shrinkage.
const DIFF_VIEWS: [(&str, &str, &str, &str, &str); 9] = [
    (
        "objects",
        "objects_grew",
        "Allocated objects: growth",
        "objects_shrank",
        "Allocated objects: shrinkage",
    ),
    (
        "bytes",
        "bytes_grew",
        "Allocated bytes: growth",
        "bytes_shrank",
        "Allocated bytes: shrinkage",
    ),
    (
        "live_objects",
        "live_objects_grew",
        "Live objects: growth",
        "live_objects_shrank",
        "Live objects: shrinkage",
    ),
    (
        "live_bytes",
        "live_bytes_grew",
        "Live bytes: growth",
        "live_bytes_shrank",
        "Live bytes: shrinkage",
    ),
    (
        "calls",
        "calls_grew",
        "Calls: growth",
        "calls_shrank",
        "Calls: shrinkage",
    ),
    (
        "cpu",
        "cpu_grew",
        "CPU time: growth",
        "cpu_shrank",
        "CPU time: shrinkage",
    ),
    (
        "wall",
        "wall_grew",
        "Wall time: growth",
        "wall_shrank",
        "Wall time: shrinkage",
    ),
    (
        "monitors",
        "monitors_grew",
        "Monitor time: growth",
        "monitors_shrank",
        "Monitor time: shrinkage",
    ),
    (
        "waits",
        "waits_grew",
        "Monitor wait time: growth",
        "waits_shrank",
        "Monitor wait time: shrinkage",
    ),
];

/// The differential flame graph's views: every growth view (in the order of [`flame::views`]), then
/// every shrinkage view; views with nothing in them are left out, so two equal profiles give none.
pub fn flame(before: &Profile, after: &Profile) -> Vec<FlameView> {
    let (b, a) = (flame::views(before), flame::views(after));
    let mut grew = Vec::new();
    let mut shrank = Vec::new();
    for (id, grew_id, grew_title, shrank_id, shrank_title) in DIFF_VIEWS {
        let find = |views: &[FlameView]| views.iter().find(|v| v.id == id).cloned();
        let (vb, va) = (find(&b), find(&a));
        let Some(unit) = va.as_ref().or(vb.as_ref()).map(|v| v.unit) else {
            continue;
        };
        let sum = |v: Option<FlameView>| {
            let mut m: HashMap<Vec<FlameFrame>, u64> = HashMap::new();
            if let Some(v) = v {
                for s in &v.stacks {
                    *m.entry(v.frames_of(s).cloned().collect()).or_default() += s.value;
                }
            }
            m
        };
        let (mut mb, ma) = (sum(vb), sum(va));
        let (mut up, mut down) = (Vec::new(), Vec::new());
        for (frames, after) in ma {
            let before = mb.remove(&frames).unwrap_or(0);
            if after > before {
                up.push((frames, after - before));
            } else if before > after {
                down.push((frames, before - after));
            }
        }
        down.extend(mb.into_iter().filter(|(_, v)| *v > 0));
        // HashMap order is random: sort by the frames' names, so the page is the same on every run.
        let names =
            |s: &(Vec<FlameFrame>, u64)| s.0.iter().map(|f| f.name.clone()).collect::<Vec<_>>();
        up.sort_by_cached_key(names);
        down.sort_by_cached_key(names);
        if !up.is_empty() {
            grew.push(FlameView::from_frames(grew_id, grew_title, unit, up));
        }
        if !down.is_empty() {
            shrank.push(FlameView::from_frames(shrank_id, shrank_title, unit, down));
        }
    }
    grew.extend(shrank);
    grew
}
