//! The profile: what one run of the agent measured, as plain data. Its JSON form is the agent's
//! `PREFIX.json` report (docs/REPORTS.md). The parts the renderers read are typed; everything else the
//! report holds is kept as it was read (`rest`), so that reading a report and writing it again loses
//! nothing, and a field added to the report needs no change here until a renderer uses it.

use std::io;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The schema this crate writes: stacks are indexes into the profile's `frames` table. The earlier
/// schemas are read too and converted as they are read: `instr-profile/1` wrote every frame of every
/// stack in full (and call paths as `Class.method` names), and `instr-heap/1`, its name before it
/// carried call paths, is the same layout without them.
pub const SCHEMA: &str = "instr-profile/2";
const FRAMES_INLINE: [&str; 2] = ["instr-profile/1", "instr-heap/1"];
const READABLE: [&str; 3] = [SCHEMA, FRAMES_INLINE[0], FRAMES_INLINE[1]];

#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct Profile {
    pub schema: String,
    #[serde(default)]
    pub pid: u32,
    /// Frames per allocation site: 0 per class only, 1 the allocating method, more: stacks.
    #[serde(default)]
    pub depth: u32,
    /// Every distinct frame of the profile's allocation stacks and call paths, once: the stacks
    /// (`sites[].stack`, `calls.paths[].frames`) are indexes into this table.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub frames: Vec<Frame>,
    /// Exact instances and bytes per class (live ones too, when live objects were tracked).
    #[serde(default)]
    pub classes: Vec<ClassRow>,
    /// Exact counts per allocation site and stack (depth >= 1).
    #[serde(default)]
    pub sites: Vec<SiteRow>,
    /// Exact call counts (and times, `calls=times`) per method, all threads together.
    #[serde(default)]
    pub methods: Vec<MethodRow>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calls: Option<Calls>,
    /// Threads, monitor contention and waits, deadlocks: present when the thread profiler ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<Threads>,
    /// The CPU and wall-clock sampler's stacks (`cpu=`, `wall=`; samples.rs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<crate::samples::Samples>,
    #[serde(flatten)]
    pub rest: Map<String, Value>,
}

#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct ClassRow {
    /// The Java name: `java.lang.String`, `int[][]`.
    pub class: String,
    pub instances: u64,
    pub bytes: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_instances: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_bytes: Option<u64>,
}

#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct SiteRow {
    /// The class allocated, or the array type.
    pub class: String,
    pub count: u64,
    pub bytes: u64,
    #[serde(default)]
    pub site_id: Option<u32>,
    /// Indexes into [`Profile::frames`], the allocating frame first.
    #[serde(default)]
    pub stack: Vec<u32>,
    /// The count is this stack's estimated share of the site's exact count (`stacks=SIZE`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stack_estimated: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_instances: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_bytes: Option<u64>,
    /// The objects of `class` that were already alive when live tracking started at run time (`instr ctl
    /// PID start live`), found by a heap walk: no allocation count, no stack but the one pseudo-frame
    /// [`BEFORE_PROFILING`], and their live count only falls.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub before_profiling: bool,
}

/// The class of the one frame of a site of objects from before profiling ([`SiteRow::before_profiling`]).
pub const BEFORE_PROFILING: &str = "(before profiling)";

#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Frame {
    pub class: String,
    pub method: String,
    #[serde(default)]
    pub descriptor: String,
    #[serde(default)]
    pub file: Option<String>,
    #[serde(default)]
    pub line: Option<i64>,
}

#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct MethodRow {
    #[serde(default)]
    pub id: Option<u32>,
    #[serde(default)]
    pub class: String,
    #[serde(default)]
    pub method: String,
    #[serde(default)]
    pub descriptor: String,
    /// Exact entries; `calls` is the same number where the report names it so.
    #[serde(default)]
    pub enters: u64,
    #[serde(default)]
    pub unwinds: u64,
    #[serde(flatten)]
    pub rest: Map<String, Value>,
}

/// The method-call section (`calls=counts` or `calls=times`).
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct Calls {
    #[serde(default)]
    pub mode: String,
    /// Every call path of every thread's call tree (times mode), the root first: the calls and CPU
    /// and wall flame graphs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<CallPath>,
    #[serde(flatten)]
    pub rest: Map<String, Value>,
}

#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct CallPath {
    /// Indexes into [`Profile::frames`], the outermost call first. A call path's frames name methods
    /// (class, name and descriptor), without a file or line.
    pub frames: Vec<u32>,
    /// Exact calls of the path's last method from this path.
    pub calls: u64,
    /// Self CPU and wall nanoseconds of the last method on this path.
    #[serde(default)]
    pub self_cpu_ns: u64,
    #[serde(default)]
    pub self_wall_ns: u64,
}

