//! The thread profiler's section of a profile, with no JVM: a small hand-written section read back
//! losslessly, drawn as the `monitors` and `waits` flame views, and rendered as the threads report
//! (`PREFIX.threads.txt`) against a golden file. `agent_reports_render_the_same` compares the renderer
//! with what an agent wrote (`INSTR_THREADS_REPORTS=DIR`, after `cargo test --release --test monitors`).

use std::path::{Path, PathBuf};

use instr_profile::flame::{views, FrameKind};
use instr_profile::model::{Deadlock, Threads};
use instr_profile::render::{pprof, threads_text};
use instr_profile::Profile;
use serde_json::Value;

const THREADS: &str = include_str!("data/threads.json");

fn golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, actual).unwrap();
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        expected == actual,
        "{} differs (UPDATE_GOLDEN=1 rewrites it):\n{actual}",
        path.display()
    );
}

#[test]
fn the_threads_section_reads_back_and_writes_the_same_json() {
    let p = Profile::from_json(THREADS).unwrap();
    let t = p.threads.as_ref().expect("a threads section");
    assert_eq!(t.threads.len(), 4);
    assert_eq!(
        t.threads[3].cpu_ns, None,
        "a virtual thread has no CPU time"
    );
    assert_eq!(t.monitors.contended[0].stack[0].name(), "app.Bank.transfer");
    assert_eq!(t.deadlocks[0].threads[1].held_by.name, "dl-a");
    // Fields no renderer reads (before_init, monitors_on, a lock's kind) survive the round trip.
    let value = |t: &str| serde_json::from_str::<Value>(t).unwrap();
    assert_eq!(value(&p.to_json()), value(THREADS));
    assert_eq!(
        Profile::from_json(&p.to_json()).unwrap().to_json(),
        p.to_json()
    );
    // A profile without the thread profiler has no section, and writes none.
    let mut none = p.clone();
    none.threads = None;
    assert!(value(&none.to_json()).get("threads").is_none());
}

#[test]
fn monitor_views_weigh_stacks_by_time_blocked_and_waited() {
    let p = Profile::from_json(THREADS).unwrap();
    let t = p.threads.as_ref().unwrap();
    let v = views(&p);
    let ids: Vec<&str> = v.iter().map(|v| v.id).collect();
    assert_eq!(ids, ["objects", "bytes", "monitors", "waits"]);
    let monitors = v.iter().find(|v| v.id == "monitors").unwrap();
    assert_eq!(monitors.title, "Monitor time");
    assert_eq!(monitors.unit, "nanoseconds");
    let blocked: u64 = t.monitors.contended.iter().map(|c| c.blocked_ns).sum();
    assert_eq!(monitors.total(), blocked);
    assert_eq!(monitors.total(), t.monitors.total_blocked_ns);
    // The outermost frame first, the monitor's class as the leaf.
    let top: Vec<_> = monitors.frames_of(&monitors.stacks[0]).collect();
    let names: Vec<&str> = top.iter().map(|f| &*f.name).collect();
    assert_eq!(
        names,
        [
            "app.Main.main",
            "app.Bank.run",
            "app.Bank.transfer",
            "app.Bank$Account"
        ]
    );
    assert_eq!(top.last().unwrap().kind, FrameKind::Allocated);
    assert_eq!(top[0].kind, FrameKind::App);
    let waits = v.iter().find(|v| v.id == "waits").unwrap();
    assert_eq!(waits.total(), t.monitors.total_waited_ns);
    assert_eq!(
        &*waits.frames_of(&waits.stacks[0]).last().unwrap().name,
        "app.Queue"
    );
    // pprof knows contention time as Go's mutex profile's `delay`.
    assert_eq!(pprof::sample_type(monitors), ("delay", "nanoseconds"));
    assert_eq!(pprof::sample_type(waits), ("waits", "nanoseconds"));
    // Without the section, no monitor view.
    let mut none = p.clone();
    none.threads = None;
    assert!(views(&none)
        .iter()
        .all(|v| v.id != "monitors" && v.id != "waits"));
}

#[test]
fn threads_report_matches_golden() {
    let p = Profile::from_json(THREADS).unwrap();
    let text = threads_text::render(&p).expect("a threads section");
    golden("threads.txt", &text);
    let mut none = p.clone();
    none.threads = None;
    assert_eq!(threads_text::render(&none), None);
}

fn files_under(dir: &Path, suffix: &str, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = e.path();
        if path.is_dir() {
            files_under(&path, suffix, out);
        } else if path.to_string_lossy().ends_with(suffix) {
            out.push(path);
        }
    }
}

