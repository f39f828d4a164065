//! Hostile option values, in real JVMs (issue 14): every agent option and every rules key, given a value
//! it must refuse (empty, negative, huge, a megabyte long, not UTF-8, binary junk, a path template that
//! would write hidden files), and the rules file given as something that is not a small regular file
//! (/dev/zero, a FIFO, /dev/stdin, a directory, 2 MB, missing). In each case, on every JDK, the VM must
//! refuse to start with exactly one `instr:` line naming the option or key, and no crash, panic, hang or
//! file left in the working directory.

mod support;

use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use support::*;

/// A hang detector, not a timing assertion: a refusal takes well under a second; a VM that reads
/// /dev/zero or waits on a FIFO never finishes.
const HANG: Duration = Duration::from_secs(60);

/// One megabyte (decimal: under the rules file limit of 1 MiB, so that a rules file holding it is
/// refused for the value, not for its size).
const MEGABYTE: usize = 1_000_000;

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// A whole number in a range.
    Number,
    /// One word of a few (`on`/`off`, `counts`/`times`, ...).
    Word,
    /// A report or trace path template. Any number is a valid file name, so numbers are no test here.
    Path,
    /// A class/method pattern. A number is a valid JVM class name, so numbers are no test here either.
    Pattern,
    /// A YAML mapping (`threads:`, ...).
    Mapping,
}

/// The hostile values for a kind, each with a label for the failure list.
fn values(kind: Kind, yaml: bool) -> Vec<(&'static str, Vec<u8>)> {
    // NUL-free binary junk. Not ',' in an option string: it separates the options, so the junk would
    // be taken for a malformed option rather than a bad value. Not a line break in YAML: what follows
    // it would be another key. It starts with a control character, which YAML refuses anywhere.
    let junk = |ascii_only: bool| -> Vec<u8> {
        (1..=if ascii_only { 127u8 } else { 255 })
            .filter(|&b| b != b',' && !(yaml && (b == b'\n' || b == b'\r')))
            .collect()
    };
    let mut v: Vec<(&'static str, Vec<u8>)> = vec![
        ("empty", if yaml { b"\"\"".to_vec() } else { Vec::new() }),
        ("1 MB", vec![b'x'; MEGABYTE]),
        ("not UTF-8", b"\xff\xfe\xc0\x80".to_vec()),
        ("ASCII junk", junk(true)),
        ("binary junk", junk(false)),
    ];
    if matches!(kind, Kind::Number | Kind::Word | Kind::Mapping) {
        v.push(("negative", b"-1".to_vec()));
        v.push(("huge", b"99999999999999999999999".to_vec()));
        v.push(("2^32", b"4294967296".to_vec()));
    }
    if kind == Kind::Path {
        let quoted = |s: &str| {
            if yaml {
                format!("\"{s}\"").into_bytes()
            } else {
                s.as_bytes().to_vec()
            }
        };
        v.push(("lone %", quoted("%")));
        v.push(("unknown escape", quoted("a%x")));
        v.push(("directory", quoted("reports/")));
    }
    v
}

/// Every inline option that takes a value, with its kind. `help` takes none (any value prints the help).
const OPTIONS: &[(&str, Kind)] = &[
    ("rules", Kind::Path),
    ("file", Kind::Path),
    ("output", Kind::Path),
    ("depth", Kind::Number),
    ("live", Kind::Word),
    ("stacks", Kind::Word),
    ("calls", Kind::Word),
    ("leaves", Kind::Word),
    ("clock", Kind::Word),
    ("threads", Kind::Word),
    ("monitors", Kind::Word),
    ("deadlocks", Kind::Number),
    ("trace", Kind::Path),
    ("trace-allocs", Kind::Word),
    ("trace-ring", Kind::Number),
    ("cpu", Kind::Word),
    ("wall", Kind::Word),
    ("engine", Kind::Word),
    ("sample-threads", Kind::Word),
];

