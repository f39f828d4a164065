//! The rules file exactly as written. Every struct denies unknown keys so that a misspelt key is an
//! error instead of a silently ignored setting. Values that are validated after parsing (patterns,
//! depth, output) keep their source location in a `Spanned` so the error can point at them.

use serde::Deserialize;
use serde_saphyr::Spanned;

/// The top-level mapping.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RulesFile {
    /// The probes to turn on; absent means none.
    #[serde(default)]
    pub probes: Option<Vec<Spanned<ProbeName>>>,
    /// Which methods get entry/exit probes.
    #[serde(default)]
    pub methods: Option<MethodsSection>,
    /// Which allocating sites are recorded.
    #[serde(default)]
    pub allocations: Option<AllocationsSection>,
    /// Report path prefix template.
    #[serde(default)]
    pub output: Option<Spanned<String>>,
    /// The thread and monitor profiler (off when absent).
    #[serde(default)]
    pub threads: Option<ThreadsSection>,
    /// The CPU and wall-clock sampler (off when absent).
    #[serde(default)]
    pub sampling: Option<SamplingSection>,
}

/// `sampling:`: intervals such as `1ms`, `100us`; the engine (`agct` or `jvmti`).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SamplingSection {
    #[serde(default)]
    pub cpu: Option<Spanned<String>>,
    #[serde(default)]
    pub wall: Option<Spanned<String>>,
    #[serde(default)]
    pub engine: Option<Spanned<String>>,
    /// The inline option `debug-non-safepoints=on|off`.
    #[serde(default)]
    pub debug_non_safepoints: Option<bool>,
}

/// `threads:`: thread start/end, CPU time and on-demand monitor dumps whenever present; the rest opt-in.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThreadsSection {
    /// Contended enter/entered and wait/waited events, aggregated into MONITOR TIME.
    #[serde(default)]
    pub monitors: Option<bool>,
    /// The periodic deadlock watcher.
    #[serde(default)]
    pub deadlocks: Option<DeadlocksSection>,
    /// The XML event trace.
    #[serde(default)]
    pub trace: Option<TraceSection>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeadlocksSection {
    /// Milliseconds between two checks; 0 (or absent) checks on demand only. Signed so that a
    /// negative value gets our range message.
    #[serde(default)]
    pub watch_ms: Option<Spanned<i64>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceSection {
    /// Path template of the trace (`%p`: pid).
    #[serde(default)]
    pub file: Option<Spanned<String>>,
    /// Whether object allocations (and frees) of the recorded sites are traced.
    #[serde(default)]
    pub allocations: Option<bool>,
}

/// The names allowed in `probes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProbeName {
    Objects,
    Arrays,
    Methods,
}

impl ProbeName {
    pub fn as_str(self) -> &'static str {
        match self {
            ProbeName::Objects => "objects",
            ProbeName::Arrays => "arrays",
            ProbeName::Methods => "methods",
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MethodsSection {
    #[serde(default)]
    pub include: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    pub exclude: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    pub bridges: Option<bool>,
    #[serde(default)]
    pub synthetic: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AllocationsSection {
    #[serde(default)]
    pub include: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    pub exclude: Option<Vec<Spanned<String>>>,
    /// Signed so that a negative depth is reported by our range check, with its hint, rather than
    /// as a type error.
    #[serde(default)]
    pub depth: Option<Spanned<i64>>,
    /// Live-object tracking: 0 off, 1 every object (exact), N one object in N per site (scaled).
    #[serde(default)]
    pub live: Option<Spanned<i64>>,
    /// Live-object tracking by the JVM's heap sampler: mean bytes between samples (exclusive with `live`).
    #[serde(default)]
    pub live_bytes: Option<Spanned<i64>>,
}
