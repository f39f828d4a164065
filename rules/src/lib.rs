//! Rules files: the YAML that selects which probes are on and which classes, methods and allocation
//! sites they apply to. `rules/README.md` documents the schema and the pattern language.
//!
//! [`Rules`] is what the agent and `rewrite-class` hold after parsing; it answers the rewriter's
//! [`Selection`] questions and the agent's run-time allocation-site filter.

#![forbid(unsafe_code)]

mod error;
mod filter;
mod glob;
mod pattern;
mod schema;
mod validate;

use std::path::Path;

use instr_rewriter::probes::Selection;

pub use error::{printable_line, RulesError};
pub use pattern::{Pattern, PATTERN_SYNTAX};
pub use validate::check_path_template;

use filter::Filter;

/// `depth` when a rules file does not set it.
pub const DEFAULT_DEPTH: u32 = 4;
/// The largest `depth` accepted.
pub const MAX_DEPTH: u32 = 64;
/// `output` when a rules file does not set it.
pub const DEFAULT_OUTPUT: &str = "instr-%p";

/// `threads.trace.file` when a rules file enables the trace without naming a file.
pub const DEFAULT_TRACE: &str = "instr-%p.xml";
/// The largest rules file read, in bytes: the biggest shipped file is a few KB.
pub const MAX_RULES_BYTES: u64 = 1 << 20;
/// The longest report or trace path template accepted: Linux's PATH_MAX.
pub const MAX_PATH_BYTES: usize = 4096;

/// The largest `threads.deadlocks.watch_ms` accepted (one hour).
pub const MAX_WATCH_MS: u32 = 3_600_000;

/// The `threads` section: the thread and monitor profiler. All off by default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ThreadRules {
    /// Thread start/end, CPU time, monitor dumps on demand (DataDumpRequest).
    pub enabled: bool,
    /// Contended enter/entered and wait/waited events (MONITOR TIME).
    pub monitors: bool,
    /// Milliseconds between two checks of the deadlock watcher; 0: on demand only.
    pub watch_ms: u32,
    /// The XML trace's path template (`%p`: pid), when the trace is on.
    pub trace: Option<String>,
    /// Whether the trace holds object allocations and frees (forces a stack walk per object).
    pub trace_allocations: bool,
    /// Records in the trace's ring for GC and free events (0: the default); the `trace-ring` option.
    pub trace_ring: u32,
}

/// How the sampler takes a thread's stack.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SamplingEngine {
    /// AsyncGetCallTrace from a SIGPROF handler on the sampled thread: no safepoint bias.
    #[default]
    Agct,
    /// GetAllStackTraces from an agent thread: every sample is taken at a safepoint, so it is biased
    /// towards the places that poll for one. For comparison only.
    Jvmti,
}

impl SamplingEngine {
    pub fn parse(value: &str) -> Result<SamplingEngine, String> {
        match value {
            "agct" => Ok(SamplingEngine::Agct),
            "jvmti" => Ok(SamplingEngine::Jvmti),
            _ => Err(format!("unknown engine `{value}` (known: agct, jvmti)")),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            SamplingEngine::Agct => "agct",
            SamplingEngine::Jvmti => "jvmti",
        }
    }
}

/// The `sampling` section: CPU and wall-clock sampling intervals in nanoseconds (0: off).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SamplingRules {
    pub cpu_ns: u64,
    pub wall_ns: u64,
    pub engine: SamplingEngine,
    /// `debug-non-safepoints=on`: listen to CompiledMethodLoad, which makes HotSpot keep debug
    /// information at every instruction of compiled code (precise frames, dearer compiles).
    pub debug_non_safepoints: bool,
}

impl SamplingRules {
    pub fn enabled(&self) -> bool {
        self.cpu_ns > 0 || self.wall_ns > 0
    }
}

/// The shortest sampling interval accepted: a signal every 10 us already costs more than it measures.
pub const MIN_INTERVAL_NS: u64 = 10_000;
/// The longest sampling interval accepted (one minute).
pub const MAX_INTERVAL_NS: u64 = 60_000_000_000;
/// What an interval looks like, for the one-line errors.
pub const INTERVAL_HINT: &str =
    "an interval is a whole number with a unit, ns, us, ms or s, from 10us to 60s, e.g. 1ms or 100us";

/// `1ms`, `100us`, `2s`, `500000ns` -> nanoseconds, within [`MIN_INTERVAL_NS`]..=[`MAX_INTERVAL_NS`].
pub fn parse_interval(value: &str) -> Result<u64, String> {
    let v = value.trim();
    let digits = v.len() - v.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let (number, unit) = v.split_at(digits);
    let scale = match unit {
        "ns" => 1,
        "us" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        _ => {
            return Err(format!(
                "`{value}` is not an interval with a unit (ns, us, ms, s)"
            ))
        }
    };
    number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
        .filter(|ns| (MIN_INTERVAL_NS..=MAX_INTERVAL_NS).contains(ns))
        .ok_or_else(|| format!("`{value}` is not an interval from 10us to 60s"))
}

