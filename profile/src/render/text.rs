//! The hprof-style text report (`PREFIX.txt`, docs/REPORTS.md) drawn from a [`Profile`]: the same
//! sections, columns and order as the agent's own (`agent/src/report.rs` `to_text` and
//! `agent/src/method_report.rs` `to_text`), so `instr report` of a `PREFIX.json` reads like the
//! `PREFIX.txt` written beside it, and stays readable after a filter.
//!
//! What the agent takes from its own state is read from the report's fields: live tracking from
//! `live_sampling` / `live_sample_bytes` (or live counts in the rows), stack sampling from
//! `stack_sample_bytes`, the call mode from `calls.mode`, leaves from `"timed": false`. The rows are
//! ordered as the agent orders them (stable sorts, so a report already in that order keeps its ties).

use std::cmp::Reverse;
use std::collections::HashMap;
use std::fmt::Write as _;

use serde_json::Value;

use super::collapsed::itoa_buffer;
use crate::model::{Frame, MethodRow, Profile, SiteRow};

fn u64_field(v: Option<&Value>, key: &str) -> u64 {
    v.and_then(|v| v.get(key))
        .and_then(Value::as_u64)
        .unwrap_or(0)
}

fn rest_u64(p: &Profile, key: &str) -> u64 {
    p.rest.get(key).and_then(Value::as_u64).unwrap_or(0)
}

fn method_u64(m: &MethodRow, key: &str) -> u64 {
    m.rest.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// `class.name(descriptor)`, as the agent's call tables name methods.
fn method_name(m: &MethodRow) -> String {
    if m.class.is_empty() && m.method.is_empty() {
        return format!("method#{}", m.id.unwrap_or(0));
    }
    format!("{}.{}{}", m.class, m.method, m.descriptor)
}

fn pct(v: u64, total: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        100.0 * v as f64 / total as f64
    }
}

/// hprof's default cutoff: sites below this share of the total are left out of the text (not of the
/// JSON profile, which keeps every site).
pub const DEFAULT_CUTOFF: f64 = 0.0001;

/// A cutoff as the agent's `cutoff=` and `instr report --cutoff` take it: a share of the total from 0
/// (list every site) up to, not including, 1. `Err` says what is expected, for the caller to name the
/// option and the value.
pub fn parse_cutoff(value: &str) -> Result<f64, String> {
    match value.trim().parse::<f64>() {
        Ok(c) if (0.0..1.0).contains(&c) => Ok(c),
        _ => Err(format!(
            "not a share of the total from 0 (every site) to below 1, such as {DEFAULT_CUTOFF}"
        )),
    }
}

/// Whether a site of `share` of `total` is listed under `cutoff`: hprof's test, a share at least the
/// cutoff; every site when the total is 0.
fn above_cutoff(share: u64, total: u64, cutoff: f64) -> bool {
    total == 0 || share as f64 >= cutoff * total as f64
}

/// The report; the sites below `cutoff` of the total (and the traces only they have) are counted in
/// its header rather than listed: 100,000 sites of 12 frames make a text of 74 MB otherwise.
pub fn render(p: &Profile, cutoff: f64) -> String {
    let mut s = String::new();
    heap(&mut s, p, cutoff);
    calls(&mut s, p);
    crate::samples::text(&mut s, p);
    s
}

