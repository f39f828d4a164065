//! The commands of the control channel (control.rs) and of the Java API (`instr.Control`, through
//! `HeapProxy.control`): one line in, one answer out. The answer's first line is `ok` or `error: MESSAGE`;
//! what the command prints follows. A command never panics into its caller and never blocks an
//! application thread but the one that called `instr.Control`.

use std::path::Path;

use instr_rules::Rules;

use crate::ffi::Jni;
use crate::state::{agent, lock, Agent};
use crate::switches::{self, Probe};

pub const HELP: &str = "\
commands:
  status                      the agent, the probes and what they count
  start alloc|methods [RULES] add the probe to the code (retransforms the classes it selects); RULES, an
                              absolute path (or rules=PATH), selects its classes, methods and sites instead
                              of the rules the agent loaded with; include=PATTERN,... selects only the
                              classes the patterns name (include=com.example.**: the JDK's left alone)
  stop alloc|methods          take it out again: the classes are their original bytes
  start live                  live objects in the reports from now on, exactly, those already alive under
                              (before profiling): a heap walk now and at each report, nothing per allocation
  stop live                   no more live counts: ObjectFree off, every live tag removed
  start monitors              contended monitor enters and waits counted from now (MONITOR TIME)
  stop monitors               the monitor events off; what was counted stays
  start cpu [INTERVAL]        the CPU sampler from now, every INTERVAL of each thread's CPU time (10ms)
  stop cpu                    its timers deleted, its events off; what was sampled stays
  dump [FORMAT] FILE          the report now: json, txt, collapsed, html, pprof, cpu or wall (.collapsed);
                              the format defaults to FILE's extension, else json; FILE is absolute
  reset                       zero every count
  threads                     every thread with its stack and monitors, and deadlocks (threads=on)
  deadlocks                   the deadlocks alone (threads=on)
  help                        this list";

/// Runs one command line and returns the whole answer, ending in a newline.
pub fn run(jni: Jni, line: &str) -> String {
    let answer = match agent() {
        None => Err("the agent is not set up".to_string()),
        Some(a) => dispatch(a, jni, line.trim()),
    };
    match answer {
        Ok(text) if text.is_empty() => "ok\n".into(),
        Ok(text) if text.ends_with('\n') => format!("ok\n{text}"),
        Ok(text) => format!("ok\n{text}\n"),
        Err(e) => format!("error: {}\n", instr_rules::printable_line(&e)),
    }
}

fn dispatch(a: &Agent, jni: Jni, line: &str) -> Result<String, String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    match words.as_slice() {
        ["status"] => Ok(status(a)),
        ["help"] => Ok(HELP.into()),
        ["start", probe, rest @ ..] => switch(a, jni, probe, rest, true),
        ["stop", probe] => switch(a, jni, probe, &[], false),
        ["dump", file] => dump(a, jni, None, file),
        ["dump", format, file] => dump(a, jni, Some(format), file),
        ["reset"] => reset(a, jni),
        ["threads"] => crate::deadlocks::text_now(jni, true),
        ["deadlocks"] => crate::deadlocks::text_now(jni, false),
        [] => Err("empty command (try help)".into()),
        [command, ..] => Err(format!(
            "'{command}' with {} argument(s): not a command (try help)",
            words.len() - 1
        )),
    }
}

fn probe(name: &str) -> Result<Probe, String> {
    match name {
        "alloc" => Ok(Probe::Alloc),
        "methods" => Ok(Probe::Methods),
        "monitors" => Err("start monitors takes no argument".into()),
        other => Err(format!(
            "unknown probe '{other}' (alloc, methods, live, monitors, cpu)"
        )),
    }
}

fn switch(a: &Agent, jni: Jni, name: &str, settings: &[&str], on: bool) -> Result<String, String> {
    match (name, on) {
        ("live", true) if settings.is_empty() => return crate::live_switch::start(a, jni),
        ("live", true) => {
            return Err(format!(
            "start live {}: takes no argument (live objects are counted exactly, from the heap)",
            settings.join(" ")
        ))
        }
        ("live", false) => return crate::live_switch::stop(a),
        ("monitors", true) if settings.is_empty() => return crate::monitor_switch::start(a, jni),
        ("monitors", false) => return crate::monitor_switch::stop(a),
        ("cpu", true) => return crate::cpu_switch::start(a, jni, settings),
        ("cpu", false) => return crate::cpu_switch::stop(a, jni),
        _ => {}
    }
    let p = probe(name)?;
    let chosen = match settings {
        [] => None,
        [one] => Some(chosen_rules(&a.rules, p, one)?),
        _ => return Err(format!("start {name}: one rules file at most")),
    };
    let already = switches::is_on(p) == on && chosen.is_none();
    let summary = switches::switch(a, jni, p, on, chosen)?;
    let state = if on { "on" } else { "off" };
    Ok(if already {
        format!("{name} was already {state}")
    } else {
        format!("{name} {state}: {summary}")
    })
}

