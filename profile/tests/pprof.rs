//! pprof output: the bytes are stable (a golden file), and an independent decoder, the npm package
//! `pprof-format` run by node (`tests/pprof/decode.mjs`), reads back every view's total and stacks
//! exactly. Node and the package are required: without them the tests fail, naming `scripts/setup.sh`.
//!
//!     cargo test --release -p instr-profile --test pprof
//!     INSTR_BLESS=1 cargo test --release -p instr-profile --test pprof   # rewrites the golden file

use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use instr_profile::flame::{self, FlameFrame, FlameView, FrameKind};
use instr_profile::render::pprof;
use instr_profile::Profile;
use serde_json::Value;

fn stack(names: &str, value: u64) -> (Vec<FlameFrame>, u64) {
    let frames = names
        .split(';')
        .filter(|n| !n.is_empty())
        .map(|n| FlameFrame {
            name: n.into(),
            kind: if n.starts_with("java.") {
                FrameKind::Jdk
            } else {
                FrameKind::App
            },
        })
        .collect();
    (frames, value)
}

fn view(id: &'static str, unit: &'static str, stacks: &[(&str, u64)]) -> FlameView {
    FlameView::from_frames(id, id, unit, stacks.iter().map(|&(s, v)| stack(s, v)))
}

/// Every kind of view, small enough to read in the golden file: stacks shared by views and not, one
/// stack twice in a view, recursion (one function at several depths), a one-frame stack, a name that is
/// not ASCII, a zero value, and a contention view as the monitor profiler will add.
fn small_views() -> Vec<FlameView> {
    let alloc = |id, unit, a, b, c| {
        view(
            id,
            unit,
            &[
                ("java.lang.Thread.run;App.main;App.work;java.lang.String", a),
                ("App.main;App.work;int[]", b),
                ("App.main;App.work;int[]", 1),
                ("Über.größe;byte[]", c),
            ],
        )
    };
    vec![
        alloc("objects", "objects", 10, 3, 1),
        alloc("bytes", "bytes", 240, 4096, 16),
        view("live_objects", "objects", &[("App.main;App.work;int[]", 2)]),
        view("live_bytes", "bytes", &[("App.main;App.work;int[]", 2048)]),
        view(
            "calls",
            "calls",
            &[
                ("App.main", 1),
                ("App.main;App.fib", 1),
                ("App.main;App.fib;App.fib", 2),
                ("App.main;App.fib;App.fib;App.fib", 0),
            ],
        ),
        view(
            "cpu",
            "nanoseconds",
            &[("App.main", 1_500), ("App.main;App.fib;App.fib", 700)],
        ),
        view(
            "wall",
            "nanoseconds",
            &[("App.main", 9_000_000_000), ("App.main;App.fib", 800)],
        ),
        view(
            "contention",
            "nanoseconds",
            &[("App.main;App.work;java.lang.Object.wait", 123_456)],
        ),
    ]
}

fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(bytes)
        .read_to_end(&mut out)
        .expect("render() gives gzip");
    out
}

/// 16 bytes a line, hex and ASCII: a binary golden file whose diffs can be read.
fn hexdump(bytes: &[u8]) -> String {
    let mut s = String::new();
    for (n, line) in bytes.chunks(16).enumerate() {
        let hex: Vec<String> = line.iter().map(|b| format!("{b:02x}")).collect();
        let text: String = line
            .iter()
            .map(|&b| {
                if (0x20..0x7f).contains(&b) {
                    b as char
                } else {
                    '.'
                }
            })
            .collect();
        s += &format!("{:08x}  {:<47}  |{text}|\n", n * 16, hex.join(" "));
    }
    s
}

#[test]
fn golden_and_deterministic() {
    let views = small_views();
    let gz = pprof::render(&views);
    assert_eq!(gz, pprof::render(&views), "same views, same bytes");
    let raw = gunzip(&gz);
    assert_eq!(raw, pprof::encode(&views), "render() is encode() gzipped");
    let stored = pprof::render_stored(&views);
    assert_eq!(gunzip(&stored), raw, "render_stored() is encode() gzipped");
    assert_eq!(gunzip(&pprof::render_stored(&[])), pprof::encode(&[]));
    check(&views, &decode("stored", &stored, true), true);

    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/pprof.hex");
    let dump = hexdump(&raw);
    if std::env::var_os("INSTR_BLESS").is_some() {
        std::fs::write(&golden, &dump).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&golden)
        .unwrap_or_else(|e| panic!("{}: {e} (INSTR_BLESS=1 writes it)", golden.display()));
    assert!(
        dump == want,
        "the encoding of the small views changed: see `diff {} <new>`; INSTR_BLESS=1 rewrites it \
         if the change is meant\n{dump}",
        golden.display()
    );
}