/// The thread profiler's section (`threads`): `PREFIX.threads.json` without its `schema` and `pid`, which
/// the profile has already. What the threads report and the monitor views read is typed; the rest is
/// kept as read.
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct Threads {
    /// When the section was taken: nanoseconds since the agent loaded (the VM's exit, at exit).
    #[serde(default)]
    pub time_ns: u64,
    /// Every thread seen, in id order.
    #[serde(default)]
    pub threads: Vec<ThreadRow>,
    #[serde(default)]
    pub monitors: Monitors,
    /// Every deadlock found during the run.
    #[serde(default)]
    pub deadlocks: Vec<Deadlock>,
    #[serde(flatten)]
    pub rest: Map<String, Value>,
}

#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct ThreadRow {
    /// `Thread.getId()`.
    pub id: i64,
    pub name: String,
    #[serde(default)]
    pub group: String,
    #[serde(default)]
    pub parent_group: String,
    #[serde(default)]
    pub daemon: bool,
    #[serde(default, rename = "virtual")]
    pub is_virtual: bool,
    /// Nanoseconds since the agent loaded.
    #[serde(default)]
    pub start_ns: u64,
    /// `None`: alive when the section was taken.
    #[serde(default)]
    pub end_ns: Option<u64>,
    #[serde(default)]
    pub alive_at_exit: bool,
    /// From the start to the end, or to the section's time for a thread alive then.
    #[serde(default)]
    pub lifetime_ns: u64,
    /// `None` for virtual threads, which have no CPU clock of their own.
    #[serde(default)]
    pub cpu_ns: Option<u64>,
    #[serde(flatten)]
    pub rest: Map<String, Value>,
}

#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct Monitors {
    #[serde(default)]
    pub total_blocked_ns: u64,
    #[serde(default)]
    pub total_waited_ns: u64,
    /// Contended enters per monitor class and waiter stack, the most time blocked first.
    #[serde(default)]
    pub contended: Vec<Contended>,
    /// `Object.wait` per monitor class, waiter stack and timeout, the most time waited first.
    #[serde(default)]
    pub waits: Vec<Waited>,
    /// Both summed per monitor class, by class name.
    #[serde(default)]
    pub classes: Vec<MonitorClass>,
    #[serde(flatten)]
    pub rest: Map<String, Value>,
}

/// How often one thread waited for, or owned, a monitor.
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct ThreadCount {
    pub thread: String,
    pub count: u64,
}

#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct Contended {
    /// The monitor's class.
    pub class: String,
    /// Contended enters.
    pub count: u64,
    /// Nanoseconds the enters blocked, all together.
    pub blocked_ns: u64,
    #[serde(default)]
    pub max_blocked_ns: u64,
    #[serde(default)]
    pub owners: Vec<ThreadCount>,
    #[serde(default)]
    pub waiters: Vec<ThreadCount>,
    /// The waiter's frames, the one holding the `synchronized` first.
    #[serde(default)]
    pub stack: Vec<Frame>,
    #[serde(flatten)]
    pub rest: Map<String, Value>,
}

#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct Waited {
    pub class: String,
    /// The `wait(long)` argument; 0 for `wait()`.
    #[serde(default)]
    pub timeout_ms: i64,
    pub count: u64,
    #[serde(default)]
    pub timed_out: u64,
    #[serde(default)]
    pub notified: u64,
    pub waited_ns: u64,
    #[serde(default)]
    pub min_waited_ns: u64,
    #[serde(default)]
    pub max_waited_ns: u64,
    #[serde(default)]
    pub waiters: Vec<ThreadCount>,
    /// The caller of `Object.wait` first.
    #[serde(default)]
    pub stack: Vec<Frame>,
    #[serde(flatten)]
    pub rest: Map<String, Value>,
}

#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct MonitorClass {
    pub class: String,
    #[serde(default)]
    pub contended: u64,
    #[serde(default)]
    pub blocked_ns: u64,
    #[serde(default)]
    pub waits: u64,
    #[serde(default)]
    pub waited_ns: u64,
    #[serde(default)]
    pub timed_out: u64,
    #[serde(flatten)]
    pub rest: Map<String, Value>,
}

/// A cycle of the wait-for graph: each thread waits for a lock the next one holds, the last for the
/// first's.
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct Deadlock {
    pub threads: Vec<DeadlockThread>,
    #[serde(flatten)]
    pub rest: Map<String, Value>,
}