/// Method access flags that the method filter looks at.
pub const ACC_BRIDGE: u16 = 0x0040;
pub const ACC_SYNTHETIC: u16 = 0x1000;

/// A parsed and validated rules file.
#[derive(Debug, Clone)]
pub struct Rules {
    objects: bool,
    arrays: bool,
    methods: bool,
    method_filter: Filter,
    bridges: bool,
    synthetic: bool,
    allocation_filter: Filter,
    depth: u32,
    /// Live-object tracking: 0 off, 1 exact, N sampled one in N.
    live: u32,
    /// Live-object tracking by the JVM's heap sampler: one sample per this many allocated bytes on
    /// average; 0 off. Exclusive with `live`.
    live_bytes: u32,
    output: String,
    threads: ThreadRules,
    sampling: SamplingRules,
}

impl Rules {
    /// Reads and parses a rules file; errors name the file as given. Only a regular file of at most
    /// [`MAX_RULES_BYTES`] is read: the agent reads it inside `Agent_OnLoad`, where `/dev/zero` would grow
    /// the JVM without bound and a FIFO or a terminal would block it forever, before it ever starts.
    pub fn from_file(path: &Path) -> Result<Rules, RulesError> {
        let origin = path.display().to_string();
        let refuse = |problem: String| {
            RulesError::whole(
                &origin,
                problem,
                "check the path given to the agent's `rules=` option or `--rules`".to_owned(),
            )
        };
        // Checked before opening: opening a FIFO for reading blocks until a writer comes.
        let metadata = std::fs::metadata(path)
            .map_err(|error| refuse(format!("cannot read the rules file: {error}")))?;
        check_rules_file(&metadata).map_err(&refuse)?;
        let file = std::fs::File::open(path)
            .map_err(|error| refuse(format!("cannot read the rules file: {error}")))?;
        // Again on what was opened, in case the path changed in between.
        check_rules_file(
            &file
                .metadata()
                .map_err(|error| refuse(format!("cannot read the rules file: {error}")))?,
        )
        .map_err(&refuse)?;
        let mut bytes = Vec::new();
        // One byte more than allowed tells a file that grew past the limit since the check.
        std::io::Read::read_to_end(
            &mut std::io::Read::take(file, MAX_RULES_BYTES + 1),
            &mut bytes,
        )
        .map_err(|error| refuse(format!("cannot read the rules file: {error}")))?;
        if bytes.len() as u64 > MAX_RULES_BYTES {
            return Err(refuse(format!(
                "the rules file is larger than {MAX_RULES_BYTES} bytes"
            )));
        }
        let text = String::from_utf8(bytes).map_err(|error| {
            let at = error.utf8_error().valid_up_to();
            let bytes = error.as_bytes();
            let (line, column, start) = utf8_position(bytes, at);
            // The line up to the bad byte, which names the key whose value holds it.
            let before = String::from_utf8_lossy(&bytes[start..at]);
            RulesError::at(
                &origin,
                line,
                column,
                format!(
                    "the file is not UTF-8 (invalid byte 0x{:02x} at offset {at}, after `{}`)",
                    bytes[at],
                    before.trim()
                ),
                "save the rules file as UTF-8".to_owned(),
            )
        })?;
        Rules::parse(&text, &origin)
    }

    /// Parses rules from `text`; `origin` names it in error messages.
    pub fn parse(text: &str, origin: &str) -> Result<Rules, RulesError> {
        let mut options = serde_saphyr::Options::default();
        // `on`/`yes` as booleans surprise people; require the spelling the README uses.
        options.strict_booleans = true;
        options.duplicate_keys = serde_saphyr::DuplicateKeyPolicy::Error;
        options.with_snippet = false;
        let file: Option<schema::RulesFile> = serde_saphyr::from_str_with_options(text, options)
            .map_err(|error| RulesError::from_yaml(origin, text, &error))?;
        // An empty file, or one of comments only, is no document at all: it selects nothing.
        validate::build(file.unwrap_or_default(), origin)
    }

    /// Rules that select nothing: every probe off. Equal to an empty rules file.
    pub fn empty() -> Rules {
        Rules {
            objects: false,
            arrays: false,
            methods: false,
            method_filter: Filter::default(),
            bridges: false,
            synthetic: false,
            allocation_filter: Filter::everything(),
            depth: DEFAULT_DEPTH,
            live: 0,
            live_bytes: 0,
            output: DEFAULT_OUTPUT.to_owned(),
            threads: ThreadRules::default(),
            sampling: SamplingRules::default(),
        }
    }

