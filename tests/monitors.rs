//! The thread and monitor profiler in real JVMs, on every JDK found: contention on one monitor with the
//! waiters' frames, timed-out and notified waits, deadlocks of two and three threads (monitors and
//! ReentrantLocks) found by the watcher and on demand (SIGQUIT), and the XML trace parsed by a real XML
//! parser (Python's xml.etree) with event counts that match the program.

mod support;

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::*;

fn compile_monitor_programs(jdk: &Jdk) -> PathBuf {
    static DONE: PerKey = std::sync::OnceLock::new();
    once_per_key(&DONE, &jdk.key(), || {
        let out = target_dir().join(format!("monitor-programs-{}", jdk.key()));
        let _ = fs::remove_dir_all(&out);
        let sources: Vec<PathBuf> = java_files(&workspace().join("test-classes/monitors"))
            .into_iter()
            .filter(|src| required_jdk(src) <= jdk.tools().feature())
            .collect();
        javac(jdk, &sources, &out, &[]);
        out
    })
}

fn java_cmd(jdk: &Jdk, options: &str, flags: &[&str], classes: &Path, main: &str) -> Command {
    let mut cmd = Command::new(jdk.bin("java"));
    cmd.arg(format!("-agentpath:{}={options}", agent_lib().display()))
        .args(flags)
        .arg("-cp")
        .arg(classes)
        .arg(main)
        .current_dir(target_dir());
    cmd
}

/// Runs `main` to completion under the agent with `options` (after `file=DIR/out,`) and returns the
/// thread report (JSON and text) and the process output.
fn threads_report(jdk: &Jdk, main: &str, options: &str, flags: &[&str]) -> (Value, String, Output) {
    let classes = compile_monitor_programs(jdk);
    let dir = scratch(&format!(
        "monitors-{main}-{}-{}",
        jdk.key(),
        flags.join("").replace([':', '='], "_")
    ));
    let out = run(&mut java_cmd(
        jdk,
        &format!("file={}/out,{options}", dir.display()),
        flags,
        &classes,
        main,
    ));
    check(
        &format!("[{}] {main} {options} {flags:?}", jdk.version),
        &out,
    );
    let json = fs::read_to_string(dir.join("out.threads.json")).expect("threads.json written");
    let txt = fs::read_to_string(dir.join("out.threads.txt")).expect("threads.txt written");
    (serde_json::from_str(&json).expect("valid JSON"), txt, out)
}

fn arr(v: &Value) -> &Vec<Value> {
    v.as_array().unwrap_or_else(|| panic!("not an array: {v}"))
}

