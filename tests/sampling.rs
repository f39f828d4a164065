//! The CPU and wall-clock sampler (issue 16), in real JVMs on every JDK: attribution in known proportions
//! with the exact call counts beside it, thread awareness (a sleeping or blocked thread gets wall samples
//! and no CPU samples), no safepoint bias where a GetStackTrace sampler has it, a storm of threads, signals
//! and unloaded classes with an exit from a worker thread, the sample log left by `kill -9` read back by
//! `instr report`, and sampling alone leaving class data sharing on. Programs: test-classes/sampling/.

mod support;

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::*;

/// A hang detector, not a timing assertion: each run takes seconds.
const HANG: Duration = Duration::from_secs(240);

fn programs(jdk: &Jdk) -> PathBuf {
    compiled_test_classes(jdk, "sampling")
}

fn instr_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_instr"))
}

/// The execution modes a test runs in: interpreter only, C1 only, and the default tiered C2.
const MODES: &[(&str, &[&str])] = &[
    ("Xint", &["-Xint"]),
    ("C1", &["-XX:TieredStopAtLevel=1"]),
    ("C2", &[]),
];

/// `java` with the agent's `options` (reports at `dir/out`), `flags`, and `main` of the sampling programs.
fn java_command(
    jdk: &Jdk,
    dir: &Path,
    options: &str,
    flags: &[&str],
    main: &str,
    args: &[&str],
) -> Command {
    let mut cmd = Command::new(jdk.bin("java"));
    cmd.arg(format!(
        "-agentpath:{}={options},file={}/out",
        agent_lib().display(),
        dir.display()
    ))
    .args(flags)
    .arg("-cp")
    .arg(programs(jdk))
    .arg(main)
    .args(args);
    cmd
}

/// Runs `cmd` (a [`java_command`]), waiting at most HANG; `what` names it in failures. Returns (exit
/// code, stdout, stderr).
fn run_java(mut cmd: Command, what: &str) -> (Option<i32>, String, String) {
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("java starts");
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let out = match rx.recv_timeout(HANG) {
        Ok(out) => out.expect("java ran"),
        Err(_) => {
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
            panic!("{what} hung");
        }
    };
    let stderr = text(&out.stderr);
    assert!(
        !stderr.contains("hs_err") && !stderr.contains("SIGSEGV") && !stderr.contains("panicked"),
        "{what} crashed:\n{stderr}"
    );
    (out.status.code(), text(&out.stdout), stderr)
}

fn json(dir: &Path) -> Value {
    let text = fs::read_to_string(dir.join("out.json")).expect("the JSON report was written");
    serde_json::from_str(&text).expect("valid JSON")
}

/// Samples of one kind per thread name.
fn per_thread(samples: &Value, kind: &str) -> HashMap<String, u64> {
    let mut out = HashMap::new();
    for s in samples["stacks"].as_array().expect("stacks") {
        if s["kind"] == kind {
            *out.entry(s["thread"].as_str().unwrap().to_string())
                .or_default() += s["samples"].as_u64().unwrap();
        }
    }
    out
}

fn method_row<'a>(report: &'a Value, class: &str, name: &str) -> &'a Value {
    report["methods"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["class"] == class && m["method"] == name)
        .unwrap_or_else(|| panic!("no method row for {class}.{name}"))
}

fn printed(stdout: &str, label: &str) -> u64 {
    stdout
        .split_whitespace()
        .find_map(|w| w.strip_prefix(label))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {label} in {stdout:?}"))
}