    /// Whether the `java.lang.Object.<init>` allocation probe is on.
    pub fn objects(&self) -> bool {
        self.objects
    }

    /// Whether array-allocation sites get probes.
    pub fn arrays(&self) -> bool {
        self.arrays
    }

    /// Whether method entry/exit probes are on.
    pub fn methods(&self) -> bool {
        self.methods
    }

    /// Whether each `new` gets a site probe: objects are tracked and the depth asks for at least the
    /// allocating frame. At depth 0 objects are counted per class only.
    pub fn object_sites(&self) -> bool {
        self.objects && self.depth > 0
    }

    /// Live-object tracking: 0 off, 1 every object (exact), N one in N (reports scale by N).
    pub fn live(&self) -> u32 {
        self.live
    }

    /// Live-object tracking by heap sampling: the mean bytes between samples; 0 off.
    pub fn live_bytes(&self) -> u32 {
        self.live_bytes
    }

    /// Whether objects built at a `new` site are handed to the agent once constructed, to be tagged
    /// with their site for live tracking.
    pub fn live_object_sites(&self) -> bool {
        self.object_sites() && self.live > 0
    }

    /// Stack frames recorded per allocation site.
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// The report path template as written (`%p` not yet expanded).
    pub fn output(&self) -> &str {
        &self.output
    }

    /// The report path prefix for process `pid`: `%p` becomes the pid and `%%` a `%`. Any other
    /// `%` is kept as is (only templates set through [`Rules::set_output`] can hold one).
    pub fn output_path(&self, pid: u32) -> String {
        expand_template(&self.output, pid)
    }

    /// The `threads` section (all off when the file has none).
    pub fn threads(&self) -> &ThreadRules {
        &self.threads
    }

    /// The `sampling` section (off when the file has none).
    pub fn sampling(&self) -> &SamplingRules {
        &self.sampling
    }

    /// Overrides the `sampling` section from the agent's inline options (already validated there).
    pub fn set_sampling(&mut self, sampling: SamplingRules) {
        self.sampling = sampling;
    }

    /// Overrides the `threads` section from the agent's inline options. A `watch_ms` out of range
    /// is an error; a bad trace template is checked like `output`.
    pub fn set_threads(&mut self, threads: ThreadRules) -> Result<(), RulesError> {
        if validate::watch_in_range(i64::from(threads.watch_ms)).is_none() {
            return Err(RulesError::whole(
                "agent option `deadlocks`",
                format!("watch interval {} ms is out of range", threads.watch_ms),
                validate::watch_hint(),
            ));
        }
        if let Some(trace) = &threads.trace {
            check_path_template("trace", trace).map_err(|problem| {
                RulesError::whole(
                    "agent option `trace`",
                    problem,
                    validate::output_hint("trace", DEFAULT_TRACE),
                )
            })?;
        }
        self.threads = threads;
        Ok(())
    }

    /// Allocation-site filter, applied by the agent at runtime for Object.<init> allocations: whether
    /// an allocation made in this method (the one that executed `new`) is recorded. Names are internal
    /// (`java/lang/String`).
    pub fn allocation_site_selected(
        &self,
        class_internal: &[u8],
        method: &[u8],
        descriptor: &[u8],
    ) -> bool {
        self.allocation_filter
            .selects(class_internal, method, descriptor)
    }

    /// Whether the allocation-site filter may select an allocation made in some method of `class`
    /// (internal name), whatever the probes.
    pub fn allocations_may_select(&self, class_internal: &[u8]) -> bool {
        self.allocation_filter.may_select_in(class_internal)
    }

    /// Same for a method probe, with bridge/synthetic/lambda logic. access = JVM access flags
    /// (ACC_BRIDGE 0x0040, ACC_SYNTHETIC 0x1000). A bridge method is governed by `bridges` alone,
    /// though javac also marks it synthetic; any other synthetic method by `synthetic`, except lambda
    /// bodies (`lambda$…`), which hold user code and are selected like ordinary methods.
    pub fn method_selected(
        &self,
        class_internal: &[u8],
        method: &[u8],
        descriptor: &[u8],
        access: u16,
    ) -> bool {
        let kind_allowed = if access & ACC_BRIDGE != 0 {
            self.bridges
        } else if access & ACC_SYNTHETIC != 0 {
            self.synthetic || method.starts_with(b"lambda$")
        } else {
            true
        };
        kind_allowed
            && self
                .method_filter
                .selects(class_internal, method, descriptor)
    }

    /// Overrides `depth` from the agent's inline option string (`depth=8`).
    pub fn set_depth(&mut self, depth: u32) -> Result<(), RulesError> {
        match validate::depth_in_range(i64::from(depth)) {
            Some(depth) => {
                self.depth = depth;
                Ok(())
            }
            None => Err(RulesError::whole(
                "agent option `depth`",
                format!("depth {depth} is out of range"),
                validate::depth_hint(),
            )),
        }
    }

