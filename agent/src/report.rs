//! Reading the counts back from HeapProxy at VM death and writing the reports: `PREFIX.json` (exact
//! counts, schema `instr-profile/2`, see docs/REPORTS.md) and `PREFIX.txt` (hprof-style). Both are written
//! to a temporary file and renamed, so a reader never sees half a report.
//!
//! The allocation counts are in per-thread rows (HeapProxyAllocs); HeapProxy's `classTotals` and
//! `siteTotals` sum them with the shared totals under the lock that ending threads take to hand their
//! rows over, so every count is read once, also while threads run and end.

use std::cmp::Reverse;
use std::collections::HashMap;
use std::sync::atomic::Ordering;

use instr_profile::fast_hash::Fx;
use instr_profile::model::{Frame, FrameTable, SiteRow};
use instr_profile::{render, Profile};
use jni_sys::{jmethodID, jobject};
use serde_json::{json, Value};

use crate::exit_times::Steps;
use crate::jni::Jni;
use crate::live::{Owner, Sampling};
use crate::report_files::Writer;
use crate::state::{lock, Agent};

pub struct ClassCount {
    pub name: String,
    pub instances: u64,
    pub bytes: u64,
    /// Live at exit (after a full GC), when live tracking is on: exact, or sampled and scaled.
    pub live: Option<(u64, u64)>,
}

#[derive(Clone, Debug)]
pub struct ResolvedFrame {
    pub class: String,
    pub method: String,
    pub descriptor: String,
    pub file: Option<String>,
    pub line: Option<i64>,
}

pub struct Site {
    /// The class allocated (objects) or the array type.
    pub class: String,
    pub count: u64,
    pub bytes: u64,
    /// Indexes into the report's frame table, the allocating frame first.
    pub frames: Vec<u32>,
    /// The rewriter's allocation-site id (the allocating instruction).
    pub site_id: Option<u32>,
    /// Live objects and bytes at exit allocated at this site (all its stacks together), when live
    /// tracking is on.
    pub live: Option<(u64, u64)>,
    /// The count is this stack's estimated share of the site's exact count (`stacks=SIZE`).
    pub estimated: bool,
    /// Objects alive when `start live` walked the heap (live_switch.rs): no count, only live figures.
    pub before_profiling: bool,
}

pub struct Report {
    pub classes: Vec<ClassCount>,
    pub sites: Vec<Site>,
    /// Every distinct frame of the sites' stacks once (the profile's `frames`).
    pub frames: FrameTable,
    pub dropped: u64,
}

/// Java names: `Ljava/lang/String;` -> `java.lang.String`, `[[I` -> `int[][]`.
pub fn java_name(descriptor: &str) -> String {
    let dims = descriptor.bytes().take_while(|&b| b == b'[').count();
    let element = &descriptor[dims..];
    let base = match element {
        "Z" => "boolean".to_string(),
        "B" => "byte".to_string(),
        "C" => "char".to_string(),
        "S" => "short".to_string(),
        "I" => "int".to_string(),
        "J" => "long".to_string(),
        "F" => "float".to_string(),
        "D" => "double".to_string(),
        e => e
            .strip_prefix('L')
            .and_then(|e| e.strip_suffix(';'))
            .unwrap_or(e)
            .replace('/', "."),
    };
    format!("{base}{}", "[]".repeat(dims))
}

/// When a report is written.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// At VM death: the probes are stopped first, so the counts are final.
    AtExit,
    /// On request (JVMTI DataDumpRequest) while the program runs: the probes keep counting, and each
    /// counter is read once, as it is at that moment.
    OnDemand,
}

