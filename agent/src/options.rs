//! The `-agentpath:libinstr.so=OPTIONS` string: a rules file, or `key=value` pairs separated by commas.

use std::path::PathBuf;

use instr_rules::Rules;

pub const HELP: &str = "\
instr: exact JVM allocation and call profiler
usage: -agentpath:/path/libinstr.so[=OPTIONS]
OPTIONS is either a rules file (rules/*.yaml) or comma-separated key=value pairs:
  rules=FILE    rules file (default: rules/default.yaml's settings, built in)
  file=PREFIX   report path prefix; %p is the pid (default from the rules: instr-%p)
  depth=N       stack depth of allocation sites, 0..64 (0: per class only)
  live=MODE     live objects at exit: off (default), exact (tag every object: slow, for tests),
                N (tag every N-th allocation of each class or site; live counts are scaled by N)
                or SIZE with a k or m suffix, e.g. 512k (the JVM's heap sampler: one sample per
                SIZE allocated bytes on average, weighted by size; per class; cheapest)
  stacks=HOW    frames beyond the allocating one, at depth >= 2: exact (default: a stack walk per
                allocation: slow) or SIZE with a k or m suffix, e.g. 64k (per-site counts stay exact;
                each site's count is split over the stacks the JVM's heap sampler saw there, one walk
                per SIZE allocated bytes on average)
  cutoff=SHARE  the text report lists the sites of at least SHARE of the total and their traces, and
                counts the rest in its header (default 0.0001, hprof's; 0: every site); the JSON
                report always has every site
  threads=on    thread start/end, CPU time and lifetime; monitor dumps and deadlock checks on
                demand (SIGQUIT or jcmd PID JVMTI.data_dump) into PREFIX.monitors.txt/.json
  monitors=on   also contended monitor enter/entered and wait/waited: MONITOR TIME (implies threads)
  deadlocks=MS  also check for deadlocks every MS milliseconds (0: on demand only; implies threads)
  trace=PATH    also stream an XML event trace to PATH (%p: pid; implies threads)
  trace-allocs=on   put object allocations and frees in the trace (walks a stack per object)
  trace-ring=N      records kept for GC and free events between two writes of the trace (16384)
  calls=MODE    with the rules' `methods` probe: counts (default: exact calls per method) or times
                (also per thread: calls, inclusive/exclusive CPU and wall time, caller->callee edges)
  leaves=HOW    leaf methods (no call, loop or monitor, <= 100 bytes) under calls=times: counted
                (default: calls and exceptional exits exact, time left to the caller, no edge) or
                timed (a shadow frame like every other method: complete, slower)
  clock=KIND    wall clock of calls=times: tick (default: a 100 us clock read with one load) or exact
                (System.nanoTime at every entry and exit: exact, much slower)
  cpu=INTERVAL  sample the stacks of running threads every INTERVAL of their CPU time (e.g. 1ms, 10ms;
                AsyncGetCallTrace from a per-thread CPU timer's SIGPROF); without rules= nothing else
                is probed and no class is rewritten; with a rules file's methods probe the method rows
                get sampled times beside the exact counts. Samples are appended to PREFIX.samples as
                the program runs (instr report PREFIX.samples reads it)
  wall=INTERVAL also sample every thread, running or not, every INTERVAL of wall time
  engine=NAME   agct (default) or jvmti (GetAllStackTraces at safepoints: biased; for comparison)
  debug-non-safepoints=on  exact leaf frames and lines in compiled code (CompiledMethodLoad on, so
                HotSpot keeps debug information at every instruction: compiles cost a few percent
                more). Default off: a sample in compiled code is credited to the next call or
                safepoint poll of that code, so self time can move between a method and the
                methods inlined into it; the frames above are the same either way
  sample-threads=on  PREFIX.cpu.collapsed and PREFIX.wall.collapsed start each stack with its thread
  heapdump=WHEN binary HPROF heap dump to PREFIX.hprof: off (default), demand (on each SIGQUIT or
                jcmd PID JVMTI.data_dump), exit (at VM exit) or both
  start=WHEN    on (default): the rules' probes count from the start; off: loaded with every probe
                off and no class rewritten, until `instr ctl PID start PROBE` (docs/ATTACH.md)
  control=on    the control socket `instr ctl` talks to (default on; off: none)
  keep-lambdas=on  patch the JDK's lambda factory (at VM_INIT with start=off, else at the first start
                or stop) so that a lambda keeps its class when a start or stop redefines the class that
                made it (default on; off: each
                start and stop gives such lambdas new classes, which the JIT's profiles then mix)
  early=WHEN    off: the JVM keeps class-data sharing and the probes go in at VM_INIT, by one
                retransformation of the classes loaded by then; on: the early class hook rewrites every
                class as it loads, from java.lang.Object on, and the JVM starts without class-data
                sharing (25-30 ms more for a hello world); auto (default): off on JDK 25 and later,
                and on older JDKs off unless the rules select the JDK's start-up classes
                (java.lang.String, java.util.HashMap...), whose retransformation would cost what
                sharing saves. Nothing is counted before VM_INIT
  help          print this and stop
Reports, written at VM exit: PREFIX.txt (hprof-style SITES and TRACEs), PREFIX.json (exact counts,
schema instr-profile/2), PREFIX.collapsed (flame-graph input: stack;class bytes), PREFIX.html (flame
graphs of every view, one file to open in a browser) and PREFIX.pb.gz (pprof); with threads on,
PREFIX.threads.txt (THREADS and MONITOR TIME) and PREFIX.threads.json (schema instr-threads/1).";

/// The built-in rules when none are given: those of rules/default.yaml.
const DEFAULT_RULES: &str = include_str!("../../rules/default.yaml");

// Parsed once, at load: the size of the variant costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Parsed {
    Run(Settings),
    Help,
}

/// Everything the option string sets.
#[derive(Debug)]
pub struct Settings {
    pub rules: Rules,
    /// Tag every `live_every`-th allocation of each class to count live objects at exit; 0: off.
    pub live_every: u32,
    /// Live objects by the JVM's heap sampler, one sample per this many bytes on average; 0: off.
    pub live_bytes: u32,
    /// `stacks=SIZE`: frames beyond the allocating one from the heap sampler's walks, one per this many
    /// bytes on average; 0: a walk per allocation (depth >= 2).
    pub stack_sample_bytes: u32,
    /// `calls=times`: per-thread shadow stacks, call trees and times; otherwise method counts only.
    pub call_times: bool,
    /// `clock=exact`: System.nanoTime per call event in times mode.
    pub exact_clock: bool,
    /// `leaves=timed`: leaf methods get a shadow frame in times mode like every other method.
    pub timed_leaves: bool,
    /// `heapdump=`: when to write PREFIX.hprof.
    pub heap_dump: crate::heap_dump::Mode,
    /// `start=`/`control=`: whether the probes count from the start, and whether `instr ctl` can reach
    /// the agent.
    pub run_time: crate::switches::RunTime,
    /// `sample-threads=on`: the sampled collapsed stacks start with their thread.
    pub sample_threads: bool,
    /// `cutoff=`: the share of the total below which the text report counts a site rather than
    /// listing it.
    pub cutoff: f64,
}

/// Parses the option string. `Err` is the one-line message the agent prints before refusing to start:
/// printable and of bounded length whatever the option string held (a value can be a megabyte of junk).
pub fn parse(options: &str) -> Result<Parsed, String> {
    parse_options(options).map_err(|message| instr_rules::printable_line(&message))
}

/// What lib.rs's lossy conversion of the option string puts in place of bytes that are not UTF-8.
const NOT_UTF8: char = char::REPLACEMENT_CHARACTER;

fn parse_options(options: &str) -> Result<Parsed, String> {
    let options = options.trim();
    if options == "help" {
        return Ok(Parsed::Help);
    }
    if options.is_empty() {
        return built_in().and_then(run);
    }
    if !options.contains('=') {
        // A path mangled by the lossy conversion would name another file, or none.
        if options.contains(NOT_UTF8) {
            return Err("the rules file path is not UTF-8".into());
        }
        return load(&PathBuf::from(options)).and_then(run);
    }
    let mut rules = None;
    let mut file = None;
    let mut depth = None;
    let mut live = None;
    let mut stack_sample_bytes = 0;
    let mut thread_options: Vec<(&str, &str)> = Vec::new();
    let mut call_times = false;
    let mut exact_clock = false;
    let mut timed_leaves = false;
    let mut heap_dump = crate::heap_dump::Mode::Off;
    let mut run_time = crate::switches::RunTime::default();
    let mut sampling: Vec<(&str, &str)> = Vec::new();
    let mut sample_threads = false;
    let mut cutoff = instr_profile::render::text::DEFAULT_CUTOFF;
    for pair in options.split(',') {
        let (key, value) = pair.split_once('=').ok_or_else(|| {
            format!("option '{pair}' is not key=value (see -agentpath:libinstr.so=help)")
        })?;
        if value.contains(NOT_UTF8) {
            // Paths would silently name another file, and no other value has such bytes.
            return Err(format!(
                "{}=: the value is not UTF-8 (the JVM passes the option string's bytes unchanged)",
                key.trim()
            ));
        }
        match key.trim() {
            "rules" if value.is_empty() => return Err("rules= is empty: give a rules file".into()),
            "rules" => rules = Some(PathBuf::from(value)),
            k @ ("file" | "output") => file = Some((k, value.to_string())),
            "depth" => {
                depth = Some(
                    value
                        .parse::<u32>()
                        .map_err(|_| format!("depth={value}: not a number (0..=64)"))?,
                )
            }
            "live" => live = Some(live_mode(value)?),
            k @ ("threads" | "monitors" | "deadlocks" | "trace" | "trace-allocs" | "trace-ring") => {
                thread_options.push((k, value))
            }
            "stacks" => {
                stack_sample_bytes = match value {
                    "exact" => 0,
                    _ => byte_size(value).ok_or_else(|| {
                        format!("stacks={value}: expected exact or a byte interval such as 64k")
                    })?,
                }
            }
            "calls" => {
                call_times = match value {
                    "counts" => false,
                    "times" => true,
                    _ => return Err(format!("calls={value}: expected counts or times")),
                }
            }
            "clock" => {
                exact_clock = match value {
                    "tick" => false,
                    "exact" => true,
                    _ => return Err(format!("clock={value}: expected tick or exact")),
                }
            }
            "leaves" => {
                timed_leaves = match value {
                    "counted" => false,
                    "timed" => true,
                    _ => return Err(format!("leaves={value}: expected counted or timed")),
                }
            }
            "heapdump" => heap_dump = crate::heap_dump::Mode::parse(value)?,
            k @ ("start" | "control" | "early" | "keep-lambdas") => run_time.set(k, value)?,
            k @ ("cpu" | "wall" | "engine" | "debug-non-safepoints") => sampling.push((k, value)),
            "sample-threads" => {
                sample_threads = match value {
                    "on" => true,
                    "off" => false,
                    _ => return Err(format!("sample-threads={value}: expected on or off")),
                }
            }
            "cutoff" => {
                cutoff = instr_profile::render::text::parse_cutoff(value)
                    .map_err(|e| format!("cutoff={value}: {e}"))?
            }
            "help" => return Ok(Parsed::Help),
            other => {
                return Err(format!(
                    "unknown option '{other}' (known: rules, file, depth, live, stacks, cutoff, calls, leaves, clock, threads, monitors, deadlocks, trace, trace-allocs, trace-ring, cpu, wall, engine, debug-non-safepoints, sample-threads, heapdump, start, control, early, keep-lambdas, help)"
                ))
            }
        }
    }
    let mut r = match rules {
        Some(path) => load(&path)?,
        // Sampling alone rewrites no class (so CDS stays on): no built-in allocation probes with it.
        None if !sampling.is_empty() => Rules::empty(),
        None => built_in()?,
    };
    if let Some((key, f)) = file {
        r.set_output(key, f).map_err(|e| e.to_string())?;
    }
    if let Some(d) = depth {
        r.set_depth(d).map_err(|e| e.to_string())?;
    }
    match live {
        Some(LiveMode::Every(n)) => r.set_live(n),
        Some(LiveMode::Bytes(b)) => r.set_live_bytes(b),
        None => {}
    }
    crate::threads::apply_options(&mut r, &thread_options)?;
    crate::sampler::apply_options(&mut r, &sampling)?;
    if call_times && r.sampling().enabled() {
        return Err(
            "calls=times and sampling (cpu=/wall=) both measure time; with sampling use calls=counts".into(),
        );
    }
    if stack_sample_bytes > 0 && r.depth() < 2 {
        return Err(format!(
            "stacks= samples the frames beyond the allocating one; it needs depth >= 2 (depth is {})",
            r.depth()
        ));
    }
    if stack_sample_bytes > 0 && r.live_bytes() > 0 && r.live_bytes() != stack_sample_bytes {
        return Err(
            "live=SIZE and stacks=SIZE share the JVM's heap sampler; give them one size".into(),
        );
    }
    settings(
        r,
        CallMode {
            times: call_times,
            exact_clock,
            timed_leaves,
        },
        stack_sample_bytes,
    )
    .map(|p| match p {
        Parsed::Run(s) => Parsed::Run(Settings {
            heap_dump,
            run_time,
            sample_threads,
            cutoff,
            ..s
        }),
        help => help,
    })
}

enum LiveMode {
    /// One object in N (1: every object), tagged by the probes.
    Every(u32),
    /// The JVM's heap sampler, one sample per this many bytes on average.
    Bytes(u32),
}

fn live_mode(value: &str) -> Result<LiveMode, String> {
    let bad = || {
        format!(
            "live={value}: expected off, exact, an interval N > 0 or a byte interval such as 512k"
        )
    };
    Ok(match value {
        "off" => LiveMode::Every(0),
        "exact" => LiveMode::Every(1),
        _ if value.ends_with(['k', 'K', 'm', 'M']) => {
            LiveMode::Bytes(byte_size(value).ok_or_else(bad)?)
        }
        n => LiveMode::Every(n.parse().ok().filter(|&n| n > 0).ok_or_else(bad)?),
    })
}

/// `512k`, `1m` (binary units): a byte interval for the JVM's heap sampler, which takes a positive jint.
pub(crate) fn byte_size(value: &str) -> Option<u32> {
    let lower = value.to_ascii_lowercase();
    let (digits, unit) = match lower.strip_suffix('k') {
        Some(d) => (d, 1u64 << 10),
        None => (lower.strip_suffix('m')?, 1 << 20),
    };
    digits
        .parse::<u64>()
        .ok()
        .map(|n| n * unit)
        .filter(|&b| b > 0 && b <= i32::MAX as u64)
        .map(|b| b as u32)
}

/// How method calls are measured (`calls=`, `clock=`); counts with the ticking clock by default.
#[derive(Default)]
struct CallMode {
    times: bool,
    exact_clock: bool,
    timed_leaves: bool,
}

fn run(rules: Rules) -> Result<Parsed, String> {
    settings(rules, CallMode::default(), 0)
}

/// The settings the rules amount to, once every override is applied.
fn settings(rules: Rules, calls: CallMode, stack_sample_bytes: u32) -> Result<Parsed, String> {
    if (rules.live() > 0 || rules.live_bytes() > 0) && rules.threads().trace_allocations {
        return Err("live= and the trace's allocations both tag objects; use one at a time".into());
    }
    Ok(Parsed::Run(Settings {
        live_every: rules.live(),
        live_bytes: rules.live_bytes(),
        stack_sample_bytes,
        rules,
        call_times: calls.times,
        exact_clock: calls.exact_clock,
        timed_leaves: calls.timed_leaves,
        heap_dump: Default::default(),
        run_time: Default::default(),
        sample_threads: false,
        cutoff: instr_profile::render::text::DEFAULT_CUTOFF,
    }))
}

fn load(path: &std::path::Path) -> Result<Rules, String> {
    Rules::from_file(path).map_err(|e| e.to_string())
}

fn built_in() -> Result<Rules, String> {
    Rules::parse(DEFAULT_RULES, "built-in default rules").map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        assert!(matches!(parse("help"), Ok(Parsed::Help)));
        assert!(matches!(parse(""), Ok(Parsed::Run(s)) if s.rules.objects() && s.live_every == 0));
        let Ok(Parsed::Run(s)) = parse("file=out-%p,depth=2,live=10") else {
            panic!()
        };
        assert_eq!(
            (s.rules.depth(), s.rules.output(), s.live_every),
            (2, "out-%p", 10)
        );
        assert!(parse("live=0").unwrap_err().contains("live=0"));
        let bytes = |o: &str| match parse(o) {
            Ok(Parsed::Run(s)) => Ok((s.live_every, s.live_bytes)),
            Ok(Parsed::Help) => Err("help".to_string()),
            Err(e) => Err(e),
        };
        assert_eq!(bytes("live=512k"), Ok((0, 512 << 10)));
        assert_eq!(bytes("live=2M"), Ok((0, 2 << 20)));
        assert_eq!(bytes("live=7"), Ok((7, 0)));
        for bad in ["live=0k", "live=k", "live=4096m", "live=12x"] {
            assert!(bytes(bad).unwrap_err().contains(bad), "{bad}");
        }
        let Ok(Parsed::Run(s)) = parse("depth=8,stacks=64k") else {
            panic!()
        };
        assert_eq!(s.stack_sample_bytes, 64 << 10);
        assert!(parse("depth=1,stacks=64k")
            .unwrap_err()
            .contains("depth >= 2"));
        assert!(parse("depth=8,stacks=often")
            .unwrap_err()
            .contains("stacks=often"));
        assert!(parse("depth=8,stacks=64k,live=512k")
            .unwrap_err()
            .contains("one size"));
        assert!(parse("calls=often").unwrap_err().contains("calls=often"));
        assert!(
            matches!(parse("calls=times"), Ok(Parsed::Run(s)) if s.call_times && !s.timed_leaves)
        );
        assert!(matches!(parse("calls=times,leaves=timed"), Ok(Parsed::Run(s)) if s.timed_leaves));
        assert!(parse("leaves=some").unwrap_err().contains("leaves=some"));
        assert!(
            matches!(parse("heapdump=both"), Ok(Parsed::Run(s)) if s.heap_dump == crate::heap_dump::Mode::Both)
        );
        assert!(
            matches!(parse("depth=1"), Ok(Parsed::Run(s)) if s.heap_dump == crate::heap_dump::Mode::Off)
        );
        assert!(parse("heapdump=now").unwrap_err().contains("heapdump=now"));
        assert!(parse("bogus=1")
            .unwrap_err()
            .contains("unknown option 'bogus'"));
        assert!(parse("depth=x").unwrap_err().contains("depth=x"));
        assert!(parse("/no/such/rules.yaml")
            .unwrap_err()
            .contains("/no/such/rules.yaml"));
    }

    #[test]
    fn sampling_options() {
        let Ok(Parsed::Run(s)) = parse("cpu=1ms,wall=250us,sample-threads=on") else {
            panic!()
        };
        let r = *s.rules.sampling();
        assert_eq!((r.cpu_ns, r.wall_ns), (1_000_000, 250_000));
        assert!(s.sample_threads);
        assert!(
            !s.rules.objects() && !s.rules.methods(),
            "sampling alone probes nothing"
        );
        assert!(matches!(parse("cpu=10ms,engine=jvmti"), Ok(Parsed::Run(s))
            if s.rules.sampling().engine == instr_rules::SamplingEngine::Jvmti));
        assert!(
            matches!(parse("cpu=10ms,debug-non-safepoints=on"), Ok(Parsed::Run(s))
            if s.rules.sampling().debug_non_safepoints)
        );
        assert!(matches!(parse("cpu=10ms"), Ok(Parsed::Run(s))
            if !s.rules.sampling().debug_non_safepoints));
        for (bad, says) in [
            ("cpu=1", "cpu=1"),
            ("cpu=5us", "cpu=5us"),
            ("wall=2min", "wall=2min"),
            ("cpu=1ms,engine=perf", "engine=perf"),
            ("engine=agct", "give cpu=INTERVAL"),
            (
                "debug-non-safepoints=on",
                "debug-non-safepoints= says how to sample",
            ),
            ("cpu=1ms,debug-non-safepoints=1", "debug-non-safepoints=1"),
            ("cpu=1ms,calls=times", "calls=times"),
            ("sample-threads=yes", "sample-threads=yes"),
        ] {
            assert!(parse(bad).unwrap_err().contains(says), "{bad}");
        }
    }

    #[test]
    fn hostile_values() {
        // `file=` and `output=` refuse what the rules key `output` refuses (issue 14).
        for key in ["file", "output"] {
            for bad in ["", "%", "a%x", "dir/"] {
                let e = parse(&format!("{key}={bad}")).unwrap_err();
                assert!(e.contains(&format!("`{key}`")), "{key}={bad}: {e}");
            }
        }
        // What lib.rs's lossy conversion made of bytes that are not UTF-8.
        assert!(parse("file=a\u{FFFD}b").unwrap_err().contains("not UTF-8"));
        assert!(parse("/tmp/\u{FFFD}.yaml")
            .unwrap_err()
            .contains("not UTF-8"));
        assert!(parse("rules=").unwrap_err().contains("rules="));
        // A megabyte of junk comes back as one short printable line.
        let e = parse(&format!("depth=\u{1b}[31m{}", "9".repeat(1 << 20))).unwrap_err();
        assert!(e.starts_with("depth=\\u{1b}[31m99"), "{}", &e[..40]);
        assert!(
            e.len() < 2100 && !e.contains(['\n', '\u{1b}']),
            "{} bytes",
            e.len()
        );
    }
}