#[test]
fn attribution_matches_the_work_and_rows_keep_exact_counts() {
    for jdk in all_jdks() {
        for (mode, flags) in MODES {
            let dir = scratch(&format!("sampling-attribution-{}-{mode}", jdk.key()));
            let rules = dir.join("rules.yaml");
            fs::write(
                &rules,
                "probes: [methods]\nmethods:\n  include: [\"Attribution\"]\nsampling: {cpu: 1ms, wall: 5ms}\n",
            )
            .unwrap();
            let what = format!("[{}] Attribution {mode}", jdk.version);
            let options = format!("rules={}", rules.display());
            let (code, stdout, stderr) = run_java(
                java_command(&jdk, &dir, &options, flags, "Attribution", &["300"]),
                &what,
            );
            assert_eq!(code, Some(0), "{what}: {stderr}");
            assert!(!stderr.contains("instr:"), "{what}: {stderr}");
            let report = json(&dir);
            let samples = &report["samples"];
            assert_eq!(samples["engine"], "agct", "{what}");

            // 75/25 of the CPU work, within 5 points, in the merged rows' total samples.
            let total = |name: &str| {
                method_row(&report, "Attribution", name)["total_samples"]
                    .as_u64()
                    .unwrap()
            };
            let (hot, warm) = (total("hot"), total("warm"));
            assert!(hot + warm > 200, "{what}: too few samples: {hot} + {warm}");
            let share = 100.0 * hot as f64 / (hot + warm) as f64;
            assert!(
                (70.0..=80.0).contains(&share),
                "{what}: hot() has {share:.1}% of the samples of hot() and warm() ({hot} vs {warm}), not 75 +- 5"
            );
            // The exact counts beside them, and the estimate derived from both.
            for (name, label) in [("hot", "hot="), ("warm", "warm=")] {
                let row = method_row(&report, "Attribution", name);
                assert_eq!(
                    row["calls"].as_u64(),
                    Some(printed(&stdout, label)),
                    "{what}: {name}() calls"
                );
                assert_eq!(row["unwinds"], 0, "{what}");
                let total_ns = row["total_cpu_ns"].as_u64().unwrap();
                assert_eq!(total_ns, row["total_samples"].as_u64().unwrap() * 1_000_000);
                assert!(
                    row["self_samples"].as_u64().unwrap() <= row["total_samples"].as_u64().unwrap()
                );
                assert_eq!(
                    row["ns_per_call_estimated"].as_u64(),
                    Some(total_ns / row["calls"].as_u64().unwrap()),
                    "{what}"
                );
            }
            // A method sampled but not probed: times, no count.
            let run = method_row(&report, "java.lang.Thread", "run");
            assert_eq!(run["probed"], false, "{what}");
            assert!(run.get("calls").is_none(), "{what}");
            assert!(run["total_samples"].as_u64().unwrap() > 0, "{what}");

            // Thread awareness: the sleeper and the blocked thread have wall samples and no CPU samples.
            let cpu = per_thread(samples, "cpu");
            let wall = per_thread(samples, "wall");
            // Asleep or blocked for the whole run, each gets hundreds of wall samples, and CPU samples
            // only for the CPU time it did use (it prints it: starting, waking, spinning on the lock
            // before parking; a few milliseconds at most), one sample per millisecond of it.
            for (t, label) in [("sleeper", "sleeperCpuUs="), ("blocked", "blockedCpuUs=")] {
                let (c, w) = (
                    cpu.get(t).copied().unwrap_or(0),
                    wall.get(t).copied().unwrap_or(0),
                );
                // Bounded by the CPU it used, not by a share of the busy threads' samples: on a loaded
                // two-core machine a thread's start-up alone has taken 16 ms of CPU.
                let used_ms = printed(&stdout, label) / 1000;
                assert!(
                    c <= used_ms + 2,
                    "{what}: {t} used {used_ms} ms of CPU and got {c} CPU samples"
                );
                assert!(w >= 50, "{what}: {t} got {w} wall samples: {wall:?}");
            }
            assert!(cpu["hot-thread"] > cpu["warm-thread"], "{what}: {cpu:?}");

            // The text report, the collapsed stacks and the log agree with the JSON.
            let txt = fs::read_to_string(dir.join("out.txt")).unwrap();
            assert!(
                txt.contains("CPU SAMPLES BEGIN (total = "),
                "{what}:\n{txt}"
            );
            assert!(txt.contains("WALL SAMPLES BEGIN"), "{what}");
            let hot_line = txt
                .lines()
                .find(|l| l.ends_with("Attribution.hot()V") && l.contains('%'))
                .unwrap_or_else(|| panic!("{what}: no CPU SAMPLES row for hot():\n{txt}"));
            assert!(
                hot_line.contains(&format!(" {} ", printed(&stdout, "hot="))),
                "{what}: {hot_line}"
            );
            let collapsed = fs::read_to_string(dir.join("out.cpu.collapsed")).unwrap();
            let collapsed_total: u64 = collapsed
                .lines()
                .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
                .sum();
            assert_eq!(
                collapsed_total,
                samples["cpu_samples"].as_u64().unwrap(),
                "{what}"
            );
            assert!(
                collapsed.lines().any(|l| l.contains("Attribution.hot ")),
                "{what}"
            );
            assert!(dir.join("out.wall.collapsed").exists(), "{what}");
            // The JSON report reads back, and renders the same text as the agent's.
            let again = Command::new(instr_bin())
                .arg("report")
                .arg(dir.join("out.json"))
                .output()
                .unwrap();
            check(&format!("{what}: instr report out.json"), &again);
            assert!(
                text(&again.stdout) == txt,
                "{what}: instr report out.json differs from out.txt"
            );
            let offline = Command::new(instr_bin())
                .args(["report", "--format", "json"])
                .arg(dir.join("out.samples"))
                .output()
                .unwrap();
            check(&format!("{what}: instr report out.samples"), &offline);
            let offline: Value = serde_json::from_slice(&offline.stdout).unwrap();
            assert!(
                offline["samples"]["stacks"] == samples["stacks"],
                "{what}: the stacks read from the log differ from the report's"
            );
            assert_eq!(
                offline["samples"]["cpu_samples"], samples["cpu_samples"],
                "{what}"
            );
        }
    }
}

