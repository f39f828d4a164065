//! The HTML and SVG flame graphs of profiles made here (no JVM): byte-for-byte against the golden files
//! in tests/golden/ (`INSTR_BLESS=1 cargo test --release -p instr-profile` rewrites them after an
//! intended change; review the diff), the data the page embeds, and the size and render time of a
//! 100,000-stack profile (printed, not asserted: the machine is shared).

mod support;

use std::path::PathBuf;
use std::time::Instant;

use instr_profile::flame::{self, FlameFrame, FlameView, FrameKind};
use instr_profile::render::{html, svg};
use serde_json::Value;

fn golden(name: &str, actual: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("INSTR_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, actual).unwrap();
        eprintln!("blessed {}", path.display());
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; INSTR_BLESS=1 cargo test --release -p instr-profile writes it",
            path.display()
        )
    });
    if expected != actual {
        let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
        std::fs::write(&out, actual).unwrap();
        let line = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(expected.lines().count().min(actual.lines().count()));
        panic!(
            "{} differs from the output (first at line {}; the output is in {}): \
             diff them, and if the change is intended, INSTR_BLESS=1 cargo test --release -p instr-profile",
            path.display(),
            line + 1,
            out.display()
        );
    }
}

/// The JSON the page embeds, read back as the page's script reads it.
fn embedded(page: &str) -> Value {
    let start = "<script type=\"application/json\" id=\"instr-data\">";
    let from = page.find(start).expect("the data element") + start.len();
    let len = page[from..]
        .find("</script>")
        .expect("the data element ends");
    serde_json::from_str(&page[from..from + len]).expect("the data is JSON")
}

#[test]
fn sample_html_matches_golden() {
    let views = flame::views(&support::sample());
    golden(
        "sample.html",
        &html::render("Sample profile <pid 4242>", &views),
    );
}

#[test]
fn sample_svg_matches_golden() {
    let views = flame::views(&support::sample());
    let by_id = |id| views.iter().find(|v| v.id == id).unwrap();
    golden("sample.objects.svg", &svg::render(by_id("objects"), 800));
    golden("sample.cpu.svg", &svg::render(by_id("cpu"), 600));
}