/// Reads every counter (stopping the probes first at exit).
pub fn collect(a: &Agent, jni: Jni, proxy: jobject, when: When, steps: &mut Steps) -> Report {
    if when == When::AtExit {
        if let Some(f) = jni.static_field(proxy, "engaged", "Z") {
            jni.set_static_boolean(proxy, f, false);
        }
        a.engaged.store(false, Ordering::Release);
    }
    settle_live(a);
    let by_sites = a.rules.depth() > 0;
    // [2k]: instances, [2k + 1]: array bytes of the class of dense index k.
    let class_totals = jni.static_call_longs(proxy, "classTotals");
    let total = |i: usize| class_totals.get(i).copied().unwrap_or(0).max(0) as u64;
    let mut classes = Vec::new();
    let mut slot_names = HashMap::new();
    // Names come from the agent's own index, not from the Class objects: a class that has unloaded since
    // it was counted is reported under its name like any other.
    for (i, sig, size) in lock(&a.class_index).entries() {
        let n = total(2 * i);
        let bytes = if sig.starts_with('[') {
            total(2 * i + 1)
        } else {
            n * size
        };
        let name = java_name(sig);
        slot_names.insert(i, (name.clone(), size));
        if n > 0 {
            let live = a
                .live
                .as_ref()
                .filter(|l| !by_sites && matches!(l.sampling, Sampling::Every(_)))
                .map(|l| l.of(Owner::ClassSlot(i as u32)));
            classes.push(ClassCount {
                name,
                instances: n,
                bytes,
                live,
            });
        }
    }

    let size_of: HashMap<String, u64> = slot_names.into_values().collect();
    // Objects are sized by their class (arrays summed their own bytes as they were allocated).
    let sized = |allocated_type: &str, count: u64, array_bytes: u64| {
        let class = java_name(allocated_type);
        let bytes = if allocated_type.starts_with('L') {
            count * size_of.get(&class).copied().unwrap_or(0)
        } else {
            array_bytes
        };
        (class, bytes)
    };
    let mut frames = FrameResolver::new(a);
    let mut table = FrameTable::default();
    let mut sites = Vec::new();
    if a.rules.depth() > 1 && a.sampled_stacks.is_none() {
        // What a site allocates, named and sized once per site rather than once per stack.
        // Objects are sized by their class (`Some(instance size)`); arrays summed their own bytes as
        // they were allocated.
        let mut allocates: HashMap<i32, Option<(String, Option<u64>)>, Fx> = HashMap::default();
        sites.reserve(a.stacks.count());
        a.stacks.for_each(|site, stack, totals| {
            let per_object = allocates.entry(site).or_insert_with(|| {
                let info = a.ids.site(site as u32)?;
                let t = &info.allocated_type;
                let class = java_name(t);
                let size = t
                    .starts_with('L')
                    .then(|| size_of.get(&class).copied().unwrap_or(0));
                Some((class, size))
            });
            let Some((class, size)) = per_object else {
                return;
            };
            let bytes = size.map_or(totals.bytes, |size| totals.count * size);
            sites.push(Site {
                class: class.clone(),
                count: totals.count,
                bytes,
                frames: stack
                    .iter()
                    .map(|&(m, loc)| frames.resolve_id(jni, m as jmethodID, loc, &mut table))
                    .collect(),
                site_id: Some(site as u32),
                live: None,
                estimated: false,
                before_profiling: false,
            });
        });
    } else {
        // [2s]: count, [2s + 1]: array bytes of site s.
        let site_totals = jni.static_call_longs(proxy, "siteTotals");
        for (id, pair) in site_totals
            .chunks_exact(2)
            .enumerate()
            .filter(|(i, p)| *i > 0 && p[0] > 0)
        {
            let count = pair[0];
            let Some(info) = a.ids.site(id as u32) else {
                continue;
            };
            let array_bytes = pair[1].max(0) as u64;
            let (class, bytes) = sized(&info.allocated_type, count as u64, array_bytes);
            let frame = a.ids.method(info.method).map(|m| {
                table.intern(Frame {
                    class: m.class.replace('/', "."),
                    method: m.name,
                    descriptor: m.descriptor,
                    file: None,
                    line: info.line.map(i64::from),
                })
            });
            sites.push(Site {
                class,
                count: count as u64,
                bytes,
                frames: frame.into_iter().collect(),
                site_id: Some(id as u32),
                live: None,
                estimated: false,
                before_profiling: false,
            });
        }
    }
    steps.step("read stacks");
    if let Some(sampled) = &a.sampled_stacks {
        let samples = sampled
            .snapshot()
            .iter()
            .map(|(_, stack, totals)| {
                let resolved = stack
                    .iter()
                    .map(|&(m, loc)| frames.resolve_id(jni, m as jmethodID, loc, &mut table))
                    .collect();
                (resolved, totals.bytes)
            })
            .collect();
        sites = crate::sampled_stacks::split(sites, samples, &table.frames);
    }
    if let Some(census) = crate::live_switch::census(a, jni) {
        // `start live`: the objects from before it, a site of their own per class, and in their class's
        // row with those allocated since.
        let crate::live_switch::Census { before, mut since } = census;
        let mut per_class = std::mem::take(&mut since);
        if !before.is_empty() {
            let frame = table.intern(Frame {
                class: instr_profile::model::BEFORE_PROFILING.into(),
                method: String::new(),
                descriptor: String::new(),
                file: None,
                line: None,
            });
            for (class, &(n, b)) in &before {
                sites.push(Site {
                    class: class.clone(),
                    count: 0,
                    bytes: 0,
                    frames: vec![frame],
                    site_id: None,
                    live: Some((n, b)),
                    estimated: false,
                    before_profiling: true,
                });
                let e = per_class.entry(class.clone()).or_default();
                e.0 += n;
                e.1 += b;
            }
        }
        for c in &mut classes {
            c.live = Some(per_class.remove(c.name.as_str()).unwrap_or((0, 0)));
        }
        // Classes alive now that no allocation probe counted (the probe off, or not selecting them).
        for (name, live) in per_class.into_iter().filter(|(_, l)| *l != (0, 0)) {
            classes.push(ClassCount {
                name,
                instances: 0,
                bytes: 0,
                live: Some(live),
            });
        }
    } else if let Some(l) = a
        .live
        .as_ref()
        .filter(|l| matches!(l.sampling, Sampling::Bytes(_)))
    {
        // The heap sampler's classes, by name; sites get no live counts in this mode.
        let per_class = l.by_sampled_class();
        for c in &mut classes {
            c.live = Some(per_class.get(c.name.as_str()).copied().unwrap_or((0, 0)));
        }
    } else if let (Some(l), true) = (&a.live, by_sites) {
        // Per class: the sum over its sites (each site allocates one type).
        let mut per_class: HashMap<&str, (u64, u64)> = HashMap::new();
        let mut visited_sites = std::collections::HashSet::new();
        for site in &mut sites {
            let (n, b) = l.of(Owner::Site(site.site_id.unwrap_or(0)));
            site.live = Some((n, b));
            if visited_sites.insert(site.site_id) {
                let e = per_class.entry(site.class.as_str()).or_default();
                e.0 += n;
                e.1 += b;
            }
        }
        for c in &mut classes {
            c.live = Some(per_class.get(c.name.as_str()).copied().unwrap_or((0, 0)));
        }
    }
    classes.sort_by(|x, y| y.bytes.cmp(&x.bytes).then_with(|| x.name.cmp(&y.name)));
    sort_sites(&mut sites, &table.frames);
    let table = renumber_frames(&mut sites, table);
    steps.step("sort sites");

    let dropped = jni
        .static_longs(proxy, "dropped")
        .first()
        .copied()
        .unwrap_or(0)
        .max(0) as u64;
    Report {
        classes,
        sites,
        frames: table,
        dropped,
    }
}

