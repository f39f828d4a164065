//! Narrowing a profile before it is rendered: to some packages (`--package`), to some threads
//! (`--thread`), to the largest rows (`--top`). The result is again a [`Profile`], so every renderer
//! (text, JSON, flame graphs, pprof) shows the same subset without knowing about filters.
//!
//! - **Packages**: a name matches a package `P` when it is `P` or starts with `P` followed by `.`, `$`
//!   or `[` (so `com.example` matches `com.example.Foo` and `com.example.sub.Bar`, not
//!   `com.examples.Foo`; a class name works too and takes its nested classes and arrays along). Classes
//!   and methods match by their own class. A site or a call path matches when the allocated class or
//!   any frame does: "allocations made in my code" includes the JDK objects it allocates. In the
//!   thread profiler's section, monitor rows match by the monitor's class or any waiter frame, the
//!   per-class totals keep the classes left, and deadlocks match by a frame or a lock; the thread list
//!   is kept whole (threads belong to no package).
//! - **Threads**: only the call section is recorded per thread (`calls.threads`), so `--thread` replaces
//!   `methods` by the sum of the matching threads' methods and keeps only those threads. Allocations
//!   and call paths are summed over all threads in the report: they are left out, with a warning, rather
//!   than shown as if they were the thread's. In the thread profiler's section the thread list keeps
//!   the matching threads (by name, id or prefix), the monitor rows those threads waited in are kept
//!   whole (their times are every waiter's: they are not recorded per thread; a warning says so), and
//!   the deadlocks they are in.
//! - **Top N**: the N largest rows of each table: classes and sites by bytes, methods by calls (by
//!   exclusive CPU time when the profile has times), call paths by exclusive CPU time when any has
//!   some, else by calls; threads by CPU time, monitor rows by the time blocked or waited, monitor
//!   classes by both.

use std::cmp::Reverse;
use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::model::{Frame, MethodRow, Profile, ThreadCount, Threads};

#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Keep what matches any of these packages or classes (none: no package filter).
    pub packages: Vec<String>,
    /// Keep the calls of the threads matching any of these (none: all threads): a thread's name, its
    /// tid, or a name prefix ending in `*` (`worker-*`).
    pub threads: Vec<String>,
    /// Keep the N largest rows of each table.
    pub top: Option<usize>,
}

/// A filtered profile, and what the filter had to leave out that the user did not ask to.
#[derive(Debug, Clone)]
pub struct Filtered {
    pub profile: Profile,
    /// One line each, for stderr.
    pub warnings: Vec<String>,
}

/// Why a filter cannot be applied: one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterError(pub String);

impl std::fmt::Display for FilterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FilterError {}

impl Filter {
    pub fn is_empty(&self) -> bool {
        self.packages.is_empty() && self.threads.is_empty() && self.top.is_none()
    }

    /// Applies the package filter, then the thread filter, then `top`.
    pub fn apply(&self, profile: &Profile) -> Result<Filtered, FilterError> {
        let mut p = profile.clone();
        let mut warnings = Vec::new();
        if !self.packages.is_empty() {
            self.by_package(&mut p);
        }
        if !self.threads.is_empty() {
            self.by_thread(&mut p, &mut warnings)?;
        }
        if let Some(n) = self.top {
            top(&mut p, n);
        }
        if !self.is_empty() {
            refresh_totals(&mut p);
        }
        Ok(Filtered {
            profile: p,
            warnings,
        })
    }

    fn in_packages(&self, name: &str) -> bool {
        self.packages.iter().any(|p| in_package(name, p))
    }

