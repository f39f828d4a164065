//! The `instr` binary on hand-written profiles (no JVM): every report format, the filters, the diff and
//! its CI exit status, and the errors (one line each, exit 2).

mod support;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{json, Value};
use support::{run, scratch, text};

fn instr(args: &[&str]) -> Output {
    run(Command::new(env!("CARGO_BIN_EXE_instr")).args(args))
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn frame(class: &str, method: &str, line: i64) -> Value {
    json!({"class": class, "method": method, "descriptor": "()V",
           "file": format!("{}.java", class.rsplit('.').next().unwrap()), "line": line})
}

/// A profile as the agent writes it (calls=counts, depth 2), with `extra` more allocations of
/// `com.shop.Cart` at a second site (and in the class's row, as the agent counts them).
fn profile(pid: u32, extra: u64) -> Value {
    let mut sites = vec![
        json!({"class": "com.shop.Cart", "count": 10, "bytes": 240, "site_id": 1,
               "stack": [frame("com.shop.Store", "checkout", 12), frame("com.shop.Main", "main", 5)]}),
        json!({"class": "java.lang.String", "count": 100, "bytes": 2400, "site_id": 2,
               "stack": [frame("org.lib.Util", "name", 40), frame("com.shop.Main", "main", 6)]}),
        json!({"class": "int[]", "count": 4, "bytes": 4096, "site_id": 3,
               "stack": [frame("org.lib.Util", "buffer", 50), frame("org.lib.Util", "run", 9)]}),
    ];
    if extra > 0 {
        sites.push(json!({"class": "com.shop.Cart", "count": extra, "bytes": extra * 24, "site_id": 4,
               "stack": [frame("com.shop.Store", "refill", 30), frame("com.shop.Main", "main", 7)]}));
    }
    let method = |id: u32, class: &str, name: &str, calls: u64| json!({"id": id, "class": class, "method": name, "descriptor": "()V", "enters": calls, "unwinds": 0});
    let thread_method = |id: u32, class: &str, name: &str, calls: u64| json!({"id": id, "class": class, "method": name, "descriptor": "()V", "calls": calls, "unwinds": 0});
    json!({
        "schema": "instr-profile/1", "pid": pid, "depth": 2,
        "totals": {"instances": 114 + extra, "bytes": 6736 + extra * 24},
        "live_sampling": 0, "stack_sample_bytes": 0, "live_sample_bytes": 0,
        "classes": [
            {"class": "int[]", "instances": 4, "bytes": 4096},
            {"class": "java.lang.String", "instances": 100, "bytes": 2400},
            {"class": "com.shop.Cart", "instances": 10 + extra, "bytes": 240 + extra * 24},
        ],
        "sites": sites,
        "methods": [
            method(1, "com.shop.Main", "main", 1),
            method(2, "com.shop.Store", "checkout", 10),
            method(3, "org.lib.Util", "name", 100),
        ],
        "calls": {"mode": "counts", "dropped_events": 0, "untimed_thread_events": 0, "threads": [
            {"name": "main", "tid": 1, "methods": [
                thread_method(1, "com.shop.Main", "main", 1),
                thread_method(2, "com.shop.Store", "checkout", 4),
                thread_method(3, "org.lib.Util", "name", 100)]},
            {"name": "worker-1", "tid": 21, "methods": [thread_method(2, "com.shop.Store", "checkout", 6)]},
        ]},
        "gc": {"collections": 1, "total_pause_ns": 1000000, "max_pause_ns": 1000000},
        "dropped": 0,
    })
}

fn write_profile(dir: &Path, name: &str, p: &Value) -> PathBuf {
    let path = dir.join(name);
    fs::write(&path, serde_json::to_string_pretty(p).unwrap()).unwrap();
    path
}

/// Panics with the output unless the exit status is `code`.
fn expect(code: i32, what: &str, out: &Output) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "{what}:\n--- stdout\n{}\n--- stderr\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
}

fn no_temporary_files(dir: &Path) {
    let left: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp"))
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
}