/// Under `INSTR_THREADS_REPORTS=DIR` (the monitors tests' `target/tmp`): every `PREFIX.threads.txt` the
/// agent wrote is byte for byte what the renderer makes of `PREFIX.threads.json`, and of the `threads`
/// section of `PREFIX.json` where there is one; every deadlock of a monitor dump (`PREFIX.monitors.json`)
/// renders as that dump's DEADLOCKS block.
#[test]
#[ignore = "needs the reports of a run of the agent: INSTR_THREADS_REPORTS=DIR"]
fn agent_reports_render_the_same() {
    let dir =
        PathBuf::from(std::env::var_os("INSTR_THREADS_REPORTS").expect("INSTR_THREADS_REPORTS"));
    let read = |p: &Path| std::fs::read_to_string(p).unwrap();
    let mut files = Vec::new();
    files_under(&dir, ".threads.json", &mut files);
    let (mut texts, mut sections) = (0, 0);
    for json in &files {
        let prefix = json
            .to_string_lossy()
            .trim_end_matches(".threads.json")
            .to_string();
        let mut doc: Value = serde_json::from_str(&read(json)).unwrap();
        let pid = doc["pid"].as_u64().unwrap() as u32;
        // The file is the section with its own schema and pid.
        doc.as_object_mut().unwrap().remove("schema");
        doc.as_object_mut().unwrap().remove("pid");
        let t: Threads = serde_json::from_value(doc).unwrap();
        let txt = read(Path::new(&format!("{prefix}.threads.txt")));
        assert!(
            threads_text::render_threads(pid, &t) == txt,
            "{prefix}.threads.txt differs:\n{}",
            threads_text::render_threads(pid, &t)
        );
        texts += 1;
        let main = PathBuf::from(format!("{prefix}.json"));
        let profile = std::fs::read_to_string(&main).map(|t| Profile::from_json(&t));
        if let Ok(Ok(p)) = profile {
            if p.threads.is_some() {
                assert_eq!(p.threads.as_ref(), Some(&t), "{}", main.display());
                assert!(threads_text::render(&p).as_deref() == Some(txt.as_str()));
                sections += 1;
            }
        }
    }
    let mut dumps = Vec::new();
    files_under(&dir, ".monitors.json", &mut dumps);
    let mut blocks = 0;
    for json in &dumps {
        let Ok(doc) = serde_json::from_str::<Value>(&read(json)) else {
            continue; // a dump the test killed the JVM in the middle of is not compared
        };
        let deadlocks: Vec<Deadlock> = serde_json::from_value(doc["deadlocks"].clone()).unwrap();
        let mut block = String::new();
        threads_text::deadlocks_text(&mut block, &deadlocks);
        let txt = read(&json.with_extension("txt"));
        assert!(
            txt.contains(&block),
            "{}: not in the dump:\n{block}",
            json.display()
        );
        blocks += 1;
    }
    println!("{texts} threads reports ({sections} from PREFIX.json too), {blocks} monitor dumps' deadlocks");
    assert!(texts > 0, "no PREFIX.threads.json under {}", dir.display());
}

fn filtered(f: instr_profile::filter::Filter) -> Result<(Threads, Vec<String>), String> {
    let p = Profile::from_json(THREADS).unwrap();
    let out = f.apply(&p).map_err(|e| e.to_string())?;
    Ok((
        out.profile.threads.expect("the section stays"),
        out.warnings,
    ))
}

#[test]
fn package_filter_keeps_the_monitor_rows_of_the_package() {
    let (t, _) = filtered(instr_profile::filter::Filter {
        packages: vec!["app.Bank".into()],
        ..Default::default()
    })
    .unwrap();
    let m = &t.monitors;
    let classes = |rows: Vec<&str>| rows.into_iter().map(String::from).collect::<Vec<_>>();
    assert_eq!(
        classes(m.contended.iter().map(|c| c.class.as_str()).collect()),
        ["app.Bank$Account"]
    );
    assert!(m.waits.is_empty(), "app.Queue's waits are not app.Bank's");
    assert_eq!(
        classes(m.classes.iter().map(|c| c.class.as_str()).collect()),
        ["app.Bank$Account"]
    );
    assert_eq!((m.total_blocked_ns, m.total_waited_ns), (7_500_000, 0));
    assert!(t.deadlocks.is_empty(), "the deadlock is app.Dl's");
    // The thread list is not per package.
    assert_eq!(t.threads.len(), 4);
}

