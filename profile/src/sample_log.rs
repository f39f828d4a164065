//! The sample log (`PREFIX.samples`, docs/SAMPLE-LOG.md): what the sampler saw, appended by the agent
//! as the program runs, so that a JVM killed with `kill -9` leaves every sample up to the last flush.
//! The agent writes [`Record`]s with [`encode`]; `instr report` reads them back with [`read`] and rebuilds
//! the same `samples` section through the same [`Aggregate`] the agent keeps in memory, so the reports
//! made offline are those the agent would have written at exit.
//!
//! Layout: the 8 bytes `INSTRSMP`, a little-endian u16 version, then records, each a tag byte, a u32
//! payload length and the payload. Names (methods, threads) and stacks are written once and referred to
//! by number, so a sample costs a few bytes. A reader skips tags it does not know, and stops at a record
//! cut short (the tail a killed process may leave).

use std::collections::HashMap;

use crate::model::{Profile, SCHEMA};
use crate::samples::{SampledFrame, SampledStack, Samples, CPU, WALL};

pub const MAGIC: &[u8; 8] = b"INSTRSMP";
pub const VERSION: u16 = 1;

/// A frame of a logged stack: the method's number, the source line (-1: unknown), and the frame type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LogFrame {
    pub method: u32,
    pub line: i32,
    pub frame_type: FrameType,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FrameType {
    Java = 0,
    Native = 1,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Cpu = 0,
    Wall = 1,
}

/// A method's number in the log, and its names.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LogMethod {
    pub id: u32,
    /// The Java name (`java.lang.String`); `(unknown)` for a method of a class unloaded before it was
    /// resolved.
    pub class: String,
    pub method: String,
    pub descriptor: String,
}

/// Who wrote a log and how it sampled.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Start {
    pub pid: u32,
    pub engine: String,
    pub cpu_interval_ns: u64,
    pub wall_interval_ns: u64,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Record {
    /// First record.
    Start(Start),
    Method(LogMethod),
    Thread {
        id: u32,
        name: String,
    },
    /// A distinct stack, the leaf first.
    Stack {
        id: u32,
        frames: Vec<LogFrame>,
    },
    /// `count` more samples of `kind` of this thread and stack.
    Samples {
        kind: Kind,
        thread: u32,
        stack: u32,
        count: u32,
    },
    /// The loss counters so far (cumulative: the last one read wins).
    Counters {
        dropped: u64,
        unknown_frames: u64,
        /// (reason code, count): AsyncGetCallTrace's codes (0 and below) and the agent's own.
        failed: Vec<(i32, u64)>,
    },
}

const START: u8 = 1;
const METHOD: u8 = 2;
const THREAD: u8 = 3;
const STACK: u8 = 4;
const SAMPLES: u8 = 5;
const COUNTERS: u8 = 6;

/// The file's first bytes.
pub fn header() -> Vec<u8> {
    let mut v = MAGIC.to_vec();
    v.extend(VERSION.to_le_bytes());
    v
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend((s.len() as u32).to_le_bytes());
    out.extend(s.as_bytes());
}

/// Appends one record to `out`.
pub fn encode(r: &Record, out: &mut Vec<u8>) {
    let mut p = Vec::new();
    let tag = match r {
        Record::Start(start) => {
            p.extend(start.pid.to_le_bytes());
            p.extend(start.cpu_interval_ns.to_le_bytes());
            p.extend(start.wall_interval_ns.to_le_bytes());
            put_str(&mut p, &start.engine);
            START
        }
        Record::Method(m) => {
            p.extend(m.id.to_le_bytes());
            put_str(&mut p, &m.class);
            put_str(&mut p, &m.method);
            put_str(&mut p, &m.descriptor);
            METHOD
        }
        Record::Thread { id, name } => {
            p.extend(id.to_le_bytes());
            put_str(&mut p, name);
            THREAD
        }
        Record::Stack { id, frames } => {
            p.extend(id.to_le_bytes());
            p.extend((frames.len() as u32).to_le_bytes());
            for f in frames {
                p.extend(f.method.to_le_bytes());
                p.extend(f.line.to_le_bytes());
                p.push(f.frame_type as u8);
            }
            STACK
        }
        Record::Samples {
            kind,
            thread,
            stack,
            count,
        } => {
            p.push(*kind as u8);
            p.extend(thread.to_le_bytes());
            p.extend(stack.to_le_bytes());
            p.extend(count.to_le_bytes());
            SAMPLES
        }
        Record::Counters {
            dropped,
            unknown_frames,
            failed,
        } => {
            p.extend(dropped.to_le_bytes());
            p.extend(unknown_frames.to_le_bytes());
            p.extend((failed.len() as u32).to_le_bytes());
            for (code, n) in failed {
                p.extend(code.to_le_bytes());
                p.extend(n.to_le_bytes());
            }
            COUNTERS
        }
    };
    out.push(tag);
    out.extend((p.len() as u32).to_le_bytes());
    out.extend(p);
}