/// `RULES.yaml` or `rules=RULES.yaml` (an absolute path): rules of the probe's own; or
/// `include=PATTERN,...`: the probe as loaded, on the classes the patterns name only. Other settings
/// are fixed when the agent loads.
fn chosen_rules(loaded: &Rules, probe: Probe, setting: &str) -> Result<Rules, String> {
    let path = match setting.split_once('=') {
        None => setting,
        Some(("rules", path)) => path,
        Some(("include", patterns)) => return included(loaded, probe, patterns),
        Some(_) => {
            return Err(format!(
                "{setting}: only the rules (rules=FILE or include=PATTERN,...) can change at start; depth, \
                 live, calls and the rest are fixed when the agent loads (give them to `instr attach`)"
            ))
        }
    };
    if !Path::new(path).is_absolute() {
        return Err(format!("{path}: give an absolute path"));
    }
    Rules::from_file(Path::new(path)).map_err(|e| e.to_string())
}

/// `start PROBE include=org.example.**,Main`: the loaded rules' probe, selecting only those classes (or
/// methods), with no rules file to write on the target machine. A start that leaves the JDK's own
/// classes alone leaves the program as fast after its stop as before it (docs/ATTACH.md).
fn included(loaded: &Rules, probe: Probe, patterns: &str) -> Result<Rules, String> {
    let list: Vec<&str> = patterns.split(',').filter(|p| !p.is_empty()).collect();
    if list.is_empty() {
        return Err("include=: name at least one class pattern (include=org.example.**)".into());
    }
    if let Some(bad) = list.iter().find(|p| p.contains(['"', '\\'])) {
        return Err(format!(
            "include={bad}: a pattern has no quotes or backslashes"
        ));
    }
    let quoted: Vec<String> = list.iter().map(|p| format!("\"{p}\"")).collect();
    let text = match probe {
        Probe::Alloc => {
            let probes: Vec<&str> = [("objects", loaded.objects()), ("arrays", loaded.arrays())]
                .into_iter()
                .filter_map(|(name, on)| on.then_some(name))
                .collect();
            format!(
                "probes: [{}]\nallocations:\n  include: [{}]\n",
                probes.join(", "),
                quoted.join(", ")
            )
        }
        Probe::Methods => format!(
            "probes: [methods]\nmethods:\n  include: [{}]\n",
            quoted.join(", ")
        ),
    };
    let mut rules = Rules::parse(&text, "start include=").map_err(|e| e.to_string())?;
    if probe == Probe::Alloc {
        rules.set_depth(loaded.depth()).map_err(|e| e.to_string())?;
        if loaded.live_bytes() > 0 {
            rules.set_live_bytes(loaded.live_bytes());
        } else {
            rules.set_live(loaded.live());
        }
    }
    Ok(rules)
}

fn status(a: &Agent) -> String {
    let probe_state = |p: Probe| match (p.in_rules(&a.rules), switches::is_on(p)) {
        (false, _) => "not in the rules",
        (true, true) => "on",
        (true, false) => "off",
    };
    let live = match (&a.live, crate::live_switch::is_on()) {
        (Some(_), _) => "on from load".to_string(),
        (None, true) => "on".to_string(),
        (None, false) => "off".to_string(),
    };
    format!(
        "pid {}\nalloc: {}\nmethods: {}\nlive: {live}\nmonitors: {}\ncpu: {}\nengaged: {}\nreports: {}.*\nsocket: {}",
        std::process::id(),
        probe_state(Probe::Alloc),
        probe_state(Probe::Methods),
        if crate::monitor_switch::is_on() { "on" } else { "off" },
        match (crate::sampler::running(), crate::sampler::cpu_interval_ns()) {
            (true, Some(ns)) => format!("on, every {} us", ns / 1000),
            _ => "off".to_string(),
        },
        a.engaged.load(std::sync::atomic::Ordering::Acquire),
        a.rules.output_path(std::process::id()),
        crate::control::listening_on()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "none".into())
    )
}