/// Brings the live counters up to date at exit: a full GC frees what is unreachable, and a heap walk,
/// which makes the VM post the OBJECT_FREE events it still holds for that GC (they are otherwise posted
/// lazily, on the service thread), leaves only the objects really alive counted.
fn settle_live(a: &Agent) {
    if crate::live_switch::tracker(a).is_none() {
        return;
    }
    a.jvmti.force_garbage_collection();
    a.jvmti.for_each_tagged_object(|_, _| {});
}

/// The sites' order in the reports: the most live bytes, bytes, count first, then by class name, by
/// their frames (class, method, descriptor, file, line, outermost last) and by site id, so that the
/// report is the same whatever order the stacks were counted in. The names are compared once, to rank
/// each distinct class and frame; the sort then compares integers and moves indexes (comparing the
/// strings while moving the sites was 100 ms at 100,000 sites of a few sizes, where most comparisons
/// reach the frames).
fn sort_sites(sites: &mut [Site], table: &[Frame]) {
    let frame_rank = ranks(table.iter());
    // Each site's class as a number (the first met first), then the numbers ranked by name.
    let mut classes: HashMap<&str, u32, Fx> = HashMap::default();
    let class_of: Vec<u32> = sites
        .iter()
        .map(|s| {
            let next = classes.len() as u32;
            *classes.entry(s.class.as_str()).or_insert(next)
        })
        .collect();
    let mut names: Vec<(&str, u32)> = classes.into_iter().collect();
    names.sort_by_key(|&(_, number)| number);
    let class_rank = ranks(names.iter().map(|&(name, _)| name));
    // Every site's frames as ranks, end to end; the sort's elements carry their keys and their first
    // eight frames packed into one integer, so that most comparisons read the two elements alone (the
    // sort is bound by memory reads: following an index into a table per comparison was most of it,
    // and with four frames packed, sites of one size whose stacks share their first four frames, as
    // deep recursive programs make, still reached the table in a third of the comparisons).
    let packed = table.len() < PACKED_RANK_LIMIT;
    let mut ranked: Vec<u32> = Vec::with_capacity(sites.iter().map(|s| s.frames.len()).sum());
    let mut keyed: Vec<SortKey> = sites
        .iter()
        .zip(&class_of)
        .enumerate()
        .map(|(index, (s, &class))| {
            let start = ranked.len();
            ranked.extend(s.frames.iter().map(|&f| frame_rank[f as usize]));
            let head = match packed {
                true => ranked[start..]
                    .iter()
                    .take(PACKED_FRAMES)
                    .enumerate()
                    .fold(0u128, |h, (k, &r)| h | u128::from(r + 1) << (112 - 16 * k)),
                false => 0,
            };
            SortKey {
                order: SiteOrder {
                    live_bytes: Reverse(s.live.map_or(0, |l| l.1)),
                    bytes: Reverse(s.bytes),
                    count: Reverse(s.count),
                    class: class_rank[class as usize],
                },
                head,
                frames: start..ranked.len(),
                site_id: s.site_id.unwrap_or(0),
                index: index as u32,
            }
        })
        .collect();
    let order = sorted_order(&mut keyed, |x, y| {
        (&x.order, x.head)
            .cmp(&(&y.order, y.head))
            .then_with(|| ranked[x.frames.clone()].cmp(&ranked[y.frames.clone()]))
            .then(x.site_id.cmp(&y.site_id))
    });
    drop(keyed);
    permute(sites, order);
}

