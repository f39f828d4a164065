//! The self-contained HTML flame graph: one file, no network, every view of the profile switchable in
//! the page. (Placeholder: the page is being written.)

use crate::flame::FlameView;

/// The page for `views` (the first one shown), titled `title`.
pub fn render(title: &str, views: &[FlameView]) -> String {
    let _ = views;
    format!("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{title}</title></head><body></body></html>\n")
}
