//! The `instr` command: reads the profiles the agent writes (`PREFIX.json`, schema `instr-profile/2`;
//! `instr-profile/1` and `instr-heap/1` are read too) and renders them (`instr report`), compares two of
//! them (`instr diff`) and prints shell completions; `instr attach` and `instr ctl` (attach.rs, ctl.rs,
//! with their own exit statuses) load the agent into a running JVM and control it there.
//! Everything it draws comes from `instr-profile`'s pure renderers; this module is the command line,
//! the files and the exit status around them.
//!
//! Exit status: 0 done; 1 `instr diff --fail-over N` found a row that grew by more than N; 2 an error
//! (usage, a file that cannot be read or written, a file that is not a profile), each reported on one
//! line `instr: FILE: problem`.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};
use instr_profile::filter::Filter;
use instr_profile::flame::{self, FlameView};
use instr_profile::render::{collapsed, diff, html, pprof, svg, text, threads_text};
use instr_profile::{sample_log, Profile};

use crate::targets::write_atomically;

/// Width of `--format svg`, in pixels: what a page or a pull-request comment shows without scrolling.
const SVG_WIDTH: u32 = 1200;

/// Reads the profiles the instr agent writes (PREFIX.json): reports, flame graphs, diffs; attaches the
/// agent to a running JVM and controls it.
#[derive(Parser, Debug)]
#[command(name = "instr", version, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Render a profile: hprof-style text, JSON, an HTML or SVG flame graph, collapsed stacks, pprof.
    #[command(
        after_help = "The format is --format, else the extension of -o (.txt .json .html .svg .collapsed .pb .pb.gz), else text."
    )]
    Report(ReportArgs),
    /// Compare two profiles: what grew and shrank per class, site and method.
    #[command(
        after_help = "Exit status: 0, or 1 when --fail-over N is given and a class's instances, a site's allocations or a method's calls grew by more than N; 2 on errors."
    )]
    Diff(DiffArgs),
    /// Load the agent into a running JVM (HotSpot's attach mechanism; no JDK tool needed).
    Attach(crate::attach::AttachArgs),
    /// Send a command to the agent in a running JVM: status, start, stop, dump, reset, threads, deadlocks.
    Ctl(crate::ctl::CtlArgs),
    /// Print a completion script for a shell (bash, zsh, fish, elvish, powershell).
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The profile: the agent's PREFIX.json, or its sample log PREFIX.samples.
    #[arg(value_name = "PROFILE.json")]
    pub profile: PathBuf,
    /// The cpu and wall views (sampled) with each stack under its thread.
    #[arg(long)]
    pub by_thread: bool,
    /// What to render.
    #[arg(short, long, value_enum)]
    pub format: Option<Format>,
    /// The flame-graph view for svg and collapsed (objects, bytes, live_objects, live_bytes, calls,
    /// cpu, wall; default: the first the profile has); for html, the view shown first.
    #[arg(long, value_name = "ID")]
    pub view: Option<String>,
    /// Write to FILE (atomically: a temporary file renamed into place) instead of stdout.
    #[arg(short, long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// The text lists the sites of at least SHARE of the total and counts the rest in its header
    /// (hprof's cutoff; 0: every site).
    #[arg(long, value_name = "SHARE", default_value_t = text::DEFAULT_CUTOFF,
          value_parser = text::parse_cutoff)]
    pub cutoff: f64,
    #[command(flatten)]
    pub filter: FilterArgs,
}

#[derive(Args, Debug)]
pub struct DiffArgs {
    #[arg(value_name = "BEFORE.json")]
    pub before: PathBuf,
    #[arg(value_name = "AFTER.json")]
    pub after: PathBuf,
    /// Also write a differential flame graph (HTML: a growth and a shrinkage view per measure).
    #[arg(short, long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Exit 1 when a class's instances, a site's allocations or a method's calls grew by more than N.
    #[arg(long, value_name = "N")]
    pub fail_over: Option<u64>,
    #[command(flatten)]
    pub filter: FilterArgs,
}