    fn by_package(&self, p: &mut Profile) {
        p.classes.retain(|c| self.in_packages(&c.class));
        // Whether each frame of the table is in the packages: once per frame, not per stack.
        let frame_in: Vec<bool> = p
            .frames
            .iter()
            .map(|f| self.in_packages(&f.class))
            .collect();
        let any_in = |stack: &[u32]| stack.iter().any(|&f| frame_in[f as usize]);
        p.sites
            .retain(|s| self.in_packages(&s.class) || any_in(&s.stack));
        p.methods.retain(|m| self.in_packages(&m.class));
        if let Some(t) = &mut p.threads {
            self.threads_by_package(t);
        }
        if let Some(calls) = &mut p.calls {
            calls.paths.retain(|path| any_in(&path.frames));
            if let Some(Value::Array(threads)) = calls.rest.get_mut("threads") {
                for t in threads.iter_mut() {
                    if let Some(Value::Array(methods)) = t.get_mut("methods") {
                        methods.retain(|m| self.in_packages(str_field(m, "class")));
                    }
                }
            }
            if let Some(Value::Array(edges)) = calls.rest.get_mut("edges") {
                edges.retain(|e| {
                    self.in_packages(str_field(&e["callee"], "class"))
                        || self.in_packages(str_field(&e["caller"], "class"))
                });
            }
        }
    }

    /// Monitor rows whose monitor class or any waiter frame is in the packages, the per-class totals
    /// of the classes left, and the deadlocks with a frame or a lock in them.
    fn threads_by_package(&self, t: &mut Threads) {
        let in_stack = |stack: &[Frame]| stack.iter().any(|f| self.in_packages(&f.class));
        let m = &mut t.monitors;
        m.contended
            .retain(|c| self.in_packages(&c.class) || in_stack(&c.stack));
        m.waits
            .retain(|w| self.in_packages(&w.class) || in_stack(&w.stack));
        let (contended, waits) = (&m.contended, &m.waits);
        m.classes.retain(|c| {
            self.in_packages(&c.class)
                || contended.iter().any(|r| r.class == c.class)
                || waits.iter().any(|r| r.class == c.class)
        });
        t.deadlocks.retain(|d| {
            d.threads.iter().any(|th| {
                in_stack(&th.stack)
                    || th.holds.iter().any(|l| self.in_packages(&l.class))
                    || th.waiting_for.iter().any(|l| self.in_packages(&l.class))
            })
        });
    }

    fn name_matches(&self, name: &str, id: Option<i64>) -> bool {
        self.threads
            .iter()
            .any(|want| match want.strip_suffix('*') {
                Some(prefix) => name.starts_with(prefix),
                None => name == want || id.is_some_and(|id| want.parse() == Ok(id)),
            })
    }

    /// The threads section narrowed to the chosen threads: their rows in the thread list, the monitor
    /// rows they waited in (a row's times are every waiter's together: they are not recorded per
    /// thread, so a row is kept whole), and the deadlocks they are in. False when no thread matches.
    fn threads_by_thread(&self, t: &mut Threads, warnings: &mut Vec<String>) -> bool {
        t.threads
            .retain(|th| self.name_matches(&th.name, Some(th.id)));
        let waited =
            |waiters: &[ThreadCount]| waiters.iter().any(|w| self.name_matches(&w.thread, None));
        let m = &mut t.monitors;
        m.contended.retain(|c| waited(&c.waiters));
        m.waits.retain(|w| waited(&w.waiters));
        if m.contended.len() + m.waits.len() > 0 {
            warnings.push(
                "--thread: monitor times are per class and stack over all threads; the rows the threads waited in are kept whole"
                    .into(),
            );
        }
        let (contended, waits) = (&m.contended, &m.waits);
        m.classes.retain(|c| {
            contended.iter().any(|r| r.class == c.class) || waits.iter().any(|r| r.class == c.class)
        });
        t.deadlocks.retain(|d| {
            d.threads
                .iter()
                .any(|th| self.name_matches(&th.name, Some(th.id)))
        });
        !t.threads.is_empty()
            || !t.monitors.contended.is_empty()
            || !t.monitors.waits.is_empty()
            || !t.deadlocks.is_empty()
    }

    fn thread_matches(&self, t: &Value) -> bool {
        let name = str_field(t, "name");
        let tid = t.get("tid").and_then(Value::as_i64);
        self.threads
            .iter()
            .any(|want| match want.strip_suffix('*') {
                Some(prefix) => name.starts_with(prefix),
                None => name == want || tid.is_some_and(|tid| want.parse() == Ok(tid)),
            })
    }

