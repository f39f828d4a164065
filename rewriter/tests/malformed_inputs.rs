//! A truncated or corrupted class file gives an error naming where, never a panic.

mod corpus;

use instr_rewriter::probes::nop::NopEdit;
use instr_rewriter::{read_write, reencode, rewrite, FrameMode, Options};
use proptest::prelude::*;

/// A few real classes with code, switches, frames and annotations to mutate.
fn seeds() -> Vec<Vec<u8>> {
    let home = corpus::jdk_homes()
        .into_iter()
        .next()
        .expect("a JDK under /usr/lib/jvm");
    let image = corpus::image(&home);
    [
        "java/lang/Object.class",
        "java/lang/Character.class",
        "java/util/HashMap.class",
        "java/lang/invoke/MethodHandles.class",
    ]
    .iter()
    .map(|suffix| {
        let p = image
            .classes
            .iter()
            .find(|p| p.to_string_lossy().ends_with(suffix))
            .expect(suffix);
        std::fs::read(p).unwrap()
    })
    .collect()
}

fn exercise(bytes: &[u8]) {
    let _ = read_write(bytes);
    let _ = reencode(bytes, FrameMode::Rebuild);
    let _ = rewrite(bytes, &NopEdit, Options::default());
}

#[test]
fn every_truncation_of_a_class_is_an_error() {
    for seed in seeds().iter().take(2) {
        for len in 0..seed.len() {
            let err = read_write(&seed[..len]).expect_err("a truncated class must not parse");
            assert!(!err.to_string().is_empty());
            exercise(&seed[..len]);
        }
    }
}

#[test]
fn errors_name_the_offset() {
    let seed = &seeds()[0];
    let mut b = seed.clone();
    b[10] = 99; // the first constant's tag
    let e = read_write(&b).unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid constant pool tag 99 for entry #1 at offset 0xa"
    );
    assert_eq!(
        read_write(&b"\xca\xfe\xba\xbf"[..])
            .unwrap_err()
            .to_string(),
        "not a class file: bad magic number at offset 0x0"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn corrupted_bytes_never_panic(seed_index in 0usize..4, edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8)) {
        let seeds = SEEDS.with(|s| s.clone());
        let mut bytes = seeds[seed_index].clone();
        for (at, value) in edits {
            let i = at.index(bytes.len());
            bytes[i] = value;
        }
        exercise(&bytes);
    }

    #[test]
    fn random_bytes_after_a_valid_header_never_panic(tail in prop::collection::vec(any::<u8>(), 0..512)) {
        let mut bytes = vec![0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 61];
        bytes.extend(tail);
        exercise(&bytes);
    }
}

thread_local! {
    static SEEDS: Vec<Vec<u8>> = seeds();
}
