//! `heapdump=`: the agent's binary HPROF dump, read by a third-party parser (VisualVM's heap library,
//! Debian's `visualvm` package) beside `jcmd PID GC.heap_dump` of the same heap, on every JDK.
//!
//! `test-classes/hprof/HprofTarget.java` keeps known objects alive and waits on stdin; meanwhile the
//! test takes the JVM's own dump with jcmd and asks the agent for one with SIGQUIT, then lets the
//! program exit (a second dump at exit). `HeapCheck.java` prints what each dump holds; the counts of the
//! test's classes, the marked object's fields and the static fields must be the JVM's exactly, and the
//! agent's dump must name the allocating method of a live-tracked object and the threads' stacks.

mod support;

use std::collections::HashMap;
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::*;

/// The heap library's jar in Debian's visualvm package.
fn heap_library() -> PathBuf {
    let out = Command::new("dpkg").args(["-L", "visualvm"]).output();
    let listed = out.map(|o| text(&o.stdout)).unwrap_or_default();
    let jar = listed
        .lines()
        .find(|l| {
            l.ends_with("lib-jfluid-heap.jar") || l.ends_with("org-netbeans-lib-profiler.jar")
        })
        .map(PathBuf::from);
    match jar {
        Some(j) if j.is_file() => j,
        _ => panic!(
            "the visualvm package (its heap library, lib-jfluid-heap.jar) is not installed: \
             tests/hprof.rs parses dumps with it; run scripts/setup.sh"
        ),
    }
}

/// HeapCheck's lines for one dump, by their first words (`count HprofLeaf` -> `1235`).
fn check_dump(jdk: &Jdk, classes: &Path, jar: &Path, dump: &Path) -> HashMap<String, String> {
    let cp = format!("{}:{}", jar.display(), classes.display());
    let out = java(
        jdk,
        &[
            "-cp",
            &cp,
            "org.graalvm.visualvm.lib.jfluid.heap.HeapCheck",
            &dump.display().to_string(),
        ],
    );
    check(&format!("HeapCheck {}", dump.display()), &out);
    let mut facts = HashMap::new();
    for line in text(&out.stdout).lines() {
        let words: Vec<&str> = line.split(' ').collect();
        let (key, value) = match words[0] {
            "count" | "marked" => (words[..2].join(" "), words[2..].join(" ")),
            "static" => (words[..3].join(" "), words[3..].join(" ")),
            "site" => (words[..3].join(" "), words[3..].join(" ")),
            // Thread names may hold spaces; the frames are what is compared.
            "thread" => (line.to_string(), String::new()),
            _ => continue,
        };
        facts.insert(key, value);
    }
    facts
}

