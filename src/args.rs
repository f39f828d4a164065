//! Command-line parsing for `rewrite-class`. Hand-written: five options do not need a framework.

use std::path::PathBuf;

use instr_rewriter::probes::{CallProbes, Flavour};

pub const USAGE: &str = "\
usage: rewrite-class [--rules FILE] [--flavour native|early] [--calls traced|counts|times] [--ids FILE]
                     [--edit nop] [--dump METHOD] INPUT -o OUTPUT

INPUT and OUTPUT are each a .class file, a .jar or a directory (layout mirrored, other files copied).
  --rules FILE    rules file selecting what to instrument (rules/README.md; an empty file selects
                  nothing, and so does leaving the option out)
  --flavour F     which HeapProxy variant the probes call: native (default; what the agent uses for
                  classes loaded after VM start-up) or early (the pure-Java wrappers it uses before)
  --calls SHAPE   the method probes of the agent's call mode: traced (default: entry, every exit and
                  unwind; calls=times,leaves=timed), counts (entry and unwind; calls=counts) or times
                  (traced, but leaf methods counted only; calls=times)
  --ids FILE      write the map from method and array-site ids to names (tab-separated)
  --edit nop      self-test edit: a nop at every method entry, before every return and after every
                  array allocation, in every method
  --dump METHOD   print a listing of METHOD (name, name+descriptor, or * for all) before and after
  -o OUTPUT       where to write the result (required)";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditChoice {
    /// Whatever the rules select (nothing without rules).
    Rules,
    Nop,
}

#[derive(Debug)]
pub struct Args {
    pub input: PathBuf,
    pub output: PathBuf,
    pub rules: Option<PathBuf>,
    pub edit: EditChoice,
    pub dump: Option<String>,
    pub flavour: Flavour,
    pub calls: CallProbes,
    pub ids: Option<PathBuf>,
}

/// Parses the arguments (without the program name). `Err` holds a one-line message.
pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Args, String> {
    let mut input = None;
    let mut output = None;
    let mut rules = None;
    let mut edit = EditChoice::Rules;
    let mut dump = None;
    let mut flavour = Flavour::Native;
    let mut calls = CallProbes::Traced;
    let mut ids = None;
    let mut it = args.into_iter();
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "-o" | "--output" => output = Some(PathBuf::from(value("-o")?)),
            "--rules" => rules = Some(PathBuf::from(value("--rules")?)),
            "--dump" => dump = Some(value("--dump")?),
            "--ids" => ids = Some(PathBuf::from(value("--ids")?)),
            "--flavour" => {
                flavour = match value("--flavour")?.as_str() {
                    "native" => Flavour::Native,
                    "early" => Flavour::Early,
                    other => {
                        return Err(format!("unknown flavour '{other}' (known: native, early)"))
                    }
                }
            }
            "--calls" => {
                calls = match value("--calls")?.as_str() {
                    "traced" => CallProbes::Traced,
                    "counts" => CallProbes::Counted,
                    "times" => CallProbes::TracedExceptLeaves,
                    other => {
                        return Err(format!(
                            "unknown call probes '{other}' (known: traced, counts, times)"
                        ))
                    }
                }
            }
            "--edit" => {
                edit = match value("--edit")?.as_str() {
                    "nop" => EditChoice::Nop,
                    other => return Err(format!("unknown edit '{other}' (known: nop)")),
                }
            }
            "-h" | "--help" => return Err(USAGE.to_string()),
            s if s.starts_with('-') && s.len() > 1 => return Err(format!("unknown option '{s}'")),
            _ if input.is_none() => input = Some(PathBuf::from(arg)),
            _ => {
                return Err(format!(
                    "unexpected argument '{arg}': only one INPUT is allowed"
                ))
            }
        }
    }
    let input = input.ok_or("missing INPUT")?;
    let output = output.ok_or("missing -o OUTPUT")?;
    Ok(Args {
        input,
        output,
        rules,
        edit,
        dump,
        flavour,
        calls,
        ids,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<Args, String> {
        parse(s.split_whitespace().map(String::from))
    }

    #[test]
    fn parses_a_full_command_line() {
        let a = p("--edit nop in.jar -o out.jar --dump main").unwrap();
        assert_eq!(a.edit, EditChoice::Nop);
        assert_eq!(a.input, PathBuf::from("in.jar"));
        assert_eq!(a.dump.as_deref(), Some("main"));
    }

    #[test]
    fn errors_name_the_problem() {
        assert_eq!(p("in.jar").unwrap_err(), "missing -o OUTPUT");
        assert_eq!(
            p("in -o out --edit foo").unwrap_err(),
            "unknown edit 'foo' (known: nop)"
        );
        assert_eq!(p("in -o").unwrap_err(), "-o needs a value");
        assert_eq!(
            p("a b -o c").unwrap_err(),
            "unexpected argument 'b': only one INPUT is allowed"
        );
    }
}