#[test]
fn every_format_produces_output() {
    let dir = scratch("cli-formats");
    let p = write_profile(&dir, "p.json", &profile(100, 0));

    let out = instr(&["report", s(&p)]);
    expect(0, "report (text to stdout)", &out);
    let report = text(&out.stdout);
    assert!(report.starts_with("instr heap report, pid 100, allocation-site depth 2\n"));
    for section in [
        "CLASSES BEGIN",
        "SITES BEGIN",
        "TRACE 300001:",
        "CALLS BEGIN",
        "GC: 1 collections",
    ] {
        assert!(report.contains(section), "no {section} in:\n{report}");
    }
    assert!(out.stderr.is_empty());

    for (format, file) in [
        ("text", "p.txt"),
        ("json", "p.out.json"),
        ("html", "p.html"),
        ("svg", "p.svg"),
        ("collapsed", "p.collapsed"),
        ("pprof", "p.pb.gz"),
    ] {
        let target = dir.join(file);
        let out = instr(&["report", s(&p), "--format", format, "-o", s(&target)]);
        expect(0, format, &out);
        assert!(
            out.stdout.is_empty(),
            "{format}: -o writes nothing to stdout"
        );
        let bytes = fs::read(&target).unwrap_or_else(|e| panic!("{format}: {e}"));
        let body = String::from_utf8_lossy(&bytes);
        match format {
            "text" => assert_eq!(body, report),
            "json" => {
                let back: Value = serde_json::from_slice(&bytes).unwrap();
                assert_eq!(
                    back["schema"], "instr-profile/2",
                    "written in the current schema"
                );
                assert_eq!(back["sites"].as_array().unwrap().len(), 3);
            }
            "html" => assert!(body.contains("<html") && body.contains("p.json"), "{body}"),
            "svg" => assert!(body.contains("<svg"), "{body}"),
            "collapsed" => assert_eq!(
                body,
                "com.shop.Main.main;com.shop.Store.checkout;com.shop.Cart 10\n\
                 com.shop.Main.main;org.lib.Util.name;java.lang.String 100\n\
                 org.lib.Util.run;org.lib.Util.buffer;int[] 4\n"
            ),
            // The pprof renderer is written elsewhere: whatever it writes must be gzip.
            "pprof" => assert!(bytes.is_empty() || bytes.starts_with(&[0x1f, 0x8b])),
            _ => unreachable!(),
        }
    }
    no_temporary_files(&dir);

    // Without --format, the extension of -o chooses.
    let by_name = dir.join("by-name.collapsed");
    expect(
        0,
        "-o NAME.collapsed",
        &instr(&["report", s(&p), "-o", s(&by_name)]),
    );
    assert_eq!(
        fs::read(&by_name).unwrap(),
        fs::read(dir.join("p.collapsed")).unwrap()
    );
}

#[test]
fn view_chooses_what_collapsed_draws() {
    let dir = scratch("cli-view");
    let p = write_profile(&dir, "p.json", &profile(100, 0));
    let out = instr(&["report", s(&p), "-f", "collapsed", "--view", "bytes"]);
    expect(0, "--view bytes", &out);
    assert!(text(&out.stdout).contains("org.lib.Util.run;org.lib.Util.buffer;int[] 4096\n"));

    let out = instr(&["report", s(&p), "-f", "collapsed", "--view", "cpu"]);
    expect(2, "--view cpu", &out);
    assert_eq!(
        text(&out.stderr),
        format!(
            "instr: {}: no view 'cpu' in this profile (views: objects, bytes)\n",
            s(&p)
        )
    );
}

#[test]
fn filters_narrow_the_report() {
    let dir = scratch("cli-filters");
    let p = write_profile(&dir, "p.json", &profile(100, 0));

    // A site is kept when a frame or its class is in the package: both of main's, not the int[] one.
    let out = instr(&["report", s(&p), "-f", "collapsed", "--package", "com.shop"]);
    expect(0, "--package collapsed", &out);
    assert_eq!(
        text(&out.stdout),
        "com.shop.Main.main;com.shop.Store.checkout;com.shop.Cart 10\n\
         com.shop.Main.main;org.lib.Util.name;java.lang.String 100\n"
    );
    // Classes and methods by their own class.
    let out = instr(&["report", s(&p), "-f", "json", "--package", "com.shop"]);
    expect(0, "--package json", &out);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let classes: Vec<&str> = v["classes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["class"].as_str().unwrap())
        .collect();
    assert_eq!(classes, ["com.shop.Cart"]);
    assert_eq!(v["methods"].as_array().unwrap().len(), 2);
    assert_eq!(v["totals"], json!({"instances": 10, "bytes": 240}));

    // --top 1: the largest row of each table.
    let out = instr(&["report", s(&p), "-f", "json", "--top", "1"]);
    expect(0, "--top", &out);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["classes"].as_array().unwrap().len(), 1);
    assert_eq!(v["classes"][0]["class"], "int[]");
    assert_eq!(v["sites"].as_array().unwrap().len(), 1);
    assert_eq!(v["methods"][0]["method"], "name");

    // --thread: the thread's calls; allocations are not per thread, left out with a warning.
    let out = instr(&["report", s(&p), "--thread", "worker-*"]);
    expect(0, "--thread", &out);
    let report = text(&out.stdout);
    assert!(
        report.contains("    1            6            0  com.shop.Store.checkout()V\n"),
        "{report}"
    );
    assert!(!report.contains("org.lib.Util.name"), "{report}");
    assert!(!report.contains("TRACE 300001"), "{report}");
    assert_eq!(text(&out.stderr).lines().count(), 1, "one warning");
    assert!(
        text(&out.stderr).contains("warning: --thread: allocations are not recorded per thread")
    );

    let out = instr(&["report", s(&p), "--thread", "nobody"]);
    expect(2, "--thread nobody", &out);
    assert_eq!(
        text(&out.stderr),
        format!(
            "instr: {}: --thread: no thread matches 'nobody' (threads: main, worker-1)\n",
            s(&p)
        )
    );
}