fn heap(s: &mut String, p: &Profile, cutoff: f64) {
    let live_every = rest_u64(p, "live_sampling");
    // hprof's layout: with live tracking (per site) the shares are of live bytes, ordered by them.
    let live = live_every > 0 && p.depth > 0;
    let share = |site: &SiteRow| {
        if live {
            site.live_bytes.unwrap_or(0)
        } else {
            site.bytes
        }
    };
    let mut sites: Vec<&SiteRow> = p.sites.iter().collect();
    sites.sort_by_key(|s| Reverse(share(s)));
    let total: u64 = sites.iter().map(|s| share(s)).sum();
    // hprof's cutoff: the sites below it (the tail of the order) are counted in the header, not listed.
    let listed = sites
        .iter()
        .take_while(|site| above_cutoff(share(site), total, cutoff))
        .count();
    let left_out = &sites[listed..];
    let ordered = if live {
        "live bytes"
    } else {
        "allocated bytes"
    };
    let sites = &sites[..listed];
    let _ = writeln!(
        s,
        "instr heap report, pid {}, allocation-site depth {}",
        p.pid, p.depth
    );
    if !left_out.is_empty() {
        let left_share: u64 = left_out.iter().map(|s| share(s)).sum();
        let _ = writeln!(
            s,
            "(cutoff {cutoff}: {} of {} sites are below {cutoff} of the total each, {left_share} {ordered} together, and are not listed, nor the traces only they have; the JSON profile has every site)",
            left_out.len(),
            listed + left_out.len(),
        );
    }
    let _ = writeln!(s, "\nCLASSES BEGIN (exact; ordered by allocated bytes)");
    let live_bytes = rest_u64(p, "live_sample_bytes");
    let mut classes: Vec<_> = p.classes.iter().collect();
    classes.sort_by_key(|r| Reverse(r.bytes));
    let live_on =
        live_every > 0 || live_bytes > 0 || p.classes.iter().any(|c| c.live_instances.is_some());
    if live_on {
        let how = match (live_every, live_bytes) {
            (1, _) => "exact".to_string(),
            (n, _) if n > 1 => format!("sampled 1 in {n}, scaled"),
            (_, b) if b > 0 => format!("heap-sampled every {b} bytes on average, weighted"),
            // Live counts without the fields that say how: a report from another writer.
            _ => "as reported".to_string(),
        };
        let _ = writeln!(
            s,
            " rank        bytes    instances   live bytes    live objs  class  (live at exit: {how})"
        );
        for (i, c) in classes.iter().enumerate() {
            let _ = writeln!(
                s,
                "{:5} {:12} {:12} {:12} {:12}  {}",
                i + 1,
                c.bytes,
                c.instances,
                c.live_bytes.unwrap_or(0),
                c.live_instances.unwrap_or(0),
                c.class
            );
        }
    } else {
        let _ = writeln!(s, " rank        bytes    instances  class");
        for (i, c) in classes.iter().enumerate() {
            let _ = writeln!(
                s,
                "{:5} {:12} {:12}  {}",
                i + 1,
                c.bytes,
                c.instances,
                c.class
            );
        }
    }
    let _ = writeln!(s, "CLASSES END");

    // Each distinct stack is one trace, numbered as first listed: sites of one stack share it.
    let mut trace_of: HashMap<&[u32], u64> = HashMap::with_capacity(sites.len());
    let traces: Vec<u64> = sites
        .iter()
        .map(|site| {
            let next = 300_001 + trace_of.len() as u64;
            *trace_of.entry(&site.stack).or_insert(next)
        })
        .collect();
    let _ = writeln!(s, "\nSITES BEGIN (ordered by {ordered})");
    let sampled = rest_u64(p, "stack_sample_bytes");
    if sampled > 0 {
        let _ = writeln!(
            s,
            "(stacks sampled every {sampled} bytes on average: each site's count is exact, its split over stacks an estimate)"
        );
    }
    if live {
        let _ = writeln!(
            s,
            "          percent          live          alloc'ed  stack class"
        );
        let _ = writeln!(
            s,
            " rank   self  accum     bytes objs     bytes  objs  trace name"
        );
    } else {
        let _ = writeln!(s, "          percent         alloc'ed  stack class");
        let _ = writeln!(s, " rank   self  accum     bytes  objs  trace name");
    }
    let mut accum = 0u64;
    for (i, (site, trace)) in sites.iter().zip(&traces).enumerate() {
        accum += share(site);
        let _ = write!(
            s,
            "{:5} {:5.2}% {:5.2}% ",
            i + 1,
            pct(share(site), total),
            pct(accum, total)
        );
        if live {
            let _ = write!(
                s,
                "{:9} {:4} ",
                site.live_bytes.unwrap_or(0),
                site.live_instances.unwrap_or(0)
            );
        }
        let _ = writeln!(
            s,
            "{:9} {:5} {:6} {}",
            site.bytes, site.count, trace, site.class
        );
    }
    let _ = writeln!(s, "SITES END");
    // Each frame's line once, however many traces show it.
    let lines: Vec<String> = p.frames.iter().map(trace_line).collect();
    let mut digits = itoa_buffer();
    let mut next = 300_001;
    for (site, &trace) in sites.iter().zip(&traces) {
        // A trace is written where it is first listed: a later site of the same stack shares it.
        if trace != next {
            continue;
        }
        next += 1;
        s.push_str("TRACE ");
        s.push_str(digits.format(trace));
        s.push_str(":\n");
        for &f in &site.stack {
            s.push_str(&lines[f as usize]);
        }
    }
    if let Some(gc) = p.rest.get("gc") {
        let _ = writeln!(
            s,
            "\nGC: {} collections, total pause {:.3} ms, max pause {:.3} ms",
            u64_field(Some(gc), "collections"),
            u64_field(Some(gc), "total_pause_ns") as f64 / 1e6,
            u64_field(Some(gc), "max_pause_ns") as f64 / 1e6
        );
    }
    let dropped = rest_u64(p, "dropped");
    if dropped > 0 {
        let _ = writeln!(
            s,
            "WARNING: {dropped} probe events did not fit the tables and are not counted"
        );
    }
}