/// A cursor over one record's payload; every read fails rather than panics on short input.
struct Cursor<'a>(&'a [u8]);

impl Cursor<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    fn u32(&mut self) -> Option<u32> {
        self.take(4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
    }
    fn i32(&mut self) -> Option<i32> {
        self.take(4)
            .map(|b| i32::from_le_bytes(b.try_into().unwrap()))
    }
    fn u64(&mut self) -> Option<u64> {
        self.take(8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
    }
    fn str(&mut self) -> Option<String> {
        let n = self.u32()? as usize;
        self.take(n)
            .map(|b| String::from_utf8_lossy(b).into_owned())
    }
}

fn decode(tag: u8, payload: &[u8]) -> Option<Option<Record>> {
    let mut c = Cursor(payload);
    Some(Some(match tag {
        START => Record::Start(Start {
            pid: c.u32()?,
            cpu_interval_ns: c.u64()?,
            wall_interval_ns: c.u64()?,
            engine: c.str()?,
        }),
        METHOD => Record::Method(LogMethod {
            id: c.u32()?,
            class: c.str()?,
            method: c.str()?,
            descriptor: c.str()?,
        }),
        THREAD => Record::Thread {
            id: c.u32()?,
            name: c.str()?,
        },
        STACK => {
            let id = c.u32()?;
            let n = c.u32()? as usize;
            let mut frames = Vec::with_capacity(n.min(c.0.len() / 9));
            for _ in 0..n {
                frames.push(LogFrame {
                    method: c.u32()?,
                    line: c.i32()?,
                    frame_type: if c.u8()? == 1 {
                        FrameType::Native
                    } else {
                        FrameType::Java
                    },
                });
            }
            Record::Stack { id, frames }
        }
        SAMPLES => Record::Samples {
            kind: if c.u8()? == 1 { Kind::Wall } else { Kind::Cpu },
            thread: c.u32()?,
            stack: c.u32()?,
            count: c.u32()?,
        },
        COUNTERS => {
            let dropped = c.u64()?;
            let unknown_frames = c.u64()?;
            let n = c.u32()? as usize;
            let mut failed = Vec::with_capacity(n.min(c.0.len() / 12));
            for _ in 0..n {
                failed.push((c.i32()?, c.u64()?));
            }
            Record::Counters {
                dropped,
                unknown_frames,
                failed,
            }
        }
        // A newer writer's record: skipped.
        _ => return Some(None),
    }))
}

/// Whether `bytes` start like a sample log.
pub fn is_sample_log(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC)
}

/// What a log held: its records, and whether it ended in the middle of one (a killed writer).
#[derive(Debug)]
pub struct LogContents {
    pub records: Vec<Record>,
    pub truncated: bool,
}