#[test]
fn diff_finds_the_one_grown_site() {
    let dir = scratch("cli-diff");
    let before = write_profile(&dir, "before.json", &profile(100, 0));
    let after = write_profile(&dir, "after.json", &profile(200, 5));

    let out = instr(&["diff", s(&before), s(&after)]);
    expect(0, "diff without --fail-over", &out);
    let table = text(&out.stdout);
    assert!(table.contains("SITES BEGIN (allocations per site and stack, root;...;allocated class; 1 grew, 0 shrank;"), "{table}");
    assert!(
        table.contains("com.shop.Main.main()V;com.shop.Store.refill()V;com.shop.Cart\n"),
        "{table}"
    );
    assert!(
        !table.contains("METHODS BEGIN"),
        "no method changed:\n{table}"
    );

    let html = dir.join("diff.html");
    let out = instr(&[
        "diff",
        s(&before),
        s(&after),
        "--fail-over",
        "0",
        "-o",
        s(&html),
    ]);
    expect(1, "diff --fail-over 0", &out);
    assert_eq!(text(&out.stdout), table);
    let stderr = text(&out.stderr);
    let sites: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("instr: site grew"))
        .collect();
    assert_eq!(
        sites,
        ["instr: site grew by 5 (more than 0): com.shop.Main.main()V;com.shop.Store.refill()V;com.shop.Cart"]
    );
    // The class the site allocates grew with it; nothing else did.
    assert_eq!(stderr.lines().count(), 2, "{stderr}");
    assert!(stderr.contains("instr: class grew by 5 (more than 0): com.shop.Cart\n"));
    assert!(fs::read_to_string(&html).unwrap().contains("<html"));
    no_temporary_files(&dir);

    expect(
        0,
        "diff --fail-over 5",
        &instr(&["diff", s(&before), s(&after), "--fail-over", "5"]),
    );
    // The same profile twice: no difference at all.
    let out = instr(&["diff", s(&before), s(&before), "--fail-over", "0"]);
    expect(0, "diff of a profile with itself", &out);
    assert!(text(&out.stdout).contains("no differences"));
}

#[test]
fn errors_are_one_line_each() {
    let dir = scratch("cli-errors");
    let good = write_profile(&dir, "good.json", &profile(100, 0));
    let missing = dir.join("missing.json");
    let schema = write_profile(
        &dir,
        "schema.json",
        &json!({"schema": "instr-profile/9", "classes": []}),
    );
    let truncated = dir.join("truncated.json");
    let whole = fs::read_to_string(&good).unwrap();
    fs::write(&truncated, &whole[..whole.len() / 2]).unwrap();

    for (path, problem) in [
        (&missing, "No such file or directory"),
        (
            &schema,
            "schema \"instr-profile/9\" is not one this version reads",
        ),
        (&truncated, "not a whole JSON document: EOF while parsing"),
    ] {
        for args in [vec!["report", s(path)], vec!["diff", s(&good), s(path)]] {
            let out = instr(&args);
            expect(2, &format!("{args:?}"), &out);
            let stderr = text(&out.stderr);
            assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
            assert!(
                stderr.starts_with(&format!("instr: {}: {problem}", s(path))),
                "{args:?}: {stderr}"
            );
            assert!(out.stdout.is_empty(), "{args:?}");
        }
    }
}

#[test]
fn a_failed_write_leaves_no_file() {
    let dir = scratch("cli-write");
    let p = write_profile(&dir, "p.json", &profile(100, 0));
    // A directory where the output should go: the temporary file is written, the rename refused.
    let target = dir.join("out.html");
    fs::create_dir(&target).unwrap();
    fs::write(target.join("keep"), "x").unwrap();
    let out = instr(&["report", s(&p), "-o", s(&target)]);
    expect(2, "-o onto a directory", &out);
    assert_eq!(
        text(&out.stderr).lines().count(),
        1,
        "{}",
        text(&out.stderr)
    );
    assert!(text(&out.stderr).starts_with(&format!("instr: {}: ", s(&target))));
    no_temporary_files(&dir);
}

#[test]
fn help_and_completions() {
    for sub in ["report", "diff", "completions"] {
        let out = instr(&[sub, "--help"]);
        expect(0, &format!("{sub} --help"), &out);
        assert!(text(&out.stdout).contains("Usage: instr "), "{sub}");
    }
    assert!(text(&instr(&["report", "--help"]).stdout).contains("--format"));
    assert!(text(&instr(&["diff", "--help"]).stdout).contains("--fail-over"));
    for shell in ["bash", "zsh", "fish"] {
        let out = instr(&["completions", shell]);
        expect(0, shell, &out);
        assert!(text(&out.stdout).contains("report"), "{shell}");
    }
    expect(2, "unknown subcommand", &instr(&["frobnicate"]));
}
