//! `RulesError`: one line, `<file>:<line>:<column>: <problem>; hint: <hint>`. A user editing a rules
//! file sees this when the agent refuses to start, so every message names the place to fix and what
//! to write instead, and never spans lines (it may end up in a one-line log).

use std::fmt;

use serde_saphyr::{Error as YamlError, MessageFormatter, UserMessageFormatter};

/// What a rules file (or an agent option overriding it) got wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RulesError {
    origin: String,
    location: Option<(u64, u64)>,
    problem: String,
    hint: String,
}

impl RulesError {
    /// An error at a 1-based line and column of `origin`.
    pub fn at(origin: &str, line: u64, column: u64, problem: String, hint: String) -> RulesError {
        RulesError {
            origin: one_line(origin),
            location: Some((line, column)),
            problem: one_line(&problem),
            hint: one_line(&hint),
        }
    }

    /// An error with no position: the file could not be read, or an agent option was bad.
    pub fn whole(origin: &str, problem: String, hint: String) -> RulesError {
        RulesError {
            origin: one_line(origin),
            location: None,
            problem: one_line(&problem),
            hint: one_line(&hint),
        }
    }

    /// The file name (or other origin) given to the parser.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// 1-based line, when the problem has a position.
    pub fn line(&self) -> Option<u64> {
        self.location.map(|(line, _)| line)
    }

    /// 1-based column, when the problem has a position.
    pub fn column(&self) -> Option<u64> {
        self.location.map(|(_, column)| column)
    }

    pub fn problem(&self) -> &str {
        &self.problem
    }

    pub fn hint(&self) -> &str {
        &self.hint
    }

    /// Translates a serde-saphyr error, adding the hints its own messages lack. `text` is the file,
    /// to name the key of the line the error is on: serde-saphyr's messages say what was expected
    /// ("a whole number") but not of which key.
    pub(crate) fn from_yaml(origin: &str, text: &str, error: &YamlError) -> RulesError {
        let inner = error.without_snippet();
        let mut problem = yaml_problem(inner);
        let hint = yaml_hint(inner);
        match error.location() {
            // serde-saphyr reports line 0 for "unknown"; we only print positions we believe.
            Some(location) if location.line() > 0 => {
                if let Some(key) = text
                    .lines()
                    .nth(location.line() as usize - 1)
                    .and_then(key_of_line)
                {
                    if !problem.contains(&format!("`{key}`")) {
                        problem = format!("`{key}`: {problem}");
                    }
                }
                RulesError::at(origin, location.line(), location.column(), problem, hint)
            }
            _ => RulesError::whole(origin, problem, hint),
        }
    }
}

impl fmt::Display for RulesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.location {
            Some((line, column)) => write!(f, "{}:{line}:{column}: ", self.origin)?,
            None => write!(f, "{}: ", self.origin)?,
        }
        write!(f, "{}; hint: {}", self.problem, self.hint)
    }
}

impl std::error::Error for RulesError {}

/// The key a block-mapping line sets (`  depth: x` -> `depth`, `- include: [a]` -> `include`).
fn key_of_line(line: &str) -> Option<&str> {
    let line = line.trim_start().trim_start_matches("- ").trim_start();
    let end = line.find(':')?;
    let key = &line[..end];
    let is_key = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    is_key.then_some(key)
}

/// A part of a message (origin, problem or hint), cut at 400 characters: a hostile value can be a
/// megabyte long, and the parts after it must still be seen.
fn one_line(text: &str) -> String {
    printable(text, 400)
}

/// `text` as one printable line, for a message that ends up in a terminal or a log: line breaks become
/// spaces, other control characters escapes (`\u{1b}`), and a text longer than 2,000 characters (more
/// than a [`RulesError`]'s three parts) is cut with a note of how much was left out.
pub fn printable_line(text: &str) -> String {
    printable(text, 2000)
}