/// `instr_profile::filter::Filter`'s options (its doc says what each matches).
#[derive(Args, Debug, Clone, Default)]
pub struct FilterArgs {
    /// Keep classes, methods, and sites and call paths with a frame, of this package or class
    /// (repeatable).
    #[arg(long = "package", value_name = "P")]
    pub packages: Vec<String>,
    /// Keep the calls of this thread: a name, a tid, or a prefix ending in * (repeatable). Allocations
    /// are not recorded per thread and are left out.
    #[arg(long = "thread", value_name = "T")]
    pub threads: Vec<String>,
    /// Keep the N largest rows of each table (classes and sites by bytes, methods by CPU time or calls).
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
}

impl FilterArgs {
    fn filter(&self) -> Filter {
        Filter {
            packages: self.packages.clone(),
            threads: self.threads.clone(),
            top: self.top,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// The hprof-style report (the agent's PREFIX.txt).
    Text,
    /// The profile itself, after the filters.
    Json,
    /// A self-contained HTML flame graph with every view.
    Html,
    /// One view as an SVG flame graph.
    Svg,
    /// One view as collapsed stacks (flamegraph.pl, speedscope).
    Collapsed,
    /// Every view as a gzipped pprof profile.proto (binary).
    Pprof,
}

impl Format {
    /// The format a file name asks for, by its extension.
    fn of_path(path: &Path) -> Option<Format> {
        let name = path.file_name()?.to_str()?.to_ascii_lowercase();
        let ext = |e: &str| name.ends_with(e);
        Some(if ext(".txt") {
            Format::Text
        } else if ext(".json") {
            Format::Json
        } else if ext(".html") || ext(".htm") {
            Format::Html
        } else if ext(".svg") {
            Format::Svg
        } else if ext(".collapsed") {
            Format::Collapsed
        } else if ext(".pb") || ext(".pb.gz") || ext(".pprof") {
            Format::Pprof
        } else {
            return None;
        })
    }
}

/// A failure: the one line printed after `instr: `.
struct Failure(String);

fn fail_at(path: &Path, problem: impl std::fmt::Display) -> Failure {
    Failure(format!("{}: {problem}", path.display()))
}

/// Runs the command line of the process.
pub fn main() -> ExitCode {
    // Usage errors exit 2, --help and --version 0 (clap's statuses).
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Report(a) => report(a),
        Command::Diff(a) => diff_command(a),
        Command::Attach(a) => return crate::attach::main(a),
        Command::Ctl(a) => return crate::ctl::main(a),
        Command::Completions { shell } => {
            let mut out = Vec::new();
            clap_complete::generate(*shell, &mut Cli::command(), "instr", &mut out);
            to_stdout(&out).map(|()| ExitCode::SUCCESS)
        }
    };
    result.unwrap_or_else(|Failure(message)| {
        eprintln!("instr: {message}");
        ExitCode::from(2)
    })
}

/// Reads and checks one profile: the agent's JSON, or its sample log (`PREFIX.samples`), which becomes
/// the profile the agent would have written from those samples.
fn read(path: &Path) -> Result<Profile, Failure> {
    let bytes = std::fs::read(path).map_err(|e| fail_at(path, e))?;
    if sample_log::is_sample_log(&bytes) {
        let log = sample_log::read(&bytes).map_err(|e| fail_at(path, e))?;
        if log.truncated {
            eprintln!(
                "instr: {}: warning: the log ends inside a record (its writer was killed?); read up to the last whole one",
                path.display()
            );
        }
        let mut folded = sample_log::Aggregate::default();
        for r in &log.records {
            folded.apply(r);
        }
        return Ok(folded.profile());
    }
    let text = String::from_utf8(bytes).map_err(|e| fail_at(path, e))?;
    Profile::from_json(&text).map_err(|e| fail_at(path, e))
}

fn read_filtered(path: &Path, filter: &FilterArgs) -> Result<Profile, Failure> {
    let profile = read(path)?;
    let filter = filter.filter();
    if filter.is_empty() {
        return Ok(profile);
    }
    let filtered = filter.apply(&profile).map_err(|e| fail_at(path, e))?;
    for w in &filtered.warnings {
        eprintln!("instr: {}: warning: {w}", path.display());
    }
    Ok(filtered.profile)
}

/// Writes to stdout; a reader that went away (`instr report ... | head`) is not an error.
fn to_stdout(bytes: &[u8]) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(Failure(format!("stdout: {e}")))
        }
        _ => Ok(()),
    }
}

