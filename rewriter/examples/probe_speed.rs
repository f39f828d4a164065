use instr_rewriter::probes::{Flavour, IdRegistry, Instrumenter, Selection};
use instr_rewriter::{rewrite, Options};
use std::time::Instant;
struct Sel(bool, bool);
impl Selection for Sel {
    fn objects(&self) -> bool {
        true
    }
    fn class_wanted(&self, _: &[u8]) -> bool {
        true
    }
    fn arrays(&self, _: &[u8], _: &[u8], _: &[u8]) -> bool {
        self.0
    }
    fn methods(&self, _: &[u8], _: &[u8], _: &[u8], _: u16) -> bool {
        self.1
    }
}
fn walk(d: &std::path::Path, out: &mut Vec<Vec<u8>>) {
    for e in std::fs::read_dir(d).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            walk(&p, out)
        } else if p.extension().is_some_and(|x| x == "class") {
            out.push(std::fs::read(&p).unwrap())
        }
    }
}
fn main() {
    let mut classes = Vec::new();
    walk(
        std::path::Path::new(&std::env::args().nth(1).unwrap()),
        &mut classes,
    );
    let only = std::env::args().nth(2);
    // More passes give a profiler more samples of the rewrite against the one-off loading.
    let passes: usize = std::env::args()
        .nth(3)
        .map_or(2, |n| n.parse().expect("passes"));
    for (name, sel) in [
        ("none", Sel(false, false)),
        ("arrays", Sel(true, false)),
        ("methods", Sel(false, true)),
        ("both", Sel(true, true)),
    ] {
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        for _ in 0..passes {
            let ids = IdRegistry::new();
            let e = Instrumenter {
                selection: &sel,
                ids: &ids,
                flavour: Flavour::Native,
                calls: Default::default(),
            };
            let t = Instant::now();
            let mut n = 0;
            for c in &classes {
                n += rewrite(c, &e, Options::default())
                    .unwrap()
                    .bytes
                    .map_or(0, |b| b.len());
            }
            println!("{name}: {:.3}s {n}", t.elapsed().as_secs_f64());
        }
    }
}
