//! The report files the agent writes for one profile (`PREFIX.json`, `.txt`, `.collapsed`, `.html`,
//! `.pb.gz`), rendered together: what the agent's exit costs is this function, and the bench times it.
//!
//! The renderers are independent pure functions, so they run on scoped threads (at most three at once):
//! the JSON and the text, which need no flame views, start while the views are drawn; pprof then runs
//! beside the HTML page and the collapsed stacks. The bytes are the same as rendering one after another.

use crate::flame::{self, FlameView};
use crate::render::{collapsed, html, pprof, text};
use crate::Profile;

/// Each file's suffix (after the prefix) and bytes, in this order: `.json`, `.txt`, `.collapsed` (the
/// allocated bytes, root first), `.html`, `.pb.gz`.
pub fn agent_files(profile: &Profile, title: &str) -> Vec<(&'static str, Vec<u8>)> {
    // Outside the scope, so that the threads may borrow the views drawn inside it.
    let drawn = std::sync::OnceLock::new();
    std::thread::scope(|s| {
        let json = s.spawn(|| profile.to_json().into_bytes());
        let txt = s.spawn(|| text::render(profile).into_bytes());
        let views: &Vec<FlameView> = drawn.get_or_init(|| flame::views(profile));
        let pb = s.spawn(move || pprof::render(views));
        let collapsed = bytes_view(views)
            .map(collapsed::render)
            .unwrap_or_default()
            .into_bytes();
        let page = html::render(title, views).into_bytes();
        vec![
            (".json", joined(json)),
            (".txt", joined(txt)),
            (".collapsed", collapsed),
            (".html", page),
            (".pb.gz", joined(pb)),
        ]
    })
}

fn bytes_view(views: &[FlameView]) -> Option<&FlameView> {
    views.iter().find(|v| v.id == "bytes")
}

/// A renderer thread's result; a renderer that panicked (a bug) panics here, as it would have inline.
fn joined<T>(h: std::thread::ScopedJoinHandle<'_, T>) -> T {
    match h.join() {
        Ok(v) => v,
        Err(e) => std::panic::resume_unwind(e),
    }
}
