//! The agent loaded into a running JVM (`instr attach`, `jcmd PID JVMTI.agent_load`) and controlled there
//! (`instr ctl`): probes started and stopped by retransformation, with exact counts inside each on-window,
//! nothing counted outside, and every class byte-identical to its original after `stop`; the control
//! socket refuses other users and bounds what it reads. The program, test-classes/attach/AttachLoop.java,
//! does only the work the test asks for on its stdin, so every count is known.

mod support;

use std::collections::BTreeMap;
use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Output, Stdio};

use serde_json::Value;
use support::*;

fn instr_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_instr"))
}

/// The test program and the spy agent's jar (its class is on the program's class path).
fn compile(jdk: &Jdk) -> (PathBuf, PathBuf) {
    static DONE: PerKey = std::sync::OnceLock::new();
    let classes = once_per_key(&DONE, &jdk.key(), || {
        let out = target_dir().join(format!("attach-programs-{}", jdk.key()));
        let _ = fs::remove_dir_all(&out);
        let mut sources = java_files(&workspace().join("test-classes/attach"));
        sources.push(workspace().join("java/instr-api/instr/Control.java"));
        javac(jdk, &sources, &out, &[]);
        let manifest = out.join("spy.mf");
        fs::write(
            &manifest,
            "Agent-Class: AttachSpy\nCan-Retransform-Classes: true\n",
        )
        .unwrap();
        check(
            "jar",
            &run(Command::new(jdk.bin("jar"))
                .arg("cfm")
                .arg(out.join("spy.jar"))
                .arg(&manifest)
                .arg("-C")
                .arg(&out)
                .arg("AttachSpy.class")),
        );
        out
    });
    let jar = classes.join("spy.jar");
    (classes, jar)
}

/// The rules of these tests: the allocation probes on AttachLoop's classes (and Object's constructor),
/// the method probe on AttachLoop itself.
fn rules(dir: &Path) -> PathBuf {
    let path = dir.join("attach.yaml");
    fs::write(
        &path,
        format!(
            "probes: [objects, arrays, methods]\nmethods:\n  include: [\"AttachLoop\"]\n\
             allocations:\n  include: [\"AttachLoop*\"]\n  depth: 1\noutput: \"{}/exit-%p\"\n",
            dir.display()
        ),
    )
    .unwrap();
    path
}

struct Jvm {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    pid: u32,
    stderr: PathBuf,
    what: String,
}

impl Jvm {
    fn start(jdk: &Jdk, classes: &Path, dir: &Path) -> Jvm {
        Jvm::start_with(jdk, classes, dir, None)
    }

    /// With `agent`: `-agentpath:libinstr.so=AGENT` on the command line.
    fn start_with(jdk: &Jdk, classes: &Path, dir: &Path, agent: Option<&str>) -> Jvm {
        Jvm::start_with_options(jdk, classes, dir, agent, &[])
    }

    /// As `start_with`, with more JVM options.
    fn start_with_options(
        jdk: &Jdk,
        classes: &Path,
        dir: &Path,
        agent: Option<&str>,
        options: &[&str],
    ) -> Jvm {
        let stderr = dir.join("jvm.stderr");
        let mut child = Command::new(jdk.bin("java"))
            .args(agent.map(|o| format!("-agentpath:{}={o}", agent_lib().display())))
            .args(options)
            .arg("-Djdk.attach.allowAttachSelf=true")
            // A heap of fixed size, touched up front: resident memory then shows what the agent and the
            // class redefinitions add, not the heap growing under the load.
            .args(["-Xms96m", "-Xmx96m", "-XX:+AlwaysPreTouch"])
            .arg("-cp")
            .arg(classes)
            .arg("AttachLoop")
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(fs::File::create(&stderr).unwrap())
            .spawn()
            .expect("java starts");
        let mut jvm = Jvm {
            pid: child.id(),
            stdin: child.stdin.take().unwrap(),
            stdout: BufReader::new(child.stdout.take().unwrap()),
            child,
            stderr,
            what: format!("[{}]", jdk.version),
        };
        jvm.answer("start");
        jvm
    }

    /// Lines printed up to the next "ok".
    fn answer(&mut self, what: &str) -> Vec<String> {
        let mut lines = Vec::new();
        loop {
            let mut line = String::new();
            if self.stdout.read_line(&mut line).unwrap_or(0) == 0 {
                panic!(
                    "{} the program ended during {what}; stderr:\n{}",
                    self.what,
                    self.stderr_text()
                );
            }
            let line = line.trim_end().to_string();
            if line == "ok" {
                return lines;
            }
            lines.push(line);
        }
    }

    fn ask(&mut self, command: &str) -> Vec<String> {
        writeln!(self.stdin, "{command}").unwrap();
        self.stdin.flush().unwrap();
        self.answer(command)
    }