/// The frame table with the frames the sites use most first (ties in the order the sorted sites first
/// use them), and the sites' stacks renumbered to match. The table was in the order the stack table was
/// read, which its layout decides: now the JSON is the same whatever order the stacks were counted in,
/// and the numbers written most often are the shortest. Frames no site uses come last, in their order.
fn renumber_frames(sites: &mut [Site], table: FrameTable) -> FrameTable {
    let mut frames = table.frames;
    // Per old frame: its uses, and its first use as a position among all the sites' frames.
    let mut uses = vec![(0u64, usize::MAX); frames.len()];
    let all = sites.iter().flat_map(|s| s.frames.iter());
    for (position, &f) in all.enumerate() {
        let u = &mut uses[f as usize];
        u.0 += 1;
        u.1 = u.1.min(position);
    }
    let mut order: Vec<usize> = (0..frames.len()).collect();
    order.sort_by_key(|&old| (Reverse(uses[old].0), uses[old].1, old));
    let mut new_id = vec![0u32; frames.len()];
    for (new, &old) in order.iter().enumerate() {
        new_id[old] = new as u32;
    }
    for f in sites.iter_mut().flat_map(|s| s.frames.iter_mut()) {
        *f = new_id[*f as usize];
    }
    FrameTable::from_frames(
        order
            .into_iter()
            .map(|old| std::mem::take(&mut frames[old]))
            .collect(),
    )
}

/// Sorts on two threads from this many sites: below it a thread costs more than it saves.
const PARALLEL_SORT_FROM: usize = 20_000;

