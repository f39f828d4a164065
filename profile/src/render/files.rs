//! The report files the agent writes for one profile (`PREFIX.json`, `.txt`, `.collapsed`, `.html`,
//! `.pb.gz`), rendered together: what the agent's exit costs is this function, and the bench times it.
//!
//! The renderers are independent pure functions, so they run on scoped threads: the JSON and the text,
//! which need no flame views, on one while the views are drawn; then pprof on another while the
//! collapsed stacks and the HTML page are rendered. The bytes are the same as rendering one after
//! another. Each file is handed over as soon as it is rendered, so that the agent writes it meanwhile.

use crate::flame::{self, FlameView};
use crate::render::{collapsed, html, pprof, text};
use crate::Profile;

/// Each file's suffix (after the prefix) and bytes, in this order: `.json`, `.txt` (the sites below
/// `cutoff` of the total counted, not listed: `text::render`), `.collapsed` (the allocated bytes, root
/// first), `.html`, `.pb.gz`.
pub fn agent_files(profile: &Profile, title: &str, cutoff: f64) -> Vec<(&'static str, Vec<u8>)> {
    const ORDER: [&str; 5] = [".json", ".txt", ".collapsed", ".html", ".pb.gz"];
    let files = std::sync::Mutex::new(Vec::with_capacity(ORDER.len()));
    agent_files_each(profile, title, cutoff, &|suffix, bytes| {
        if let Ok(mut files) = files.lock() {
            files.push((suffix, bytes));
        }
    });
    let mut files = files.into_inner().unwrap_or_default();
    files.sort_by_key(|(suffix, _)| ORDER.iter().position(|s| s == suffix));
    files
}

/// The files of `agent_files`, each handed to `done` (suffix, bytes) by the thread that rendered it as
/// soon as it is rendered, so that the agent writes it while the others are still being rendered.
pub fn agent_files_each(
    profile: &Profile,
    title: &str,
    cutoff: f64,
    done: &(dyn Fn(&'static str, Vec<u8>) + Sync),
) {
    std::thread::scope(|s| {
        // The JSON and the text, which need no flame views, on a thread of their own from the start;
        // pprof on another once the views are drawn, while this one draws the page and the collapsed
        // stacks: at 100,000 stacks pprof takes about as long as those two, the JSON less than the
        // views, so two cores are busy to the end.
        let plain = || {
            done(".json", profile.to_json_bytes());
            done(".txt", text::render(profile, cutoff).into_bytes());
        };
        // A thread that cannot be made (a process at its thread limit) leaves the work to this one.
        let plain_thread = spawn(s, plain);
        let views = flame::views(profile);
        std::thread::scope(|drawn| {
            let pprof = || done(".pb.gz", pprof::render_stored(&views));
            let pb_thread = spawn(drawn, pprof);
            let collapsed = bytes_view(&views)
                .map(collapsed::render)
                .unwrap_or_default();
            done(".collapsed", collapsed.into_bytes());
            done(".html", html::render(title, &views).into_bytes());
            match pb_thread {
                Ok(h) => joined(h),
                Err(_) => pprof(),
            }
        });
        match plain_thread {
            Ok(h) => joined(h),
            Err(_) => plain(),
        }
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