/// Reads a whole log. Err: one line naming the problem (not a log, or a version this reader predates).
pub fn read(bytes: &[u8]) -> Result<LogContents, String> {
    if !is_sample_log(bytes) {
        return Err("not an instr sample log (no INSTRSMP header)".into());
    }
    let mut c = Cursor(&bytes[MAGIC.len()..]);
    let version = c
        .take(2)
        .map(|b| u16::from_le_bytes([b[0], b[1]]))
        .ok_or("the sample log ends inside its header")?;
    if version != VERSION {
        return Err(format!(
            "sample log version {version} is not one this version reads ({VERSION})"
        ));
    }
    let mut records = Vec::new();
    loop {
        if c.0.is_empty() {
            return Ok(LogContents {
                records,
                truncated: false,
            });
        }
        let parsed = (|| {
            let tag = c.u8()?;
            let len = c.u32()? as usize;
            let payload = c.take(len)?;
            decode(tag, payload)
        })();
        match parsed {
            Some(Some(r)) => records.push(r),
            Some(None) => {}
            None => {
                return Ok(LogContents {
                    records,
                    truncated: true,
                })
            }
        }
    }
}

/// The name of a walk failure code in reports.
pub fn failure_name(code: i32) -> String {
    match code {
        1 => "no_jni_env",
        2 => "not_running",
        0 => "no_java_frame",
        -1 => "no_class_load",
        -2 => "gc_active",
        -3 => "unknown_not_java",
        -4 => "not_walkable_not_java",
        -5 => "unknown_java",
        -6 => "not_walkable_java",
        -7 => "unknown_state",
        -8 => "thread_exit",
        -9 => "deopt",
        -10 => "safepoint",
        other => return format!("code_{other}"),
    }
    .to_string()
}

/// Everything the records said, folded: what the agent keeps in memory while it writes the log, and
/// what a reader rebuilds from it.
#[derive(Default)]
pub struct Aggregate {
    start: Start,
    methods: HashMap<u32, LogMethod>,
    threads: HashMap<u32, String>,
    stacks: HashMap<u32, Vec<LogFrame>>,
    counts: HashMap<(Kind, u32, u32), u64>,
    dropped: u64,
    unknown_frames: u64,
    failed: Vec<(i32, u64)>,
}

impl Aggregate {
    pub fn apply(&mut self, r: &Record) {
        match r {
            Record::Start(start) => self.start = start.clone(),
            Record::Method(m) => {
                self.methods.insert(m.id, m.clone());
            }
            Record::Thread { id, name } => {
                self.threads.insert(*id, name.clone());
            }
            Record::Stack { id, frames } => {
                self.stacks.insert(*id, frames.clone());
            }
            Record::Samples {
                kind,
                thread,
                stack,
                count,
            } => *self.counts.entry((*kind, *thread, *stack)).or_default() += u64::from(*count),
            Record::Counters {
                dropped,
                unknown_frames,
                failed,
            } => {
                self.dropped = *dropped;
                self.unknown_frames = *unknown_frames;
                self.failed = failed.clone();
            }
        }
    }

    /// The profile's `samples` section.
    pub fn samples(&self) -> Samples {
        let frame = |f: &LogFrame| {
            let m = self
                .methods
                .get(&f.method)
                .cloned()
                .unwrap_or_else(|| LogMethod {
                    id: f.method,
                    class: "?".into(),
                    method: "?".into(),
                    descriptor: String::new(),
                });
            SampledFrame {
                class: m.class,
                method: m.method,
                descriptor: m.descriptor,
                line: (f.line >= 0).then_some(i64::from(f.line)),
                frame_type: match f.frame_type {
                    FrameType::Java => "java",
                    FrameType::Native => "native",
                }
                .into(),
            }
        };
        let mut stacks: Vec<SampledStack> = self
            .counts
            .iter()
            .map(|(&(kind, thread, stack), &n)| SampledStack {
                kind: match kind {
                    Kind::Cpu => CPU,
                    Kind::Wall => WALL,
                }
                .into(),
                thread: self
                    .threads
                    .get(&thread)
                    .cloned()
                    .unwrap_or_else(|| format!("thread#{thread}")),
                samples: n,
                frames: self
                    .stacks
                    .get(&stack)
                    .map(|fs| fs.iter().map(frame).collect())
                    .unwrap_or_default(),
            })
            .collect();
        stacks.sort_by(|a, b| {
            b.samples
                .cmp(&a.samples)
                .then_with(|| a.kind.cmp(&b.kind))
                .then_with(|| a.thread.cmp(&b.thread))
                .then_with(|| frames_key(&a.frames).cmp(&frames_key(&b.frames)))
        });
        let total = |kind: &str| {
            stacks
                .iter()
                .filter(|s| s.kind == kind)
                .map(|s| s.samples)
                .sum()
        };
        Samples {
            engine: self.start.engine.clone(),
            cpu_interval_ns: self.start.cpu_interval_ns,
            wall_interval_ns: self.start.wall_interval_ns,
            cpu_samples: total(CPU),
            wall_samples: total(WALL),
            dropped: self.dropped,
            failed: self
                .failed
                .iter()
                .filter(|(_, n)| *n > 0)
                .map(|&(code, n)| (failure_name(code), n))
                .collect(),
            unknown_frames: self.unknown_frames,
            stacks,
            rest: Default::default(),
        }
    }