/// Every rules key (rules/README.md): a YAML file with `{}` where the value goes, the kind, and the
/// name the message must give. Values stay on the key's line (flow lists for the patterns), so that
/// whatever the YAML parser says points at that key.
const KEYS: &[(&str, Kind, &str)] = &[
    ("probes: {}\n", Kind::Mapping, "probes"),
    ("probes: [{}]\n", Kind::Word, "probes"),
    ("methods: {}\n", Kind::Mapping, "methods"),
    (
        "probes: [methods]\nmethods:\n  include: [{}]\n",
        Kind::Pattern,
        "include",
    ),
    (
        "probes: [methods]\nmethods:\n  exclude: [{}]\n",
        Kind::Pattern,
        "exclude",
    ),
    ("methods:\n  bridges: {}\n", Kind::Word, "bridges"),
    ("methods:\n  synthetic: {}\n", Kind::Word, "synthetic"),
    ("allocations: {}\n", Kind::Mapping, "allocations"),
    (
        "probes: [objects]\nallocations:\n  include: [{}]\n",
        Kind::Pattern,
        "include",
    ),
    (
        "probes: [objects]\nallocations:\n  exclude: [{}]\n",
        Kind::Pattern,
        "exclude",
    ),
    ("allocations:\n  depth: {}\n", Kind::Number, "depth"),
    ("allocations:\n  live: {}\n", Kind::Number, "live"),
    (
        "allocations:\n  live_bytes: {}\n",
        Kind::Number,
        "live_bytes",
    ),
    ("output: {}\n", Kind::Path, "output"),
    ("threads: {}\n", Kind::Mapping, "threads"),
    ("threads:\n  monitors: {}\n", Kind::Word, "monitors"),
    ("threads:\n  deadlocks: {}\n", Kind::Mapping, "deadlocks"),
    (
        "threads:\n  deadlocks:\n    watch_ms: {}\n",
        Kind::Number,
        "watch_ms",
    ),
    ("threads:\n  trace: {}\n", Kind::Mapping, "trace"),
    ("threads:\n  trace:\n    file: {}\n", Kind::Path, "file"),
    (
        "threads:\n  trace:\n    allocations: {}\n",
        Kind::Word,
        "allocations",
    ),
    ("sampling: {}\n", Kind::Mapping, "sampling"),
    ("sampling:\n  cpu: {}\n", Kind::Word, "cpu"),
    ("sampling:\n  wall: {}\n", Kind::Word, "wall"),
    ("sampling:\n  engine: {}\n", Kind::Word, "engine"),
    // A list where an interval goes: the wrong type (the message names the section, its hint the key).
    ("sampling:\n  cpu: [{}]\n", Kind::Word, "cpu"),
];

/// One JVM start that must be refused.
struct Case {
    what: String,
    /// The agent's option string, as bytes (it may hold anything but NUL).
    options: Vec<u8>,
    /// What the one `instr:` line must contain.
    names: String,
    /// Give the JVM a pipe for stdin and keep it open (for /dev/stdin): a read from it would block.
    open_stdin: bool,
}

fn cases(inputs: &Path) -> Vec<Case> {
    let mut cases = Vec::new();
    for &(key, kind) in OPTIONS {
        for (label, value) in values(kind, false) {
            let mut options = format!("{key}=").into_bytes();
            options.extend(&value);
            cases.push(Case {
                what: format!("option {key}= {label}"),
                options,
                names: key.to_string(),
                open_stdin: false,
            });
        }
    }
    for (n, &(template, kind, names)) in KEYS.iter().enumerate() {
        for (m, (label, value)) in values(kind, true).into_iter().enumerate() {
            let (before, after) = template.split_once("{}").unwrap();
            let mut yaml = before.as_bytes().to_vec();
            yaml.extend(&value);
            yaml.extend(after.as_bytes());
            let file = inputs.join(format!("key-{n}-{m}.yaml"));
            fs::write(&file, yaml).unwrap();
            let mut options = b"rules=".to_vec();
            options.extend(file.as_os_str().as_encoded_bytes());
            let key = template
                .lines()
                .last()
                .unwrap()
                .split(':')
                .next()
                .unwrap()
                .trim();
            cases.push(Case {
                what: format!("rules key {key} {label}"),
                options,
                names: names.to_string(),
                open_stdin: false,
            });
        }
    }
    // What is not a small regular file, given to `rules=` and as the whole option string.
    let fifo = inputs.join("fifo.yaml");
    let made = run(Command::new("mkfifo").arg(&fifo));
    check("mkfifo", &made);
    let dir = inputs.join("dir.yaml");
    fs::create_dir_all(&dir).unwrap();
    // Valid YAML (comments only) if it were read: only its size can refuse it.
    let big = inputs.join("big.yaml");
    fs::write(
        &big,
        "# a comment line of 64 bytes, repeated to make a 2 MB rules file\n".repeat(32 << 10),
    )
    .unwrap();
    let files: [(&str, PathBuf, &str); 6] = [
        ("/dev/zero", PathBuf::from("/dev/zero"), "device"),
        ("a FIFO", fifo, "FIFO"),
        (
            "/dev/stdin (an open pipe)",
            PathBuf::from("/dev/stdin"),
            "FIFO",
        ),
        ("a directory", dir, "directory"),
        ("a 2 MB file", big, "larger than"),
        (
            "a missing file",
            inputs.join("missing.yaml"),
            "No such file",
        ),
    ];
    for (label, path, names) in files {
        for prefix in ["rules=", ""] {
            let mut options = prefix.as_bytes().to_vec();
            options.extend(path.as_os_str().as_encoded_bytes());
            cases.push(Case {
                what: format!("{prefix}{label}"),
                options,
                names: names.to_string(),
                open_stdin: label.starts_with("/dev/stdin"),
            });
        }
    }
    cases
}