#[test]
fn page_data_adds_up_to_every_view_total() {
    let views = flame::views(&support::sample());
    let ids: Vec<&str> = views.iter().map(|v| v.id).collect();
    assert_eq!(
        ids,
        [
            "objects",
            "bytes",
            "live_objects",
            "live_bytes",
            "calls",
            "cpu",
            "wall"
        ]
    );
    let data = embedded(&html::render("t", &views));
    let names = data["names"].as_array().unwrap();
    let kinds = data["kinds"].as_str().unwrap();
    assert_eq!(names.len(), kinds.len());
    let all = data["views"].as_array().unwrap();
    assert_eq!(all[1]["shape"], 0, "bytes have the tree of objects");
    assert_eq!(all[5]["shape"], 4, "CPU has the tree of calls");
    for (v, d) in views.iter().zip(all) {
        assert_eq!(d["id"], v.id);
        assert_eq!(d["total"].as_u64().unwrap(), v.total(), "{}", v.id);
        let self_sum: u64 = d["self"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .sum();
        assert_eq!(
            self_sum,
            v.total(),
            "{}: self values add up to the total",
            v.id
        );
        let shape = d["shape"].as_u64().map_or(d, |j| &all[j as usize]);
        let depth = shape["depth"].as_array().unwrap();
        assert_eq!(depth.len(), d["self"].as_array().unwrap().len());
        assert_eq!(depth[0], 0, "the root first");
        assert_eq!(shape["name"][0], -1, "the root has no name");
        // Preorder: each node is at most one level deeper than the one before.
        for w in depth.windows(2) {
            assert!(w[1].as_u64().unwrap() <= w[0].as_u64().unwrap() + 1);
        }
    }
    // The kinds the colours come from.
    let kind_of = |n: &str| {
        let i = names
            .iter()
            .position(|x| x == n)
            .unwrap_or_else(|| panic!("{n}"));
        kinds.as_bytes()[i] as char
    };
    assert_eq!(kind_of("java.util.ArrayList.grow"), 'j');
    assert_eq!(kind_of("app.Parser.parse"), 'a');
    assert_eq!(kind_of("app.Record"), 'c');
}

#[test]
fn frame_names_cannot_close_the_script() {
    let evil = "x</script><script>alert(1)</script><!--";
    let view = FlameView::from_frames(
        "objects",
        "Allocated objects",
        "objects",
        [(
            vec![FlameFrame {
                name: evil.into(),
                kind: FrameKind::App,
            }],
            3,
        )],
    );
    let page = html::render("</title><script>", std::slice::from_ref(&view));
    // The data's and the script's own closing tags, and no other.
    assert_eq!(page.matches("</script").count(), 2, "{page}");
    assert!(!page.contains("<!--"));
    assert!(page.contains("<title>&lt;/title&gt;&lt;script&gt;</title>"));
    assert_eq!(
        embedded(&page)["names"][0],
        evil,
        "JSON.parse reads the name back as it was"
    );
    let svg = svg::render(&view, 400);
    assert!(!svg.contains("<script"), "{svg}");
}

#[test]
fn svg_merges_frames_narrower_than_a_pixel() {
    let frame = |name: String| FlameFrame {
        name: name.into(),
        kind: FrameKind::App,
    };
    let mut stacks = vec![(vec![frame("big".into())], 1_000_000)];
    stacks.extend((0..10_000).map(|i| {
        (
            vec![frame(format!("tiny{i:05}")), frame("below".into())],
            10,
        )
    }));
    let view = FlameView::from_frames("calls", "Calls", "calls", stacks);
    let s = svg::render(&view, 1000);
    let boxes = s.matches("<rect x=").count();
    println!("10,001 stacks: {boxes} boxes, {} bytes of SVG", s.len());
    // The root, "big", and the 10,000 tiny frames (91 px together) as one "…" box.
    assert_eq!(boxes, 3, "{s}");
    assert!(
        s.contains("<title>10,000 frames narrower than a pixel: 100,000 calls, 9.09%</title>"),
        "{s}"
    );
    assert!(
        !s.contains("below"),
        "the merged frames' children are left out"
    );
}

#[test]
fn synthetic_100k_stacks_size_and_render_time() {
    let t = Instant::now();
    let profile = support::synthetic(100_000);
    println!(
        "synthetic profile: {} stacks, made in {:?}",
        profile.sites.len(),
        t.elapsed()
    );
    let t = Instant::now();
    let views = flame::views(&profile);
    println!("flame::views: {} views in {:?}", views.len(), t.elapsed());
    let t = Instant::now();
    let page = html::render("100,000 stacks", &views);
    let html_time = t.elapsed();
    let data = embedded(&page);
    let nodes: Vec<u64> = data["views"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["nodes"].as_u64().unwrap())
        .collect();
    println!(
        "HTML: {} bytes ({:.1} MiB), rendered in {html_time:?}; {} distinct names, tree nodes per view {nodes:?}",
        page.len(),
        page.len() as f64 / 1048576.0,
        data["names"].as_array().unwrap().len(),
    );
    let t = Instant::now();
    let s = svg::render(&views[0], 1200);
    println!(
        "SVG (objects, 1200 px): {} bytes, {} boxes, rendered in {:?}",
        s.len(),
        s.matches("<rect x=").count(),
        t.elapsed()
    );
    assert_eq!(views[0].stacks.len(), 100_000);
    assert_eq!(
        data["views"][0]["total"].as_u64().unwrap(),
        views[0].total()
    );
}

/// A page of 100,000 scattered stacks carries its small frames merged: every named frame it sends is at
/// least 1/20,000 of its view (0.1 px of a 2,000 px chart), each run of smaller siblings is one node
/// (name -2) with nothing under it, and the self values still add up to the view's exact total.
#[test]
fn a_big_page_merges_frames_too_small_to_see_and_keeps_its_totals() {
    let views = flame::views(&support::synthetic(100_000));
    let data = embedded(&html::render("100,000 stacks", &views));
    let all = data["views"].as_array().unwrap();
    let numbers = |v: &Value| -> Vec<i64> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_i64().unwrap())
            .collect()
    };
    for (v, d) in views.iter().zip(all) {
        let shape = d
            .get("shape")
            .map_or(d, |s| &all[s.as_u64().unwrap() as usize]);
        let (name, depth, own) = (
            numbers(&shape["name"]),
            numbers(&shape["depth"]),
            numbers(&d["self"]),
        );
        assert_eq!(
            own.iter().sum::<i64>() as u64,
            v.total(),
            "{}: exact total",
            v.id
        );
        // Subtree totals from the preorder: a node's subtree is the run of deeper nodes after it.
        let n = name.len();
        let mut total = own.clone();
        let mut open: Vec<usize> = Vec::new();
        for i in 0..n {
            while open.last().is_some_and(|&o| depth[o] >= depth[i]) {
                let o = open.pop().unwrap();
                if let Some(&p) = open.last() {
                    total[p] += total[o];
                }
            }
            open.push(i);
        }
        while let Some(o) = open.pop() {
            if let Some(&p) = open.last() {
                total[p] += total[o];
            }
        }
        let threshold = v.total() as i64 / html::MERGE_BELOW as i64;
        let merged = (1..n).filter(|&i| name[i] == -2).count();
        assert!(merged > 0, "{}: nothing merged in {n} nodes", v.id);
        for i in 1..n {
            if name[i] == -2 {
                assert!(
                    i + 1 == n || depth[i + 1] <= depth[i],
                    "{}: a merged node has no children",
                    v.id
                );
            } else {
                assert!(
                    total[i] >= threshold,
                    "{}: node {i} ({}) is below the threshold",
                    v.id,
                    total[i]
                );
            }
        }
        println!("{}: {n} nodes, {merged} of them merged runs", v.id);
    }
}