#[test]
fn thread_filter_keeps_the_threads_rows_and_the_monitors_they_waited_for() {
    let (t, warnings) = filtered(instr_profile::filter::Filter {
        threads: vec!["t2".into()],
        ..Default::default()
    })
    .unwrap();
    assert!(t.threads.is_empty(), "no thread t2 in the thread list");
    let m = &t.monitors;
    assert_eq!(m.contended.len(), 1, "t2 waited for app.Bank$Account only");
    assert_eq!(m.contended[0].class, "app.Bank$Account");
    assert!(m.waits.is_empty());
    assert_eq!(m.total_blocked_ns, m.contended[0].blocked_ns);
    assert!(
        warnings.iter().any(|w| w.contains("kept whole")),
        "{warnings:?}"
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("allocations are not recorded per thread")),
        "{warnings:?}"
    );

    let (t, _) = filtered(instr_profile::filter::Filter {
        threads: vec!["dl-*".into()],
        ..Default::default()
    })
    .unwrap();
    assert_eq!(t.deadlocks.len(), 1, "the deadlock of dl-a and dl-b");

    let e = filtered(instr_profile::filter::Filter {
        threads: vec!["nosuch".into()],
        ..Default::default()
    })
    .unwrap_err();
    assert!(
        e.starts_with("--thread: no thread matches 'nosuch' (threads: main, Reference Handler, t1"),
        "{e}"
    );
}

#[test]
fn top_keeps_the_largest_threads_and_monitor_rows() {
    let (t, _) = filtered(instr_profile::filter::Filter {
        top: Some(1),
        ..Default::default()
    })
    .unwrap();
    assert_eq!(t.threads.len(), 1);
    assert_eq!(t.threads[0].name, "main", "the most CPU time");
    assert_eq!(t.monitors.contended.len(), 1);
    assert_eq!(t.monitors.contended[0].class, "app.Bank$Account");
    assert_eq!(t.monitors.waits.len(), 1);
    assert_eq!(t.monitors.classes.len(), 1);
    assert_eq!(t.monitors.total_blocked_ns, 7_500_000);
}

#[test]
fn diff_shows_monitor_growth_without_failing_on_it() {
    use instr_profile::render::diff;
    let before = Profile::from_json(THREADS).unwrap();
    let mut after = before.clone();
    let m = &mut after.threads.as_mut().unwrap().monitors;
    m.contended[0].count += 2;
    m.contended[0].blocked_ns += 1_000_000;
    m.total_blocked_ns += 1_000_000;
    m.classes[0].contended += 2;
    m.classes[0].blocked_ns += 1_000_000;
    let d = diff::compare(&before, &after);
    assert_eq!(d.monitors.len(), 1, "{:?}", d.monitors);
    let row = &d.monitors[0];
    assert_eq!(row.name, "blocked on app.Bank$Account");
    assert_eq!((row.count_delta(), row.bytes_delta()), (2, 1_000_000));
    assert!(
        d.grown_over(0).is_empty(),
        "monitor rows never fail --fail-over"
    );
    let text = d.to_text();
    assert!(text.contains("MONITORS BEGIN"), "{text}");
    assert!(text.contains("ns +/-"), "{text}");
    let views = diff::flame(&before, &after);
    let ids: Vec<&str> = views.iter().map(|v| v.id).collect();
    assert_eq!(ids, ["monitors_grew"]);
    assert_eq!(views[0].total(), 1_000_000);
}

#[test]
fn a_monitor_dump_renders_as_a_thread_dump() {
    let dump: instr_profile::model::MonitorDump = serde_json::from_value(serde_json::json!({
        "schema": "instr-monitors/1", "pid": 7, "reason": "data dump request", "time_ns": 1_500_000_000u64,
        "threads": [
            {"id": 1, "name": "main", "daemon": false, "state": "TIMED_WAITING", "owned": [],
             "waiting_for": null,
             "stack": [{"class": "java.lang.Thread", "method": "sleep", "descriptor": "(J)V", "file": null, "line": null}]},
            {"id": 21, "name": "w", "daemon": true, "state": "BLOCKED",
             "owned": [{"class": "app.A", "id": 255, "kind": "monitor", "depth": 0},
                       {"class": "java.util.concurrent.locks.ReentrantLock$NonfairSync", "id": -2, "kind": "ownable synchronizer", "depth": -1}],
             "waiting_for": {"kind": "enter", "monitor": {"class": "app.B", "id": 16, "kind": "monitor", "depth": -1},
                             "owner": {"id": 22, "name": "v"}},
             "stack": [{"class": "app.W", "method": "run", "descriptor": "()V", "file": "W.java", "line": 9}]}
        ],
        "deadlocks": []
    }))
    .unwrap();
    let text = threads_text::monitor_dump_text(&dump);
    let expected = "instr monitor dump, pid 7, data dump request, 1.500 s after start

DEADLOCKS BEGIN (0 found)
DEADLOCKS END

MONITOR DUMP BEGIN (2 threads)
\"main\" id=1 TIMED_WAITING
\tat java.lang.Thread.sleep(Unknown Source)

\"w\" id=21 daemon BLOCKED
    waiting to lock <app.B@10> held by \"v\" id=22
\tat app.W.run(W.java:9)
\t- locked <app.A@ff>
\t- holds <java.util.concurrent.locks.ReentrantLock$NonfairSync@fffffffe> (ownable synchronizer)

MONITOR DUMP END
";
    assert_eq!(text, expected);
}
