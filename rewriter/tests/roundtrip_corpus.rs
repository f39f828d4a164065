//! Every class of every installed JDK image survives read-then-write byte for byte, and so does the full
//! re-encoding path (code, branches, switches, exception tables, debug tables, type annotations and
//! StackMapTable, both relocated and fully rebuilt). The nop edit applies to every class without error.

mod corpus;

use instr_rewriter::{nop_edit, read_write, reencode, FrameMode};

#[test]
fn every_jdk_class_round_trips_byte_identical() {
    let homes = corpus::jdk_homes();
    assert!(
        !homes.is_empty(),
        "no JDK with a runtime image under /usr/lib/jvm"
    );
    for home in homes {
        let image = corpus::image(&home);
        assert!(
            image.classes.len() > 10_000,
            "{}: only {} classes extracted",
            image.jdk,
            image.classes.len()
        );
        let mut failures = Vec::new();
        let mut edited = 0usize;
        for path in &image.classes {
            let bytes = std::fs::read(path).unwrap();
            let checks: [(&str, instr_rewriter::Result<Vec<u8>>); 3] = [
                ("read_write", read_write(&bytes)),
                ("reencode/relocate", reencode(&bytes, FrameMode::Relocate)),
                ("reencode/rebuild", reencode(&bytes, FrameMode::Rebuild)),
            ];
            for (what, result) in checks {
                match result {
                    Ok(out) if out == bytes => {}
                    Ok(_) => failures.push(format!("{what}: {} differs", path.display())),
                    Err(e) => failures.push(format!("{what}: {}: {e}", path.display())),
                }
            }
            match nop_edit(&bytes) {
                Ok(out) => edited += usize::from(out != bytes),
                Err(e) => failures.push(format!("nop: {}: {e}", path.display())),
            }
        }
        println!(
            "{}: {} classes round-tripped, {} changed by the nop edit",
            image.jdk,
            image.classes.len(),
            edited
        );
        assert!(
            failures.is_empty(),
            "{}: {} failures, first: {:#?}",
            image.jdk,
            failures.len(),
            &failures[..failures.len().min(10)]
        );
        assert!(
            edited > image.classes.len() / 2,
            "the nop edit changed too few classes: {edited}"
        );
    }
}
