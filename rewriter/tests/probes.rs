//! Every probe on every method of every class of every installed JDK image: the rewriter plans and writes
//! them all without an error or a method left out, and rewriting a class again with the same registry
//! (a retransform) gives the same bytes. Whether HotSpot accepts the result is tests/probes.rs's job.

mod corpus;

use instr_rewriter::probes::selection::Everything;
use instr_rewriter::probes::{Flavour, IdRegistry, Instrumenter};
use instr_rewriter::{rewrite, Options};

#[test]
fn every_jdk_class_takes_every_probe() {
    for home in corpus::jdk_homes() {
        let image = corpus::image(&home);
        let ids = IdRegistry::new();
        let edit = Instrumenter {
            selection: &Everything,
            ids: &ids,
            flavour: Flavour::Early,
            calls: Default::default(),
        };
        let mut problems = Vec::new();
        let (mut rewritten, mut methods) = (0usize, 0u64);
        for path in &image.classes {
            let bytes = std::fs::read(path).unwrap();
            match rewrite(&bytes, &edit, Options::default()) {
                Ok(r) => {
                    problems.extend(
                        r.warnings
                            .iter()
                            .map(|w| format!("{}: {w}", path.display())),
                    );
                    if let Some(out) = &r.bytes {
                        rewritten += 1;
                        methods += r.edited_methods as u64;
                        let again = rewrite(&bytes, &edit, Options::default()).unwrap();
                        if again.bytes.as_ref() != Some(out) {
                            problems.push(format!("{}: second rewrite differs", path.display()));
                        }
                    }
                }
                Err(e) => problems.push(format!("{}: {e}", path.display())),
            }
        }
        println!(
            "{}: {} classes, {rewritten} rewritten, {methods} methods instrumented, {} method ids, {} array sites",
            image.jdk,
            image.classes.len(),
            ids.methods().len(),
            ids.sites().len()
        );
        assert!(
            rewritten > image.classes.len() / 2,
            "only {rewritten} classes rewritten"
        );
        assert!(
            problems.is_empty(),
            "{}: {}",
            image.jdk,
            problems[..problems.len().min(30)].join("\n")
        );
    }
}