/// The share of `thread`'s CPU samples whose leaf frame is `class.method`.
fn self_share(samples: &Value, thread: &str, class: &str, method: &str) -> f64 {
    let (mut hit, mut all) = (0, 0);
    for s in samples["stacks"].as_array().unwrap() {
        if s["kind"] != "cpu" || s["thread"] != thread {
            continue;
        }
        let n = s["samples"].as_u64().unwrap();
        all += n;
        let leaf = &s["frames"][0];
        if leaf["class"] == class && leaf["method"] == method {
            hit += n;
        }
    }
    assert!(all > 50, "too few samples of {thread}: {all}");
    100.0 * hit as f64 / all as f64
}

#[test]
fn no_safepoint_bias_where_a_get_stack_trace_sampler_has_it() {
    // AsyncGetCallTrace with HotSpot's debug information at safepoints only (the default) and at every
    // instruction (debug-non-safepoints=on), then the GetStackTrace sampler.
    let runs = [
        ("agct", "cpu=1ms"),
        ("agct", "cpu=1ms,debug-non-safepoints=on"),
        ("jvmti", "cpu=1ms,engine=jvmti"),
    ];
    for jdk in all_jdks() {
        let mut shares = Vec::new();
        for (k, (engine, options)) in runs.into_iter().enumerate() {
            let dir = scratch(&format!("sampling-bias-{}-{k}", jdk.key()));
            let flags = ["-XX:-UseCountedLoopSafepoints"];
            let (code, _, stderr) = run_java(
                java_command(&jdk, &dir, options, &flags, "SafepointBias", &["2"]),
                &format!("[{}] SafepointBias {options}", jdk.version),
            );
            assert_eq!(code, Some(0), "[{}] {options}: {stderr}", jdk.version);
            let report = json(&dir);
            assert_eq!(report["samples"]["engine"], engine);
            shares.push(self_share(
                &report["samples"],
                "worker",
                "SafepointBias",
                "spin",
            ));
        }
        let (agct, exact, jvmti) = (shares[0], shares[1], shares[2]);
        println!(
            "[{}] spin() self share: agct {agct:.1}%, agct with debug-non-safepoints=on {exact:.1}%, jvmti {jvmti:.1}%",
            jdk.version
        );
        // spin() is where the worker runs; the safepoint-biased sampler sees it only at polls elsewhere.
        // spin()'s loop has no poll, but its return does: AsyncGetCallTrace credits spin() either way.
        for (what, share) in [("", agct), (" with debug-non-safepoints=on", exact)] {
            assert!(
                share >= 80.0,
                "[{}] AsyncGetCallTrace{what} put {share:.1}% in spin()",
                jdk.version
            );
            assert!(
                share - jvmti >= 40.0,
                "[{}] the GetStackTrace sampler was not biased: spin() {jvmti:.1}% against {share:.1}%{what}",
                jdk.version
            );
        }
    }
}

#[test]
fn storm_of_threads_signals_and_unloaded_classes_ends_cleanly() {
    for jdk in all_jdks() {
        let dir = scratch(&format!("sampling-storm-{}", jdk.key()));
        let what = format!("[{}] Storm", jdk.version);
        // 20 s on every JDK, as long as the storm.
        let seconds = "20".to_string();
        let (code, stdout, stderr) = run_java(
            java_command(
                &jdk,
                &dir,
                "cpu=100us,wall=1ms",
                &["-Xmx256m"],
                "Storm",
                &[&seconds],
            ),
            &what,
        );
        assert_eq!(
            code,
            Some(3),
            "{what}: exit from the loader thread:\n{stdout}\n{stderr}"
        );
        assert!(stdout.contains("loaded "), "{what}: {stdout}");
        assert!(!stderr.contains("instr:"), "{what}: {stderr}");
        let report = json(&dir);
        let s = &report["samples"];
        assert!(s["cpu_samples"].as_u64().unwrap() > 1000, "{what}: {s:?}");
        assert!(s["wall_samples"].as_u64().unwrap() > 100, "{what}");
        // Losses are counted, whatever they were this time.
        for key in ["dropped", "unknown_frames"] {
            assert!(s[key].is_u64(), "{what}: no {key}");
        }
        let cpu = per_thread(s, "cpu");
        assert!(
            (0..15)
                .filter(|t| cpu.contains_key(&format!("storm-{t}")))
                .count()
                >= 10,
            "{what}: CPU samples of too few workers: {cpu:?}"
        );
        // The loaded-and-unloaded class's method was seen, by name or as an unknown frame.
        let txt = fs::read_to_string(dir.join("out.txt")).unwrap();
        assert!(
            txt.contains("Storm$Payload.work") || s["unknown_frames"].as_u64().unwrap() > 0,
            "{what}"
        );
    }
}

