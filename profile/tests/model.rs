//! The profile model on a small hand-written report: read back losslessly, refused with one line when it
//! is not a profile, and drawn as flame views whose totals are the report's.

use instr_profile::flame::{views, FrameKind};
use instr_profile::render::collapsed;
use instr_profile::{Profile, ProfileError};

const SMALL: &str = include_str!("data/small.json");

#[test]
fn a_report_reads_back_and_writes_the_same_json() {
    let p = Profile::from_json(SMALL).unwrap();
    assert_eq!(p.pid, 42);
    assert_eq!(p.sites.len(), 2);
    assert_eq!(p.sites[0].stack[0].name(), "app.Main.work");
    assert_eq!(p.methods[0].enters, 40);
    // Fields no renderer reads (gc, totals, the calls section's edges) survive the round trip; the
    // typed fields come first in the text, so compare the documents, then the text of a second trip.
    let value = |t: &str| serde_json::from_str::<serde_json::Value>(t).unwrap();
    assert_eq!(value(&p.to_json()), value(SMALL));
    assert_eq!(
        Profile::from_json(&p.to_json()).unwrap().to_json(),
        p.to_json()
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
        "schema \"instr-threads/1\" is not one this version reads (instr-profile/1, instr-heap/1)"
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
    let leaf = objects.stacks[1].frames.last().unwrap();
    assert_eq!((&*leaf.name, leaf.kind), ("byte[]", FrameKind::Allocated));
    assert_eq!(objects.stacks[1].frames[1].kind, FrameKind::Jdk);
    assert_eq!(objects.stacks[1].frames[0].kind, FrameKind::App);
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