    fn by_thread(&self, p: &mut Profile, warnings: &mut Vec<String>) -> Result<(), FilterError> {
        let wanted: Vec<String> = self.threads.iter().map(|t| format!("'{t}'")).collect();
        // The thread profiler's section: every thread the run had, by name and id.
        let mut in_section = false;
        let known_in_section: Vec<String> = p
            .threads
            .iter()
            .flat_map(|t| &t.threads)
            .map(|t| t.name.clone())
            .collect();
        if let Some(t) = &mut p.threads {
            in_section = self.threads_by_thread(t, warnings);
        }
        let threads = match p.calls.as_mut().and_then(|c| c.rest.get_mut("threads")) {
            Some(Value::Array(threads)) => threads,
            _ if p.threads.is_some() => {
                if !in_section {
                    return Err(FilterError(format!(
                        "--thread: no thread matches {} (threads: {})",
                        wanted.join(" or "),
                        few(&known_in_section)
                    )));
                }
                // Allocations and calls are not per thread: the same as with call data below.
                self.leave_out_summed(p, warnings);
                return Ok(());
            }
            _ => {
                return Err(FilterError(
                    "--thread: the profile has no per-thread data (only calls=counts and calls=times record calls per thread, and the thread profiler threads and monitors)"
                        .into(),
                ))
            }
        };
        let known: Vec<String> = threads
            .iter()
            .map(|t| str_field(t, "name").to_string())
            .collect();
        threads.retain(|t| self.thread_matches(t));
        if threads.is_empty() && !in_section {
            return Err(FilterError(format!(
                "--thread: no thread matches {} (threads: {})",
                wanted.join(" or "),
                few(&known)
            )));
        }
        p.methods = sum_thread_methods(threads);
        self.leave_out_summed(p, warnings);
        Ok(())
    }

    /// What is summed over all threads cannot be narrowed to some: allocations, call paths and edges
    /// are left out, each with a warning, rather than shown as if they were the threads'.
    fn leave_out_summed(&self, p: &mut Profile, warnings: &mut Vec<String>) {
        if !p.classes.is_empty() || !p.sites.is_empty() {
            warnings.push(
                "--thread: allocations are not recorded per thread; the classes and sites are left out"
                    .into(),
            );
            p.classes.clear();
            p.sites.clear();
        }
        if let Some(calls) = &mut p.calls {
            if !calls.paths.is_empty() {
                warnings
                    .push("--thread: call paths are summed over threads; they are left out".into());
                calls.paths.clear();
            }
            // Edges are summed over threads too: keeping them would contradict the methods.
            calls.rest.remove("edges");
        }
    }
}

/// Thread names to suggest: distinct, and few, so that an error stays one readable line when a server
/// ran thousands of threads.
fn few(names: &[String]) -> String {
    let mut known: Vec<&str> = Vec::new();
    for n in names {
        if !known.contains(&n.as_str()) {
            known.push(n);
        }
    }
    match known.len() {
        n if n > 10 => format!("{}, and {} more", known[..10].join(", "), n - 10),
        _ => known.join(", "),
    }
}

/// `name` is `package`, or inside it (see the module's doc).
pub fn in_package(name: &str, package: &str) -> bool {
    let package = package.trim_end_matches(".*").trim_end_matches('.');
    match name.strip_prefix(package) {
        Some("") => true,
        Some(rest) => rest.starts_with(['.', '$', '[']),
        None => false,
    }
}

fn str_field<'v>(v: &'v Value, key: &str) -> &'v str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// The rows of `methods` for the chosen threads: each method's counts and times summed over them. A
/// thread's rows name their calls `calls` (the report's `methods` say `enters`, the same number).
fn sum_thread_methods(threads: &[Value]) -> Vec<MethodRow> {
    let mut rows: BTreeMap<(String, String, String), MethodRow> = BTreeMap::new();
    for t in threads {
        let Some(Value::Array(methods)) = t.get("methods") else {
            continue;
        };
        for m in methods {
            let key = (
                str_field(m, "class").to_string(),
                str_field(m, "method").to_string(),
                str_field(m, "descriptor").to_string(),
            );
            let row = rows.entry(key.clone()).or_insert_with(|| MethodRow {
                id: m.get("id").and_then(Value::as_u64).map(|id| id as u32),
                class: key.0,
                method: key.1,
                descriptor: key.2,
                ..MethodRow::default()
            });
            let Value::Object(fields) = m else { continue };
            for (k, v) in fields {
                match (k.as_str(), v.as_u64()) {
                    ("id" | "class" | "method" | "descriptor", _) => {}
                    ("calls", Some(n)) => {
                        row.enters += n;
                        add(&mut row.rest, "calls", n);
                    }
                    ("unwinds", Some(n)) => row.unwinds += n,
                    (_, Some(n)) => add(&mut row.rest, k, n),
                    // `timed: false` and the like: the same in every thread.
                    (_, None) => {
                        row.rest.insert(k.clone(), v.clone());
                    }
                }
            }
        }
    }
    rows.into_values().collect()
}

