//! The pattern language: `<class glob>[#<method glob>[<descriptor>]]`. Users write class names the way
//! Java source does (`com.example.Foo`); the JVM hands us internal names (`com/example/Foo`), so the
//! class glob is translated once at parse time and matching works on the JVM's bytes directly.
//! Parsing is strict: a pattern that can never match anything is almost always a typo, and silently
//! instrumenting nothing is the worst outcome for a profiling run.

use crate::glob::{Glob, MAX_GLOB_LEN};

/// Shown with every pattern error, since the fix is usually "write it the documented way".
pub const PATTERN_SYNTAX: &str = "a pattern is <class>[#<method>[(<args>)<return>]], e.g. \
    `com.example.**` (package and subpackages), `com.example.*` (that package only), \
    `org.acme.Cache#get*`, `org.acme.Cache#put(Ljava/lang/Object;)V`; `*` matches within one \
    name, `**` also across dots";

/// One compiled include or exclude pattern.
#[derive(Debug, Clone)]
pub struct Pattern {
    source: String,
    class: Glob,
    method: Option<Glob>,
    descriptor: Option<Box<[u8]>>,
}

impl Pattern {
    /// Parses a pattern; the error is the problem, to be paired with [`PATTERN_SYNTAX`].
    pub fn parse(text: &str) -> Result<Pattern, String> {
        if text.is_empty() {
            return Err("empty pattern".to_owned());
        }
        if let Some(c) = text.chars().find(|c| c.is_whitespace() || c.is_control()) {
            return Err(format!("pattern `{text}` contains whitespace ({c:?})"));
        }
        let (class_part, member_part) = match text.split_once('#') {
            Some((class, member)) => (class, Some(member)),
            None => (text, None),
        };
        let class = class_glob(text, class_part)?;
        let (method, descriptor) = match member_part {
            None => (None, None),
            Some(member) => {
                let (name, descriptor) = match member.find('(') {
                    Some(at) => (&member[..at], Some(&member[at..])),
                    None => (member, None),
                };
                let method = method_glob(text, name)?;
                if let Some(descriptor) = descriptor {
                    check_descriptor(descriptor)
                        .map_err(|problem| format!("pattern `{text}`: {problem}"))?;
                }
                (Some(method), descriptor.map(|d| d.as_bytes().into()))
            }
        };
        Ok(Pattern {
            source: text.to_owned(),
            class,
            method,
            descriptor,
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Whether the class part matches `class` (an internal name), whatever the method part says.
    pub fn matches_class(&self, class_internal: &[u8]) -> bool {
        self.class.matches(class_internal)
    }

    /// Whether the pattern names every method of the classes it matches (it has no `#`).
    pub fn is_class_wide(&self) -> bool {
        self.method.is_none()
    }

    pub fn matches(&self, class_internal: &[u8], method: &[u8], descriptor: &[u8]) -> bool {
        self.class.matches(class_internal)
            && self.method.as_ref().is_none_or(|glob| glob.matches(method))
            && self
                .descriptor
                .as_deref()
                .is_none_or(|want| want == descriptor)
    }
}

fn class_glob(pattern: &str, class: &str) -> Result<Glob, String> {
    if class.is_empty() {
        return Err(format!(
            "pattern `{pattern}` has no class before `#` (write `**#name` for every class)"
        ));
    }
    if class.contains('/') {
        return Err(format!(
            "pattern `{pattern}` uses `/`; write class names with dots, e.g. `java.lang.String`"
        ));
    }
    if let Some(c) = class.chars().find(|c| ";[]()<>,:".contains(*c)) {
        return Err(format!(
            "pattern `{pattern}`: `{c}` cannot appear in a class name"
        ));
    }
    check_stars(pattern, class)?;
    if class.split('.').any(str::is_empty) {
        return Err(format!(
            "pattern `{pattern}` has an empty name between dots (a leading, trailing or doubled `.`)"
        ));
    }
    check_length(pattern, class)?;
    let internal: Vec<u8> = class
        .bytes()
        .map(|b| if b == b'.' { b'/' } else { b })
        .collect();
    Ok(Glob::new(&internal))
}

fn method_glob(pattern: &str, name: &str) -> Result<Glob, String> {
    if name.is_empty() {
        return Err(format!(
            "pattern `{pattern}` has `#` but no method name after it (e.g. `#get*` or `#<init>`)"
        ));
    }
    if name == "<init>" || name == "<clinit>" {
        return Ok(Glob::new(name.as_bytes()));
    }
    if let Some(c) = name.chars().find(|c| ".;[]/<>)#,:".contains(*c)) {
        return Err(format!(
            "pattern `{pattern}`: `{c}` cannot appear in a method name (only `<init>` and \
             `<clinit>` use angle brackets)"
        ));
    }
    check_stars(pattern, name)?;
    if name.contains("**") {
        return Err(format!(
            "pattern `{pattern}` uses `**` in a method name; method names have no dots, use `*`"
        ));
    }
    check_length(pattern, name)?;
    Ok(Glob::new(name.as_bytes()))
}

fn check_stars(pattern: &str, part: &str) -> Result<(), String> {
    if part.contains("***") {
        return Err(format!(
            "pattern `{pattern}` has `***`; use `*` (within one name) or `**` (across dots)"
        ));
    }
    Ok(())
}

fn check_length(pattern: &str, part: &str) -> Result<(), String> {
    if part.len() > MAX_GLOB_LEN {
        return Err(format!(
            "pattern `{pattern}` is too long ({} bytes before or after `#`, at most {MAX_GLOB_LEN})",
            part.len()
        ));
    }
    Ok(())
}

/// Checks a JVM method descriptor, `(<field types>)<field type or V>`, exactly as the class file
/// would hold it, since it is compared byte for byte.
fn check_descriptor(descriptor: &str) -> Result<(), String> {
    let bytes = descriptor.as_bytes();
    debug_assert_eq!(bytes.first(), Some(&b'('));
    let mut at = 1;
    loop {
        match bytes.get(at) {
            None => return Err(format!("descriptor `{descriptor}` has no closing `)`")),
            Some(b')') => {
                at += 1;
                break;
            }
            Some(_) => at = field_type(descriptor, at)?,
        }
    }
    match bytes.get(at) {
        None => {
            return Err(format!(
                "descriptor `{descriptor}` has no return type after `)`"
            ))
        }
        Some(b'V') => at += 1,
        Some(_) => at = field_type(descriptor, at)?,
    }
    if at != bytes.len() {
        return Err(format!(
            "descriptor `{descriptor}` has `{}` after its return type",
            &descriptor[at..]
        ));
    }
    Ok(())
}

/// Checks one field type starting at `at`; returns the offset after it.
fn field_type(descriptor: &str, mut at: usize) -> Result<usize, String> {
    let bytes = descriptor.as_bytes();
    let start = at;
    while bytes.get(at) == Some(&b'[') {
        at += 1;
    }
    if at - start > 255 {
        return Err(format!(
            "descriptor `{descriptor}` has more than 255 array dimensions"
        ));
    }
    match bytes.get(at) {
        Some(b'B' | b'C' | b'D' | b'F' | b'I' | b'J' | b'S' | b'Z') => Ok(at + 1),
        Some(b'L') => {
            let Some(length) = descriptor[at + 1..].find(';') else {
                return Err(format!(
                    "descriptor `{descriptor}`: class type `{}` has no closing `;`",
                    &descriptor[at..]
                ));
            };
            let name = &descriptor[at + 1..at + 1 + length];
            if name.contains('.') {
                return Err(format!(
                    "descriptor `{descriptor}`: class names in descriptors use `/`, e.g. \
                     `Ljava/lang/String;`"
                ));
            }
            if name.split('/').any(str::is_empty) || name.contains(['[', '<', '>', '(', ')']) {
                return Err(format!(
                    "descriptor `{descriptor}`: `L{name};` is not a valid class type"
                ));
            }
            Ok(at + 1 + length + 1)
        }
        Some(b'V') => Err(format!(
            "descriptor `{descriptor}`: `V` (void) may only be the return type"
        )),
        Some(_) => {
            let rest = &descriptor[at..];
            let shown = rest.chars().next().unwrap_or(' ');
            Err(format!(
                "descriptor `{descriptor}`: `{shown}` is not a JVM type (B C D F I J S Z, \
                 L<class>; or [<type>)"
            ))
        }
        None => Err(format!("descriptor `{descriptor}` ends inside a type")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sel(pattern: &str, class: &str, method: &str, descriptor: &str) -> bool {
        Pattern::parse(pattern).unwrap().matches(
            class.as_bytes(),
            method.as_bytes(),
            descriptor.as_bytes(),
        )
    }

    #[test]
    fn class_patterns_translate_dots() {
        assert!(sel("com.foo.Bar", "com/foo/Bar", "x", "()V"));
        assert!(!sel("com.foo.Bar", "com/foo/Bar$Inner", "x", "()V"));
        assert!(sel("com.foo.Bar*", "com/foo/Bar$Inner", "x", "()V"));
        assert!(sel("Main", "Main", "main", "([Ljava/lang/String;)V"));
    }

    #[test]
    fn member_parts() {
        assert!(sel("a.B#get*", "a/B", "getX", "()I"));
        assert!(!sel("a.B#get*", "a/B", "setX", "(I)V"));
        assert!(sel("a.B#<init>", "a/B", "<init>", "()V"));
        assert!(!sel("a.B#<init>", "a/B", "<clinit>", "()V"));
        assert!(sel("a.B#f(I)V", "a/B", "f", "(I)V"));
        assert!(!sel("a.B#f(I)V", "a/B", "f", "(J)V"));
        assert!(sel(
            "a.B#*([[Ljava/lang/Object;J)[I",
            "a/B",
            "g",
            "([[Ljava/lang/Object;J)[I"
        ));
    }

    #[test]
    fn valid_patterns() {
        for pattern in [
            "**",
            "*",
            "com.foo.*",
            "com.**.Impl",
            "com.foo.Bar$Inner",
            "a.B#<clinit>",
            "a.B#*",
            "a.B#lambda$*",
            "a.B#m()V",
            "a.B#m(ZBCSIJFD)Ljava/lang/String;",
            "a.B#m([I[[Ljava/util/List;)[[J",
        ] {
            assert!(Pattern::parse(pattern).is_ok(), "{pattern}");
        }
    }

    #[test]
    fn invalid_patterns() {
        for (pattern, needle) in [
            ("", "empty"),
            ("com/foo/Bar", "`/`"),
            ("com.foo Bar", "whitespace"),
            (" com.foo", "whitespace"),
            ("com.***", "`***`"),
            ("com..foo", "empty name"),
            (".com", "empty name"),
            ("com.", "empty name"),
            ("#foo", "no class"),
            ("a.B#", "no method name"),
            ("a.B#(I)V", "no method name"),
            ("a.B#get**", "`**` in a method name"),
            ("a.B#a.b", "cannot appear in a method name"),
            ("a.B#<foo>", "cannot appear in a method name"),
            ("a.B#x#y", "cannot appear in a method name"),
            ("a.B#m(I", "no closing `)`"),
            ("a.B#m(I)", "no return type"),
            ("a.B#m(I)VV", "after its return type"),
            ("a.B#m(I)V junk", "whitespace"),
            ("a.B#m(V)V", "`V` (void)"),
            ("a.B#m(Q)V", "not a JVM type"),
            ("a.B#m(Ljava/lang/String)V", "no closing `;`"),
            ("a.B#m(Ljava.lang.String;)V", "use `/`"),
            ("a.B#m(L;)V", "not a valid class type"),
            ("a.B#m([)V", "not a JVM type"),
            ("a[].B", "cannot appear in a class name"),
        ] {
            let error = Pattern::parse(pattern).expect_err(pattern);
            assert!(error.contains(needle), "{pattern}: {error}");
        }
        let long = format!("a.{}", "x".repeat(MAX_GLOB_LEN));
        assert!(Pattern::parse(&long).unwrap_err().contains("too long"));
    }
}
