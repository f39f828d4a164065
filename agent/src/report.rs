//! Reading the counts back from HeapProxy at VM death and writing the reports: `PREFIX.json` (exact
//! counts, schema `instr-profile/2`, see docs/REPORTS.md) and `PREFIX.txt` (hprof-style). Both are written
//! to a temporary file and renamed, so a reader never sees half a report.
//!
//! The allocation counts are in per-thread rows (HeapProxyAllocs); HeapProxy's `classTotals` and
//! `siteTotals` sum them with the shared totals under the lock that ending threads take to hand their
//! rows over, so every count is read once, also while threads run and end.

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
use crate::site_order;
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
    site_order::sort_sites(&mut sites, &table.frames);
    let table = site_order::renumber_frames(&mut sites, table);
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