#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct DeadlockThread {
    pub id: i64,
    pub name: String,
    #[serde(default)]
    pub daemon: bool,
    /// `BLOCKED`, `WAITING`, ...
    #[serde(default)]
    pub state: String,
    #[serde(default)]
    pub waiting_for: Option<Lock>,
    /// The next thread of the cycle, which holds what this one waits for.
    pub held_by: ThreadRef,
    #[serde(default)]
    pub holds: Vec<Lock>,
    #[serde(default)]
    pub stack: Vec<Frame>,
    #[serde(flatten)]
    pub rest: Map<String, Value>,
}

#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct ThreadRef {
    pub id: i64,
    pub name: String,
    #[serde(flatten)]
    pub rest: Map<String, Value>,
}

/// A monitor or `java.util.concurrent` lock, by class and identity hash.
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct Lock {
    pub class: String,
    /// The identity hash code.
    pub id: i32,
    /// `monitor` or `ownable synchronizer`.
    #[serde(default)]
    pub kind: String,
    /// The frame (0: the top) that locked it; -1 when not known.
    #[serde(default)]
    pub depth: i32,
    /// How a thread waits for it (`enter`, `wait`, `park`): in `waiting_for` only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<String>,
    #[serde(flatten)]
    pub rest: Map<String, Value>,
}

/// A monitor dump (`PREFIX.monitors.json`, schema `instr-monitors/1`): every thread at one moment with
/// the monitors it owns and what it waits for, and every deadlock found so far. A field a dump lacks
/// reads as empty (the dump types default as a whole). The agent writes it on a
/// data dump request and when its watcher finds a new deadlock; the text form is rendered from this.
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
#[serde(default)]
pub struct MonitorDump {
    pub schema: String,
    pub pid: u32,
    /// What asked for the dump: `data dump request`, `deadlock watcher`.
    pub reason: String,
    /// Nanoseconds since the agent loaded.
    pub time_ns: u64,
    pub threads: Vec<DumpThread>,
    pub deadlocks: Vec<Deadlock>,
    #[serde(flatten)]
    pub rest: Map<String, Value>,
}

#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
#[serde(default)]
pub struct DumpThread {
    /// Who it is, its state and its stack.
    #[serde(flatten)]
    pub thread: DumpedThread,
    /// The monitors and ownable synchronizers it holds (`depth`: the frame that locked it).
    pub owned: Vec<Lock>,
    pub waiting_for: Option<DumpWait>,
}

/// A thread of a monitor dump as a thread dump heads it: `"name" id=N daemon STATE`, then its frames.
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
#[serde(default)]
pub struct DumpedThread {
    pub id: i64,
    pub name: String,
    pub daemon: bool,
    pub state: String,
    /// The top frame first.
    pub stack: Vec<Frame>,
}

/// What a thread of a dump waits for, and who holds it when that is known.
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
#[serde(default)]
pub struct DumpWait {
    /// `enter`, `wait` or `park`.
    pub kind: String,
    pub monitor: Lock,
    pub owner: Option<ThreadRef>,
    #[serde(flatten)]
    pub rest: Map<String, Value>,
}

/// Why a file is not a profile: one line, naming the problem (the caller adds the file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProfileError {
    /// Not JSON, or cut short: the parser's message, with line and column.
    Json(String),
    /// JSON, but not a profile of a schema this version reads.
    Schema(String),
    /// A stack names a frame the frame table does not have.
    FrameIndex(String),
}

impl std::fmt::Display for ProfileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProfileError::Json(m) => write!(f, "not a whole JSON document: {m}"),
            ProfileError::FrameIndex(m) => f.write_str(m),
            ProfileError::Schema(s) if s.is_empty() => {
                write!(f, "no \"schema\": not an instr profile (expected {SCHEMA})")
            }
            ProfileError::Schema(s) => {
                write!(
                    f,
                    "schema \"{s}\" is not one this version reads ({})",
                    READABLE.join(", ")
                )
            }
        }
    }
}

impl std::error::Error for ProfileError {}

