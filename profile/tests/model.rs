//! The profile model on a small hand-written report: read back losslessly, refused with one line when it
//! is not a profile, and drawn as flame views whose totals are the report's.

use instr_profile::flame::{views, FrameKind};
use instr_profile::model::{Frame, SiteRow, SCHEMA};
use instr_profile::render::{self, collapsed};
use instr_profile::{Profile, ProfileError};

const SMALL: &str = include_str!("data/small.json");

#[test]
fn a_report_of_schema_1_reads_into_the_frame_table() {
    // small.json is an `instr-profile/1` report: frames written out in every stack, call paths as names.
    let p = Profile::from_json(SMALL).unwrap();
    assert_eq!(p.schema, instr_profile::model::SCHEMA, "converted as read");
    assert_eq!(p.pid, 42);
    assert_eq!(p.sites.len(), 2);
    assert_eq!(
        p.frames[p.sites[0].stack[0] as usize].name(),
        "app.Main.work"
    );
    let first = &p.frames[p.sites[0].stack[0] as usize];
    assert_eq!(
        (first.file.as_deref(), first.line),
        (Some("Main.java"), Some(7))
    );
    let path: Vec<String> = p
        .stack(&p.calls.as_ref().unwrap().paths[1].frames)
        .map(|f| f.name())
        .collect();
    assert_eq!(path, ["app.Main.main", "app.Main.work"]);
    // Each distinct frame once: the sites' frames (which have lines) and the paths' (which do not).
    let mut distinct = p.frames.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), p.frames.len());
    assert_eq!(p.methods[0].enters, 40);
    // Fields no renderer reads (gc, totals, the calls section's edges) survive.
    let value = |t: &str| serde_json::from_str::<serde_json::Value>(t).unwrap();
    let (old, new) = (value(SMALL), value(&p.to_json()));
    for key in ["gc", "totals", "classes", "methods", "dropped"] {
        assert_eq!(old[key], new[key], "{key}");
    }
    assert_eq!(old["calls"]["edges"], new["calls"]["edges"]);
}

#[test]
fn a_profile_writes_and_reads_back_the_same() {
    let p = Profile::from_json(SMALL).unwrap();
    let text = p.to_json();
    let back = Profile::from_json(&text).unwrap();
    assert_eq!(back, p);
    assert_eq!(back.to_json(), text);
    // One line per frame, per site (its stack on it) and per call path.
    let site = text
        .lines()
        .find(|l| l.contains("\"stack\":"))
        .expect("a site line");
    assert!(
        site.trim_start().starts_with('{') && site.contains("\"count\":"),
        "{site}"
    );
    let frame_lines = text.lines().filter(|l| l.contains("\"method\":")).count();
    assert!(frame_lines >= p.frames.len(), "{text}");
}

#[test]
fn a_stack_naming_a_frame_the_table_lacks_is_refused() {
    let mut p = Profile::from_json(SMALL).unwrap();
    p.sites[1].stack.push(99);
    let e = Profile::from_json(&p.to_json()).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "sites: frame 99 is not in the frame table ({} frames)",
            p.frames.len()
        )
    );
}

#[test]
fn what_is_not_a_profile_is_refused_with_the_reason() {
    let cut = &SMALL[..SMALL.len() / 2];
    let e = Profile::from_json(cut).unwrap_err();
    assert!(matches!(e, ProfileError::Json(_)), "{e}");
    assert!(
        e.to_string().starts_with("not a whole JSON document: EOF"),
        "{e}"
    );
    let other = SMALL.replace("instr-profile/1", "instr-threads/1");
    let e = Profile::from_json(&other).unwrap_err();
    assert_eq!(
        e.to_string(),
        "schema \"instr-threads/1\" is not one this version reads (instr-profile/2, instr-profile/1, instr-heap/1)"
    );
    let e = Profile::from_json("{}").unwrap_err();
    assert!(e.to_string().starts_with("no \"schema\""), "{e}");
    // The report's name before it carried call paths is the same layout.
    assert!(Profile::from_json(&SMALL.replace("instr-profile/1", "instr-heap/1")).is_ok());
}