/// The sites' indexes in the order `cmp` sorts their keys. Many sites are sorted in two halves, one on
/// a second thread (the other core is idle while the report collects), then merged: the sort's wall
/// time at 100,000 sites falls by about a third.
fn sorted_order(
    keyed: &mut [SortKey],
    cmp: impl Fn(&SortKey, &SortKey) -> std::cmp::Ordering + Sync,
) -> Vec<u32> {
    let index = |k: &SortKey| k.index;
    if keyed.len() < PARALLEL_SORT_FROM {
        keyed.sort_unstable_by(&cmp);
        return keyed.iter().map(index).collect();
    }
    let half = keyed.len() / 2;
    let (first, second) = keyed.split_at_mut(half);
    let both = std::thread::scope(|s| {
        let helper = std::thread::Builder::new()
            .name("instr-sort".into())
            .spawn_scoped(s, || first.sort_unstable_by(&cmp));
        second.sort_unstable_by(&cmp);
        match helper {
            Ok(h) => match h.join() {
                Ok(()) => true,
                Err(e) => std::panic::resume_unwind(e),
            },
            Err(_) => false,
        }
    });
    if !both {
        // No second thread: the whole sort here.
        keyed.sort_unstable_by(&cmp);
        return keyed.iter().map(index).collect();
    }
    let (first, second) = keyed.split_at(half);
    let mut order = Vec::with_capacity(keyed.len());
    let (mut i, mut j) = (0, 0);
    while i < first.len() && j < second.len() {
        if cmp(&second[j], &first[i]).is_lt() {
            order.push(second[j].index);
            j += 1;
        } else {
            order.push(first[i].index);
            i += 1;
        }
    }
    order.extend(first[i..].iter().map(index));
    order.extend(second[j..].iter().map(index));
    order
}

/// Puts `items[order[p]]` at `p` for every `p`, in place: moving the sites into a second vector
/// touched 20 MB of fresh pages at 100,000 sites, and their page faults cost more than the moves.
fn permute<T>(items: &mut [T], mut order: Vec<u32>) {
    const DONE: u32 = u32::MAX;
    for start in 0..order.len() {
        // Each cycle of the permutation once: the item first at `start` is carried along it by the
        // swaps, and lands where the cycle closes.
        let mut p = start;
        while order[p] != DONE {
            let from = order[p] as usize;
            order[p] = DONE;
            if from == start {
                break;
            }
            items.swap(p, from);
            p = from;
        }
    }
}

/// Frame ranks below this fit 16 bits once one is added (0: no frame), eight to a `u128`.
const PACKED_RANK_LIMIT: usize = u16::MAX as usize;
const PACKED_FRAMES: usize = 8;

/// A site as the sort sees it.
#[derive(Clone)]
struct SortKey {
    order: SiteOrder,
    /// The ranks (plus one) of the first eight frames, the first in the high bits: compared as one
    /// number, they order as the frames do. 0 when the frame table is too large to pack.
    head: u128,
    /// Where the site's frame ranks are.
    frames: std::ops::Range<usize>,
    site_id: u32,
    /// The site's place before the sort.
    index: u32,
}

/// The first keys of the sites' order, before their frames.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
struct SiteOrder {
    live_bytes: Reverse<u64>,
    bytes: Reverse<u64>,
    count: Reverse<u64>,
    /// The class name's rank among the sites' classes.
    class: u32,
}

/// Each item's rank in the sorted order of `items`, equal items sharing one.
fn ranks<T: Ord>(items: impl Iterator<Item = T>) -> Vec<u32> {
    let items: Vec<T> = items.collect();
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by(|&x, &y| items[x].cmp(&items[y]));
    let mut rank = vec![0; items.len()];
    let mut r = 0;
    for (k, &i) in order.iter().enumerate() {
        if k > 0 && items[order[k - 1]] != items[i] {
            r += 1;
        }
        rank[i] = r;
    }
    rank
}

/// What a frame shows of its method: class, name, descriptor, source file and line table.
type MethodNames = (
    String,
    String,
    String,
    Option<String>,
    Vec<crate::jvmti::LineNumberEntry>,
);