fn printable(text: &str, max_chars: usize) -> String {
    let joined = text
        .split(['\n', '\r'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let mut line = String::with_capacity(joined.len().min(max_chars * 2));
    for (shown, c) in joined.chars().enumerate() {
        if shown == max_chars {
            let rest = joined.chars().count() - shown;
            line.push_str(&format!("... ({rest} more characters)"));
            break;
        }
        if c.is_control() {
            line.extend(c.escape_default());
        } else {
            line.push(c);
        }
    }
    line
}

/// serde-saphyr's wording, except where it speaks of Rust ("field", "variant", "i64") rather than
/// of the rules file; the valid alternatives go in the hint instead.
fn yaml_problem(error: &YamlError) -> String {
    match error {
        YamlError::SerdeUnknownField { field, .. } => format!("unknown key `{field}`"),
        YamlError::SerdeUnknownVariant { variant, .. } => format!("unknown probe `{variant}`"),
        YamlError::InvalidScalar { ty, .. } if ty.starts_with(['i', 'u']) => {
            "expected a whole number".to_owned()
        }
        _ => UserMessageFormatter.format_message(error).into_owned(),
    }
}

fn yaml_hint(error: &YamlError) -> String {
    match error {
        YamlError::SerdeUnknownField {
            field, expected, ..
        } => {
            let mut hint = format!("valid keys here are {}", quoted_list(expected));
            if let Some(near) = nearest(field, expected) {
                hint.push_str(&format!("; did you mean `{near}`?"));
            }
            hint
        }
        YamlError::SerdeUnknownVariant {
            variant, expected, ..
        } => {
            let mut hint = format!("`probes` may list only {}", quoted_list(expected));
            if let Some(near) = nearest(variant, expected) {
                hint.push_str(&format!("; did you mean `{near}`?"));
            }
            hint
        }
        YamlError::DuplicateMappingKey { .. } => {
            "a key may appear only once in a mapping; merge the two entries into one".to_owned()
        }
        YamlError::MultipleDocuments { .. } => {
            "a rules file holds one YAML document; remove the `---` separator".to_owned()
        }
        YamlError::InvalidBooleanStrict { .. } => {
            "write `true` or `false` (yes/no/on/off are not accepted)".to_owned()
        }
        YamlError::NullIntoString { .. } => {
            "a pattern or path must be a non-empty string; quote it if it starts with `*`"
                .to_owned()
        }
        YamlError::Unexpected { expected, .. } if expected.contains("sequence") => {
            "write a list, e.g. `[objects, arrays]` or one `- item` per line".to_owned()
        }
        YamlError::Unexpected { expected, .. } if expected.contains("mapping") => {
            "write a mapping of `key: value` lines; see rules/README.md for the keys".to_owned()
        }
        YamlError::InvalidScalar { .. } => {
            "`depth` is a whole number from 0 to 64; the other scalars are strings or true/false"
                .to_owned()
        }
        YamlError::UnknownAnchor { .. } => "define the `&anchor` before using `*alias`; a pattern \
             starting with `*` must be quoted, e.g. \"*.Foo\""
            .to_owned(),
        _ => "see rules/README.md for the schema: probes, methods {include, exclude, bridges, \
              synthetic}, allocations {include, exclude, depth}, output, threads {monitors, deadlocks {watch_ms}, \
              trace {file, allocations}}, sampling {cpu, wall, engine}"
            .to_owned(),
    }
}

fn quoted_list(items: &[&str]) -> String {
    items
        .iter()
        .map(|item| format!("`{item}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The candidate closest to `word` by edit distance, if close enough to be a plausible typo.
pub(crate) fn nearest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let word = word.to_lowercase();
    candidates
        .iter()
        .map(|&candidate| (edit_distance(&word, candidate), candidate))
        .filter(|&(distance, candidate)| distance <= 2.max(candidate.chars().count() / 3))
        .min_by_key(|&(distance, _)| distance)
        .map(|(_, candidate)| candidate)
}

/// Levenshtein distance over chars.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        current[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitute = previous[j] + usize::from(ca != cb);
            current[j + 1] = substitute.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_counts_single_edits() {
        assert_eq!(edit_distance("probes", "probes"), 0);
        assert_eq!(edit_distance("prbes", "probes"), 1);
        assert_eq!(edit_distance("porbes", "probes"), 2);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn nearest_suggests_only_plausible_typos() {
        let keys = ["probes", "methods", "allocations", "output"];
        assert_eq!(nearest("prbes", &keys), Some("probes"));
        assert_eq!(nearest("allocation", &keys), Some("allocations"));
        assert_eq!(nearest("Methods", &keys), Some("methods"));
        assert_eq!(nearest("zzzzzzzz", &keys), None);
    }

    #[test]
    fn display_is_one_line_with_position() {
        let error = RulesError::at("r.yaml", 3, 7, "bad\nthing".into(), "fix\r\nit".into());
        assert_eq!(error.to_string(), "r.yaml:3:7: bad thing; hint: fix it");
        let error = RulesError::whole("agent options", "p".into(), "h".into());
        assert_eq!(error.to_string(), "agent options: p; hint: h");
    }
}