/// The decoder's directory, with `node_modules/pprof-format` installed by scripts/setup.sh.
fn decoder_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/pprof")
}

/// The decoder's JSON for the pprof file `bytes`; panics, naming scripts/setup.sh, when node or
/// pprof-format is missing, so that the test never passes without having decoded anything.
fn decode(name: &str, bytes: &[u8], stacks: bool) -> Value {
    let dir = decoder_dir();
    match Command::new("node").arg("--version").output() {
        Ok(o) if o.status.success() => {}
        _ => panic!("node is not on PATH: run scripts/setup.sh (node 18 or later, npm)"),
    }
    let package = dir.join("node_modules/pprof-format/package.json");
    assert!(
        package.is_file(),
        "{} is missing: run scripts/setup.sh (it runs `npm ci` in {})",
        package.display(),
        dir.display()
    );
    let file = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}.pb.gz"));
    std::fs::write(&file, bytes).unwrap();
    let mut cmd = Command::new("node");
    cmd.arg(dir.join("decode.mjs")).arg(&file);
    if stacks {
        cmd.arg("--stacks");
    }
    let out = cmd.output().expect("node runs");
    assert!(
        out.status.success(),
        "decode.mjs failed on {}:\n{}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "decode.mjs printed no JSON ({e}):\n{}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

fn as_u64(v: &Value) -> u64 {
    v.as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not a decimal string: {v}"))
}

/// Checks what the decoder read against the views: one sample type per view, in order, named as
/// `pprof::sample_type` says (unless two views share a name), each total exactly the view's, and, with
/// `stacks`, each view's stacks (root first, equal stacks summed) exactly.
fn check(views: &[FlameView], decoded: &Value, stacks: bool) {
    let types = decoded["sample_types"].as_array().unwrap();
    assert_eq!(types.len(), views.len(), "{decoded}");
    for (view, t) in views.iter().zip(types) {
        let (ty, unit) = pprof::sample_type(view);
        assert!(t["type"] == ty || t["type"] == view.id, "{}: {t}", view.id);
        assert_eq!(t["unit"], unit, "{}", view.id);
        assert_eq!(as_u64(&t["total"]), view.total(), "total of {}", view.id);
    }
    if let Some(first) = types.first() {
        assert_eq!(decoded["default_sample_type"], first["type"]);
        assert_eq!(decoded["period_type"]["type"], first["type"]);
        assert_eq!(decoded["period"], "1");
    }
    if !stacks {
        return;
    }
    for (t, view) in views.iter().enumerate() {
        let mut want: BTreeMap<String, u64> = BTreeMap::new();
        for s in view.stacks.iter().filter(|s| s.value > 0) {
            let names: Vec<&str> = view.frames_of(s).map(|f| &*f.name).collect();
            *want.entry(names.join(";")).or_default() += s.value;
        }
        let got: BTreeMap<String, u64> = decoded["stacks"][t]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), as_u64(v)))
            .collect();
        assert_eq!(got, want, "stacks of {}", view.id);
    }
}

#[test]
fn decoded_by_pprof_format() {
    let views = small_views();
    let decoded = decode("small", &pprof::render(&views), true);
    check(&views, &decoded, true);
    let names: Vec<&str> = decoded["sample_types"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "alloc_objects",
            "alloc_space",
            "inuse_objects",
            "inuse_space",
            "calls",
            "cpu",
            "wall",
            "delay"
        ]
    );
    // A stack in several views is one sample; a frame is one location and one function wherever it is.
    // 3 allocation stacks, 3 call paths (fib;fib;fib has no calls), the wait; 9 distinct frames.
    assert_eq!(decoded["samples"], 7, "{decoded}");
    assert_eq!(decoded["functions"], 9, "{decoded}");
    assert_eq!(decoded["locations"], 9, "{decoded}");
}