/// The extension `report::render_all` gives each format.
const FORMATS: [(&str, &str); 7] = [
    ("json", ".json"),
    ("txt", ".txt"),
    ("collapsed", ".collapsed"),
    ("html", ".html"),
    ("pprof", ".pb.gz"),
    ("cpu", ".cpu.collapsed"),
    ("wall", ".wall.collapsed"),
];

fn dump(a: &Agent, jni: Jni, format: Option<&str>, file: &str) -> Result<String, String> {
    if !Path::new(file).is_absolute() {
        return Err(format!(
            "dump {file}: give an absolute path (the JVM's working directory is not yours)"
        ));
    }
    let format = match format {
        Some(f) => f,
        None => FORMATS
            .iter()
            .filter(|(_, ext)| file.ends_with(ext))
            .max_by_key(|(_, ext)| ext.len())
            .map_or("json", |(f, _)| f),
    };
    let ext = FORMATS
        .iter()
        .find(|(f, _)| *f == format)
        .map(|(_, ext)| *ext)
        .ok_or_else(|| {
            format!(
                "dump: unknown format '{format}' (json, txt, collapsed, html, pprof, cpu, wall)"
            )
        })?;
    let proxy = (*lock(&a.proxy)).ok_or("HeapProxy is not defined: nothing was counted")?;
    let files = crate::report::render_all(a, jni, proxy.0, crate::report::When::OnDemand, "")
        .ok_or("the counts did not make a profile (see the program's stderr)")?;
    let bytes = files
        .into_iter()
        .find(|(name, _)| name == ext)
        .map(|(_, bytes)| bytes)
        .ok_or_else(|| {
            format!("dump: no {format} report (cpu needs calls=times or cpu=INTERVAL, wall needs wall=INTERVAL)")
        })?;
    crate::report_files::write_atomically(file, &bytes)?;
    Ok(format!("{} bytes written to {file}", bytes.len()))
}

fn reset(a: &Agent, jni: Jni) -> Result<String, String> {
    let mut done = Vec::new();
    for (class, method) in [(&a.calls_proxy, "reset"), (&a.proxy, "resetAllocations")] {
        let Some(c) = *lock(class) else { continue };
        let m = jni
            .static_method(c.0, method, "()V")
            .ok_or_else(|| format!("{method} not found"))?;
        if !jni.call_static_void(c.0, m, &[]) {
            return Err(format!("{method} failed"));
        }
        done.push(method);
    }
    if done.is_empty() {
        return Err("HeapProxy is not defined: nothing was counted".into());
    }
    Ok("every count is zero".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_names() {
        assert_eq!(probe("alloc"), Ok(Probe::Alloc));
        assert_eq!(probe("methods"), Ok(Probe::Methods));
        assert!(probe("cpu").unwrap_err().contains("cpu"));
        assert!(probe("heap").unwrap_err().contains("unknown probe 'heap'"));
    }

    #[test]
    fn include_selects_the_named_classes_with_the_loaded_settings() {
        let mut loaded = Rules::parse(
            "probes: [objects, arrays]\nallocations:\n  include: [\"**\"]\n  depth: 2\n",
            "test",
        )
        .unwrap();
        loaded.set_live(100);
        let r = chosen_rules(&loaded, Probe::Alloc, "include=org.example.**,Main").unwrap();
        assert!(r.objects() && r.arrays() && !r.methods());
        assert_eq!((r.depth(), r.live()), (2, 100));
        assert!(r.allocation_site_selected(b"org/example/a/B", b"m", b"()V"));
        assert!(r.allocation_site_selected(b"Main", b"main", b"([Ljava/lang/String;)V"));
        assert!(!r.allocation_site_selected(b"java/util/HashMap", b"resize", b"()V"));

        let m = chosen_rules(&loaded, Probe::Methods, "include=org.example.**").unwrap();
        assert!(m.methods() && !m.objects());
        assert!(m.method_selected(b"org/example/A", b"run", b"()V", 0));
        assert!(!m.method_selected(b"java/lang/String", b"length", b"()I", 0));

        for bad in ["include=", "include=,", "include=\"a", "depth=3"] {
            assert!(chosen_rules(&loaded, Probe::Alloc, bad).is_err(), "{bad}");
        }
    }
}