/// The call section: `CALLS` in counts mode; `CPU TIME (ms)`, `LEAF CALLS` and `THREADS` in times mode.
fn calls(s: &mut String, p: &Profile) {
    let Some(calls) = &p.calls else { return };
    let times = match calls.mode.as_str() {
        "counts" => false,
        "times" => true,
        _ => return,
    };
    let counts_table = |s: &mut String, section: &str, note: &str, leaves_only: bool| {
        let mut rows: Vec<&MethodRow> = p
            .methods
            .iter()
            .filter(|m| !leaves_only || m.rest.get("timed") == Some(&Value::Bool(false)))
            // Rows the sampler added for methods it saw but no probe counted (samples.rs).
            .filter(|m| m.rest.get("probed") != Some(&Value::Bool(false)))
            .collect();
        if rows.is_empty() {
            return;
        }
        rows.sort_by(|x, y| y.enters.cmp(&x.enters).then(x.id.cmp(&y.id)));
        let _ = writeln!(s, "\n{section} BEGIN ({note})");
        let _ = writeln!(s, " rank        count      unwinds  method");
        for (i, m) in rows.iter().enumerate() {
            let _ = writeln!(
                s,
                "{:5} {:12} {:12}  {}",
                i + 1,
                m.enters,
                m.unwinds,
                method_name(m)
            );
        }
        let _ = writeln!(s, "{section} END");
    };
    if !times {
        counts_table(s, "CALLS", "exact; ordered by calls", false);
        return;
    }
    let mut rows: Vec<&MethodRow> = p
        .methods
        .iter()
        .filter(|m| m.rest.get("timed") != Some(&Value::Bool(false)))
        .collect();
    rows.sort_by(|x, y| {
        method_u64(y, "self_cpu_ns")
            .cmp(&method_u64(x, "self_cpu_ns"))
            .then(method_u64(y, "calls").cmp(&method_u64(x, "calls")))
            .then(x.id.cmp(&y.id))
    });
    let total: u64 = rows.iter().map(|m| method_u64(m, "self_cpu_ns")).sum();
    let _ = writeln!(
        s,
        "\nCPU TIME (ms) BEGIN (total = {:.3}; thread CPU time, exclusive; exact counts)",
        total as f64 / 1e6
    );
    let _ = writeln!(
        s,
        " rank   self  accum        count    self ms   total ms  wall self ms wall total ms  method"
    );
    let mut accum = 0u64;
    for (i, m) in rows.iter().enumerate() {
        let self_cpu = method_u64(m, "self_cpu_ns");
        accum += self_cpu;
        let _ = writeln!(
            s,
            "{:5} {:5.2}% {:5.2}% {:12} {:10.3} {:10.3} {:12.3} {:13.3}  {}",
            i + 1,
            pct(self_cpu, total),
            pct(accum, total),
            method_u64(m, "calls"),
            self_cpu as f64 / 1e6,
            method_u64(m, "total_cpu_ns") as f64 / 1e6,
            method_u64(m, "self_wall_ns") as f64 / 1e6,
            method_u64(m, "total_wall_ns") as f64 / 1e6,
            method_name(m)
        );
    }
    let _ = writeln!(s, "CPU TIME (ms) END");
    counts_table(
        s,
        "LEAF CALLS",
        "exact counts; leaf methods are not timed: their time is their callers' self time; leaves=timed times them",
        true,
    );
    let _ = writeln!(s, "\nTHREADS (calls=times)");
    if let Some(Value::Array(threads)) = calls.rest.get("threads") {
        for t in threads {
            let _ = writeln!(
                s,
                "  {} (tid {}): cpu {:.3} ms (of which {:.3} ms estimated after the last reading), {} frames repaired, {} unmatched exits",
                t.get("name").and_then(Value::as_str).unwrap_or("?"),
                t.get("tid").and_then(Value::as_i64).unwrap_or(0),
                u64_field(Some(t), "cpu_ns") as f64 / 1e6,
                u64_field(Some(t), "cpu_tail_estimated_ns") as f64 / 1e6,
                u64_field(Some(t), "repaired_frames"),
                u64_field(Some(t), "unmatched_exits")
            );
        }
    }
}

/// A frame as a TRACE shows it: `\tclass.method(File.java:12)` and its newline.
fn trace_line(f: &Frame) -> String {
    format!("\t{}\n", super::threads_text::trace_frame(f))
}