/// `[{"thread": name, "count": n}]` as (name, n) pairs.
fn counts(v: &Value) -> BTreeSet<(String, u64)> {
    arr(v)
        .iter()
        .map(|e| {
            (
                e["thread"].as_str().unwrap().to_string(),
                e["count"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn frame(stack: &Value, i: usize) -> String {
    format!(
        "{}.{}",
        stack[i]["class"].as_str().unwrap_or("?"),
        stack[i]["method"].as_str().unwrap_or("?")
    )
}

#[test]
fn four_threads_contend_for_one_monitor() {
    for jdk in jdks() {
        for flags in [&[][..], &["-Xint"][..]] {
            let (r, txt, _) = threads_report(&jdk, "Contention", "monitors=on,depth=4", flags);
            let v = &jdk.version;
            let contended = arr(&r["monitors"]["contended"]);
            let on_lock: Vec<&Value> = contended
                .iter()
                .filter(|c| c["class"] == "Contention$Lock")
                .collect();
            assert_eq!(on_lock.len(), 1, "[{v}] one waiter stack: {on_lock:?}");
            let c = on_lock[0];
            assert_eq!(c["count"], 4, "[{v}] {flags:?} contended enters: {c}");
            assert_eq!(frame(&c["stack"], 0), "Contention.critical", "[{v}] {c}");
            assert_eq!(frame(&c["stack"], 1), "Contention$Worker.run", "[{v}] {c}");
            assert_eq!(c["stack"][0]["file"], "Contention.java");
            let waiters = counts(&c["waiters"]);
            let expected: BTreeSet<(String, u64)> =
                (0..4).map(|i| (format!("worker-{i}"), 1)).collect();
            assert_eq!(waiters, expected, "[{v}] waiters");
            // Every worker blocked while main held the lock, but an owner is read when the event is
            // handled, after the waiter is already BLOCKED: main, having seen all four blocked, may have
            // let go by then, and a worker holds the lock instead. So only who owners can be is checked.
            assert!(
                counts(&c["owners"])
                    .iter()
                    .all(|(name, _)| name == "main" || name.starts_with("worker-")),
                "[{v}] only main and the workers owned the lock: {c}"
            );
            assert!(c["blocked_ns"].as_u64().unwrap() > 0);
            // The 100,000 uncontended enters of main's own lock reach the agent not once.
            assert!(
                !contended
                    .iter()
                    .any(|c| c["stack"][0]["method"] == "main" && c["class"] == "java.lang.Object"),
                "[{v}] uncontended lock reported: {contended:?}"
            );
            let class = arr(&r["monitors"]["classes"])
                .iter()
                .find(|c| c["class"] == "Contention$Lock")
                .expect("per-class line");
            assert_eq!(class["contended"], 4);
            // Threads: the four workers started and ended, with CPU time, in group main.
            for i in 0..4 {
                let name = format!("worker-{i}");
                let t = arr(&r["threads"])
                    .iter()
                    .find(|t| t["name"] == name.as_str())
                    .unwrap_or_else(|| panic!("[{v}] {name} not in the thread table"));
                assert_eq!(t["group"], "main", "{t}");
                assert_eq!(t["parent_group"], "system", "{t}");
                assert_eq!(t["daemon"], false);
                assert_eq!(t["alive_at_exit"], false, "{t}");
                assert!(t["cpu_ns"].as_u64().is_some(), "{t}");
                assert!(t["lifetime_ns"].as_u64().unwrap() > 0);
            }
            assert!(txt.contains("MONITOR TIME BEGIN"), "{txt}");
            assert!(txt.contains("Contention$Lock (Java)"), "{txt}");
            assert!(
                txt.contains("\tContention.critical(Contention.java:"),
                "{txt}"
            );
            println!(
                "[{v}] {flags:?}: 4 contended enters on Contention$Lock from Contention.critical"
            );
        }
    }
}

#[test]
fn the_agents_own_locks_are_not_the_programs_contention() {
    let rules = workspace().join("rules/default.yaml");
    for jdk in jdks() {
        let (r, txt, _) = threads_report(
            &jdk,
            "EndTogether",
            &format!("monitors=on,rules={}", rules.display()),
            &[],
        );
        let v = &jdk.version;
        // Threads ending together hand their allocation rows over under HeapProxyAllocs.LOCK, a long[]
        // (before the fix: 3 contended rows on long[] in a run of this program).
        let agents: Vec<&Value> = arr(&r["monitors"]["contended"])
            .iter()
            .filter(|c| c["class"] == "long[]")
            .collect();
        assert!(
            agents.is_empty(),
            "[{v}] the agent's lock reported: {agents:?}"
        );
        assert!(!txt.contains("long[] (Java)"), "[{v}] {txt}");
        assert_eq!(
            arr(&r["threads"])
                .iter()
                .filter(|t| t["name"].as_str().is_some_and(|n| n.starts_with("Thread-")))
                .count(),
            640,
            "[{v}] every thread in the table"
        );
    }
}

#[test]
fn timed_out_and_notified_waits() {
    for jdk in jdks() {
        let (r, txt, out) = threads_report(&jdk, "Waits", "monitors=on", &[]);
        let v = &jdk.version;
        assert!(text(&out.stdout).contains("done true"));
        let waits = arr(&r["monitors"]["waits"]);
        let find = |class: &str| -> &Value {
            let found: Vec<&Value> = waits.iter().filter(|w| w["class"] == class).collect();
            assert_eq!(found.len(), 1, "[{v}] waits on {class}: {waits:?}");
            found[0]
        };
        let timed = find("Waits$TimedLock");
        assert_eq!(timed["timeout_ms"], 50, "[{v}] {timed}");
        assert_eq!(timed["count"], 1);
        assert_eq!(timed["timed_out"], 1, "[{v}] {timed}");
        assert_eq!(timed["notified"], 0, "[{v}] {timed}");
        assert!(
            timed["min_waited_ns"].as_u64().unwrap() >= 50_000_000,
            "[{v}] waited less than the timeout: {timed}"
        );
        assert_eq!(
            frame(&timed["stack"], 0),
            "Waits.timedWait",
            "[{v}] {timed}"
        );
        assert_eq!(frame(&timed["stack"], 1), "Waits.main");
        let notified = find("Waits$NotifyLock");
        assert_eq!(notified["timeout_ms"], 0, "[{v}] {notified}");
        assert_eq!(notified["notified"], 1, "[{v}] {notified}");
        assert_eq!(notified["timed_out"], 0, "[{v}] {notified}");
        assert_eq!(frame(&notified["stack"], 0), "Waits.notifiedWait");
        assert_eq!(
            counts(&notified["waiters"]),
            BTreeSet::from([("waiter".to_string(), 1)])
        );
        assert!(txt.contains("MONITOR WAIT BEGIN"), "{txt}");
        println!(
            "[{v}] wait(50) timed out after {} ns; wait() notified",
            timed["min_waited_ns"]
        );
    }
}

/// Kills the child when dropped, so a failed assertion never leaves a deadlocked JVM behind.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn wait_for(what: &str, limit: Duration, mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(
            start.elapsed() < limit,
            "timed out after {limit:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn read_json(path: &Path) -> Option<Value> {
    serde_json::from_str(&fs::read_to_string(path).ok()?).ok()
}

/// The expected cycles: thread names in wait-for order from the smallest id, and the class each waits for.
const CYCLES: &[&[(&str, &str)]] = &[
    &[("dl2-a", "Deadlocks$B"), ("dl2-b", "Deadlocks$A")],
    &[
        ("dl3-a", "Deadlocks$Y"),
        ("dl3-b", "Deadlocks$Z"),
        ("dl3-c", "Deadlocks$X"),
    ],
    &[
        (
            "juc-a",
            "java.util.concurrent.locks.ReentrantLock$NonfairSync",
        ),
        (
            "juc-b",
            "java.util.concurrent.locks.ReentrantLock$NonfairSync",
        ),
    ],
];

fn check_cycles(v: &str, dump: &Value) {
    let found = arr(&dump["deadlocks"]);
    assert_eq!(found.len(), CYCLES.len(), "[{v}] deadlocks: {found:#?}");
    for expected in CYCLES {
        let cycle = found
            .iter()
            .find(|c| c["threads"][0]["name"] == expected[0].0)
            .unwrap_or_else(|| panic!("[{v}] no cycle starting at {}", expected[0].0));
        let threads = arr(&cycle["threads"]);
        let names: Vec<&str> = threads
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        let want: Vec<&str> = expected.iter().map(|e| e.0).collect();
        assert_eq!(
            names, want,
            "[{v}] exactly these threads, in wait-for order"
        );
        let n = threads.len();
        for (i, t) in threads.iter().enumerate() {
            let (name, waits_for) = expected[i];
            assert_eq!(t["waiting_for"]["class"], waits_for, "[{v}] {name}: {t}");
            assert_eq!(
                t["held_by"]["name"],
                expected[(i + 1) % n].0,
                "[{v}] {name}"
            );
            // It holds what the previous thread of the cycle waits for.
            let prev = &threads[(i + n - 1) % n]["waiting_for"];
            assert!(
                arr(&t["holds"])
                    .iter()
                    .any(|m| m["class"] == prev["class"] && m["id"] == prev["id"]),
                "[{v}] {name} does not hold {prev}: {t}"
            );
            assert!(!arr(&t["stack"]).is_empty(), "[{v}] {name} has no stack");
            let in_program = arr(&t["stack"]).iter().any(|f| f["class"] == "Deadlocks");
            assert!(
                in_program,
                "[{v}] {name}'s stack misses Deadlocks frames: {t}"
            );
        }
        if expected[0].0.starts_with("dl") {
            assert_eq!(
                threads[0]["stack"][0]["method"], "lambda$monitorCycle$0",
                "[{v}] top frame of a monitor deadlock"
            );
        }
    }
}

#[test]
fn deadlocks_found_by_the_watcher() {
    for jdk in jdks() {
        let v = &jdk.version;
        let classes = compile_monitor_programs(&jdk);
        let dir = scratch(&format!("monitors-deadlock-watch-{}", jdk.key()));
        let stderr = dir.join("stderr");
        let child = java_cmd(
            &jdk,
            &format!("file={}/out,deadlocks=100", dir.display()),
            &[],
            &classes,
            "Deadlocks",
        )
        .stdout(Stdio::null())
        .stderr(fs::File::create(&stderr).unwrap())
        .spawn()
        .expect("start java");
        let running = Running(child);
        let dump_path = dir.join("out.monitors.json");
        let lines = [
            "instr: deadlock of 2 threads (\"dl2-a\", \"dl2-b\")",
            "instr: deadlock of 3 threads (\"dl3-a\", \"dl3-b\", \"dl3-c\")",
            "instr: deadlock of 2 threads (\"juc-a\", \"juc-b\")",
        ];
        // The watcher writes the dump, then prints a line per new cycle: wait for both before the JVM
        // is ended, or a line printed a moment after the file appeared is lost with it.
        let printed_all = || {
            let err = fs::read_to_string(&stderr).unwrap_or_default();
            lines.iter().all(|line| err.contains(line))
        };
        wait_for(
            "three deadlocks in the dump, and a line for each",
            Duration::from_secs(90),
            || {
                read_json(&dump_path).is_some_and(|d| arr(&d["deadlocks"]).len() >= 3)
                    && printed_all()
            },
        );
        let dump = read_json(&dump_path).unwrap();
        assert_eq!(dump["reason"], "deadlock watcher");
        check_cycles(v, &dump);
        drop(running); // the test ends the JVM
        let err = fs::read_to_string(&stderr).unwrap();
        for line in lines {
            assert!(err.contains(line), "[{v}] stderr lacks {line}:\n{err}");
        }
        let txt = fs::read_to_string(dir.join("out.monitors.txt")).unwrap();
        assert!(txt.contains("DEADLOCKS BEGIN (3 found)"), "{txt}");
        println!("[{v}] watcher: three deadlocks, exact threads and monitors");
    }
}

#[test]
fn deadlocks_and_monitor_dump_on_demand() {
    for jdk in jdks() {
        let v = &jdk.version;
        let classes = compile_monitor_programs(&jdk);
        let dir = scratch(&format!("monitors-deadlock-sigquit-{}", jdk.key()));
        let stdout = dir.join("stdout");
        let child = java_cmd(
            &jdk,
            &format!("file={}/out,threads=on", dir.display()),
            &[],
            &classes,
            "Deadlocks",
        )
        .stdout(fs::File::create(&stdout).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .expect("start java");
        let pid = child.id();
        let running = Running(child);
        wait_for("the program to deadlock", Duration::from_secs(60), || {
            fs::read_to_string(&stdout).is_ok_and(|s| s.contains("deadlocked"))
        });
        // No watcher: nothing is written until asked.
        std::thread::sleep(Duration::from_millis(300));
        let dump_path = dir.join("out.monitors.json");
        assert!(!dump_path.exists(), "[{v}] a dump without a request");
        let status = Command::new("kill")
            .arg("-QUIT")
            .arg(pid.to_string())
            .status()
            .unwrap();
        assert!(status.success());
        wait_for("the on-demand dump", Duration::from_secs(60), || {
            read_json(&dump_path).is_some()
        });
        let dump = read_json(&dump_path).unwrap();
        assert_eq!(dump["reason"], "data dump request");
        check_cycles(v, &dump);
        let threads = arr(&dump["threads"]);
        for name in ["main", "dl2-a", "dl3-c", "juc-b"] {
            assert!(
                threads.iter().any(|t| t["name"] == name),
                "[{v}] {name} missing from the monitor dump"
            );
        }
        let main = threads.iter().find(|t| t["name"] == "main").unwrap();
        assert_eq!(main["state"], "TIMED_WAITING", "[{v}] {main}");
        // The same request writes the profile as it is now, with the thread profiler's section taken
        // now: the deadlocked threads alive (no end yet), the section's time before the VM's exit.
        let json_path = dir.join("out.json");
        wait_for("the on-demand profile", Duration::from_secs(60), || {
            read_json(&json_path).is_some_and(|p| p["threads"].is_object())
        });
        let profile = read_json(&json_path).unwrap();
        assert_eq!(profile["schema"], "instr-profile/2", "[{v}]");
        let section = &profile["threads"];
        let time = section["time_ns"].as_u64().unwrap();
        assert!(time > 0, "[{v}] the snapshot's time");
        let listed = arr(&section["threads"]);
        for name in ["main", "dl2-a", "dl2-b", "dl3-a", "juc-a"] {
            let t = listed
                .iter()
                .find(|t| t["name"] == name)
                .unwrap_or_else(|| {
                    panic!("[{v}] {name} missing from the on-demand threads section")
                });
            assert!(t["end_ns"].is_null(), "[{v}] {name} is alive: {t}");
            // On demand, "at exit" is when the section was taken (docs/REPORTS.md).
            assert_eq!(t["alive_at_exit"], true, "[{v}] alive when taken: {t}");
            assert!(
                t["lifetime_ns"].as_u64().unwrap() <= time,
                "[{v}] {name} lived at most until the snapshot: {t}"
            );
        }
        drop(running);
        println!(
            "[{v}] SIGQUIT: monitor dump of {} threads, three deadlocks",
            threads.len()
        );
    }
}

/// Counts from the XML trace, by Python's xml.etree (a real parser: a malformed file fails here).
const SUMMARY: &str = r#"
import collections, json, sys
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
tags = collections.Counter(e.tag for e in root)
starts = collections.Counter(e.get("threadId") for e in root if e.tag == "threadStart")
ends = collections.Counter(e.get("threadId") for e in root if e.tag == "threadEnd")
names = {e.get("threadId"): e.get("threadName") for e in root if e.tag == "threadStart"}
allocs = {e.get("objId"): e.get("className") for e in root if e.tag == "objAlloc"}
freed = [e.get("objId") for e in root if e.tag == "objFree"]
tracked = [o for o, c in allocs.items() if c == "XmlTrace$Tracked"]
enters = [e.attrib for e in root if e.tag == "monContendedEnter"]
waits = [e.attrib for e in root if e.tag == "monWait"]
waited = [e.attrib for e in root if e.tag == "monWaited"]
print(json.dumps({
    "root": root.tag, "last": root[-1].tag, "tags": tags,
    "starts": starts, "ends": ends, "names": names,
    "tracked": len(tracked), "freed_tracked": len(set(freed) & set(tracked)),
    "freed_unknown": len(set(freed) - set(allocs)),
    "enters": enters, "waits": waits, "waited": waited,
}))
"#;

#[test]
fn xml_trace_parses_and_matches_the_program() {
    for jdk in jdks() {
        let v = &jdk.version;
        let classes = compile_monitor_programs(&jdk);
        let dir = scratch(&format!("monitors-xml-{}", jdk.key()));
        let rules = dir.join("trace.yaml");
        fs::write(
            &rules,
            format!(
                "probes: [objects]\nallocations:\n  include: [\"XmlTrace\"]\n  depth: 1\n\
                 threads:\n  monitors: true\n  trace:\n    file: \"{}/trace-%p.xml\"\n    allocations: true\n",
                dir.display()
            ),
        )
        .unwrap();
        let out = run(&mut java_cmd(
            &jdk,
            &format!("rules={},file={}/out", rules.display(), dir.display()),
            &[],
            &classes,
            "XmlTrace",
        ));
        check(&format!("[{v}] XmlTrace"), &out);
        assert!(text(&out.stdout).contains("exiting 30"));
        let trace = fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "xml"))
            .expect("trace written");
        let py = run(Command::new("python3").arg("-c").arg(SUMMARY).arg(&trace));
        check(
            &format!("[{v}] parsing {} with xml.etree", trace.display()),
            &py,
        );
        let s: Value = serde_json::from_str(&text(&py.stdout)).unwrap();
        assert_eq!(s["root"], "TRACE");
        assert_eq!(s["last"], "traceEnd");
        assert_eq!(
            s["starts"], s["ends"],
            "[{v}] every thread started once and ended once"
        );
        for (_, n) in s["starts"].as_object().unwrap() {
            assert_eq!(n, 1, "[{v}] {}", s["starts"]);
        }
        let names: BTreeSet<&str> = s["names"]
            .as_object()
            .unwrap()
            .values()
            .map(|n| n.as_str().unwrap())
            .collect();
        for name in [
            "main",
            "xml-worker-0",
            "xml-worker-1",
            "xml-worker-2",
            "exiter",
            "spinner",
        ] {
            assert!(
                names.contains(name),
                "[{v}] no threadStart for {name}: {names:?}"
            );
        }
        assert_eq!(s["tracked"], 300, "[{v}] objAlloc of XmlTrace$Tracked");
        let freed = s["freed_tracked"].as_u64().unwrap();
        assert!(
            freed <= 270,
            "[{v}] {freed} frees of 300 objects of which 30 stay reachable"
        );
        assert_eq!(s["freed_unknown"], 0, "[{v}] objFree without its objAlloc");
        let tags = &s["tags"];
        assert_eq!(tags["gcStart"], tags["gcFinish"], "[{v}] {tags}");
        assert!(
            tags["gcStart"].as_u64().unwrap() >= 2,
            "[{v}] two System.gc(): {tags}"
        );
        assert!(tags["classDef"].as_u64().unwrap() > 100, "[{v}] {tags}");
        // The three workers blocked on the lock main held.
        let main_id = s["names"]
            .as_object()
            .unwrap()
            .iter()
            .find(|(_, n)| *n == "main")
            .map(|(id, _)| id.clone())
            .unwrap();
        // On the program's lock (a java.lang.Object). A worker that ends while main is in its join() can
        // also contend on its own Thread's monitor, which the JVM takes to notify joiners: the JDK's, and
        // timing-dependent. The agent's own locks never show (`agent_locks` below).
        let worker_enters: Vec<&Value> = arr(&s["enters"])
            .iter()
            .filter(|e| {
                e["className"] != "java.lang.Thread"
                    && s["names"][e["threadId"].as_str().unwrap()]
                        .as_str()
                        .is_some_and(|n| n.starts_with("xml-worker-"))
            })
            .collect();
        let agent_locks: Vec<&Value> = arr(&s["enters"])
            .iter()
            .filter(|e| e["className"] == "long[]")
            .collect();
        assert!(agent_locks.is_empty(), "[{v}] {agent_locks:?}");
        assert_eq!(worker_enters.len(), 3, "[{v}] {worker_enters:?}");
        // The owner is read when the event is handled, and the waiter is already BLOCKED by then: main
        // may have seen all three blocked and released the lock in wait(10) before a slow callback read
        // it. So the owner is main, or a worker that got the lock after it, never the waiter itself.
        let owners_seen: Vec<&str> = worker_enters
            .iter()
            .filter_map(|e| e["ownerThreadId"].as_str())
            .collect();
        assert!(
            owners_seen.contains(&main_id.as_str()) || owners_seen.len() < 3,
            "[{v}] {worker_enters:?}"
        );
        for e in &worker_enters {
            assert_eq!(e["className"], "java.lang.Object");
            let owner = e["ownerThreadId"].as_str();
            assert_ne!(
                owner,
                e["threadId"].as_str(),
                "[{v}] a waiter owns its lock: {e}"
            );
            if let Some(owner) = owner {
                let name = s["names"][owner].as_str().unwrap_or("");
                assert!(
                    owner == main_id || name.starts_with("xml-worker-"),
                    "[{v}] owner {name}: {e}"
                );
            }
        }
        // main's wait(10): the timeout in ms, then a timed-out waited of at least 10 ms.
        // (main also waits in Thread.join, on the Thread objects.)
        let main_wait: Vec<&Value> = arr(&s["waits"])
            .iter()
            .filter(|w| w["threadId"].as_str() == Some(main_id.as_str()))
            .filter(|w| w["className"] == "java.lang.Object")
            .collect();
        assert_eq!(main_wait.len(), 1, "[{v}] {main_wait:?}");
        assert_eq!(main_wait[0]["timeout"], "10");
        let main_waited: Vec<&Value> = arr(&s["waited"])
            .iter()
            .filter(|w| w["threadId"].as_str() == Some(main_id.as_str()))
            .filter(|w| w["objId"] == main_wait[0]["objId"])
            .collect();
        assert_eq!(main_waited.len(), 1, "[{v}] {main_waited:?}");
        assert_eq!(main_waited[0]["timedOut"], "true");
        let waited: u64 = main_waited[0]["waitedTime"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        assert!(waited >= 10_000_000, "[{v}] waited {waited} ns");
        println!("[{v}] XML trace: {tags}");
    }
}

/// Starts a VM with `options` and expects it to refuse, with `expect` in one `instr:` line.
fn refused(jdk: &Jdk, options: &str, expect: &str) {
    let classes = compile_monitor_programs(jdk);
    let out = run(&mut java_cmd(jdk, options, &[], &classes, "Waits"));
    assert_refused(&out, options, expect);
    assert!(!text(&out.stdout).contains("done"));
}

#[test]
fn bad_thread_options_are_refused() {
    let jdk = &jdks()[0];
    let dir = scratch("monitors-bad-options");
    let bad = dir.join("bad.yaml");
    fs::write(
        &bad,
        "threads:\n  monitors: true\n  deadlocks:\n    watch_ms: -5\n",
    )
    .unwrap();
    refused(jdk, "deadlocks=soon", "deadlocks=soon");
    refused(jdk, "monitors=maybe", "monitors=maybe");
    refused(jdk, "trace=/no/such/dir/t.xml", "/no/such/dir/t.xml");
    refused(jdk, "trace-allocs=on,live=10", "live=");
    refused(jdk, &bad.display().to_string(), "bad.yaml:4:15");
}

#[test]
fn off_by_default() {
    let jdk = &jdks()[0];
    let classes = compile_monitor_programs(jdk);
    let dir = scratch("monitors-off");
    let out = run(&mut java_cmd(
        jdk,
        &format!("file={}/out,depth=0", dir.display()),
        &[],
        &classes,
        "Contention",
    ));
    check("Contention without the thread profiler", &out);
    assert!(text(&out.stderr).is_empty(), "{}", text(&out.stderr));
    assert!(dir.join("out.json").exists());
    assert!(
        !dir.join("out.threads.json").exists(),
        "thread report without threads on"
    );
}

#[test]
fn virtual_threads_where_the_vm_reports_them() {
    for jdk in jdks().into_iter().filter(|j| j.feature() >= 21) {
        let v = &jdk.version;
        let (r, _, _) = threads_report(&jdk, "VirtualThreads", "threads=on", &[]);
        assert_eq!(r["virtual_threads_reported"], true, "[{v}]");
        let threads = arr(&r["threads"]);
        for i in 0..5 {
            let name = format!("vt-{i}");
            let t = threads
                .iter()
                .find(|t| t["name"] == name.as_str())
                .unwrap_or_else(|| panic!("[{v}] {name} not reported: {threads:?}"));
            assert_eq!(t["virtual"], true, "[{v}] {t}");
            assert_eq!(t["alive_at_exit"], false, "[{v}] {t}");
        }
        println!("[{v}] five virtual threads reported");
    }
}

/// The GC and OBJECT_FREE elements of a trace, by Python's xml.etree: the GC elements in file order, the
/// traced `GcStorm$Node` allocations and their frees, and `traceEnd`'s attributes.
const GC_SUMMARY: &str = r#"
import collections, json, sys
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
allocs = {e.get("objId"): e.get("className") for e in root if e.tag == "objAlloc"}
freed = [e.get("objId") for e in root if e.tag == "objFree"]
print(json.dumps({
    "root": root.tag, "last": root[-1].tag, "end": root[-1].attrib,
    "gc": [e.tag for e in root if e.tag in ("gcStart", "gcFinish")],
    "allocs": len(allocs),
    "nodes": sum(1 for c in allocs.values() if c == "GcStorm$Node"),
    "freed": len(freed), "freed_twice": len(freed) - len(set(freed)),
    "freed_unknown": len(set(freed) - set(allocs)),
}))
"#;

/// Runs GcStorm under the trace, with its allocations (`GcStorm`'s) or without any probe, and returns the
/// trace's summary, the heap report's GC count and the process output. `ring`: the ring's capacity
/// (`trace-ring=N`); None for the default.
fn gc_storm(jdk: &Jdk, ring: Option<usize>, allocations: bool) -> (Value, u64, Output) {
    let v = &jdk.version;
    let classes = compile_monitor_programs(jdk);
    let dir = scratch(&format!(
        "monitors-gcstorm-{}-{ring:?}-{allocations}",
        jdk.key()
    ));
    let rules = dir.join("trace.yaml");
    let probes = if allocations {
        "probes: [objects]\nallocations:\n  include: [\"GcStorm\"]\n  depth: 1\n"
    } else {
        ""
    };
    fs::write(
        &rules,
        format!(
            "{probes}threads:\n  trace:\n    file: \"{}/trace-%p.xml\"\n    allocations: {allocations}\n",
            dir.display()
        ),
    )
    .unwrap();
    let ring_option = ring.map_or(String::new(), |n| format!(",trace-ring={n}"));
    let mut cmd = java_cmd(
        jdk,
        &format!(
            "rules={},file={}/out{ring_option}",
            rules.display(),
            dir.display()
        ),
        &["-Xmx32m"],
        &classes,
        "GcStorm",
    );
    let out = run(&mut cmd);
    check(&format!("[{v}] GcStorm, ring {ring:?}"), &out);
    assert!(
        text(&out.stdout).contains("done"),
        "[{v}] {}",
        text(&out.stdout)
    );
    let trace = fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "xml"))
        .expect("trace written");
    let py = run(Command::new("python3")
        .arg("-c")
        .arg(GC_SUMMARY)
        .arg(&trace));
    check(
        &format!("[{v}] parsing {} with xml.etree", trace.display()),
        &py,
    );
    let s: Value = serde_json::from_str(&text(&py.stdout)).unwrap();
    assert_eq!(s["root"], "TRACE");
    assert_eq!(s["last"], "traceEnd", "[{v}] the trace is closed");
    let report: Value =
        serde_json::from_str(&fs::read_to_string(dir.join("out.json")).expect("out.json")).unwrap();
    let collections = report["gc"]["collections"]
        .as_u64()
        .expect("gc.collections");
    (s, collections, out)
}

fn attr(s: &Value, name: &str) -> u64 {
    s["end"][name]
        .as_str()
        .unwrap_or_else(|| panic!("traceEnd has no {name}: {}", s["end"]))
        .parse()
        .unwrap()
}

/// Many collections from several allocating threads and System.gc(): GC start/finish and OBJECT_FREE go
/// through the lock-free ring, and the trace has every one of them, paired and in order, with nothing
/// dropped (fewer traced objects than the ring holds, so none can be).
#[test]
fn xml_trace_gc_events_under_allocation_pressure() {
    for jdk in jdks() {
        let v = &jdk.version;
        let (s, collections, out) = gc_storm(&jdk, None, true);
        let gc: Vec<&str> = arr(&s["gc"]).iter().map(|e| e.as_str().unwrap()).collect();
        // One VM thread posts them and the ring is first in, first out: strictly alternating.
        for (i, pair) in gc.chunks(2).enumerate() {
            assert_eq!(pair, ["gcStart", "gcFinish"], "[{v}] GC pair {i} of {gc:?}");
        }
        let pairs = gc.len() as u64 / 2;
        assert!(pairs >= 41, "[{v}] 41 System.gc() but {pairs} collections");
        // The heap report also counts collections after the trace closed: reading HeapProxy's tables at
        // exit allocates large arrays, which in 32 MB collect (the next test compares exactly, without
        // probes).
        assert!(
            pairs <= collections,
            "[{v}] {pairs} collections traced, {collections} counted"
        );
        assert_eq!(s["nodes"], 8000, "[{v}] objAlloc of GcStorm$Node");
        // The premise of "nothing dropped": every record the ring could ever hold at once fits in it.
        let records = s["allocs"].as_u64().unwrap() + gc.len() as u64;
        assert!(
            records < 16 * 1024,
            "[{v}] {records} records for a ring of 16384"
        );
        let freed = s["freed"].as_u64().unwrap();
        assert!(freed > 0, "[{v}] no objFree: {s}");
        assert_eq!(s["freed_twice"], 0, "[{v}] {s}");
        assert_eq!(s["freed_unknown"], 0, "[{v}] objFree without its objAlloc");
        for name in [
            "dropped",
            "gcStartsDropped",
            "gcFinishesDropped",
            "objFreesDropped",
        ] {
            assert_eq!(attr(&s, name), 0, "[{v}] traceEnd {name}");
        }
        assert!(
            !text(&out.stderr).contains("dropped"),
            "[{v}] {}",
            text(&out.stderr)
        );
        println!("[{v}] GcStorm: {pairs} collections, {freed} objFree, nothing dropped");
    }
}

/// Tiny rings: GC events and frees that cannot be recorded are counted, not lost. Without probes (no
/// HeapProxy tables to read at exit, so no collection after the trace closes), recorded plus dropped GC
/// starts, and finishes, equal the collections the heap report counted on its own; with allocations
/// traced, frees are dropped and counted too. The drops are in traceEnd and on stderr.
#[test]
fn xml_trace_counts_what_a_full_ring_drops() {
    for jdk in jdks() {
        let v = &jdk.version;
        // Two records: a collection and a half. The writer drains every 50 ms and GcStorm collects
        // several times as often, so starts and finishes are dropped.
        let (s, collections, out) = gc_storm(&jdk, Some(2), false);
        let gc: Vec<&str> = arr(&s["gc"]).iter().map(|e| e.as_str().unwrap()).collect();
        let starts = gc.iter().filter(|&&e| e == "gcStart").count() as u64;
        let finishes = gc.len() as u64 - starts;
        let (starts_dropped, finishes_dropped, frees_dropped) = (
            attr(&s, "gcStartsDropped"),
            attr(&s, "gcFinishesDropped"),
            attr(&s, "objFreesDropped"),
        );
        assert_eq!(starts + starts_dropped, collections, "[{v}] {}", s["end"]);
        assert_eq!(
            finishes + finishes_dropped,
            collections,
            "[{v}] {}",
            s["end"]
        );
        assert!(
            starts_dropped > 0 && finishes_dropped > 0,
            "[{v}] a 2-record ring dropped no GC event in {collections} collections: {}",
            s["end"]
        );
        assert_eq!(frees_dropped, 0, "[{v}] no object traced: {}", s["end"]);
        assert_eq!(
            attr(&s, "dropped"),
            starts_dropped + finishes_dropped,
            "[{v}] {}",
            s["end"]
        );
        assert!(
            text(&out.stderr).contains("instr: the XML trace dropped"),
            "[{v}] {}",
            text(&out.stderr)
        );
        println!(
            "[{v}] ring of 2: {collections} collections, {starts_dropped} starts and {finishes_dropped} finishes dropped"
        );

        let (s, _, out) = gc_storm(&jdk, Some(4), true);
        let (starts_dropped, finishes_dropped, frees_dropped) = (
            attr(&s, "gcStartsDropped"),
            attr(&s, "gcFinishesDropped"),
            attr(&s, "objFreesDropped"),
        );
        assert!(
            frees_dropped > 0,
            "[{v}] a 4-record ring dropped no objFree: {}",
            s["end"]
        );
        let freed = s["freed"].as_u64().unwrap();
        assert!(
            freed + frees_dropped <= s["allocs"].as_u64().unwrap(),
            "[{v}] more frees than traced objects: {s}"
        );
        assert_eq!(s["freed_unknown"], 0, "[{v}] objFree without its objAlloc");
        assert_eq!(
            attr(&s, "dropped"),
            starts_dropped + finishes_dropped + frees_dropped,
            "[{v}] {}",
            s["end"]
        );
        assert!(
            text(&out.stderr).contains("instr: the XML trace dropped"),
            "[{v}] {}",
            text(&out.stderr)
        );
        println!("[{v}] ring of 4, allocations traced: {freed} objFree, {frees_dropped} dropped");
    }
}

/// Issue 14: `threads.json` had two `contended` entries with the same class and stack when the waiters
/// blocked at two bytecode indexes of one line (the aggregation key held the bytecode index, the report shows
/// the line). Entries are merged by what the report shows: one entry, all four enters.
#[test]
fn contended_entries_are_merged_by_what_the_report_shows() {
    for jdk in jdks() {
        for flags in [&[][..], &["-Xint"][..]] {
            let (r, txt, _) = threads_report(&jdk, "SameLine", "monitors=on,depth=4", flags);
            let v = &jdk.version;
            let on_lock: Vec<&Value> = arr(&r["monitors"]["contended"])
                .iter()
                .filter(|c| c["class"] == "SameLine$Lock")
                .collect();
            assert_eq!(
                on_lock.len(),
                1,
                "[{v}] {flags:?} one entry per class and stack: {on_lock:?}"
            );
            let c = on_lock[0];
            assert_eq!(c["count"], 4, "[{v}] {flags:?} {c}");
            assert_eq!(frame(&c["stack"], 0), "SameLine.critical", "[{v}] {c}");
            assert_eq!(frame(&c["stack"], 1), "SameLine$Worker.run", "[{v}] {c}");
            let waiters = counts(&c["waiters"]);
            let expected: BTreeSet<(String, u64)> =
                (0..4).map(|i| (format!("worker-{i}"), 1)).collect();
            assert_eq!(waiters, expected, "[{v}] waiters");
            // No two entries anywhere in the report show the same class and stack.
            let mut seen = BTreeSet::new();
            for c in arr(&r["monitors"]["contended"]) {
                let key = format!("{} {}", c["class"], c["stack"]);
                assert!(
                    seen.insert(key.clone()),
                    "[{v}] {flags:?} duplicate entry {key}"
                );
            }
            assert_eq!(
                txt.matches("SameLine$Lock (Java)").count(),
                1,
                "[{v}] {txt}"
            );
            println!("[{v}] {flags:?}: 4 contended enters on SameLine$Lock in one entry");
        }
    }
}

/// Issue 15: one complete profile. The main `PREFIX.json` carries the thread profiler's section, the
/// `monitors` flame view weighs contended stacks by the time they blocked (so its total is the sum of
/// `PREFIX.threads.json`'s `blocked_ns`), and the threads report renders from it as the agent wrote it.
#[test]
fn the_main_profile_carries_the_threads_section() {
    use instr_profile::flame::views;
    use instr_profile::render::threads_text;
    use instr_profile::Profile;
    for jdk in jdks() {
        let v = &jdk.version;
        let classes = compile_monitor_programs(&jdk);
        let dir = scratch(&format!("monitors-profile-{}", jdk.key()));
        let out = run(&mut java_cmd(
            &jdk,
            &format!("file={}/out,monitors=on,depth=4", dir.display()),
            &[],
            &classes,
            "Contention",
        ));
        check(&format!("[{v}] Contention in one profile"), &out);
        let threads: Value =
            serde_json::from_str(&fs::read_to_string(dir.join("out.threads.json")).unwrap())
                .unwrap();
        let txt = fs::read_to_string(dir.join("out.threads.txt")).unwrap();
        let p = Profile::from_json(&fs::read_to_string(dir.join("out.json")).unwrap())
            .unwrap_or_else(|e| panic!("[{v}] out.json: {e}"));
        let section = p.threads.as_ref().expect("a threads section in out.json");
        // The same section as the threads file (which adds its schema and pid).
        let mut same = threads.clone();
        same.as_object_mut().unwrap().remove("schema");
        same.as_object_mut().unwrap().remove("pid");
        assert_eq!(serde_json::to_value(section).unwrap(), same, "[{v}]");
        let blocked: u64 = arr(&threads["monitors"]["contended"])
            .iter()
            .map(|c| c["blocked_ns"].as_u64().unwrap())
            .sum();
        assert!(blocked > 0, "[{v}] {threads}");
        let views = views(&p);
        let monitors = views
            .iter()
            .find(|v| v.id == "monitors")
            .expect("a monitors view");
        assert_eq!(monitors.total(), blocked, "[{v}]");
        assert_eq!(
            monitors.total(),
            threads["monitors"]["total_blocked_ns"].as_u64().unwrap()
        );
        // The leaf is the monitor's class, under the method holding the synchronized block.
        assert!(
            monitors.stacks.iter().any(|s| {
                let names: Vec<&str> = monitors.frames_of(s).map(|f| &*f.name).collect();
                names.ends_with(&["Contention.critical", "Contention$Lock"])
            }),
            "[{v}] {monitors:?}"
        );
        assert_eq!(
            threads_text::render(&p).as_deref(),
            Some(txt.as_str()),
            "[{v}] the threads report renders from out.json as the agent wrote it"
        );
        // The flame graph page gets the view too (pprof: the unit tests, profile/tests/threads.rs).
        let html = fs::read_to_string(dir.join("out.html")).unwrap();
        assert!(
            html.contains("Monitor time"),
            "[{v}] no monitors view in out.html"
        );
        println!(
            "[{v}] out.json: threads section, monitors view of {} ns in {} stacks",
            monitors.total(),
            monitors.stacks.len()
        );
    }
}
