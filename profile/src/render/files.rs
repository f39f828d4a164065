//! The report files the agent writes for one profile (`PREFIX.json`, `.txt`, `.collapsed`, `.html`,
//! `.pb.gz`), rendered together: what the agent's exit costs is this function, and the bench times it.
//!
//! The renderers are independent pure functions, so they run on scoped threads: the JSON and the text,
//! which need no flame views, on one while the views are drawn; then pprof on another while the
//! collapsed stacks and the HTML page are rendered. The bytes are the same as rendering one after
//! another.

use crate::flame::{self, FlameView};
use crate::render::{collapsed, html, pprof, text};
use crate::Profile;

/// Each file's suffix (after the prefix) and bytes, in this order: `.json`, `.txt` (the sites below
/// `cutoff` of the total counted, not listed: `text::render`), `.collapsed` (the allocated bytes, root
/// first), `.html`, `.pb.gz`.
pub fn agent_files(profile: &Profile, title: &str, cutoff: f64) -> Vec<(&'static str, Vec<u8>)> {
    std::thread::scope(|s| {
        // The JSON and the text, which need no flame views, on a thread of their own from the start;
        // pprof on another once the views are drawn, while this one draws the page and the collapsed
        // stacks: at 100,000 stacks pprof takes about as long as those two, the JSON less than the
        // views, so two cores are busy to the end.
        let plain = || {
            (
                profile.to_json_bytes(),
                text::render(profile, cutoff).into_bytes(),
            )
        };
        // A thread that cannot be made (a process at its thread limit) leaves the work to this one.
        let plain_thread = spawn(s, plain);
        let views = flame::views(profile);
        let (pb, collapsed, page) = std::thread::scope(|drawn| {
            let pb_thread = spawn(drawn, || pprof::render_stored(&views));
            let collapsed = bytes_view(&views)
                .map(collapsed::render)
                .unwrap_or_default()
                .into_bytes();
            let page = html::render(title, &views).into_bytes();
            let pb = match pb_thread {
                Ok(h) => joined(h),
                Err(_) => pprof::render_stored(&views),
            };
            (pb, collapsed, page)
        });
        let (json, txt) = match plain_thread {
            Ok(h) => joined(h),
            Err(_) => plain(),
        };
        vec![
            (".json", json),
            (".txt", txt),
            (".collapsed", collapsed),
            (".html", page),
            (".pb.gz", pb),
        ]
    })
}

/// A renderer's thread.
fn spawn<'scope, 'env, T: Send + 'scope>(
    s: &'scope std::thread::Scope<'scope, 'env>,
    f: impl FnOnce() -> T + Send + 'scope,
) -> std::io::Result<std::thread::ScopedJoinHandle<'scope, T>> {
    std::thread::Builder::new()
        .name("instr-render".into())
        .spawn_scoped(s, f)
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