/// Attribution with `cpu=1ms` and reports in `dir`, once its sample log holds CPU samples of
/// "hot-thread" (the log is flushed at every drain, every 100 ms). The log's size alone is not enough:
/// on a loaded machine the JVM's own threads can fill 20 KB before hot-thread has run.
fn sampling_with_a_log(jdk: &Jdk, dir: &Path) -> std::process::Child {
    let child = java_command(jdk, dir, "cpu=1ms", &[], "Attribution", &["20000"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let log = dir.join("out.samples");
    let start = Instant::now();
    while hot_thread_samples(&log) < 20 {
        assert!(
            start.elapsed() < HANG,
            "[{}] the log gets no samples of hot-thread",
            jdk.version
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    child
}

/// CPU samples of "hot-thread" in a sample log still being written (0 while it is short or unreadable).
fn hot_thread_samples(log: &Path) -> u64 {
    if fs::metadata(log).map_or(0, |m| m.len()) < 20_000 {
        return 0;
    }
    let out = Command::new(instr_bin())
        .args(["report", "--format", "json"])
        .arg(log)
        .output()
        .unwrap();
    match serde_json::from_slice::<Value>(&out.stdout) {
        Ok(report) if out.status.success() => per_thread(&report["samples"], "cpu")
            .get("hot-thread")
            .copied()
            .unwrap_or(0),
        _ => 0,
    }
}

#[test]
fn kill_9_leaves_a_log_that_instr_report_reads() {
    for jdk in all_jdks() {
        let dir = scratch(&format!("sampling-kill-{}", jdk.key()));
        let log = dir.join("out.samples");
        let mut child = sampling_with_a_log(&jdk, &dir);
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(
            !dir.join("out.json").exists(),
            "killed before the exit report"
        );
        let out = Command::new(instr_bin())
            .args(["report", "--format", "json"])
            .arg(&log)
            .output()
            .unwrap();
        check(
            &format!("[{}] instr report of a killed run's log", jdk.version),
            &out,
        );
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        let cpu = per_thread(&report["samples"], "cpu");
        assert!(cpu.get("hot-thread").copied().unwrap_or(0) > 0, "{cpu:?}");
        assert!(report["samples"]["cpu_samples"].as_u64().unwrap() > 50);
        let txt = Command::new(instr_bin())
            .arg("report")
            .arg(&log)
            .output()
            .unwrap();
        check("instr report (text)", &txt);
        assert!(text(&txt.stdout).contains("Attribution.hot()V"));
    }
}

#[test]
fn sampling_alone_keeps_class_data_sharing() {
    for jdk in all_jdks() {
        let dir = scratch(&format!("sampling-cds-{}", jdk.key()));
        let flags = ["-Xshare:on", "-Xlog:class+load=info"];
        let (code, stdout, stderr) = run_java(
            java_command(&jdk, &dir, "cpu=10ms", &flags, "SafepointBias", &["1"]),
            &format!("[{}] SafepointBias -Xshare:on", jdk.version),
        );
        assert_eq!(
            code,
            Some(0),
            "[{}] -Xshare:on refused: {stderr}",
            jdk.version
        );
        assert!(
            stdout.contains("java.lang.Object source: shared objects file"),
            "[{}] java.lang.Object did not come from the CDS archive",
            jdk.version
        );
        assert!(json(&dir)["samples"]["cpu_samples"].as_u64().unwrap() > 0);
    }
}

#[test]
fn kill_quit_writes_a_report_of_the_samples_so_far_with_sampling_alone() {
    for jdk in all_jdks() {
        let dir = scratch(&format!("sampling-quit-{}", jdk.key()));
        let mut child = sampling_with_a_log(&jdk, &dir);
        let start = Instant::now();
        // Sampling alone defines no HeapProxy; the on-demand report is written all the same.
        let quit = Command::new("kill")
            .args(["-QUIT", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(quit.success());
        let report = dir.join("out.json");
        while !report.exists() {
            assert!(
                start.elapsed() < HANG,
                "[{}] no report after kill -QUIT",
                jdk.version
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let running = child.try_wait().unwrap().is_none();
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(
            running,
            "[{}] the report came from the exit, not the request",
            jdk.version
        );
        let report = json(&dir);
        assert!(
            report["samples"]["cpu_samples"].as_u64().unwrap() > 0,
            "[{}] no samples in the on-demand report",
            jdk.version
        );
    }
}