    /// A profile holding only the samples (the log's reader: no counts were logged), the method rows
    /// merged from them.
    pub fn profile(&self) -> Profile {
        let mut p = Profile {
            schema: SCHEMA.into(),
            pid: self.start.pid,
            samples: Some(self.samples()),
            ..Default::default()
        };
        crate::samples::merge_into_methods(&mut p);
        p
    }
}

fn frames_key(frames: &[SampledFrame]) -> Vec<(&str, &str, Option<i64>)> {
    frames
        .iter()
        .map(|f| (f.class.as_str(), f.method.as_str(), f.line))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records() -> Vec<Record> {
        vec![
            Record::Start(Start {
                pid: 42,
                engine: "agct".into(),
                cpu_interval_ns: 1_000_000,
                wall_interval_ns: 0,
            }),
            Record::Method(LogMethod {
                id: 1,
                class: "A".into(),
                method: "hot".into(),
                descriptor: "()V".into(),
            }),
            Record::Thread {
                id: 3,
                name: "worker".into(),
            },
            Record::Stack {
                id: 9,
                frames: vec![LogFrame {
                    method: 1,
                    line: 12,
                    frame_type: FrameType::Java,
                }],
            },
            Record::Samples {
                kind: Kind::Cpu,
                thread: 3,
                stack: 9,
                count: 5,
            },
            Record::Counters {
                dropped: 2,
                unknown_frames: 0,
                failed: vec![(-2, 7)],
            },
        ]
    }

    #[test]
    fn a_log_reads_back_to_the_records_written_and_a_cut_tail_is_dropped() {
        let mut bytes = header();
        for r in records() {
            encode(&r, &mut bytes);
        }
        let whole = read(&bytes).unwrap();
        assert_eq!(whole.records, records());
        assert!(!whole.truncated);
        // An unknown record between them is skipped.
        let mut with_unknown = bytes.clone();
        with_unknown.extend([99, 2, 0, 0, 0, 7, 7]);
        assert_eq!(read(&with_unknown).unwrap().records.len(), 6);
        for cut in 1..12 {
            let part = read(&bytes[..bytes.len() - cut]).unwrap();
            assert!(part.truncated);
            assert_eq!(part.records, records()[..5]);
        }
        assert!(read(b"INSTRSMP\x09\x00").unwrap_err().contains("version 9"));
        assert!(read(b"{}").unwrap_err().contains("not an instr sample log"));
    }

    #[test]
    fn the_aggregate_makes_the_samples_section() {
        let mut a = Aggregate::default();
        for r in records() {
            a.apply(&r);
        }
        let p = a.profile();
        let s = p.samples.as_ref().unwrap();
        assert_eq!(s.cpu_samples, 5);
        assert_eq!(s.failed.get("gc_active"), Some(&7));
        assert_eq!(s.stacks[0].thread, "worker");
        assert_eq!(s.stacks[0].frames[0].line, Some(12));
        assert_eq!(
            p.methods[0].rest["self_cpu_ns"],
            serde_json::json!(5_000_000)
        );
    }
}