#[test]
fn heap_dump_reads_like_the_jvms_own() {
    let jar = heap_library();
    for jdk in jdks() {
        let dir = scratch(&format!("hprof-{}", jdk.key()));
        let classes = dir.join("classes");
        javac(
            &jdk,
            &[workspace().join("test-classes/hprof/HprofTarget.java")],
            &classes,
            &[],
        );
        javac(
            &jdk,
            &[workspace()
                .join("test-classes/hprof/org/graalvm/visualvm/lib/jfluid/heap/HeapCheck.java")],
            &classes,
            &["-cp", &jar.display().to_string()],
        );
        let prefix = dir.join("out");
        let stderr_path = dir.join("stderr.txt");
        let mut child = Command::new(jdk.bin("java"))
            .arg(format!(
                "-agentpath:{}=file={},depth=1,live=exact,heapdump=both",
                agent_lib().display(),
                prefix.display()
            ))
            .arg("-cp")
            .arg(&classes)
            .arg("HprofTarget")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(fs::File::create(&stderr_path).unwrap())
            .spawn()
            .expect("start java");
        let pid = child.id().to_string();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        assert_eq!(lines.next().unwrap().unwrap(), "ready");

        let jcmd_dump = dir.join("jcmd.hprof");
        let jcmd = run(Command::new(jdk.bin("jcmd"))
            .arg(&pid)
            .arg("GC.heap_dump")
            .arg(&jcmd_dump));
        check("jcmd GC.heap_dump", &jcmd);

        let ours = dir.join("out.hprof");
        assert!(Command::new("kill")
            .args(["-QUIT", &pid])
            .status()
            .unwrap()
            .success());
        let deadline = Instant::now() + Duration::from_secs(120);
        while !ours.exists() {
            assert!(Instant::now() < deadline, "no heap dump after SIGQUIT");
            std::thread::sleep(Duration::from_millis(50));
        }
        let on_demand = dir.join("demand.hprof");
        fs::copy(&ours, &on_demand).unwrap();
        child.stdin.take().unwrap().write_all(b"go\n").unwrap();
        // Drain the thread dump SIGQUIT printed, so the child never blocks on a full pipe.
        for _ in lines {}
        assert!(child.wait().unwrap().success());
        let stderr = fs::read_to_string(&stderr_path).unwrap();
        println!("[{}] {}", jdk.version, stderr.trim());
        println!(
            "[{}] jcmd dump {} bytes, ours {} bytes",
            jdk.version,
            fs::metadata(&jcmd_dump).unwrap().len(),
            fs::metadata(&on_demand).unwrap().len()
        );
        assert_eq!(
            stderr
                .lines()
                .filter(|l| l.starts_with("instr: heap dump "))
                .count(),
            2,
            "one dump on demand, one at exit:\n{stderr}"
        );
        let leftovers: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().contains(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");

        let theirs = check_dump(&jdk, &classes, &jar, &jcmd_dump);
        for (what, dump) in [("on demand", &on_demand), ("at exit", &ours)] {
            let facts = check_dump(&jdk, &classes, &jar, dump);
            let v = jdk.version.as_str();
            for (key, expected) in [
                ("count HprofLeaf", "1235"),
                ("count HprofBase", "10"),
                ("count HprofLeaf[]", "55"),
                ("marked leafValue", "1099511627776"),
                ("marked flag", "true"),
                ("marked label", "marked"),
                ("marked next", "int[]"),
                ("marked next-values", "[7, 8, 9]"),
                ("static HprofTarget statics", "31337"),
                ("static HprofBase baseStatic", "base-static"),
            ] {
                assert_eq!(
                    theirs.get(key).map(String::as_str),
                    Some(expected),
                    "[{v}] jcmd's dump: {key}"
                );
                assert_eq!(facts.get(key), theirs.get(key), "[{v}] {what}: {key}");
            }
            // Every Hprof* class the JVM's dump counts, ours counts the same.
            for (key, n) in theirs.iter().filter(|(k, _)| k.starts_with("count ")) {
                assert_eq!(facts.get(key), Some(n), "[{v}] {what}: {key}");
            }
            // Allocation sites, from the live tracker's tags: every leaf but the marked one was made in
            // makeLeaves (line 18), the marked one and the arrays in main.
            let sites = |class: &str| {
                let mut v: Vec<String> = facts
                    .iter()
                    .filter(|(k, _)| k.starts_with(&format!("site {class} ")))
                    .map(|(k, n)| format!("{} {n}", &k[6 + class.len()..]))
                    .collect();
                v.sort();
                v
            };
            assert_eq!(
                sites("HprofLeaf"),
                ["HprofTarget.main:32 1", "HprofTarget.makeLeaves:18 1234"],
                "[{v}] {what}: allocation sites of HprofLeaf"
            );
            assert_eq!(
                sites("HprofLeaf[]"),
                ["HprofTarget.main:28 55"],
                "[{v}] {what}: allocation sites of HprofLeaf[]"
            );
            let threads: Vec<&String> = facts.keys().filter(|k| k.starts_with("thread ")).collect();
            assert!(
                threads
                    .iter()
                    .any(|t| t.contains("java.lang.ref.Reference")),
                "[{v}] {what}: thread roots with their stacks: {threads:?}"
            );
            if what == "on demand" {
                // main waits in readLine: its stack ends in HprofTarget.main, as in jcmd's dump.
                let main = |f: &HashMap<String, String>| {
                    f.keys()
                        .any(|k| k.starts_with("thread main ") && k.ends_with(" HprofTarget.main"))
                };
                assert!(
                    main(&theirs),
                    "[{v}] jcmd's main thread: {:?}",
                    theirs.keys()
                );
                assert!(
                    main(&facts),
                    "[{v}] {what}: main thread's stack: {threads:?}"
                );
            }
        }
    }
}

/// The program asks for a dump itself (`instr.Counts.heapDump()`), with no `heapdump=` option: the call
/// returns the file's path, and the dump holds the objects the program keeps.
#[test]
fn heap_dump_from_the_java_api() {
    let jar = heap_library();
    for jdk in jdks() {
        let v = &jdk.version;
        let dir = scratch(&format!("hprof-api-{}", jdk.key()));
        let classes = dir.join("classes");
        javac(
            &jdk,
            &[
                workspace().join("test-classes/hprof/HprofApi.java"),
                workspace().join("java/instr-api/instr/Counts.java"),
            ],
            &classes,
            &[],
        );
        javac(
            &jdk,
            &[workspace()
                .join("test-classes/hprof/org/graalvm/visualvm/lib/jfluid/heap/HeapCheck.java")],
            &classes,
            &["-cp", &jar.display().to_string()],
        );
        let prefix = dir.join("api");
        let out = run(Command::new(jdk.bin("java"))
            .arg(format!(
                "-agentpath:{}=file={}",
                agent_lib().display(),
                prefix.display()
            ))
            .arg("-cp")
            .arg(&classes)
            .arg("HprofApi"));
        check(&format!("[{v}] HprofApi"), &out);
        let stdout = text(&out.stdout);
        let dump = dir.join("api.hprof");
        assert!(
            stdout.contains(&format!("dumped {}", dump.display())),
            "[{v}] {stdout}"
        );
        let facts = check_dump(&jdk, &classes, &jar, &dump);
        assert_eq!(
            facts.get("count HprofApi$HprofApiItem").map(String::as_str),
            Some("321"),
            "[{v}] {facts:?}"
        );
    }
}