fn add(map: &mut Map<String, Value>, key: &str, n: u64) {
    let old = map.get(key).and_then(Value::as_u64).unwrap_or(0);
    map.insert(key.to_string(), Value::from(old + n));
}

fn method_weight(m: &MethodRow) -> (u64, u64) {
    let cpu = m
        .rest
        .get("self_cpu_ns")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    (cpu, m.enters)
}

fn top(p: &mut Profile, n: usize) {
    if let Some(t) = &mut p.threads {
        t.threads.sort_by_key(|r| Reverse(r.cpu_ns.unwrap_or(0)));
        t.threads.truncate(n);
        let m = &mut t.monitors;
        m.contended.sort_by_key(|r| Reverse(r.blocked_ns));
        m.contended.truncate(n);
        m.waits.sort_by_key(|r| Reverse(r.waited_ns));
        m.waits.truncate(n);
        m.classes
            .sort_by_key(|r| Reverse(r.blocked_ns.saturating_add(r.waited_ns)));
        m.classes.truncate(n);
    }
    // Stable sorts: rows of equal weight keep the report's order.
    p.classes.sort_by_key(|r| Reverse(r.bytes));
    p.classes.truncate(n);
    p.sites.sort_by_key(|r| Reverse(r.bytes));
    p.sites.truncate(n);
    p.methods.sort_by_key(|m| Reverse(method_weight(m)));
    p.methods.truncate(n);
    if let Some(calls) = &mut p.calls {
        if calls.paths.iter().any(|c| c.self_cpu_ns > 0) {
            calls.paths.sort_by_key(|r| Reverse(r.self_cpu_ns));
        } else {
            calls.paths.sort_by_key(|r| Reverse(r.calls));
        }
        calls.paths.truncate(n);
    }
}

/// `totals` says what the classes add up to: after a filter, what the remaining ones do.
fn refresh_totals(p: &mut Profile) {
    if let Some(t) = &mut p.threads {
        let m = &mut t.monitors;
        m.total_blocked_ns = m.contended.iter().map(|c| c.blocked_ns).sum();
        m.total_waited_ns = m.waits.iter().map(|w| w.waited_ns).sum();
    }
    if let Some(Value::Object(totals)) = p.rest.get_mut("totals") {
        let instances: u64 = p.classes.iter().map(|c| c.instances).sum();
        let bytes: u64 = p.classes.iter().map(|c| c.bytes).sum();
        totals.insert("instances".into(), instances.into());
        totals.insert("bytes".into(), bytes.into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packages_match_at_name_boundaries() {
        assert!(in_package("com.example.Foo", "com.example"));
        assert!(in_package("com.example.sub.Bar", "com.example.*"));
        assert!(in_package("com.example.Foo$Inner", "com.example.Foo"));
        assert!(in_package("com.example.Foo[]", "com.example.Foo"));
        assert!(in_package("com.example", "com.example."));
        assert!(!in_package("com.examples.Foo", "com.example"));
        assert!(!in_package("com.example.FooBar", "com.example.Foo"));
    }

    #[test]
    fn call_path_frames_name_their_class() {
        use crate::model::Frame;
        assert_eq!(Frame::from_name("shop.Cart.total").class, "shop.Cart");
        assert_eq!(Frame::from_name("main").class, "");
        assert_eq!(Frame::from_name("main").name(), "main");
    }
}