/// Runs the case's JVM in `cwd` (empty), killing it after [`HANG`].
fn start(jdk: &Jdk, case: &Case, cwd: &Path, inputs: &Path) -> Result<Output, String> {
    let mut agent = b"-agentpath:".to_vec();
    agent.extend(agent_lib().as_os_str().as_encoded_bytes());
    agent.push(b'=');
    agent.extend(&case.options);
    let mut cmd = Command::new(jdk.bin("java"));
    // One argument is at most 128 KB on Linux (MAX_ARG_STRLEN): a megabyte goes through an @argfile,
    // which holds one token here (the long values are whitespace-free).
    if agent.len() > 100_000 {
        let argfile = inputs.join("long-option.args");
        fs::write(&argfile, &agent).unwrap();
        cmd.arg(format!("@{}", argfile.display()));
    } else {
        cmd.arg(std::ffi::OsStr::from_bytes(&agent));
    }
    cmd.arg("-version")
        .current_dir(cwd)
        .stdin(if case.open_stdin {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| format!("cannot start java: {e}"))?;
    // Held open until the VM ends: a VM reading it would wait for more, not see its end.
    let stdin = child.stdin.take();
    let pid = child.id();
    let (done, finished) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(child.wait_with_output());
    });
    let result = match finished.recv_timeout(HANG) {
        Ok(out) => out.map_err(|e| format!("waiting for java: {e}")),
        Err(_) => {
            // Still running, so not yet reaped: the pid is still this VM's.
            let threads = hang_report(pid);
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
            let _ = finished.recv();
            Err(format!(
                "hung: still running after {HANG:?}, killed\n{threads}"
            ))
        }
    };
    drop(stdin);
    result
}

/// Every way the case's outcome differs from a clean refusal.
fn problems(case: &Case, out: &Output, cwd: &Path) -> Vec<String> {
    let stderr = text(&out.stderr);
    let mut found = Vec::new();
    if out.status.success() {
        found.push("the VM started".to_string());
    }
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("instr: "))
        .collect();
    match lines.as_slice() {
        [line] if !line.contains(&case.names) => found.push(format!(
            "the instr: line does not name {:?}: {line}",
            case.names
        )),
        [_] => {}
        _ => found.push(format!("{} instr: lines", lines.len())),
    }
    for bad in ["panicked", "SIGSEGV", "hs_err", "fatal error"] {
        if stderr.contains(bad) {
            found.push(format!("stderr says {bad:?}"));
        }
    }
    // Nothing may be left where the VM ran: no hs_err_pid*.log, no report files (an empty `file=` once
    // wrote `.json`, `.txt` and `.collapsed` there).
    // `reports/` is there for `file=reports/`, and must stay empty.
    let reports = fs::read_dir(cwd.join("reports"))
        .into_iter()
        .flatten()
        .flatten();
    let others = fs::read_dir(cwd)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name() != "reports");
    for entry in reports.chain(others) {
        found.push(format!(
            "left {:?} in the working directory",
            entry.file_name()
        ));
        let path = entry.path();
        if path.is_dir() {
            let _ = fs::remove_dir_all(&path);
        } else {
            let _ = fs::remove_file(&path);
        }
    }
    found
}

#[test]
fn hostile_option_values_are_refused_with_one_line() {
    let jdks = jdks();
    assert!(!jdks.is_empty(), "no JDK under /usr/lib/jvm");
    let mut failures = Vec::new();
    for jdk in &jdks {
        let inputs = scratch(&format!("options-inputs-{}", jdk.key()));
        let cwd = scratch(&format!("options-cwd-{}", jdk.key()));
        let cases = cases(&inputs);
        // `file=reports/` must be refused for its form, not because the directory is missing.
        fs::create_dir_all(cwd.join("reports")).unwrap();
        let mut refused = 0;
        for case in &cases {
            let outcome = start(jdk, case, &cwd, &inputs).map(|out| {
                let mut p = problems(case, &out, &cwd);
                if !p.is_empty() {
                    p.push(format!("stderr:\n{}", tail(&text(&out.stderr), 5)));
                }
                p
            });
            match outcome {
                Ok(p) if p.is_empty() => refused += 1,
                Ok(p) => {
                    failures.push(format!("[{}] {}: {}", jdk.version, case.what, p.join("; ")))
                }
                Err(e) => failures.push(format!("[{}] {}: {e}", jdk.version, case.what)),
            }
        }
        println!(
            "[{}] {} hostile cases: {refused} refused cleanly, {} not",
            jdk.version,
            cases.len(),
            cases.len() - refused
        );
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
