//! The difference of two profiles: what grew and what shrank, per class, site and method. (Placeholder.)

use crate::model::Profile;

/// The text table of the differences.
pub fn text(before: &Profile, after: &Profile) -> String {
    let _ = (before, after);
    String::new()
}