    /// Overrides `live` from the agent's inline option string (`live=exact`, `live=100`).
    pub fn set_live(&mut self, live: u32) {
        self.live = live;
        self.live_bytes = 0;
    }

    /// Overrides the live tracking with heap sampling every `bytes` on average (`live=512k`).
    pub fn set_live_bytes(&mut self, bytes: u32) {
        self.live_bytes = bytes;
        self.live = 0;
    }

    /// Overrides `output` from the agent's inline option string (`file=out-%p` or `output=…`), checked
    /// as the rules file's `output` is; `key` is the option's name, for the message.
    pub fn set_output(&mut self, key: &str, output: String) -> Result<(), RulesError> {
        check_path_template(key, &output).map_err(|problem| {
            RulesError::whole(
                &format!("agent option `{key}`"),
                problem,
                validate::output_hint(key, DEFAULT_OUTPUT),
            )
        })?;
        self.output = output;
        Ok(())
    }
}

/// Refuses what is not a regular file, or is one too large to be a rules file.
fn check_rules_file(metadata: &std::fs::Metadata) -> Result<(), String> {
    if !metadata.is_file() {
        let kind = metadata.file_type();
        let what = if kind.is_dir() {
            "a directory"
        } else {
            use std::os::unix::fs::FileTypeExt;
            if kind.is_fifo() {
                "a FIFO"
            } else if kind.is_char_device() || kind.is_block_device() {
                "a device"
            } else if kind.is_socket() {
                "a socket"
            } else {
                "not a regular file"
            }
        };
        return Err(format!("the rules file is {what}, not a regular file"));
    }
    if metadata.len() > MAX_RULES_BYTES {
        return Err(format!(
            "the rules file is {} bytes, larger than {MAX_RULES_BYTES}",
            metadata.len()
        ));
    }
    Ok(())
}

/// 1-based line and column (in characters) of byte `at`, and where its line starts.
fn utf8_position(bytes: &[u8], at: usize) -> (u64, u64, usize) {
    let start = bytes[..at]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |newline| newline + 1);
    let line = bytes[..start].iter().filter(|&&b| b == b'\n').count() as u64 + 1;
    // bytes[..at] is valid UTF-8: that is what valid_up_to means.
    let column = String::from_utf8_lossy(&bytes[start..at]).chars().count() as u64 + 1;
    (line, column, start)
}

/// `%p` becomes `pid` and `%%` a `%`; any other `%` is kept as is.
pub fn expand_template(template: &str, pid: u32) -> String {
    let mut path = String::with_capacity(template.len() + 8);
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('%', Some('p')) => {
                path.push_str(&pid.to_string());
                chars.next();
            }
            ('%', Some('%')) => {
                path.push('%');
                chars.next();
            }
            _ => path.push(c),
        }
    }
    path
}

impl Default for Rules {
    fn default() -> Rules {
        Rules::empty()
    }
}

impl Selection for Rules {
    fn objects(&self) -> bool {
        self.objects
    }

    fn class_wanted(&self, class: &[u8]) -> bool {
        ((self.arrays || self.object_sites()) && self.allocation_filter.may_select_in(class))
            || (self.methods && self.method_filter.may_select_in(class))
    }

    // Allocation sites are fixed in the bytecode, so they are filtered here, at rewrite time: a
    // site the rules exclude gets no probe and costs nothing.
    fn arrays(&self, class: &[u8], method: &[u8], descriptor: &[u8]) -> bool {
        self.arrays && self.allocation_site_selected(class, method, descriptor)
    }

    fn object_sites(&self, class: &[u8], method: &[u8], descriptor: &[u8]) -> bool {
        self.object_sites() && self.allocation_site_selected(class, method, descriptor)
    }

    fn live_objects(&self) -> bool {
        self.live_object_sites()
    }

    fn methods(&self, class: &[u8], method: &[u8], descriptor: &[u8], access: u16) -> bool {
        self.methods && self.method_selected(class, method, descriptor, access)
    }
}

#[cfg(test)]
mod interval_tests {
    use super::*;

    #[test]
    fn intervals_need_a_unit_and_a_range() {
        assert_eq!(parse_interval("1ms"), Ok(1_000_000));
        assert_eq!(parse_interval("100us"), Ok(100_000));
        assert_eq!(parse_interval("2s"), Ok(2_000_000_000));
        assert_eq!(parse_interval("50000ns"), Ok(50_000));
        for bad in [
            "",
            "1",
            "ms",
            "-1ms",
            "1.5ms",
            "9us",
            "61s",
            "99999999999999999999s",
            "1 ms",
        ] {
            assert!(parse_interval(bad).is_err(), "{bad}");
        }
    }
}
