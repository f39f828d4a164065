//! The glob matcher behind patterns. It runs on the bytes the JVM hands us (`java/lang/String`), so
//! `*` stops at `/` and `**` does not. `class_wanted` calls it for every class the JVM loads, so a
//! match never allocates: literal prefixes and suffixes are checked first (most patterns are
//! `com.example.**`, settled by the prefix alone), and the rest runs as an NFA whose state sets
//! live on the stack, which is why a glob's length is capped.

/// Longest glob, in bytes after translation. Class names in real code stay far below this.
pub(crate) const MAX_GLOB_LEN: usize = 256;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Element {
    Byte(u8),
    /// `*`: any run of bytes without `/`.
    Star,
    /// `**`: any run of bytes.
    AnyStar,
}

#[derive(Debug, Clone)]
pub(crate) struct Glob {
    elements: Box<[Element]>,
    /// The bytes before the first wildcard; the whole glob when it has none.
    prefix: Box<[u8]>,
    /// The bytes after the last wildcard; empty when it has none.
    suffix: Box<[u8]>,
    has_wildcard: bool,
}

impl Glob {
    /// Compiles a glob in which `*` and `**` are wildcards. The caller has rejected `***` and
    /// anything longer than [`MAX_GLOB_LEN`].
    pub(crate) fn new(text: &[u8]) -> Glob {
        debug_assert!(text.len() <= MAX_GLOB_LEN);
        let mut elements = Vec::with_capacity(text.len());
        let mut i = 0;
        while i < text.len() {
            if text[i] == b'*' {
                if text.get(i + 1) == Some(&b'*') {
                    elements.push(Element::AnyStar);
                    i += 2;
                } else {
                    elements.push(Element::Star);
                    i += 1;
                }
            } else {
                elements.push(Element::Byte(text[i]));
                i += 1;
            }
        }
        let literal = |element: &Element| match element {
            Element::Byte(byte) => Some(*byte),
            _ => None,
        };
        let prefix: Vec<u8> = elements.iter().map_while(literal).collect();
        let has_wildcard = prefix.len() < elements.len();
        let mut suffix: Vec<u8> = if has_wildcard {
            elements.iter().rev().map_while(literal).collect()
        } else {
            Vec::new()
        };
        suffix.reverse();
        Glob {
            elements: elements.into_boxed_slice(),
            prefix: prefix.into_boxed_slice(),
            suffix: suffix.into_boxed_slice(),
            has_wildcard,
        }
    }

    pub(crate) fn matches(&self, text: &[u8]) -> bool {
        if !self.has_wildcard {
            return text == &*self.prefix;
        }
        if !text.starts_with(&self.prefix) || !text.ends_with(&self.suffix) {
            return false;
        }
        if text.len() < self.prefix.len() + self.suffix.len() {
            return false;
        }
        let elements = &self.elements[self.prefix.len()..self.elements.len() - self.suffix.len()];
        let text = &text[self.prefix.len()..text.len() - self.suffix.len()];
        if let [Element::AnyStar] = elements {
            return true;
        }
        run_nfa(elements, text)
    }
}

/// `active[j]` means "the first `j` elements match the text read so far".
fn run_nfa(elements: &[Element], text: &[u8]) -> bool {
    let end = elements.len();
    let mut active = [false; MAX_GLOB_LEN + 1];
    let mut next = [false; MAX_GLOB_LEN + 1];
    active[0] = true;
    follow_empty_stars(elements, &mut active);
    for &byte in text {
        next[..=end].fill(false);
        let mut alive = false;
        for (j, element) in elements.iter().enumerate() {
            if !active[j] {
                continue;
            }
            match *element {
                Element::Byte(want) if want == byte => {
                    next[j + 1] = true;
                    alive = true;
                }
                Element::Byte(_) => {}
                Element::Star if byte == b'/' => {}
                Element::Star | Element::AnyStar => {
                    next[j] = true;
                    alive = true;
                }
            }
        }
        if !alive {
            return false;
        }
        follow_empty_stars(elements, &mut next);
        std::mem::swap(&mut active, &mut next);
    }
    active[end]
}

/// A star may match nothing, so a state before a star also stands after it.
fn follow_empty_stars(elements: &[Element], states: &mut [bool; MAX_GLOB_LEN + 1]) {
    for (j, element) in elements.iter().enumerate() {
        if states[j] && matches!(element, Element::Star | Element::AnyStar) {
            states[j + 1] = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(glob: &str, text: &str) -> bool {
        Glob::new(glob.as_bytes()).matches(text.as_bytes())
    }

    #[test]
    fn literal_is_exact() {
        assert!(m("com/foo/Bar", "com/foo/Bar"));
        assert!(!m("com/foo/Bar", "com/foo/Bar$Inner"));
        assert!(!m("com/foo/Bar", "com/foo/Ba"));
    }

    #[test]
    fn star_stays_within_one_level() {
        assert!(m("com/foo/*", "com/foo/Bar"));
        assert!(m("com/foo/*", "com/foo/Bar$Inner"));
        assert!(!m("com/foo/*", "com/foo/x/Bar"));
        assert!(m("com/*/Bar", "com/foo/Bar"));
        assert!(!m("com/*/Bar", "com/foo/x/Bar"));
        assert!(m("get*", "get"));
        assert!(m("*Impl", "FooImpl"));
        assert!(!m("*Impl", "a/FooImpl"));
    }

    #[test]
    fn any_star_crosses_levels() {
        assert!(m("com/foo/**", "com/foo/Bar"));
        assert!(m("com/foo/**", "com/foo/x/y/Bar"));
        assert!(!m("com/foo/**", "com/foobar/X"));
        assert!(!m("com/foo/**", "com/foo"));
        assert!(m("**", "Anything"));
        assert!(m("**", "a/b/c"));
        assert!(m("**/Foo", "a/b/Foo"));
        assert!(!m("**/Foo", "Foo"));
        assert!(m("com/**/Foo", "com/a/b/Foo"));
        assert!(!m("com/**/Foo", "com/Foo"));
    }

    #[test]
    fn mixed_wildcards_backtrack() {
        assert!(m("a*b*c", "aXbYbZc"));
        assert!(!m("a*b*c", "aXb/c"));
        assert!(m("a**b*c", "a/x/bYc"));
        assert!(m("*a*a*a*", "aaa"));
        assert!(!m("*a*a*a*a", "aaa"));
        assert!(m("a*a", "aa"));
        assert!(!m("ab*ba", "aba"));
    }
}