impl Profile {
    /// Reads a profile from its JSON text: this schema straight into its types, the earlier ones
    /// (frames written out in every stack) through a conversion to the frame table.
    pub fn from_json(text: &str) -> Result<Profile, ProfileError> {
        // The schema first, skimming the rest, so that another document gets the schema's message
        // rather than the first field it lacks; then the profile, straight into its types.
        #[derive(Deserialize)]
        struct Head {
            #[serde(default)]
            schema: String,
        }
        let head: Head =
            serde_json::from_str(text).map_err(|e| ProfileError::Json(e.to_string()))?;
        if !READABLE.contains(&head.schema.as_str()) {
            return Err(ProfileError::Schema(head.schema));
        }
        let json = |e: serde_json::Error| ProfileError::Json(e.to_string());
        let profile: Profile = if FRAMES_INLINE.contains(&head.schema.as_str()) {
            let mut v: Value = serde_json::from_str(text).map_err(json)?;
            frames_to_table(&mut v);
            // What is read is now this schema's layout, and is written as this schema.
            v["schema"] = Value::from(SCHEMA);
            serde_json::from_value(v).map_err(json)?
        } else {
            serde_json::from_str(text).map_err(json)?
        };
        profile.check_frame_indexes()?;
        Ok(profile)
    }

    /// Every stack's indexes are in the frame table: a renderer may then index it without a check.
    fn check_frame_indexes(&self) -> Result<(), ProfileError> {
        let n = self.frames.len();
        let site_stacks = self.sites.iter().map(|s| (&s.stack, "sites"));
        let paths = self
            .calls
            .iter()
            .flat_map(|c| &c.paths)
            .map(|p| (&p.frames, "calls.paths"));
        for (stack, place) in site_stacks.chain(paths) {
            if let Some(&bad) = stack.iter().find(|&&i| i as usize >= n) {
                return Err(ProfileError::FrameIndex(format!(
                    "{place}: frame {bad} is not in the frame table ({n} frames)"
                )));
            }
        }
        Ok(())
    }

    /// The JSON text, as the agent writes it: the document's fields one a line, and each element of an
    /// array (a frame, a site with its stack, a call path) on one line of its own.
    pub fn to_json(&self) -> String {
        String::from_utf8(self.to_json_bytes()).expect("serde_json writes UTF-8")
    }

    /// [`Profile::to_json`] as the bytes of a file: what the agent writes, without checking that tens
    /// of megabytes serde_json wrote are UTF-8 (2-3 ms at 100,000 sites).
    pub fn to_json_bytes(&self) -> Vec<u8> {
        // About what a site, a call path or a frame takes on its line: the buffer is then not copied
        // as it grows through tens of megabytes.
        let paths = self.calls.as_ref().map_or(0, |c| c.paths.len());
        let rows = self.sites.len() + paths + self.frames.len() + self.methods.len();
        let mut out = Vec::with_capacity(128 * rows + 4096);
        let mut ser = serde_json::Serializer::with_formatter(&mut out, RowsFormatter::default());
        self.serialize(&mut ser).expect("a profile is plain data");
        out.push(b'\n');
        out
    }

    /// The frames of a stack (indexes into [`Profile::frames`]), in the stack's order.
    pub fn stack<'a>(&'a self, ids: &'a [u32]) -> impl DoubleEndedIterator<Item = &'a Frame> + 'a {
        ids.iter().map(|&i| &self.frames[i as usize])
    }
}

/// Builds a frame table: each distinct frame once, in the order first met.
#[derive(Default, Debug, Clone)]
pub struct FrameTable {
    pub frames: Vec<Frame>,
    index: std::collections::HashMap<Frame, u32>,
}

impl FrameTable {
    /// A table that goes on from `frames` (a profile's, say), which must be distinct.
    pub fn from_frames(frames: Vec<Frame>) -> FrameTable {
        let index = frames
            .iter()
            .enumerate()
            .map(|(i, f)| (f.clone(), i as u32))
            .collect();
        FrameTable { frames, index }
    }

    /// The index of `frame`, added if it is new.
    pub fn intern(&mut self, frame: Frame) -> u32 {
        if let Some(&i) = self.index.get(&frame) {
            return i;
        }
        let i = self.frames.len() as u32;
        self.index.insert(frame.clone(), i);
        self.frames.push(frame);
        i
    }

    /// A call path's frame from its `Class.method` name (schema 1 wrote call paths so).
    pub fn intern_name(&mut self, name: &str) -> u32 {
        self.intern(Frame::from_name(name))
    }
}

