//! The profile: what one run of the agent measured, as plain data. Its JSON form is the agent's
//! `PREFIX.json` report (docs/REPORTS.md). The parts the renderers read are typed; everything else the
//! report holds is kept as it was read (`rest`), so that reading a report and writing it again loses
//! nothing, and a field added to the report needs no change here until a renderer uses it.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The schema this crate writes. `instr-heap/1`, the report's name before it carried calls paths, is
/// read too: it is the same layout without them.
pub const SCHEMA: &str = "instr-profile/1";
const READABLE: [&str; 2] = [SCHEMA, "instr-heap/1"];

#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct Profile {
    pub schema: String,
    #[serde(default)]
    pub pid: u32,
    /// Frames per allocation site: 0 per class only, 1 the allocating method, more: stacks.
    #[serde(default)]
    pub depth: u32,
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
    /// The allocating frame first.
    #[serde(default)]
    pub stack: Vec<Frame>,
    /// The count is this stack's estimated share of the site's exact count (`stacks=SIZE`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stack_estimated: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_instances: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_bytes: Option<u64>,
}

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
    /// `Class.method` names, the outermost call first.
    pub frames: Vec<String>,
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

/// Why a file is not a profile: one line, naming the problem (the caller adds the file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProfileError {
    /// Not JSON, or cut short: the parser's message, with line and column.
    Json(String),
    /// JSON, but not a profile of a schema this version reads.
    Schema(String),
}

impl std::fmt::Display for ProfileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProfileError::Json(m) => write!(f, "not a whole JSON document: {m}"),
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
    /// Reads a profile from its JSON text.
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
        serde_json::from_str(text).map_err(|e| ProfileError::Json(e.to_string()))
    }

    /// The JSON text, as the agent writes it.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("a profile is plain data");
        s.push('\n');
        s
    }
}

impl Frame {
    /// `java.lang.String.valueOf`: the name a flame graph shows.
    pub fn name(&self) -> String {
        format!("{}.{}", self.class, self.method)
    }
}
