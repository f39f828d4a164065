//! `rewrite-class`: see `instr_cli::args::USAGE`.

use std::process::ExitCode;

use instr_cli::args::{self, EditChoice};
use instr_cli::targets::Rewriter;
use instr_rewriter::probes::nop::{NoEdit, NopEdit};
use instr_rewriter::MethodEdit;

fn main() -> ExitCode {
    let args = match args::parse(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(message) => {
            eprintln!("rewrite-class: {message}");
            return ExitCode::from(2);
        }
    };
    if let Some(rules) = &args.rules {
        if let Err(e) = check_rules(rules) {
            eprintln!("rewrite-class: {e}");
            return ExitCode::from(2);
        }
    }
    let edit: &dyn MethodEdit = match args.edit {
        EditChoice::Nop => &NopEdit,
        EditChoice::Rules => &NoEdit,
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
    match result {
        Err(e) => {
            eprintln!("rewrite-class: {e}");
            ExitCode::from(1)
        }
        Ok(()) if !s.errors.is_empty() => ExitCode::from(1),
        Ok(()) => ExitCode::SUCCESS,
    }
}

/// Until the probes land, a rules file may only select nothing: empty or comments only.
fn check_rules(path: &std::path::Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    match text
        .lines()
        .enumerate()
        .find(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
    {
        None => Ok(()),
        Some((n, _)) => Err(format!(
            "{}:{}: rules that select methods are not supported yet",
            path.display(),
            n + 1
        )),
    }
}