/// Schema 1 to 2 on the JSON value: every frame of `sites[].stack` and every name of
/// `calls.paths[].frames` becomes an index into a new `frames` table.
fn frames_to_table(v: &mut Value) {
    let mut table = FrameTable::default();
    if let Some(Value::Array(sites)) = v.get_mut("sites") {
        for site in sites {
            if let Some(Value::Array(stack)) = site.get_mut("stack") {
                for f in stack.iter_mut() {
                    // A frame that is not one is left as it is, for the reader's error to name.
                    if let Ok(frame) = Frame::deserialize(&*f) {
                        *f = Value::from(table.intern(frame));
                    }
                }
            }
        }
    }
    if let Some(Value::Array(paths)) = v.pointer_mut("/calls/paths") {
        for path in paths {
            if let Some(Value::Array(frames)) = path.get_mut("frames") {
                for f in frames.iter_mut() {
                    if let Some(name) = f.as_str() {
                        *f = Value::from(table.intern_name(name));
                    }
                }
            }
        }
    }
    if let Value::Object(o) = v {
        let frames = serde_json::to_value(&table.frames).expect("frames are plain data");
        o.insert("frames".into(), frames);
    }
}

/// serde_json's pretty printer, except that what is inside an array is written on one line: a profile
/// of 100,000 stacks is then some 200,000 lines, each a frame, a site or a call path whole, rather than
/// millions of lines of one number or field, which is most of the time and size of the pretty form.
#[derive(Default)]
struct RowsFormatter {
    /// Per open array or object: whether it is written on one line, and whether it has a value yet.
    open: Vec<(bool, bool)>,
    /// Open arrays and objects written over several lines: the indentation.
    indent: usize,
    /// The next container opened is an array's element.
    in_array: bool,
}

impl RowsFormatter {
    fn begin<W: ?Sized + io::Write>(&mut self, w: &mut W, bracket: &[u8]) -> io::Result<()> {
        let inline = self.in_array || self.open.last().is_some_and(|o| o.0);
        self.open.push((inline, false));
        if !inline {
            self.indent += 1;
        }
        w.write_all(bracket)
    }

    fn end<W: ?Sized + io::Write>(&mut self, w: &mut W, bracket: &[u8]) -> io::Result<()> {
        let (inline, has_value) = self.open.pop().unwrap_or((true, false));
        if !inline {
            self.indent -= 1;
            if has_value {
                self.newline(w)?;
            }
        }
        w.write_all(bracket)
    }

    fn newline<W: ?Sized + io::Write>(&self, w: &mut W) -> io::Result<()> {
        w.write_all(b"\n")?;
        for _ in 0..self.indent {
            w.write_all(b"  ")?;
        }
        Ok(())
    }

    /// Before an element or a key: the separator, and on its own line unless the container is inline.
    fn item<W: ?Sized + io::Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        let inline = match self.open.last_mut() {
            Some(o) => {
                o.1 = true;
                o.0
            }
            None => true,
        };
        if !first {
            w.write_all(b",")?;
        }
        if !inline {
            self.newline(w)?;
        }
        Ok(())
    }
}

/// One method of the formatter trait that calls one of the formatter's own.
macro_rules! formats {
    ($name:ident($($arg:ident: $ty:ty),*) => |$this:ident, $w:ident| $body:expr) => {
        fn $name<W: ?Sized + io::Write>(&mut self, $w: &mut W, $($arg: $ty),*) -> io::Result<()> {
            let $this = self;
            $body
        }
    };
}

impl serde_json::ser::Formatter for RowsFormatter {
    formats!(begin_array() => |f, w| f.begin(w, b"["));
    formats!(end_array() => |f, w| f.end(w, b"]"));
    formats!(begin_object() => |f, w| f.begin(w, b"{"));
    formats!(end_object() => |f, w| f.end(w, b"}"));
    formats!(begin_array_value(first: bool) => |f, w| {
        f.in_array = true;
        f.item(w, first)
    });
    formats!(end_array_value() => |f, _w| {
        f.in_array = false;
        Ok(())
    });
    formats!(begin_object_key(first: bool) => |f, w| {
        f.in_array = false;
        f.item(w, first)
    });
    formats!(begin_object_value() => |f, w| {
        let inline = f.open.last().is_some_and(|o| o.0);
        w.write_all(if inline { b":" } else { b": " })
    });
}

impl Frame {
    /// `java.lang.String.valueOf`: the name a flame graph shows. A frame with no class (a call path's
    /// `(other paths)`) is its method alone.
    pub fn name(&self) -> String {
        if self.class.is_empty() {
            self.method.clone()
        } else {
            format!("{}.{}", self.class, self.method)
        }
    }

    /// A frame known by its `Class.method` name alone: split at the last `.` (a Java method name has
    /// none); a name without one is a method of no class.
    pub fn from_name(name: &str) -> Frame {
        let (class, method) = name.rsplit_once('.').unwrap_or(("", name));
        Frame {
            class: class.into(),
            method: method.into(),
            ..Frame::default()
        }
    }
}