/// jmethodID -> class, name, descriptor, source file and line table, each looked up once.
pub struct FrameResolver<'a> {
    a: &'a Agent,
    methods: HashMap<usize, MethodNames>,
    /// (jmethodID, location) -> index in the frame table: a frame is resolved and its strings copied
    /// once however many stacks hold it (a million lookups at 100,000 stacks of 10 frames).
    ids: HashMap<(usize, i64), u32, Fx>,
    /// The last frame looked up in each slot (by a hash of the frame), in front of `ids`: programs have
    /// hundreds or thousands of distinct frames, so most lookups end here, two compares in a table
    /// that stays in the cache (the map's lookup was about half of reading 100,000 stacks).
    recent: Box<[(usize, i64, u32); RECENT_SLOTS]>,
}

const RECENT_SLOTS: usize = 4096;

/// A frame's slot in `FrameResolver::recent`.
fn recent_slot(method: usize, location: i64) -> usize {
    let h = (method as u64 ^ (location as u64).rotate_left(32)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (h >> 52) as usize % RECENT_SLOTS
}

impl<'a> FrameResolver<'a> {
    pub fn new(a: &'a Agent) -> Self {
        FrameResolver {
            a,
            methods: HashMap::new(),
            ids: HashMap::default(),
            // No jmethodID is null: an empty slot never matches.
            recent: Box::new([(0, 0, 0); RECENT_SLOTS]),
        }
    }

    /// The frame's index in `table`, added there when it is new.
    pub fn resolve_id(
        &mut self,
        jni: Jni,
        method: jmethodID,
        location: i64,
        table: &mut FrameTable,
    ) -> u32 {
        let slot = recent_slot(method as usize, location);
        let (m, l, id) = self.recent[slot];
        if m == method as usize && l == location {
            return id;
        }
        if let Some(&id) = self.ids.get(&(method as usize, location)) {
            self.recent[slot] = (method as usize, location, id);
            return id;
        }
        let f = self.resolve(jni, method, location);
        let id = table.intern(Frame {
            class: f.class,
            method: f.method,
            descriptor: f.descriptor,
            file: f.file,
            line: f.line,
        });
        self.ids.insert((method as usize, location), id);
        self.recent[slot] = (method as usize, location, id);
        id
    }

    pub fn resolve(&mut self, jni: Jni, method: jmethodID, location: i64) -> ResolvedFrame {
        let a = self.a;
        let entry = self.methods.entry(method as usize).or_insert_with(|| {
            let (name, sig) = a
                .jvmti
                .method_name(method)
                .unwrap_or_else(|| ("?".into(), String::new()));
            let (class, file) = match a.jvmti.method_declaring_class(method) {
                Some(c) => {
                    let s = a
                        .jvmti
                        .class_signature(c)
                        .map(|s| java_name(&s))
                        .unwrap_or_else(|| "?".into());
                    let f = a.jvmti.source_file_name(c);
                    jni.delete_local(c);
                    (s, f)
                }
                None => ("?".into(), None),
            };
            (class, name, sig, file, a.jvmti.line_number_table(method))
        });
        let line = entry
            .4
            .iter()
            .filter(|e| e.start_location <= location)
            .max_by_key(|e| e.start_location)
            .map(|e| e.line_number as i64);
        ResolvedFrame {
            class: entry.0.clone(),
            method: entry.1.clone(),
            descriptor: entry.2.clone(),
            file: entry.3.clone(),
            line: if location < 0 { None } else { line },
        }
    }
}

/// The profile's small sections as JSON (everything but the sites and their frame table, which
/// `write_all` puts into the profile directly: the JSON value of 100,000 stacks would cost more than
/// every rendering of them).
pub fn to_json(a: &Agent, r: &Report, pid: u32) -> Value {
    let gc = &a.gc;
    json!({
        "schema": instr_profile::model::SCHEMA,
        "pid": pid,
        "depth": a.rules.depth(),
        "totals": {
            "instances": r.classes.iter().map(|c| c.instances).sum::<u64>(),
            "bytes": r.classes.iter().map(|c| c.bytes).sum::<u64>(),
        },
        "live_sampling": a.live_every,
        "stack_sample_bytes": a.sampled_stacks.as_ref().map_or(0, |s| s.interval),
        "live_sample_bytes": match a.live.as_ref().map(|l| l.sampling) {
            Some(Sampling::Bytes(b)) => b,
            _ => 0,
        },
        "classes": r.classes.iter().map(|c| {
            let mut v = json!({"class": c.name, "instances": c.instances, "bytes": c.bytes});
            if let Some((n, b)) = c.live {
                v["live_instances"] = json!(n);
                v["live_bytes"] = json!(b);
            }
            v
        }).collect::<Vec<_>>(),
        "gc": {
            "collections": gc.count.load(Ordering::Relaxed),
            "total_pause_ns": gc.total_nanos.load(Ordering::Relaxed),
            "max_pause_ns": gc.max_nanos.load(Ordering::Relaxed),
        },
        "dropped": r.dropped,
    })
}

/// Collects the profile and writes its reports to the rules' output prefix: JSON (the profile itself,
/// with the thread profiler's section when it ran), text, collapsed stacks of the allocated bytes (root
/// first, the allocated class as the leaf; at depth 0 one line per class), the HTML flame graph, pprof,
/// and with `calls=times` the CPU collapsed stacks. Each file is written while the next is rendered.
pub fn write_all(a: &Agent, jni: Jni, proxy: jobject, when: When) {
    let prefix = a.rules.output_path(std::process::id());
    let mut steps = Steps::start();
    let writer = Writer::start();
    render_steps(a, jni, proxy, when, &prefix, &mut steps, &|path, bytes| {
        writer.write(path, bytes)
    });
    writer.finish();
    steps.step("write");
    steps.print();
}

/// Every report file `write_all` writes, as (PREFIX.extension, bytes), without writing them (`instr ctl
/// PID dump` picks one). None, after one `instr:` line, if the counters do not make a profile.
pub fn render_all(
    a: &Agent,
    jni: Jni,
    proxy: jobject,
    when: When,
    prefix: &str,
) -> Option<Vec<(String, Vec<u8>)>> {
    let files = std::sync::Mutex::new(Vec::new());
    let made = render_steps(
        a,
        jni,
        proxy,
        when,
        prefix,
        &mut Steps::start(),
        &|path, bytes| lock(&files).push((path, bytes)),
    );
    made.then(|| files.into_inner().unwrap_or_default())
}

/// Collects the profile and renders every report file, handing each (PREFIX.extension, bytes) to `done`
/// as soon as it is rendered. False, after one `instr:` line, if the counters do not make a profile.
fn render_steps(
    a: &Agent,
    jni: Jni,
    proxy: jobject,
    when: When,
    prefix: &str,
    steps: &mut Steps,
    done: &(dyn Fn(String, Vec<u8>) + Sync),
) -> bool {
    let r = collect(a, jni, proxy, when, steps);
    let calls = crate::method_report::collect(a, jni);
    steps.step("collect calls");
    let pid = std::process::id();
    let mut json = to_json(a, &r, pid);
    calls.add_to_json(a, &mut json);
    // From here on the reports are renderings of the one profile, the same functions `instr report`
    // runs on the JSON file.
    let mut profile: Profile = match serde_json::from_value(json) {
        Ok(p) => p,
        Err(e) => {
            eprintln!(
                "instr: internal error: the report is not a profile ({e}); no reports written"
            );
            return false;
        }
    };
    let Report {
        sites,
        frames: mut table,
        ..
    } = r;
    if let Some(section) = &mut profile.calls {
        section.paths = calls.paths(a, &mut table);
    }
    profile.sites = sites.into_iter().map(site_row).collect();
    profile.frames = table.frames;
    // The thread profiler's section: at exit the one it wrote PREFIX.threads.* from (it stopped before
    // this report), on demand the tables as they are now.
    profile.threads = match when {
        When::AtExit => crate::monitor_report::at_exit(),
        When::OnDemand => crate::threads::section_now(jni),
    };
    // The sampler's section, and its times merged into the method rows beside the exact counts.
    profile.samples = crate::sampler::section(jni);
    instr_profile::samples::merge_into_methods(&mut profile);
    steps.step("profile");
    let title = format!("instr: pid {pid}");
    render::files::agent_files_each(&profile, &title, a.text_cutoff, &|suffix, bytes| {
        done(format!("{prefix}{suffix}"), bytes)
    });
    for (path, bytes) in crate::sampler::collapsed_files(&profile, prefix) {
        done(path, bytes);
    }
    if calls.times {
        done(
            format!("{prefix}.cpu.collapsed"),
            calls.to_collapsed().into_bytes(),
        );
    }
    steps.step("render");
    free_unless_exiting(profile, when);
    steps.step("free profile");
    true
}

/// Frees `v`, except at exit: the process ends once the VM's death has been posted, and handing a
/// profile's hundreds of thousands of small blocks back to malloc (with the merging of its free lists
/// that the first large block freed then sets off) was 15-35 ms of the exit at 100,000 sites, for
/// memory the process's end returns anyway.
fn free_unless_exiting<T>(v: T, when: When) {
    match when {
        When::AtExit => std::mem::forget(v),
        When::OnDemand => drop(v),
    }
}

fn site_row(s: Site) -> SiteRow {
    SiteRow {
        class: s.class,
        count: s.count,
        bytes: s.bytes,
        site_id: s.site_id,
        stack: s.frames,
        stack_estimated: s.estimated,
        live_instances: s.live.map(|l| l.0),
        live_bytes: s.live.map(|l| l.1),
        before_profiling: s.before_profiling,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(frames: &[u32]) -> Site {
        Site {
            class: "C".into(),
            count: 1,
            bytes: 1,
            frames: frames.to_vec(),
            site_id: None,
            live: None,
            estimated: false,
            before_profiling: false,
        }
    }

    #[test]
    fn frames_numbered_most_used_first() {
        let frame = |m: &str| Frame {
            class: "C".into(),
            method: m.into(),
            ..Frame::default()
        };
        let table = FrameTable::from_frames(["a", "b", "c", "unused", "d"].map(frame).to_vec());
        // a: 3 uses, c: 2, then d and b once each, d first used first.
        let mut sites = vec![site(&[2, 0]), site(&[0, 4, 2]), site(&[1, 0])];
        let table = renumber_frames(&mut sites, table);
        let names: Vec<&str> = table.frames.iter().map(|f| f.method.as_str()).collect();
        assert_eq!(names, ["a", "c", "d", "b", "unused"]);
        let stacks: Vec<&[u32]> = sites.iter().map(|s| &s.frames[..]).collect();
        assert_eq!(stacks, [&[1, 0][..], &[0, 2, 1], &[3, 0]]);
    }

    #[test]
    fn sorting_in_two_halves_gives_the_one_sort_order() {
        // Many equal first keys, so that the merge meets ties and the frames decide.
        let mut x = 12345u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let keys: Vec<SortKey> = (0..PARALLEL_SORT_FROM as u32 * 2 + 7)
            .map(|index| SortKey {
                order: SiteOrder {
                    live_bytes: Reverse(0),
                    bytes: Reverse(next() % 4),
                    count: Reverse(3),
                    class: (next() % 2) as u32,
                },
                head: u128::from(next() % 50),
                frames: 0..0,
                site_id: (next() % 1000) as u32,
                index,
            })
            .collect();
        let cmp = |x: &SortKey, y: &SortKey| {
            (&x.order, x.head, x.site_id, x.index).cmp(&(&y.order, y.head, y.site_id, y.index))
        };
        let mut one = (0..keys.len() as u32).collect::<Vec<_>>();
        one.sort_by(|&a, &b| cmp(&keys[a as usize], &keys[b as usize]));
        assert_eq!(sorted_order(&mut keys.clone(), cmp), one);
    }

    #[test]
    fn permute_puts_each_item_where_the_order_says() {
        // Fixed points, a 2-cycle and a 3-cycle.
        let order = vec![0, 3, 4, 1, 5, 2];
        let mut items: Vec<char> = "abcdef".chars().collect();
        let expected: Vec<char> = order.iter().map(|&i| items[i as usize]).collect();
        permute(&mut items, order);
        assert_eq!(items, expected);
        let mut none: Vec<u8> = Vec::new();
        permute(&mut none, Vec::new());
        assert!(none.is_empty());
    }
}
