//! An include/exclude pair of pattern lists. Excludes win, so a user can carve a generated
//! subpackage out of a broad include without rewriting the include.

use crate::pattern::Pattern;

#[derive(Debug, Clone, Default)]
pub(crate) struct Filter {
    include: Vec<Pattern>,
    exclude: Vec<Pattern>,
}

impl Filter {
    pub(crate) fn new(include: Vec<Pattern>, exclude: Vec<Pattern>) -> Filter {
        Filter { include, exclude }
    }

    /// Selects every method of every class.
    pub(crate) fn everything() -> Filter {
        Filter::new(Filter::everything_patterns(), Vec::new())
    }

    /// The include list used when none is written: `**`.
    pub(crate) fn everything_patterns() -> Vec<Pattern> {
        vec![Pattern::parse("**").expect("`**` is a valid pattern")]
    }

    pub(crate) fn selects(&self, class: &[u8], method: &[u8], descriptor: &[u8]) -> bool {
        self.include
            .iter()
            .any(|p| p.matches(class, method, descriptor))
            && !self
                .exclude
                .iter()
                .any(|p| p.matches(class, method, descriptor))
    }

    /// Whether some method of `class` might be selected. Conservative: only an exclude without a
    /// `#` part can rule out a whole class, since a method-level exclude leaves other methods in.
    pub(crate) fn may_select_in(&self, class: &[u8]) -> bool {
        self.include.iter().any(|p| p.matches_class(class))
            && !self
                .exclude
                .iter()
                .any(|p| p.is_class_wide() && p.matches_class(class))
    }
}
