//! Development aid: applies every probe to every method of every class under DIR, in place into OUT,
//! and prints warnings. `cargo run --release -p instr-rewriter --example probe_dir -- DIR OUT`
use std::path::{Path, PathBuf};

use instr_rewriter::probes::selection::Everything;
use instr_rewriter::probes::{Flavour, IdRegistry, Instrumenter};
use instr_rewriter::{rewrite, Options};

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
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
    let mut args = std::env::args().skip(1);
    let (dir, out) = (
        PathBuf::from(args.next().unwrap()),
        PathBuf::from(args.next().unwrap()),
    );
    let mut files = Vec::new();
    walk(&dir, &mut files);
    files.sort();
    let ids = IdRegistry::new();
    let edit = Instrumenter {
        selection: &Everything,
        ids: &ids,
        flavour: Flavour::Native,
    };
    let (mut failed, mut warned) = (0, 0);
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        let target = out.join(f.strip_prefix(&dir).unwrap());
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        match rewrite(&bytes, &edit, Options::default()) {
            Ok(r) => {
                for w in &r.warnings {
                    warned += 1;
                    println!("warning: {}: {w}", f.display());
                }
                std::fs::write(&target, r.bytes.as_deref().unwrap_or(&bytes)).unwrap();
            }
            Err(e) => {
                failed += 1;
                println!("error: {}: {e}", f.display());
                std::fs::write(&target, &bytes).unwrap();
            }
        }
    }
    std::fs::write(out.join("ids.tsv"), ids.to_tsv()).unwrap();
    println!(
        "{} classes, {failed} failed, {warned} warnings",
        files.len()
    );
}
