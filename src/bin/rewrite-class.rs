//! `rewrite-class`: see `rewrite-class --help` (`instr_cli::args`).

use std::process::ExitCode;

use clap::Parser;

use instr_cli::args::{Args, EditChoice};
use instr_cli::targets::{write_atomically, Rewriter};
use instr_rewriter::probes::nop::NopEdit;
use instr_rewriter::probes::{IdRegistry, Instrumenter};
use instr_rewriter::MethodEdit;
use instr_rules::Rules;

fn main() -> ExitCode {
    // Usage errors exit 2 (clap's status), as the hand-written parser did; --help and --version exit 0.
    let args = Args::parse();
    let rules = match &args.rules {
        Some(path) => match Rules::from_file(path) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("rewrite-class: {e}");
                return ExitCode::from(2);
            }
        },
        None => Rules::empty(),
    };
    let ids = IdRegistry::new();
    let instrumenter = Instrumenter {
        selection: &rules,
        ids: &ids,
        flavour: args.flavour.into(),
        calls: args.calls.into(),
    };
    let edit: &dyn MethodEdit = match args.edit {
        Some(EditChoice::Nop) => &NopEdit,
        None => &instrumenter,
    };
    let mut rewriter = Rewriter {
        edit,
        dump: args.dump.clone(),
        summary: Default::default(),
    };
    let result = rewriter.path(&args.input, &args.output);
    let s = &rewriter.summary;
    for w in &s.warnings {
        eprintln!("rewrite-class: warning: {w}");
    }
    for e in &s.errors {
        eprintln!("rewrite-class: error: {e} (class copied unchanged)");
    }
    eprintln!(
        "rewrite-class: {} classes, {} rewritten ({} methods edited), {} other files copied, {} warnings, {} errors",
        s.classes,
        s.rewritten,
        s.methods_edited,
        s.copied_files,
        s.warnings.len(),
        s.errors.len()
    );
    if let Some(path) = &args.ids {
        if let Err(e) = write_atomically(path, ids.to_tsv().as_bytes()) {
            eprintln!("rewrite-class: {e}");
            return ExitCode::from(1);
        }
    }
    match result {
        Err(e) => {
            eprintln!("rewrite-class: {e}");
            ExitCode::from(1)
        }
        Ok(()) if !s.errors.is_empty() => ExitCode::from(1),
        Ok(()) => ExitCode::SUCCESS,
    }
}