/// The views the agent's report gives (flame::views), not hand-made ones: the ids the renderer maps
/// are the ones the crate uses.
#[test]
fn views_of_a_profile() {
    let profile = Profile::from_json(
        r#"{
          "schema": "instr-profile/1", "depth": 2,
          "sites": [
            {"class": "java.lang.String", "count": 7, "bytes": 168, "live_instances": 2, "live_bytes": 48,
             "stack": [{"class": "App", "method": "work"}, {"class": "App", "method": "main"}]},
            {"class": "int[]", "count": 3, "bytes": 4096,
             "stack": [{"class": "java.util.Arrays", "method": "copyOf"}, {"class": "App", "method": "main"}]}
          ],
          "calls": {"mode": "times", "paths": [
            {"frames": ["App.main"], "calls": 1, "self_cpu_ns": 500, "self_wall_ns": 900},
            {"frames": ["App.main", "App.work"], "calls": 7, "self_cpu_ns": 70000, "self_wall_ns": 80000}
          ]}
        }"#,
    )
    .unwrap();
    let views = flame::views(&profile);
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
    let decoded = decode("profile", &pprof::render(&views), true);
    check(&views, &decoded, true);
    let types: Vec<String> = decoded["sample_types"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            format!(
                "{}/{}",
                t["type"].as_str().unwrap(),
                t["unit"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        types,
        [
            "alloc_objects/count",
            "alloc_space/bytes",
            "inuse_objects/count",
            "inuse_space/bytes",
            "calls/count",
            "cpu/nanoseconds",
            "wall/nanoseconds"
        ]
    );
    assert_eq!(
        decoded["stacks"][0]["App.main;App.work;java.lang.String"],
        "7"
    );
}

#[test]
fn no_views_is_an_empty_profile() {
    let decoded = decode("empty", &pprof::render(&[]), true);
    assert_eq!(decoded["sample_types"], serde_json::json!([]));
    assert_eq!(decoded["samples"], 0);
}

/// A deterministic generator (xorshift), so the big profile is the same at every run.
struct Rng(u64);
impl Rng {
    fn next(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// 100,000 distinct stacks, 5 to 40 frames from 5,000 method names, in the calls, CPU and wall views
/// (as the agent's call paths are) and half of them in two allocation views.
fn big_views() -> Vec<FlameView> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let names: Vec<String> = (0..5000)
        .map(|i| format!("com.example.pkg{}.Class{}.method{}", i % 37, i % 511, i))
        .collect();
    let mut stacks = Vec::new();
    for n in 0..100_000u64 {
        let depth = 5 + rng.next(36) as usize;
        let mut frames: Vec<FlameFrame> = (0..depth)
            .map(|_| FlameFrame {
                name: names[rng.next(names.len() as u64) as usize].as_str().into(),
                kind: FrameKind::App,
            })
            .collect();
        // A distinct leaf per stack, so that there are 100,000 stacks, not fewer.
        frames.push(FlameFrame {
            name: format!("Leaf{n}").into(),
            kind: FrameKind::App,
        });
        stacks.push(frames);
    }
    let view = |id, unit, every: usize, value: &mut dyn FnMut() -> u64| {
        FlameView::from_frames(
            id,
            id,
            unit,
            stacks
                .iter()
                .step_by(every)
                .map(|frames| (frames.clone(), value()))
                .collect::<Vec<_>>(),
        )
    };
    let mut r = Rng(7);
    vec![
        view("objects", "objects", 2, &mut || 1 + r.next(1000)),
        view("bytes", "bytes", 2, &mut || 16 + r.next(1 << 20)),
        view("calls", "calls", 1, &mut || 1 + r.next(100_000)),
        view("cpu", "nanoseconds", 1, &mut || r.next(10_000_000_000)),
        view("wall", "nanoseconds", 1, &mut || r.next(1 << 40)),
    ]
}

#[test]
fn hundred_thousand_stacks() {
    let views = big_views();
    let start = Instant::now();
    let raw = pprof::encode(&views);
    let encoded = start.elapsed();
    let start = Instant::now();
    let gz = pprof::render(&views);
    let rendered = start.elapsed();
    let frames: usize = views[2].stacks.iter().map(|s| s.frames.len()).sum();
    println!(
        "pprof of 100,000 stacks ({frames} frames; 5 views, 250,000 view stacks): {} bytes gzipped, \
         {} bytes raw; encode {encoded:.2?}, encode + gzip {rendered:.2?}",
        gz.len(),
        raw.len()
    );
    let start = Instant::now();
    let decoded = decode("big", &gz, false);
    println!(
        "pprof-format decode and sum (node): {:.2?}",
        start.elapsed()
    );
    check(&views, &decoded, false);
    assert_eq!(decoded["samples"], 100_000);
    // Stored blocks of 65,535 bytes: over a hundred of them here, the last one short.
    let stored = pprof::render_stored(&views);
    assert_eq!(gunzip(&stored), raw);
    check(&views, &decode("big-stored", &stored, false), false);
}