fn emit(output: Option<&Path>, bytes: &[u8]) -> Result<(), Failure> {
    match output {
        Some(path) => write_atomically(path, bytes).map_err(Failure),
        None => to_stdout(bytes),
    }
}

/// The name a page is titled with: the file's name, without its directories.
fn title(path: &Path) -> String {
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    format!("instr: {name}")
}

fn report(a: &ReportArgs) -> Result<ExitCode, Failure> {
    let format = a
        .format
        .or_else(|| a.output.as_deref().and_then(Format::of_path))
        .unwrap_or(Format::Text);
    if a.view.is_some() && !matches!(format, Format::Svg | Format::Collapsed | Format::Html) {
        return Err(Failure(
            "--view applies to --format svg, collapsed and html".into(),
        ));
    }
    if format == Format::Pprof && a.output.is_none() && std::io::stdout().is_terminal() {
        return Err(Failure(
            "pprof is binary: write it with -o FILE or redirect stdout".into(),
        ));
    }
    let profile = read_filtered(&a.profile, &a.filter)?;
    let mut views = flame::views(&profile);
    if a.by_thread {
        for v in instr_profile::samples::views(&profile, true) {
            if let Some(slot) = views.iter_mut().find(|w| w.id == v.id) {
                *slot = v;
            }
        }
    }
    if let Some(id) = &a.view {
        let Some(i) = views.iter().position(|v| v.id == id) else {
            let known: Vec<&str> = views.iter().map(|v| v.id).collect();
            return Err(fail_at(
                &a.profile,
                format!(
                    "no view '{id}' in this profile (views: {})",
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                ),
            ));
        };
        // The chosen view first: the one svg and collapsed draw, and the one the page opens on.
        let chosen = views.remove(i);
        views.insert(0, chosen);
    }
    // A profile (or a filter) with nothing to draw gives an empty graph, not an error: "nothing
    // matched" is an answer.
    let first = || {
        views.first().cloned().unwrap_or_else(|| {
            FlameView::from_frames("objects", "Allocated objects", "objects", [])
        })
    };
    let bytes = match format {
        // The heap and calls report, then (thread profiler on) the threads report, as the agent's
        // PREFIX.txt and PREFIX.threads.txt.
        Format::Text => {
            let mut t = text::render(&profile, a.cutoff);
            if let Some(threads) = threads_text::render(&profile) {
                t.push('\n');
                t.push_str(&threads);
            }
            t.into_bytes()
        }
        Format::Json => profile.to_json_bytes(),
        Format::Html => html::render(&title(&a.profile), &views).into_bytes(),
        Format::Svg => svg::render(&first(), SVG_WIDTH).into_bytes(),
        Format::Collapsed => collapsed::render(&first()).into_bytes(),
        Format::Pprof => pprof::render(&views),
    };
    emit(a.output.as_deref(), &bytes)?;
    Ok(ExitCode::SUCCESS)
}

fn diff_command(a: &DiffArgs) -> Result<ExitCode, Failure> {
    let before = read_filtered(&a.before, &a.filter)?;
    let after = read_filtered(&a.after, &a.filter)?;
    let d = diff::compare(&before, &after);
    if let Some(path) = &a.output {
        let page_title = format!(
            "instr diff: {} -> {}",
            title(&a.before).trim_start_matches("instr: "),
            title(&a.after).trim_start_matches("instr: ")
        );
        let page = html::render(&page_title, &diff::flame(&before, &after));
        write_atomically(path, page.as_bytes()).map_err(Failure)?;
    }
    to_stdout(d.to_text().as_bytes())?;
    let Some(n) = a.fail_over else {
        return Ok(ExitCode::SUCCESS);
    };
    let grown = d.grown_over(n);
    for c in &grown {
        eprintln!(
            "instr: {} grew by {} (more than {n}): {}",
            c.kind.name(),
            c.growth(),
            c.name
        );
    }
    Ok(if grown.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parser_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn the_output_file_names_the_format() {
        assert_eq!(
            Format::of_path(Path::new("a/flame.html")),
            Some(Format::Html)
        );
        assert_eq!(Format::of_path(Path::new("p.pb.gz")), Some(Format::Pprof));
        assert_eq!(Format::of_path(Path::new("p.CSV")), None);
    }
}
