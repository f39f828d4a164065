//! How long rendering takes on a big profile: 100,000 distinct allocation stacks (and as many call paths),
//! made up here. Prints the time of each step, best of a few passes: reading the JSON back (what
//! `instr report` does first), drawing the views, and each renderer. The agent's share at exit is the
//! views plus the renderers plus writing the JSON; `instr report` adds the reading.
//!
//!     cargo run --release -p instr-bench --bin profile-bench [-- STACKS]

use std::time::{Duration, Instant};

use instr_profile::flame::views;
use instr_profile::model::{CallPath, Calls, ClassRow, Frame, FrameTable, SiteRow, SCHEMA};
use instr_profile::render::{collapsed, html, pprof, svg};
use instr_profile::Profile;

/// A profile with `n` distinct stacks of 12 frames over 2,000 methods of 200 classes (deterministic).
/// `shared`: stacks are paths down one call tree (a real program's shape: few roots, prefixes shared);
/// otherwise every frame is drawn at random (no two stacks share a prefix: the worst case).
fn synthetic(n: usize, shared: bool) -> Profile {
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let frame = |m: u64| Frame {
        class: format!("com.example.pkg{}.Class{}", m % 17, m % 200),
        method: format!("method{m}"),
        descriptor: "()V".into(),
        file: Some(format!("Class{}.java", m % 200)),
        line: Some((m % 900) as i64 + 1),
    };
    let mut table = FrameTable::default();
    let mut sites = Vec::with_capacity(n);
    let mut paths = Vec::with_capacity(n);
    for i in 0..n {
        let stack: Vec<u32> = if shared {
            // Stack i is the path to leaf i of a tree with a fan-out of 3 per level (12 levels: 531,441
            // leaves, so every stack is distinct), the method at each node a function of its path.
            let mut path = 0u64;
            let mut leaf = i as u64;
            (0..12)
                .map(|_| {
                    path = path * 3 + leaf % 3 + 1;
                    leaf /= 3;
                    table.intern(frame(path.wrapping_mul(0x9E37_79B9) % 2_000))
                })
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect()
        } else {
            (0..12).map(|_| table.intern(frame(next() % 2_000))).collect()
        };
        let count = next() % 10_000 + 1;
        sites.push(SiteRow {
            class: format!("com.example.Data{}", i % 300),
            count,
            bytes: count * 24,
            site_id: Some(i as u32 + 1),
            stack: stack.clone(),
            ..Default::default()
        });
        // The call path of the same methods: a call path's frames have no line.
        let path_frames = stack
            .iter()
            .rev()
            .map(|&f| {
                let f = &table.frames[f as usize];
                table.intern(Frame {
                    line: None,
                    file: None,
                    ..f.clone()
                })
            })
            .collect();
        paths.push(CallPath {
            frames: path_frames,
            calls: count,
            self_cpu_ns: next() % 1_000_000,
            self_wall_ns: next() % 2_000_000,
        });
    }
    Profile {
        schema: SCHEMA.into(),
        pid: 1,
        depth: 12,
        frames: table.frames,
        classes: (0..300)
            .map(|c| ClassRow {
                class: format!("com.example.Data{c}"),
                instances: 1,
                bytes: 24,
                ..Default::default()
            })
            .collect(),
        sites,
        calls: Some(Calls {
            mode: "times".into(),
            paths,
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// The best of `passes` runs of `f`, and its last result.
fn best<T>(passes: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut out = None;
    for _ in 0..passes {
        let t = Instant::now();
        let r = f();
        best = best.min(t.elapsed());
        out = Some(r);
    }
    (best, out.expect("at least one pass"))
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(100_000);
    for shared in [true, false] {
        run(n, shared);
        println!();
    }
}

fn run(n: usize, shared: bool) {
    let passes = 3;
    let profile = synthetic(n, shared);
    let (t_json, json) = best(passes, || profile.to_json());
    let (t_read, read) = best(passes, || Profile::from_json(&json).expect("own JSON"));
    assert_eq!(read.sites.len(), n);
    let (t_views, v) = best(passes, || views(&profile));
    let (t_collapsed, c) = best(passes, || collapsed::render(&v[1]));
    let (t_html, h) = best(passes, || html::render("bench", &v));
    let (t_svg, s) = best(passes, || svg::render(&v[1], 1200));
    let (t_pprof, p) = best(passes, || pprof::render(&v));
    let (t_encode, e) = best(passes, || pprof::encode(&v));
    let (t_tree, _) = best(passes, || html::data_size(&v));
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let shape = if shared {
        "paths of one call tree"
    } else {
        "random frames, no shared prefix"
    };
    println!(
        "profile of {n} stacks ({shape}), {} views; best of {passes} passes, milliseconds",
        v.len()
    );
    println!("{:<28} {:>9} {:>12}", "step", "ms", "output bytes");
    for (step, d, bytes) in [
        ("write JSON", t_json, json.len()),
        ("read JSON (instr report)", t_read, json.len()),
        ("views", t_views, 0),
        ("collapsed (bytes view)", t_collapsed, c.len()),
        ("html (every view)", t_html, h.len()),
        ("svg (bytes view)", t_svg, s.len()),
        ("pprof (every view)", t_pprof, p.len()),
        ("pprof encode only", t_encode, e.len()),
        ("html trees only", t_tree, 0),
    ] {
        println!("{step:<28} {:>9.1} {bytes:>12}", ms(d));
    }
    let at_exit = t_json + t_views + t_collapsed + t_html + t_pprof;
    println!(
        "agent at exit (JSON + views + collapsed + html + pprof): {:.1} ms (goal <= 100)",
        ms(at_exit)
    );
    println!(
        "instr report, every format (read + views + each renderer): {:.1} ms (goal <= 1000)",
        ms(t_read + t_views + t_collapsed + t_html + t_svg + t_pprof)
    );
}