    fn stderr_text(&self) -> String {
        fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// `instr ctl PID WORDS...`, which must succeed; its stdout.
    fn ctl(&self, words: &[&str]) -> String {
        let out = ctl(self.pid, words);
        if !out.status.success() {
            panic!(
                "{} instr ctl {words:?} failed ({}): {}\nJVM stderr:\n{}",
                self.what,
                out.status,
                text(&out.stderr),
                self.stderr_text()
            );
        }
        text(&out.stdout)
    }

    /// The report as it is now, through `instr ctl PID dump`.
    fn report(&self, file: &Path) -> Value {
        let said = self.ctl(&["dump", "json", &file.display().to_string()]);
        assert!(said.contains("bytes written"), "{said}");
        serde_json::from_str(&fs::read_to_string(file).unwrap()).unwrap()
    }

    /// Class name -> (SHA-256, length) of the bytes the spy's hook sees now.
    fn capture(&mut self) -> BTreeMap<String, String> {
        self.ask("capture")
            .iter()
            .filter_map(|l| l.strip_prefix("class "))
            .filter_map(|l| l.split_once(' '))
            .map(|(name, hash)| (name.to_string(), hash.to_string()))
            .collect()
    }

    fn rss_kb(&self) -> u64 {
        fs::read_to_string(format!("/proc/{}/status", self.pid))
            .unwrap()
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap()
    }
}

impl Drop for Jvm {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn ctl(pid: u32, words: &[&str]) -> Output {
    run(Command::new(instr_bin())
        .arg("ctl")
        .arg(pid.to_string())
        .args(words))
}

fn attach(jvm: &Jvm, options: &str) -> String {
    let out = run(Command::new(instr_bin())
        .arg("attach")
        .arg(jvm.pid.to_string())
        .arg(options)
        .arg("--agent")
        .arg(agent_lib()));
    if !out.status.success() {
        panic!(
            "{} instr attach failed: {}\nJVM stderr:\n{}",
            jvm.what,
            text(&out.stderr),
            jvm.stderr_text()
        );
    }
    text(&out.stdout)
}

fn instances(report: &Value, class: &str) -> u64 {
    report["classes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["class"] == class)
        .and_then(|c| c["instances"].as_u64())
        .unwrap_or(0)
}

fn calls(report: &Value, class: &str, method: &str) -> u64 {
    report["methods"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|m| m["class"] == class && m["method"] == method)
        .and_then(|m| m["enters"].as_u64())
        .unwrap_or(0)
}

/// (Item objects, step calls) in a report.
fn work(report: &Value) -> (u64, u64) {
    (
        instances(report, "AttachLoop$Item"),
        calls(report, "AttachLoop", "step"),
    )
}

/// Attach with `instr attach` and every probe off; the spy after it; start: the counts grow exactly with
/// the work; stop: they stay; start again. The bytes ClassFileLoadHook passes on after `stop` are the
/// class's original bytes, for every class the probes changed. Then a second JVM gets the agent through
/// `jcmd PID JVMTI.agent_load`, probes on from the attach.
#[test]
fn attach_start_stop_restores_the_original_bytes() {
    for jdk in jdks() {
        let (classes, spy) = compile(&jdk);
        let dir = scratch(&format!("attach-{}", jdk.key()));
        let rules = rules(&dir);
        let mut jvm = Jvm::start(&jdk, &classes, &dir);
        let v = jvm.what.clone();
        jvm.ask("run 100");
        let said = attach(&jvm, &format!("rules={},start=off", rules.display()));
        assert!(
            said.contains("alloc: off") && said.contains("methods: off"),
            "{v} {said}"
        );
        jvm.ask(&format!("spy {}", spy.display()));
        // The first retransform of a class HotSpot loaded from the CDS archive (Object) hands the hooks bytes
        // reconstituted from the archived class, which the redefinition then normalises: the class's own
        // bytes from then on, and the original the probes must come back to, are the second capture's.
        let first = jvm.capture();
        let original = jvm.capture();
        assert_eq!(original.len(), 3, "{v} {original:?}");
        assert_eq!(
            original,
            jvm.capture(),
            "{v} the original bytes are not stable"
        );
        eprintln!("{v} first capture {first:?}\n{v} original {original:?}");

        assert!(jvm.ctl(&["start", "alloc"]).contains("alloc on"));
        assert!(jvm.ctl(&["start", "methods"]).contains("methods on"));
        let probed = jvm.capture();
        for class in ["AttachLoop", "java/lang/Object"] {
            assert_ne!(probed[class], original[class], "{v} {class} has no probes");
        }
        let r0 = jvm.report(&dir.join("r0.json"));
        jvm.ask("run 1000");
        let r1 = jvm.report(&dir.join("r1.json"));
        assert_eq!(work(&r1), (work(&r0).0 + 1000, work(&r0).1 + 1000), "{v}");

        // The VM's own allocations (clone) count while on...
        jvm.ask("clone 100");
        let r1 = jvm.report(&dir.join("r1c.json"));
        assert_eq!(work(&r1).0, work(&r0).0 + 1000 + 101, "{v} clones");

        assert!(jvm.ctl(&["stop", "alloc"]).contains("alloc off"));
        assert!(jvm.ctl(&["stop", "methods"]).contains("methods off"));
        jvm.ask("run 1000");
        // ...and not while stopped.
        jvm.ask("clone 100");
        let r2 = jvm.report(&dir.join("r2.json"));
        assert_eq!(work(&r2), work(&r1), "{v} counted while stopped");
        assert_eq!(
            jvm.capture(),
            original,
            "{v} not the original bytes after stop"
        );
        assert!(jvm.ctl(&["status"]).contains("alloc: off"));

        jvm.ctl(&["start", "alloc"]);
        jvm.ctl(&["start", "methods"]);
        jvm.ask("run 500 2");
        let r3 = jvm.report(&dir.join("r3.json"));
        assert_eq!(work(&r3), (work(&r2).0 + 1000, work(&r2).1 + 1000), "{v}");
        let err = jvm.stderr_text();
        assert!(!err.contains("failed"), "{v} {err}");
        if jdk.feature() >= 21 {
            // JEP 451: the JVM says that an agent was loaded dynamically; the agent does not hide it.
            assert!(err.contains("loaded dynamically"), "{v} {err}");
        }
        drop(jvm);

        // jcmd: its own parser would read key=value as its option, so the agent gets a rules file.
        let mut second = Jvm::start(&jdk, &classes, &dir);
        let out = run(Command::new(jdk.bin("jcmd"))
            .arg(second.pid.to_string())
            .arg("JVMTI.agent_load")
            .arg(agent_lib())
            .arg(&rules));
        check(&format!("{v} jcmd JVMTI.agent_load"), &out);
        assert!(
            !text(&out.stdout).contains("-1"),
            "{v} {}",
            text(&out.stdout)
        );
        // The probes go on on the agent's thread after the load returns; the socket answers after that.
        let status = wait_for(|| {
            let out = ctl(second.pid, &["status"]);
            let s = text(&out.stdout);
            (out.status.success() && s.contains("alloc: on") && s.contains("methods: on"))
                .then_some(s)
        });
        assert!(status.contains("engaged: true"), "{v} {status}");
        second.ask("run 300");
        let r = second.report(&dir.join("jcmd.json"));
        assert_eq!(work(&r), (300, 300), "{v} after jcmd");
    }
}

/// Polls `f` until it has an answer. A hang detector, not a timing assertion: generous, for a loaded CI
/// machine.
fn wait_for<T>(mut f: impl FnMut() -> Option<T>) -> T {
    for _ in 0..6000 {
        if let Some(t) = f() {
            return t;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    panic!("no answer within 120 s: hung");
}

/// The socket is private (0600 in a 0700 directory of the JVM's user); a client of another uid is refused;
/// a 10 MB line, a line cut short, a silent connection and unknown commands get an error, and the JVM's
/// memory does not grow by what was sent; the channel still answers after each.
#[test]
fn the_control_socket_refuses_strangers_and_bounds_input() {
    let jdk = jdks().into_iter().last().expect("a JDK");
    let (classes, _) = compile(&jdk);
    let dir = scratch("attach-security");
    let rules = rules(&dir);
    let jvm = Jvm::start(&jdk, &classes, &dir);
    attach(&jvm, &format!("rules={},start=off", rules.display()));
    let uid = std::os::unix::fs::MetadataExt::uid(&fs::metadata("/proc/self").unwrap());
    let socket = PathBuf::from(format!("/tmp/instr-{uid}/{}.sock", jvm.pid));
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&socket), 0o600);
    assert_eq!(mode(socket.parent().unwrap()), 0o700);

    // Another uid: refused before the agent reads a byte.
    let stranger = run(Command::new("setpriv")
        .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"])
        .arg(instr_bin())
        .args(["ctl", &jvm.pid.to_string(), "stop", "alloc"]));
    assert_eq!(
        stranger.status.code(),
        Some(2),
        "{}",
        text(&stranger.stderr)
    );
    assert!(
        text(&stranger.stderr).contains("cannot connect"),
        "{}",
        text(&stranger.stderr)
    );

    let converse = |bytes: &[u8]| -> String {
        let mut s = UnixStream::connect(&socket).unwrap();
        let _ = s.write_all(bytes); // the agent may close before reading it all
        let _ = s.shutdown(std::net::Shutdown::Write);
        let mut answer = String::new();
        let _ = s.read_to_string(&mut answer);
        answer
    };
    let before = jvm.rss_kb();
    let mut huge = vec![b'x'; 10 << 20];
    huge.push(b'\n');
    let answer = converse(&huge);
    assert!(
        answer.starts_with("error: command line longer than 4096 bytes"),
        "{answer}"
    );
    let grown = jvm.rss_kb().saturating_sub(before);
    assert!(
        grown < 4096,
        "the JVM grew by {grown} kB after a 10 MB line"
    );

    assert!(converse(b"status").starts_with("error: the connection closed before"));
    assert!(converse(b"launch missiles\n").starts_with("error: 'launch'"));
    assert!(converse(b"start heap\n").contains("unknown probe 'heap'"));
    assert!(converse(b"dump json relative.json\n").contains("absolute path"));
    assert!(converse(&[0xff, 0xfe, b'\n']).contains("not UTF-8"));

    // A client that connects and says nothing is dropped after the timeout; the next one is served.
    let mut silent = UnixStream::connect(&socket).unwrap();
    let served = ctl(jvm.pid, &["status"]);
    assert!(served.status.success(), "{}", text(&served.stderr));
    let mut answer = String::new();
    let _ = silent.read_to_string(&mut answer);
    assert!(
        answer.starts_with("error: no complete command line"),
        "{answer}"
    );
    let out = ctl(jvm.pid, &["launch"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
}

/// 100 start/stop cycles while 8 threads allocate and call in other classes: each on-window counts the
/// work done in it exactly, off-windows count nothing, and the JVM's resident memory grows by less than
/// 64 MB from cycle 10 to cycle 100 (docs/ATTACH.md).
#[test]
fn a_hundred_start_stop_cycles_under_load() {
    for jdk in jdks() {
        let (classes, _) = compile(&jdk);
        let dir = scratch(&format!("attach-cycles-{}", jdk.key()));
        let rules = rules(&dir);
        let mut jvm = Jvm::start(&jdk, &classes, &dir);
        let v = jvm.what.clone();
        attach(&jvm, &format!("rules={},start=off", rules.display()));
        jvm.ask("noise on");
        let report = dir.join("cycle.json");
        let mut last = work(&jvm.report(&report));
        let mut rss_at_10 = 0;
        for cycle in 0..100 {
            jvm.ctl(&["start", "alloc"]);
            jvm.ctl(&["start", "methods"]);
            jvm.ask("run 100 8");
            let now = work(&jvm.report(&report));
            assert_eq!(now, (last.0 + 800, last.1 + 800), "{v} cycle {cycle}");
            jvm.ctl(&["stop", "alloc"]);
            jvm.ctl(&["stop", "methods"]);
            jvm.ask("run 100 8");
            if cycle % 10 == 9 {
                assert_eq!(
                    work(&jvm.report(&report)),
                    now,
                    "{v} cycle {cycle}, stopped"
                );
            }
            last = now;
            if cycle == 9 {
                rss_at_10 = jvm.rss_kb();
            }
        }
        let grown = jvm.rss_kb().saturating_sub(rss_at_10);
        assert!(grown < 64 << 10, "{v} grew by {grown} kB over 90 cycles");
        jvm.ask("noise off");
        let err = jvm.stderr_text();
        assert!(
            !err.contains("failed") && !err.contains("panic"),
            "{v} {err}"
        );
    }
}

/// `start=off` on the command line: nothing counted until `start`; then the same switches as after an
/// attach, from `instr ctl` and from the program itself through `instr.Control`.
#[test]
fn start_off_at_start_up_and_the_java_api() {
    for jdk in jdks() {
        let (classes, _) = compile(&jdk);
        let dir = scratch(&format!("attach-start-off-{}", jdk.key()));
        let rules = rules(&dir);
        let options = format!("rules={},start=off", rules.display());
        let mut jvm = Jvm::start_with(&jdk, &classes, &dir, Some(&options));
        let v = jvm.what.clone();
        let status = wait_for(|| {
            let out = ctl(jvm.pid, &["status"]);
            out.status.success().then(|| text(&out.stdout))
        });
        assert!(
            status.contains("alloc: off") && status.contains("engaged: true"),
            "{v} {status}"
        );
        jvm.ask("run 100");
        assert_eq!(
            work(&jvm.report(&dir.join("off.json"))),
            (0, 0),
            "{v} counted while off"
        );

        jvm.ctl(&["start", "alloc"]);
        jvm.ctl(&["start", "methods"]);
        jvm.ask("run 200");
        assert_eq!(work(&jvm.report(&dir.join("on.json"))), (200, 200), "{v}");

        // The same from the program: stop, work, a dump, start, work.
        let said = jvm.ask("control stop alloc").join("\n");
        assert!(said.contains("alloc off"), "{v} {said}");
        jvm.ask("control stop methods");
        jvm.ask("run 300");
        let file = dir.join("api.json");
        let said = jvm
            .ask(&format!("control dump {}", file.display()))
            .join("\n");
        assert!(said.contains("bytes written"), "{v} {said}");
        let r: Value = serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(
            work(&r),
            (200, 200),
            "{v} counted while stopped from the API"
        );
        let refused = jvm.ask("control start cpu often").join("\n");
        assert!(
            refused.starts_with("refused: instr: start cpu often:"),
            "{v} {refused}"
        );
        jvm.ask("control start alloc");
        jvm.ask("control start methods");
        jvm.ask("run 50");
        assert_eq!(
            work(&jvm.report(&dir.join("again.json"))),
            (250, 250),
            "{v}"
        );
        // Rules of its own for a probe: methods probed in Item instead of AttachLoop, counted from now.
        jvm.ctl(&["stop", "methods"]);
        let item_rules = dir.join("item-methods.yaml");
        fs::write(
            &item_rules,
            "probes: [methods]\nmethods:\n  include: [\"AttachLoop$Item\"]\n",
        )
        .unwrap();
        let said = jvm.ctl(&["start", "methods", &item_rules.display().to_string()]);
        assert!(said.contains("methods on"), "{v} {said}");
        let before = jvm.report(&dir.join("item0.json"));
        jvm.ask("clone 10");
        jvm.ask("run 5");
        let after = jvm.report(&dir.join("item1.json"));
        assert_eq!(
            calls(&after, "AttachLoop$Item", "copy") - calls(&before, "AttachLoop$Item", "copy"),
            10,
            "{v}"
        );
        assert_eq!(
            work(&after).1,
            work(&before).1,
            "{v} step probed under the other rules"
        );
        // Classes named on the command line, no rules file on the target machine: only those are
        // retransformed, and their objects are counted exactly.
        jvm.ctl(&["stop", "alloc"]);
        let said = jvm.ctl(&["start", "alloc", "include=AttachLoop*,java.lang.Runnable"]);
        let retransformed: usize = said
            .split("alloc on: ")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(usize::MAX);
        // AttachLoop's own classes and java.lang.Object (for Object.<init>), not the JDK's hundreds; and
        // not Runnable, which has no allocation for the probes to change.
        assert!(retransformed <= 10, "{v} {said}");
        assert!(
            said.contains("without an allocation left as they were"),
            "{v} {said}"
        );
        let before = jvm.report(&dir.join("include0.json"));
        jvm.ask("run 40");
        let after = jvm.report(&dir.join("include1.json"));
        assert_eq!(work(&after).0 - work(&before).0, 40, "{v} {said}");
        let out = ctl(jvm.pid, &["start", "methods", "include=\"x"]);
        assert!(
            text(&out.stderr).contains("no quotes"),
            "{v} {}",
            text(&out.stderr)
        );
        let out = ctl(jvm.pid, &["start", "alloc", "depth=3"]);
        assert!(
            text(&out.stderr).contains("fixed when the agent loads"),
            "{v} {}",
            text(&out.stderr)
        );
        // Every report format, by name or by the file's extension.
        for (format, file, expect) in [
            ("txt", "now.txt", &b"AttachLoop$Item"[..]),
            ("", "now.html", b"<html"),
            ("collapsed", "now.folded", b"AttachLoop"),
            ("", "now.pb.gz", b"\x1f\x8b"),
        ] {
            let path = dir.join(file).display().to_string();
            let words: Vec<&str> = ["dump", format, &path]
                .into_iter()
                .filter(|w| !w.is_empty())
                .collect();
            jvm.ctl(&words);
            let bytes = fs::read(&path).unwrap();
            assert!(
                bytes.windows(expect.len()).any(|w| w == expect),
                "{v} {file} lacks {:?}",
                String::from_utf8_lossy(expect)
            );
        }
        let out = ctl(jvm.pid, &["dump", "svg", "/tmp/x.svg"]);
        assert_eq!(out.status.code(), Some(1));
        assert!(
            text(&out.stderr).contains("unknown format 'svg'"),
            "{}",
            text(&out.stderr)
        );
        jvm.ask("control reset");
        assert_eq!(
            work(&jvm.report(&dir.join("reset.json"))),
            (0, 0),
            "{v} after reset"
        );
        let err = jvm.stderr_text();
        assert!(
            !err.contains("failed") && !err.contains("loaded dynamically"),
            "{v} {err}"
        );
    }
}

/// A stop on a VM without a code sweeper (JDK 20+) unloads the code compiled with the probes by two
/// collections the stop reports (obsolete_code.rs): on G1 concurrent cycles, no full GC, and the two flags
/// the agent sets for them put back; on another collector two full GCs. On JDK 17 the sweeper does it and no
/// collection is asked for.
#[test]
fn a_stop_unloads_the_code_compiled_with_the_probes() {
    for jdk in jdks() {
        let (classes, _) = compile(&jdk);
        for (gc, by) in [
            ("-XX:+UseG1GC", "two concurrent G1 cycles"),
            ("-XX:+UseParallelGC", "two full GCs"),
        ] {
            if gc != "-XX:+UseG1GC" && jdk.feature() < 20 {
                continue;
            }
            let dir = scratch(&format!("attach-code-{}-{}", jdk.key(), &gc[6..]));
            let options = format!("rules={},start=off", rules(&dir).display());
            let mut jvm = Jvm::start_with_options(&jdk, &classes, &dir, Some(&options), &[gc]);
            let v = format!("{} {gc}", jvm.what);
            wait_for(|| ctl(jvm.pid, &["status"]).status.success().then_some(()));
            jvm.ctl(&["start", "alloc"]);
            // Enough calls of `step` for C1 and C2 to compile it, and the objects' constructors, with the
            // probes.
            jvm.ask("run 200000 2");
            std::thread::sleep(std::time::Duration::from_millis(500));
            let number =
                |jvm: &mut Jvm, what: &str| -> u64 { jvm.ask(what)[0].trim().parse().unwrap() };
            let before = number(&mut jvm, "codecache");
            let full_before = number(&mut jvm, "fullgcs");
            let said = jvm.ctl(&["stop", "alloc"]);
            let after = number(&mut jvm, "codecache");
            let full_after = number(&mut jvm, "fullgcs");
            if jdk.feature() < 20 {
                assert!(!said.contains("unloaded by"), "{v} {said}");
                continue;
            }
            assert!(
                said.contains(&format!("unloaded by {by} in")),
                "{v} the stop did not say it collected {by}: {said}"
            );
            assert!(
                after < before,
                "{v} compiled code before the stop {before} bytes, after {after}"
            );
            if by.contains("concurrent") {
                assert_eq!(full_after, full_before, "{v} a full GC at the stop: {said}");
                for flag in ["ExplicitGCInvokesConcurrent", "DisableExplicitGC"] {
                    assert_eq!(
                        jvm.ask(&format!("flag {flag}")),
                        ["false"],
                        "{v} {flag} not put back"
                    );
                }
            } else {
                assert_eq!(full_after, full_before + 2, "{v} {said}");
            }
        }
    }
}

/// `instr attach` signals only a process with a HotSpot VM in it: SIGQUIT would end most others.
#[test]
fn attach_refuses_a_process_that_is_not_a_jvm() {
    // The library first: its one-time build may wait for cargo's lock longer than the sleeper lives.
    let lib = agent_lib();
    let mut sleeper = Command::new("sleep").arg("60").spawn().unwrap();
    let out = run(Command::new(instr_bin())
        .args(["attach", &sleeper.id().to_string()])
        .arg("--agent")
        .arg(lib));
    let alive = sleeper.try_wait().unwrap().is_none();
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("not a HotSpot JVM"),
        "{}",
        text(&out.stderr)
    );
    assert!(alive, "the process was signalled");
    let out = run(Command::new(instr_bin()).args(["attach", "999999999"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("no such process"),
        "{}",
        text(&out.stderr)
    );
}

/// `threads` and `deadlocks` answer from a snapshot taken now when the thread profiler runs (loaded at
/// start-up with `threads=on`), and say what is missing when it does not.
#[test]
fn thread_dumps_through_the_socket() {
    for jdk in jdks() {
        let (classes, _) = compile(&jdk);
        let dir = scratch(&format!("attach-threads-{}", jdk.key()));
        let rules = rules(&dir);
        let options = format!("rules={},start=off,threads=on", rules.display());
        let jvm = Jvm::start_with(&jdk, &classes, &dir, Some(&options));
        let v = jvm.what.clone();
        let dump = wait_for(|| {
            let out = ctl(jvm.pid, &["threads"]);
            out.status.success().then(|| text(&out.stdout))
        });
        assert!(dump.contains("main"), "{v} {dump}");
        assert!(dump.contains("AttachLoop"), "{v} {dump}");
        let out = ctl(jvm.pid, &["deadlocks"]);
        assert!(out.status.success(), "{v} {}", text(&out.stderr));
        drop(jvm);

        let jvm = Jvm::start_with(
            &jdk,
            &classes,
            &dir,
            Some(&format!("rules={}", rules.display())),
        );
        let out = wait_for(|| {
            let out = ctl(jvm.pid, &["threads"]);
            (out.status.code() == Some(1)).then_some(out)
        });
        assert!(
            text(&out.stderr).contains("threads=on"),
            "{v} {}",
            text(&out.stderr)
        );
    }
}

/// The live objects and bytes of `class` in a report's class rows, if it has live figures.
fn live_of_class(report: &Value, class: &str) -> Option<(u64, u64)> {
    report["classes"]
        .as_array()?
        .iter()
        .find(|c| c["class"] == class)
        .and_then(|c| Some((c["live_instances"].as_u64()?, c["live_bytes"].as_u64()?)))
}

/// The "(before profiling)" site of `class`: its live objects and bytes, with its stack checked to be the
/// one pseudo-frame.
fn before_profiling(report: &Value, class: &str) -> Option<(u64, u64)> {
    let site = report["sites"]
        .as_array()?
        .iter()
        .find(|s| s["class"] == class && s["before_profiling"] == true)?;
    let stack = site["stack"].as_array().unwrap();
    assert_eq!(stack.len(), 1, "{site}");
    let frame = &report["frames"][stack[0].as_u64().unwrap() as usize];
    assert_eq!(frame["class"], "(before profiling)", "{frame}");
    assert_eq!(site["count"], 0, "{site}");
    Some((
        site["live_instances"].as_u64().unwrap(),
        site["live_bytes"].as_u64().unwrap(),
    ))
}

/// `start live` in a JVM that kept 10,000 objects before the agent came: exactly those are reported under
/// "(before profiling)", objects kept after the start are counted as they are allocated, letting 5,000 of
/// the old ones go counts them down by exactly that, `stop live` takes every live figure away, and a
/// second `start live` finds what is alive then.
#[test]
fn live_at_run_time_counts_the_objects_from_before_profiling() {
    for jdk in jdks() {
        let (classes, _) = compile(&jdk);
        let dir = scratch(&format!("attach-live-{}", jdk.key()));
        let rules = rules(&dir);
        let mut jvm = Jvm::start(&jdk, &classes, &dir);
        let v = jvm.what.clone();
        let kept = "AttachLoop$Kept";
        jvm.ask("keep 10000");
        jvm.ask("run 100");
        attach(&jvm, &format!("rules={},start=off", rules.display()));
        let r0 = jvm.report(&dir.join("live0.json"));
        assert_eq!(before_profiling(&r0, kept), None, "{v} live before start");
        assert!(jvm.ctl(&["status"]).contains("live: off"), "{v}");

        let said = jvm.ctl(&["start", "live"]);
        assert!(said.contains("live on: "), "{v} {said}");
        assert!(jvm.ctl(&["status"]).contains("live: on"), "{v}");
        let r1 = jvm.report(&dir.join("live1.json"));
        let (n, bytes) = before_profiling(&r1, kept).expect("a before-profiling site");
        assert_eq!(n, 10_000, "{v} objects from before profiling");
        assert!(bytes >= 16 * n && bytes % n == 0, "{v} {bytes} bytes");
        let size = bytes / n;
        assert_eq!(live_of_class(&r1, kept), Some((10_000, bytes)), "{v}");

        // Allocated after the start: counted as they come, not as from before.
        jvm.ask("keep 300");
        let r2 = jvm.report(&dir.join("live2.json"));
        assert_eq!(before_profiling(&r2, kept), Some((10_000, bytes)), "{v}");
        assert_eq!(
            live_of_class(&r2, kept),
            Some((10_300, 10_300 * size)),
            "{v}"
        );

        // The 5,000 oldest go: the before-profiling site counts them down, exactly.
        jvm.ask("drop 5000");
        let r3 = jvm.report(&dir.join("live3.json"));
        assert_eq!(
            before_profiling(&r3, kept),
            Some((5_000, 5_000 * size)),
            "{v}"
        );
        assert_eq!(live_of_class(&r3, kept), Some((5_300, 5_300 * size)), "{v}");

        let said = jvm.ctl(&["stop", "live"]);
        assert!(said.contains("live off"), "{v} {said}");
        jvm.ask("keep 100");
        let r4 = jvm.report(&dir.join("live4.json"));
        assert_eq!(before_profiling(&r4, kept), None, "{v} after stop");
        assert_eq!(live_of_class(&r4, kept), None, "{v} after stop");
        assert!(jvm.ctl(&["status"]).contains("live: off"), "{v}");

        // Started again: everything alive now is from before.
        jvm.ctl(&["start", "live"]);
        let r5 = jvm.report(&dir.join("live5.json"));
        assert_eq!(
            before_profiling(&r5, kept),
            Some((5_400, 5_400 * size)),
            "{v}"
        );
        let refused = ctl(jvm.pid, &["start", "live", "often"]);
        assert_eq!(refused.status.code(), Some(1), "{v}");
        assert!(text(&refused.stderr).contains("start live often"), "{v}");
        let err = jvm.stderr_text();
        assert!(!err.contains("failed"), "{v} {err}");
    }
}

/// Contended enters of `AttachLoop$Lock` in a report's monitor section.
fn lock_contentions(report: &Value) -> u64 {
    report["threads"]["monitors"]["contended"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["class"] == "AttachLoop$Lock")
        .map(|c| c["count"].as_u64().unwrap())
        .sum()
}

/// `start monitors` in an attached agent: the monitor profiler is set up with the live phase's
/// capabilities, and exactly the contended enters made while it is on are counted; `stop monitors`
/// disables the events, so contention after it adds nothing; start again counts on.
#[test]
fn monitors_start_and_stop_at_run_time() {
    for jdk in jdks() {
        let (classes, _) = compile(&jdk);
        let dir = scratch(&format!("attach-monitors-{}", jdk.key()));
        let rules = rules(&dir);
        let mut jvm = Jvm::start(&jdk, &classes, &dir);
        let v = jvm.what.clone();
        jvm.ask("contend 20");
        let said = attach(&jvm, &format!("rules={},start=off", rules.display()));
        assert!(said.contains("monitors: off"), "{v} {said}");
        jvm.ask("contend 20");
        let r0 = jvm.report(&dir.join("mon0.json"));
        assert_eq!(lock_contentions(&r0), 0, "{v} counted before start");

        let said = jvm.ctl(&["start", "monitors"]);
        assert!(said.contains("monitors on"), "{v} {said}");
        assert!(jvm.ctl(&["status"]).contains("monitors: on"), "{v}");
        jvm.ask("contend 50");
        let r1 = jvm.report(&dir.join("mon1.json"));
        assert_eq!(lock_contentions(&r1), 50, "{v} contended enters while on");

        let said = jvm.ctl(&["stop", "monitors"]);
        assert!(said.contains("monitors off"), "{v} {said}");
        jvm.ask("contend 50");
        let r2 = jvm.report(&dir.join("mon2.json"));
        assert_eq!(lock_contentions(&r2), 50, "{v} counted after stop");
        assert!(jvm.ctl(&["status"]).contains("monitors: off"), "{v}");

        jvm.ctl(&["start", "monitors"]);
        jvm.ask("contend 10");
        let r3 = jvm.report(&dir.join("mon3.json"));
        assert_eq!(lock_contentions(&r3), 60, "{v} after a second start");
        // Monitor dumps need the start-up capabilities: refused with the reason, not answered empty.
        let threads = ctl(jvm.pid, &["threads"]);
        assert_eq!(threads.status.code(), Some(1), "{v}");
        assert!(text(&threads.stderr).contains("at start-up"), "{v}");
        // The same from the program, through instr.Control.
        let said = jvm.ask("control stop monitors").join("\n");
        assert!(said.contains("monitors off"), "{v} {said}");
        let err = jvm.stderr_text();
        assert!(!err.contains("failed"), "{v} {err}");
    }
}

/// CPU samples whose running (leaf) frame is `AttachLoop$Busy.spin`, per thread.
fn spin_samples(report: &Value) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for s in report["samples"]["stacks"].as_array().into_iter().flatten() {
        let leaf = &s["frames"][0];
        if s["kind"] == "cpu" && leaf["class"] == "AttachLoop$Busy" && leaf["method"] == "spin" {
            *out.entry(s["thread"].as_str().unwrap().to_string())
                .or_default() += s["samples"].as_u64().unwrap();
        }
    }
    out
}

/// `start cpu 1ms` in an attached agent: the busy method is sampled on the main thread, which was running
/// before the start (its timer made for it, its JNIEnv found by the handler), and on a thread started
/// after; `stop cpu` deletes every timer (the kernel's list of the process's timers is empty) and the
/// samples stop growing; a second start samples again, at the same interval only.
#[test]
fn cpu_sampler_starts_and_stops_at_run_time() {
    for (jdk, attached) in jdks()
        .into_iter()
        .flat_map(|j| [(j.clone(), true), (j, false)])
    {
        let (classes, _) = compile(&jdk);
        let how = if attached { "attached" } else { "loaded" };
        let dir = scratch(&format!("attach-cpu-{how}-{}", jdk.key()));
        let rules = rules(&dir);
        let options = format!("rules={},start=off", rules.display());
        // Loaded at start-up, the main thread is the one that ran Agent_OnLoad; attached, it is found by
        // its OS name (cpu_switch.rs).
        let mut jvm = if attached {
            Jvm::start(&jdk, &classes, &dir)
        } else {
            Jvm::start_with(&jdk, &classes, &dir, Some(&options))
        };
        let v = format!("{} {how}", jvm.what);
        jvm.ask("spin 200");
        if attached {
            let said = attach(&jvm, &options);
            assert!(said.contains("cpu: off"), "{v} {said}");
        } else {
            wait_for(|| ctl(jvm.pid, &["status"]).status.success().then_some(()));
        }
        let pid = jvm.pid;
        let timers = move || {
            fs::read_to_string(format!("/proc/{pid}/timers"))
                .unwrap()
                .lines()
                .filter(|l| l.starts_with("ID:"))
                .count()
        };
        assert_eq!(timers(), 0, "{v} timers before start");

        let said = jvm.ctl(&["start", "cpu", "1ms"]);
        assert!(said.contains("cpu on"), "{v} {said}");
        assert!(timers() > 0, "{v} no timer after start");
        jvm.ask("spin 1500");
        jvm.ask("busy 1500");
        let r1 = jvm.report(&dir.join("cpu1.json"));
        let s1 = spin_samples(&r1);
        // A hang detector's bound, not a rate: 1.5 s of CPU at 1 ms gives hundreds even on a loaded machine.
        assert!(
            s1.get("main").copied().unwrap_or(0) >= 10,
            "{v} main {s1:?}"
        );
        assert!(
            s1.get("busy").copied().unwrap_or(0) >= 10,
            "{v} busy {s1:?}"
        );

        let said = jvm.ctl(&["stop", "cpu"]);
        assert!(said.contains("cpu off"), "{v} {said}");
        assert_eq!(timers(), 0, "{v} timers left after stop");
        assert!(jvm.ctl(&["status"]).contains("cpu: off"), "{v}");
        // The samples as the stop left them (it drains what the last 20 ms put in the ring).
        let stopped = jvm.report(&dir.join("cpu-stopped.json"));
        let s1 = spin_samples(&stopped);
        jvm.ask("spin 1000");
        jvm.ask("busy 1000");
        let r2 = jvm.report(&dir.join("cpu2.json"));
        assert_eq!(spin_samples(&r2), s1, "{v} samples grew after stop");
        assert_eq!(
            r2["samples"]["cpu_samples"], stopped["samples"]["cpu_samples"],
            "{v}"
        );

        let refused = ctl(jvm.pid, &["start", "cpu", "5ms"]);
        assert_eq!(refused.status.code(), Some(1), "{v}");
        assert!(text(&refused.stderr).contains("fixed"), "{v}");
        jvm.ctl(&["start", "cpu", "1ms"]);
        jvm.ask("spin 1000");
        let r3 = jvm.report(&dir.join("cpu3.json"));
        assert!(
            spin_samples(&r3)["main"] > s1["main"],
            "{v} no samples after a second start"
        );
        let err = jvm.stderr_text();
        assert!(!err.contains("failed"), "{v} {err}");
    }
}

/// A CPU sampler started while another profiler owns SIGPROF (JFR's CPU-time sampler, JDK 25 and later)
/// is refused with the reason, rather than taking the signal over: JFR's timers would then fire into the
/// agent's handler. The JVM runs on, with the agent's sampler off.
#[test]
fn cpu_sampler_refuses_a_sigprof_another_profiler_owns() {
    for jdk in jdks().into_iter().filter(|j| j.feature() >= 25) {
        let (classes, _) = compile(&jdk);
        let dir = scratch(&format!("attach-sigprof-{}", jdk.key()));
        let rules = rules(&dir);
        let jfr = format!(
            "-XX:StartFlightRecording:filename={},settings={}",
            dir.join("cpu.jfr").display(),
            workspace().join("bench/jfr-cputime-1ms.jfc").display()
        );
        let options = format!("rules={},start=off", rules.display());
        let mut jvm = Jvm::start_with_options(&jdk, &classes, &dir, Some(&options), &[&jfr]);
        let v = jvm.what.clone();
        jvm.ask("spin 200");
        let out = ctl(jvm.pid, &["start", "cpu", "1ms"]);
        let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert!(
            !out.status.success() && said.contains("another handler already owns SIGPROF"),
            "{v} {said}"
        );
        let status = jvm.ctl(&["status"]);
        assert!(status.contains("cpu: off"), "{v} {status}");
        jvm.ask("spin 200");
        println!("{v} SIGPROF left to JFR: {}", said.trim());
    }
}
