//! The HTML flame graph in a real browser: renders the sample profile to target/browser/profile.html,
//! works out in Rust what the page must show, and has tests/browser/check.mjs drive the system's
//! Chromium through playwright-core to check it (drawn, search share, zoom, inverted, view totals) and
//! save target/browser/profile.png. It also loads a 100,000-stack page and prints how long it took.
//! Without node, Chromium or the npm package this test fails, saying what to run: scripts/setup.sh.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use instr_profile::flame::{self, FlameView};
use instr_profile::render::html;
use serde_json::json;

const SETUP: &str =
    "run scripts/setup.sh (as root or with sudo): it installs chromium, nodejs and npm, \
                     and runs `npm ci` in tests/browser";

fn fmt_int(v: u64) -> String {
    let d = v.to_string();
    let mut s = String::new();
    for (i, c) in d.chars().enumerate() {
        if i > 0 && (d.len() - i).is_multiple_of(3) {
            s.push(',');
        }
        s.push(c);
    }
    s
}

/// What the page's search line must say for `query`, from the stacks themselves: a stack counts once
/// if any of its frames matches.
fn matched_text(
    view: &FlameView,
    query: &str,
    matches: impl Fn(&str) -> bool,
) -> serde_json::Value {
    let m: u64 = view
        .stacks
        .iter()
        .filter(|s| view.frames_of(s).any(|f| matches(&f.name)))
        .map(|s| s.value)
        .sum();
    let t = view.total();
    // The page computes (100 * m / t).toFixed(1): the same double, rounded to one decimal.
    let text = format!(
        "matched {:.1}% of {} {} ({})",
        100.0 * m as f64 / t as f64,
        fmt_int(t),
        view.unit,
        fmt_int(m)
    );
    json!({ "query": query, "text": text })
}

fn wait(mut child: std::process::Child, limit: Duration) -> std::process::Output {
    let start = Instant::now();
    loop {
        if child.try_wait().expect("waiting for node").is_some() {
            return child.wait_with_output().expect("node's output");
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().expect("node's output");
            panic!(
                "check.mjs did not finish within {limit:?} (killed)\nstdout:\n{}\nstderr:\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn html_flame_graph_in_chromium() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("browser");
    std::fs::create_dir_all(&dir).unwrap();
    let script = root.join("tests/browser/check.mjs");

    // What must be there, each missing piece failing with its fix rather than skipping the test.
    let node = Command::new("node").arg("--version").output();
    match &node {
        Ok(o) if o.status.success() => {}
        _ => panic!("node cannot run ({node:?}): {SETUP}"),
    }
    assert!(
        Path::new("/usr/bin/chromium").exists(),
        "/usr/bin/chromium is missing: {SETUP}"
    );
    let pw = root.join("tests/browser/node_modules/playwright-core/package.json");
    assert!(
        pw.exists(),
        "{} is missing (npm ci not run): {SETUP}",
        pw.display()
    );

    let views = flame::views(&support::sample());
    let page = dir.join("profile.html");
    std::fs::write(&page, html::render("Sample profile", &views)).unwrap();
    let objects = &views[0];
    assert_eq!(objects.id, "objects");
    let searches = vec![
        {
            let mut s = matched_text(objects, "Parser.parse", |n| n.contains("Parser.parse"));
            s["highlighted"] = json!("app.Parser.parse");
            s
        },
        {
            let mut s = matched_text(objects, "/Concat|ArrayList/", |n| {
                n.contains("Concat") || n.contains("ArrayList")
            });
            s["highlighted"] = json!("java.util.ArrayList.grow");
            s
        },
    ];
    let load: u64 = objects
        .stacks
        .iter()
        .filter(|s| objects.frames_of(s).any(|f| &*f.name == "app.Loader.load"))
        .map(|s| s.value)
        .sum();
    let expect = json!({
        "min_frames": 8,
        "views": views.iter().map(|v| json!({
            "id": v.id,
            "total": format!("{}: {} {}", v.title, fmt_int(v.total()), v.unit),
        })).collect::<Vec<_>>(),
        "searches": searches,
        "tooltip": { "name": "app.Loader.load", "text": format!("{} objects, {:.1}% of all", fmt_int(load), 100.0 * load as f64 / objects.total() as f64) },
        "zoom": "app.Loader.load",
        "leaf": "byte[]",
    });
    let expect_file = dir.join("expect.json");
    std::fs::write(&expect_file, serde_json::to_string_pretty(&expect).unwrap()).unwrap();

    let t = Instant::now();
    let big = dir.join("big.html");
    std::fs::write(
        &big,
        html::render(
            "100,000 stacks",
            &flame::views(&support::synthetic(100_000)),
        ),
    )
    .unwrap();
    println!(
        "big.html: {} bytes, made in {:?}",
        std::fs::metadata(&big).unwrap().len(),
        t.elapsed()
    );

    let shot: PathBuf = dir.join("profile.png");
    let _ = std::fs::remove_file(&shot);
    let child = Command::new("node")
        .arg(&script)
        .arg(&page)
        .arg(&shot)
        .arg(&expect_file)
        .arg(&big)
        .current_dir(root.join("tests/browser"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("node {}: {e}: {SETUP}", script.display()));
    let out = wait(child, Duration::from_secs(300));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    eprintln!("{stderr}");
    match out.status.code() {
        Some(0) => {}
        Some(3) => panic!("Chromium did not start: {SETUP}\n{stderr}"),
        _ if stderr.contains("Cannot find package 'playwright-core'") => {
            panic!("node cannot load playwright-core: {SETUP}\n{stderr}")
        }
        _ => panic!(
            "the page failed a check ({}):\n{stdout}\n{stderr}",
            out.status
        ),
    }
    assert!(shot.exists(), "no screenshot at {}", shot.display());
}
