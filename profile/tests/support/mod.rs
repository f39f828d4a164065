//! Profiles made in the tests, shared by the golden, size and browser tests: no JVM needed.

#![allow(dead_code)] // each test file uses part of it

use instr_profile::model::{CallPath, Calls, ClassRow, Frame, FrameTable, Profile, SiteRow};

fn frame(class: &str, method: &str, line: i64) -> Frame {
    Frame {
        class: class.into(),
        method: method.into(),
        descriptor: "()V".into(),
        file: Some(format!(
            "{}.java",
            class.rsplit('.').next().unwrap_or(class)
        )),
        line: Some(line),
    }
}

fn site(
    table: &mut FrameTable,
    class: &str,
    count: u64,
    bytes: u64,
    live: Option<u64>,
    stack: &[(&str, &str)],
) -> SiteRow {
    SiteRow {
        class: class.into(),
        count,
        bytes,
        site_id: None,
        // The allocating frame first, as the agent writes it.
        stack: stack
            .iter()
            .rev()
            .enumerate()
            .map(|(i, (c, m))| table.intern(frame(c, m, 10 + i as i64)))
            .collect(),
        stack_estimated: false,
        live_instances: live,
        live_bytes: live.map(|l| l * bytes / count.max(1)),
        before_profiling: false,
    }
}

/// A small profile with every kind of frame and every view: allocations by stack (objects, bytes,
/// live) and call paths with CPU and wall times. Stacks are listed outermost frame first here.
pub fn sample() -> Profile {
    let main = ("app.Main", "main");
    let load = ("app.Loader", "load");
    let parse = ("app.Parser", "parse");
    let grow = ("java.util.ArrayList", "grow");
    let concat = ("java.lang.StringConcatHelper", "newArray");
    let mut table = FrameTable::default();
    let t = &mut table;
    let sites = vec![
        site(
            t,
            "java.lang.Object[]",
            1200,
            57_600,
            Some(100),
            &[main, load, grow],
        ),
        site(
            t,
            "app.Record",
            3000,
            72_000,
            Some(2500),
            &[main, load, parse],
        ),
        site(
            t,
            "byte[]",
            4321,
            553_088,
            None,
            &[main, load, parse, concat],
        ),
        site(
            t,
            "java.lang.String",
            4321,
            103_704,
            Some(7),
            &[main, parse],
        ),
        site(t, "app.Main$Config", 1, 24, Some(1), &[main]),
        site(t, "int[]", 57, 2_736, None, &[main, ("app.Main", "warmUp")]),
    ];
    let classes = vec![ClassRow {
        class: "app.Record".into(),
        instances: 3000,
        bytes: 72_000,
        live_instances: Some(2500),
        live_bytes: Some(60_000),
    }];
    let mut path = |frames: &[&str], calls, cpu, wall| CallPath {
        frames: frames.iter().map(|s| table.intern_name(s)).collect(),
        calls,
        self_cpu_ns: cpu,
        self_wall_ns: wall,
    };
    let calls = Calls {
        mode: "times".into(),
        paths: vec![
            path(&["app.Main.main"], 1, 2_000_000, 3_000_000),
            path(
                &["app.Main.main", "app.Loader.load"],
                10,
                40_000_000,
                90_000_000,
            ),
            path(
                &["app.Main.main", "app.Loader.load", "app.Parser.parse"],
                700,
                310_000_000,
                320_000_000,
            ),
            path(
                &["app.Main.main", "app.Parser.parse"],
                300,
                120_000_000,
                125_000_000,
            ),
            path(
                &["app.Main.main", "app.Parser.parse", "app.Parser.parse"],
                123,
                45_000_000,
                46_000_000,
            ),
            path(
                &["app.Main.main", "java.util.HashMap.put"],
                5000,
                1_500_000,
                1_600_000,
            ),
        ],
        rest: Default::default(),
    };
    Profile {
        schema: instr_profile::model::SCHEMA.into(),
        pid: 4242,
        depth: 8,
        frames: table.frames,
        classes,
        sites,
        methods: Vec::new(),
        calls: Some(calls),
        threads: None,
        samples: None,
        rest: Default::default(),
    }
}

/// A synthetic profile of `n` distinct allocation stacks, 8 to 40 frames deep, that share prefixes as
/// real programs' stacks do (each method calls one of a few others, mostly the same one; still, deep
/// stacks part early: the tree has about 13 nodes per stack, a hard case): deterministic, from a fixed seed.
pub fn synthetic(n: usize) -> Profile {
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        // xorshift64*: a fixed sequence on every machine, no dependency.
        rng ^= rng >> 12;
        rng ^= rng << 25;
        rng ^= rng >> 27;
        rng.wrapping_mul(0x2545_f491_4f6c_dd1d)
    };
    let methods: Vec<(String, String)> = (0..3000)
        .map(|i| {
            let class = if i % 5 == 0 {
                format!("java.util.concurrent.Pool{}", i % 97)
            } else {
                format!("com.example.pkg{}.Service{}", i % 31, i % 211)
            };
            (class, format!("method{i}"))
        })
        .collect();
    let classes: Vec<String> = (0..400)
        .map(|i| format!("com.example.model.Type{i}"))
        .collect();
    let mut seen = std::collections::HashSet::new();
    let mut table = FrameTable::default();
    let mut sites = Vec::with_capacity(n);
    while sites.len() < n {
        let depth = 8 + (next() % 33) as usize;
        let mut at = (next() % 8) as usize; // a few entry points
        let mut stack: Vec<usize> = vec![at];
        for _ in 1..depth {
            let r = next() % 16;
            let callee = if r < 12 {
                0
            } else if r < 15 {
                1
            } else {
                2 + next() % 6
            };
            at = (at * 7 + 1 + callee as usize) % methods.len();
            stack.push(at);
        }
        let class = (next() % classes.len() as u64) as usize;
        if !seen.insert((stack.clone(), class)) {
            continue;
        }
        let count = 1 + next() % 1000;
        sites.push(SiteRow {
            class: classes[class].clone(),
            count,
            bytes: count * 24,
            site_id: None,
            stack: stack
                .iter()
                .rev()
                .map(|&m| table.intern(frame(&methods[m].0, &methods[m].1, 1)))
                .collect(),
            stack_estimated: false,
            live_instances: None,
            live_bytes: None,
            before_profiling: false,
        });
    }
    Profile {
        schema: instr_profile::model::SCHEMA.into(),
        depth: 40,
        frames: table.frames,
        sites,
        ..Default::default()
    }
}