#[test]
fn views_add_up_to_the_reports_totals() {
    let p = Profile::from_json(SMALL).unwrap();
    let v = views(&p);
    let ids: Vec<&str> = v.iter().map(|v| v.id).collect();
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
    let total = |id: &str| v.iter().find(|v| v.id == id).unwrap().total();
    assert_eq!(total("objects"), 42);
    assert_eq!(total("bytes"), 4736);
    assert_eq!(total("live_objects"), 1);
    assert_eq!(total("calls"), 41);
    assert_eq!(total("cpu"), 10_000);
    let objects = &v[0];
    let frames: Vec<_> = objects.frames_of(&objects.stacks[1]).collect();
    let leaf = frames.last().unwrap();
    assert_eq!((&*leaf.name, leaf.kind), ("byte[]", FrameKind::Allocated));
    assert_eq!(frames[1].kind, FrameKind::Jdk);
    assert_eq!(frames[0].kind, FrameKind::App);
}

#[test]
fn collapsed_stacks_are_root_first_with_the_allocated_class_last() {
    let p = Profile::from_json(SMALL).unwrap();
    let bytes = views(&p).into_iter().find(|v| v.id == "bytes").unwrap();
    assert_eq!(
        collapsed::render(&bytes),
        "app.Main.main;app.Main.work;app.Point 640\n\
         app.Main.main;java.io.InputStream.readAllBytes;byte[] 4096\n"
    );
}

/// A site of `bytes` allocated at a stack of `frames`.
fn site(class: &str, bytes: u64, stack: Vec<u32>) -> SiteRow {
    SiteRow {
        class: class.into(),
        count: 1,
        bytes,
        stack,
        ..Default::default()
    }
}

#[test]
fn the_text_lists_the_sites_above_the_cutoff_and_counts_the_rest() {
    let frame = |m: &str| Frame {
        class: "A".into(),
        method: m.into(),
        ..Default::default()
    };
    let p = Profile {
        schema: SCHEMA.into(),
        depth: 2,
        frames: vec![frame("big"), frame("small"), frame("tiny")],
        // Two sites of one stack share its trace; the two smallest are below 1% of the 10,000 bytes.
        sites: vec![
            site("X", 6_000, vec![0]),
            site("Y", 3_960, vec![0]),
            site("Z", 30, vec![1]),
            site("W", 10, vec![2, 0]),
        ],
        ..Default::default()
    };
    let text = render::text::render(&p, 0.01);
    let header = text.lines().nth(1).unwrap();
    assert_eq!(
        header,
        "(cutoff 0.01: 2 of 4 sites are below 0.01 of the total each, 40 allocated bytes together, and are not listed, nor the traces only they have; the JSON profile has every site)"
    );
    let sites: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with(" rank   self"))
        .skip(1)
        .take_while(|l| *l != "SITES END")
        .collect();
    assert_eq!(
        sites,
        [
            "    1 60.00% 60.00%      6000     1 300001 X",
            "    2 39.60% 99.60%      3960     1 300001 Y",
        ]
    );
    // The shared trace once, and none of the sites left out.
    assert_eq!(text.matches("TRACE ").count(), 1, "{text}");
    assert!(
        text.contains("TRACE 300001:\n\tA.big(Unknown Source)\n"),
        "{text}"
    );
    assert!(!text.contains("A.small") && !text.contains("A.tiny"));

    // 0 lists every site, each stack's trace once, and says nothing of a cutoff.
    let all = render::text::render(&p, 0.0);
    assert!(!all.contains("cutoff"));
    assert_eq!(all.matches("TRACE ").count(), 3, "{all}");
    assert!(
        all.contains("    4  0.10% 100.00%        10     1 300003 W"),
        "{all}"
    );
}

#[test]
fn a_cutoff_is_a_share_below_one() {
    use render::text::parse_cutoff;
    assert_eq!(parse_cutoff("0.0001"), Ok(0.0001));
    assert_eq!(parse_cutoff("0"), Ok(0.0));
    for bad in ["1", "-0.1", "x", "NaN", "inf", ""] {
        assert!(parse_cutoff(bad).is_err(), "{bad}");
    }
}
