//! Turns the file as written ([`RulesFile`]) into [`Rules`], checking what serde cannot: pattern
//! syntax, the depth range, the output template and repeated probe names. Each check reports the
//! location of the value itself, which serde-saphyr keeps for us in `Spanned`.

use serde_saphyr::{Location, Spanned};

use crate::error::RulesError;
use crate::filter::Filter;
use crate::pattern::{Pattern, PATTERN_SYNTAX};
use crate::schema::{ProbeName, RulesFile, SamplingSection, ThreadsSection};
use crate::{
    Rules, SamplingRules, ThreadRules, DEFAULT_DEPTH, DEFAULT_OUTPUT, DEFAULT_TRACE, MAX_DEPTH,
    MAX_PATH_BYTES, MAX_WATCH_MS,
};

pub(crate) fn build(file: RulesFile, origin: &str) -> Result<Rules, RulesError> {
    let mut rules = Rules::empty();

    let mut seen: Vec<ProbeName> = Vec::new();
    for probe in file.probes.unwrap_or_default() {
        if seen.contains(&probe.value) {
            return Err(error_at(
                origin,
                &probe,
                format!("probe `{}` is listed twice", probe.value.as_str()),
                "list each of `objects`, `arrays`, `methods` at most once".to_owned(),
            ));
        }
        seen.push(probe.value);
        match probe.value {
            ProbeName::Objects => rules.objects = true,
            ProbeName::Arrays => rules.arrays = true,
            ProbeName::Methods => rules.methods = true,
        }
    }

    if let Some(methods) = file.methods {
        rules.method_filter = Filter::new(
            patterns(
                origin,
                "methods.include",
                methods.include.unwrap_or_default(),
            )?,
            patterns(
                origin,
                "methods.exclude",
                methods.exclude.unwrap_or_default(),
            )?,
        );
        rules.bridges = methods.bridges.unwrap_or(false);
        rules.synthetic = methods.synthetic.unwrap_or(false);
    }

    if let Some(allocations) = file.allocations {
        let include = match allocations.include {
            Some(include) => patterns(origin, "allocations.include", include)?,
            None => Filter::everything_patterns(),
        };
        rules.allocation_filter = Filter::new(
            include,
            patterns(
                origin,
                "allocations.exclude",
                allocations.exclude.unwrap_or_default(),
            )?,
        );
        if let Some(depth) = allocations.depth {
            rules.depth = depth_in_range(depth.value).ok_or_else(|| {
                error_at(
                    origin,
                    &depth,
                    format!("depth {} is out of range", depth.value),
                    depth_hint(),
                )
            })?;
        }
        if let Some(live) = allocations.live {
            rules.live = u32::try_from(live.value).map_err(|_| {
                error_at(
                    origin,
                    &live,
                    format!("live {} is out of range", live.value),
                    LIVE_HINT.to_string(),
                )
            })?;
        }
        if let Some(bytes) = allocations.live_bytes {
            if rules.live > 0 {
                return Err(error_at(
                    origin,
                    &bytes,
                    "`live` and `live_bytes` are both set".to_string(),
                    LIVE_BYTES_HINT.to_string(),
                ));
            }
            rules.live_bytes = u32::try_from(bytes.value)
                .ok()
                .filter(|&b| (1..=i32::MAX as u32).contains(&b))
                .ok_or_else(|| {
                    error_at(
                        origin,
                        &bytes,
                        format!("live_bytes {} is out of range", bytes.value),
                        LIVE_BYTES_HINT.to_string(),
                    )
                })?;
        }
    }

    if let Some(output) = file.output {
        check_path_template("output", &output.value).map_err(|problem| {
            error_at(
                origin,
                &output,
                problem,
                output_hint("output", DEFAULT_OUTPUT),
            )
        })?;
        rules.output = output.value;
    }

    if let Some(threads) = file.threads {
        rules.threads = threads_section(origin, threads)?;
    }

    if let Some(sampling) = file.sampling {
        rules.sampling = sampling_section(origin, sampling)?;
    }

    Ok(rules)
}

fn sampling_section(origin: &str, section: SamplingSection) -> Result<SamplingRules, RulesError> {
    let mut s = SamplingRules::default();
    for (key, value, slot) in [
        ("cpu", &section.cpu, &mut s.cpu_ns),
        ("wall", &section.wall, &mut s.wall_ns),
    ] {
        if let Some(v) = value {
            *slot = crate::parse_interval(&v.value).map_err(|problem| {
                error_at(
                    origin,
                    v,
                    format!("sampling.{key}: {problem}"),
                    crate::INTERVAL_HINT.to_owned(),
                )
            })?;
        }
    }
    if let Some(engine) = &section.engine {
        s.engine = crate::SamplingEngine::parse(&engine.value).map_err(|problem| {
            error_at(
                origin,
                engine,
                format!("sampling.engine: {problem}"),
                "`engine` is `agct` (AsyncGetCallTrace, the default) or `jvmti` (GetAllStackTraces, \
                 safepoint-biased, for comparison)"
                    .to_owned(),
            )
        })?;
    }
    s.debug_non_safepoints = section.debug_non_safepoints.unwrap_or(false);
    Ok(s)
}

const LIVE_BYTES_HINT: &str =
    "`live_bytes` is the mean number of bytes between the JVM heap sampler's samples, 1..=2147483647 \
     (524288 samples about every 512 KiB allocated per thread); it replaces `live`";
