//! Command-line parsing for `rewrite-class`, with clap's derive API: the same flags as the hand-written
//! parser it replaced, with `--help`, suggestions for misspelt flags and one parser style across the
//! package's binaries (`instr` uses clap too).

use std::path::PathBuf;

use clap::{Parser, ValueEnum};
use instr_rewriter::probes::{CallProbes, Flavour};

/// Rewrites class files, jars and directories exactly as the instr agent would.
#[derive(Parser, Debug)]
#[command(
    name = "rewrite-class",
    version,
    after_help = "INPUT and OUTPUT are each a .class file, a .jar or a directory (layout mirrored, other files copied)."
)]
pub struct Args {
    /// The .class file, .jar or directory to rewrite.
    #[arg(value_name = "INPUT")]
    pub input: PathBuf,
    /// Where to write the result.
    #[arg(short = 'o', long = "output", value_name = "OUTPUT")]
    pub output: PathBuf,
    /// Rules file selecting what to instrument (rules/README.md; an empty file selects nothing, and so
    /// does leaving the option out).
    #[arg(long, value_name = "FILE")]
    pub rules: Option<PathBuf>,
    /// Which HeapProxy variant the probes call.
    #[arg(long, value_enum, value_name = "F", default_value_t = FlavourChoice::Native)]
    pub flavour: FlavourChoice,
    /// The method probes of the agent's call mode.
    #[arg(long, value_enum, value_name = "SHAPE", default_value_t = CallsChoice::Traced)]
    pub calls: CallsChoice,
    /// Write the map from method and array-site ids to names (tab-separated).
    #[arg(long, value_name = "FILE")]
    pub ids: Option<PathBuf>,
    /// Self-test edit instead of the rules' probes.
    #[arg(long, value_enum, value_name = "EDIT")]
    pub edit: Option<EditChoice>,
    /// Print a listing of METHOD (name, name+descriptor, or * for all) before and after.
    #[arg(long, value_name = "METHOD")]
    pub dump: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FlavourChoice {
    /// What the agent uses for classes loaded after VM start-up.
    Native,
    /// The pure-Java wrappers it uses before.
    Early,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CallsChoice {
    /// Entry, every exit and unwind (calls=times,leaves=timed).
    Traced,
    /// Entry and unwind (calls=counts).
    Counts,
    /// Traced, but leaf methods counted only (calls=times).
    Times,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EditChoice {
    /// A nop at every method entry, before every return and after every array allocation, in every
    /// method.
    Nop,
}

impl From<FlavourChoice> for Flavour {
    fn from(c: FlavourChoice) -> Flavour {
        match c {
            FlavourChoice::Native => Flavour::Native,
            FlavourChoice::Early => Flavour::Early,
        }
    }
}

impl From<CallsChoice> for CallProbes {
    fn from(c: CallsChoice) -> CallProbes {
        match c {
            CallsChoice::Traced => CallProbes::Traced,
            CallsChoice::Counts => CallProbes::Counted,
            CallsChoice::Times => CallProbes::TracedExceptLeaves,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::error::ErrorKind;

    fn p(s: &str) -> Result<Args, clap::Error> {
        Args::try_parse_from(std::iter::once("rewrite-class").chain(s.split_whitespace()))
    }

    #[test]
    fn the_parser_is_consistent() {
        use clap::CommandFactory;
        Args::command().debug_assert();
    }

    #[test]
    fn parses_a_full_command_line() {
        let a = p("--edit nop in.jar -o out.jar --dump main").unwrap();
        assert_eq!(a.edit, Some(EditChoice::Nop));
        assert_eq!(a.input, PathBuf::from("in.jar"));
        assert_eq!(a.output, PathBuf::from("out.jar"));
        assert_eq!(a.dump.as_deref(), Some("main"));
        assert_eq!(Flavour::from(a.flavour), Flavour::Native);
        assert_eq!(CallProbes::from(a.calls), CallProbes::Traced);
    }

    #[test]
    fn every_flag_the_tests_and_docs_pass_parses() {
        let a = p(
            "--rules r.yaml --ids ids.tsv --calls counts --flavour early --dump * in --output out",
        )
        .unwrap();
        assert_eq!(a.rules, Some(PathBuf::from("r.yaml")));
        assert_eq!(a.ids, Some(PathBuf::from("ids.tsv")));
        assert_eq!(CallProbes::from(a.calls), CallProbes::Counted);
        assert_eq!(Flavour::from(a.flavour), Flavour::Early);
        assert_eq!(a.dump.as_deref(), Some("*"));
        assert_eq!(a.output, PathBuf::from("out"));
        assert_eq!(a.edit, None);
        let t = p("--calls times in -o out").unwrap();
        assert_eq!(CallProbes::from(t.calls), CallProbes::TracedExceptLeaves);
    }

    #[test]
    fn errors_name_the_problem() {
        assert_eq!(
            p("in.jar").unwrap_err().kind(),
            ErrorKind::MissingRequiredArgument
        );
        assert_eq!(
            p("in -o out --edit foo").unwrap_err().kind(),
            ErrorKind::InvalidValue
        );
        assert_eq!(
            p("in -o out --calls fast").unwrap_err().kind(),
            ErrorKind::InvalidValue
        );
        assert_eq!(p("in -o").unwrap_err().kind(), ErrorKind::InvalidValue);
        assert_eq!(
            p("a b -o c").unwrap_err().kind(),
            ErrorKind::UnknownArgument
        );
        assert_eq!(
            p("--bogus a -o c").unwrap_err().kind(),
            ErrorKind::UnknownArgument
        );
    }
}
