//! Development aid: runs read/write, re-encode and the nop edit over a directory of class files and
//! prints failures. `cargo run --release -p instr-rewriter --example corpus_check -- DIR`
use std::path::Path;

use instr_rewriter::{nop_edit, read_write, reencode, FrameMode};

fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            walk(&p, out)
        } else if p.extension().is_some_and(|x| x == "class") {
            out.push(p)
        }
    }
}

fn main() {
    let dir = std::env::args().nth(1).expect("usage: corpus_check DIR");
    let mut files = Vec::new();
    walk(Path::new(&dir), &mut files);
    files.sort();
    let mut failures = [0usize; 4];
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        #[allow(clippy::type_complexity)] // a throwaway table in a development aid
        let checks: [(&str, Box<dyn Fn() -> instr_rewriter::Result<Vec<u8>>>, bool); 4] = [
            ("read_write", Box::new(|| read_write(&bytes)), true),
            (
                "reencode",
                Box::new(|| reencode(&bytes, FrameMode::Relocate)),
                true,
            ),
            (
                "rebuild",
                Box::new(|| reencode(&bytes, FrameMode::Rebuild)),
                true,
            ),
            ("nop", Box::new(|| nop_edit(&bytes)), false),
        ];
        for (k, (name, run, identical)) in checks.iter().enumerate() {
            match run() {
                Ok(out) if *identical && out != bytes => {
                    failures[k] += 1;
                    if failures[k] <= 5 {
                        println!("{name}: DIFFERS {}", f.display());
                    }
                }
                Err(e) => {
                    failures[k] += 1;
                    if failures[k] <= 5 {
                        println!("{name}: ERROR {}: {e}", f.display());
                    }
                }
                _ => {}
            }
        }
    }
    println!(
        "classes {} failures read_write={} reencode={} rebuild={} nop={}",
        files.len(),
        failures[0],
        failures[1],
        failures[2],
        failures[3]
    );
}