const LIVE_HINT: &str =
    "`live` is 0 (off), 1 (track every object: exact) or N (one object in N per site, \
     counts scaled by N)";

fn threads_section(origin: &str, section: ThreadsSection) -> Result<ThreadRules, RulesError> {
    let mut t = ThreadRules {
        enabled: true,
        monitors: section.monitors.unwrap_or(false),
        ..ThreadRules::default()
    };
    if let Some(watch) = section.deadlocks.and_then(|d| d.watch_ms) {
        t.watch_ms = watch_in_range(watch.value).ok_or_else(|| {
            error_at(
                origin,
                &watch,
                format!("watch_ms {} is out of range", watch.value),
                watch_hint(),
            )
        })?;
    }
    if let Some(trace) = section.trace {
        let file = match trace.file {
            Some(file) => {
                check_path_template("trace.file", &file.value).map_err(|problem| {
                    error_at(
                        origin,
                        &file,
                        problem,
                        output_hint("trace.file", DEFAULT_TRACE),
                    )
                })?;
                file.value
            }
            None => DEFAULT_TRACE.to_owned(),
        };
        t.trace = Some(file);
        t.trace_allocations = trace.allocations.unwrap_or(false);
    }
    Ok(t)
}

pub(crate) fn watch_in_range(ms: i64) -> Option<u32> {
    u32::try_from(ms).ok().filter(|ms| *ms <= MAX_WATCH_MS)
}

pub(crate) fn watch_hint() -> String {
    format!("`watch_ms` is the time between two deadlock checks in milliseconds, 0 (on demand only) to {MAX_WATCH_MS}")
}

pub(crate) fn depth_in_range(depth: i64) -> Option<u32> {
    u32::try_from(depth)
        .ok()
        .filter(|depth| (0..=MAX_DEPTH).contains(depth))
}

pub(crate) fn depth_hint() -> String {
    format!("`depth` is the number of stack frames recorded per allocation site, 0 (per class only) to {MAX_DEPTH} (default {DEFAULT_DEPTH})")
}

/// The patterns of `key` (`methods.include`, ...), each checked; errors name the key.
fn patterns(
    origin: &str,
    key: &str,
    written: Vec<Spanned<String>>,
) -> Result<Vec<Pattern>, RulesError> {
    written
        .into_iter()
        .map(|pattern| {
            if pattern.value.len() > MAX_PATTERN_BYTES {
                // No class or method name can be this long, so such a pattern selects nothing.
                return Err(error_at(
                    origin,
                    &pattern,
                    format!(
                        "`{key}`: a pattern of {} bytes, longer than any JVM name ({MAX_PATTERN_BYTES})",
                        pattern.value.len()
                    ),
                    PATTERN_SYNTAX.to_owned(),
                ));
            }
            Pattern::parse(&pattern.value).map_err(|problem| {
                error_at(
                    origin,
                    &pattern,
                    format!("`{key}`: {problem}"),
                    PATTERN_SYNTAX.to_owned(),
                )
            })
        })
        .collect()
}

/// The longest pattern accepted: a class file's names are CONSTANT_Utf8 entries of at most 65,535 bytes.
const MAX_PATTERN_BYTES: usize = 65_535;

/// Checks a report or trace path template (`output`, `threads.trace.file`, the agent's `file=` and
/// `trace=`); `key` names it in the message. Shared so that the option and the key refuse the same values.
pub fn check_path_template(key: &str, template: &str) -> Result<(), String> {
    if template.is_empty() {
        // An empty prefix would write hidden files `.json`, `.txt`, ... in the working directory.
        return Err(format!("`{key}` is empty"));
    }
    if template.len() > MAX_PATH_BYTES {
        return Err(format!(
            "`{key}` is {} bytes long, longer than a path can be ({MAX_PATH_BYTES})",
            template.len()
        ));
    }
    if let Some(c) = template.chars().find(|c| c.is_control()) {
        return Err(format!(
            "`{key}` \"{}\" holds the control character {c:?}",
            template.escape_debug()
        ));
    }
    if template.ends_with('/') {
        // The reports would be hidden files `.json`, `.txt`, ... in that directory.
        return Err(format!(
            "`{key}` \"{template}\" ends with `/`: it names a directory, not a file name prefix"
        ));
    }
    let mut chars = template.chars();
    while let Some(c) = chars.next() {
        if c == '%' {
            match chars.next() {
                Some('p' | '%') => {}
                Some(other) => {
                    return Err(format!(
                        "`{key}` \"{template}\" has unknown escape `%{other}`"
                    ))
                }
                None => return Err(format!("`{key}` \"{template}\" ends with a lone `%`")),
            }
        }
    }
    Ok(())
}

pub(crate) fn output_hint(key: &str, example: &str) -> String {
    format!(
        "`{key}` is a file path prefix where `%p` stands for the process id and `%%` for a literal \
         `%`, e.g. \"{example}\""
    )
}

fn error_at<T>(origin: &str, value: &Spanned<T>, problem: String, hint: String) -> RulesError {
    match position(value) {
        Some((line, column)) => RulesError::at(origin, line, column, problem, hint),
        None => RulesError::whole(origin, problem, hint),
    }
}

/// Where the value is used; for a value reached through an alias, the anchor when the use site is
/// unknown.
fn position<T>(value: &Spanned<T>) -> Option<(u64, u64)> {
    [value.referenced, value.defined]
        .into_iter()
        .find(|location: &Location| location.line() > 0)
        .map(|location| (location.line(), location.column()))
}
