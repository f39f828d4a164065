//! Sampled allocation stacks (`stacks=SIZE`, at depth >= 2). Walking the stack of every allocation costs
//! microseconds each (bench/README.md: 12-14x on the workloads), so in this mode the probes count per
//! static site only, exactly as at depth 1, and the frames beyond the allocating one come from the JVM's
//! heap sampler: about one allocation per SIZE bytes is walked here, on the allocating thread, and kept
//! with its weight (the objects it stands for, live.rs). The report then splits each site's exact count
//! over the stacks sampled at that site, in proportion to their weights, so that per-site totals stay
//! exact and only the split between the stacks of one site is an estimate (marked in the reports).

use std::collections::HashMap;

use crate::jvmti::{FrameInfo, Jvmti};
use crate::live::sample_weight;
use instr_profile::model::Frame;

use crate::report::Site;
use crate::stacks::{Snapshot, Stacks};

/// At most this many frames are walked per sample (the rules cap the depth at 64).
const MAX_FRAMES: usize = 64;

pub struct SampledStacks {
    /// The heap sampler's mean interval, bytes.
    pub interval: u32,
    depth: usize,
    /// Per stack: samples (`count`) and the objects they stand for, in live.rs's weight units (`bytes`).
    stacks: Stacks,
}

impl SampledStacks {
    pub fn new(interval: u32, depth: u32) -> SampledStacks {
        SampledStacks {
            interval,
            depth: (depth as usize).clamp(1, MAX_FRAMES),
            stacks: Stacks::default(),
        }
    }

    /// A sampled allocation of `size` bytes, on the allocating thread: its top frame is the allocating
    /// instruction (the heap sampler reports from inside the allocation).
    pub fn sample(&self, jvmti: Jvmti, size: i64) {
        let mut buf = [FrameInfo {
            method: std::ptr::null_mut(),
            location: 0,
        }; MAX_FRAMES];
        let n = jvmti.stack_trace(0, &mut buf[..self.depth]);
        if n > 0 {
            let weight = sample_weight(size, self.interval).max(0) as u64;
            self.stacks.add(0, &buf[..n], weight);
        }
    }

    pub fn snapshot(&self) -> Snapshot {
        self.stacks.snapshot()
    }
}

/// Where a site or a sample allocates: class, method, descriptor and line of the allocating frame.
type Place = (String, String, String, Option<i64>);

fn place(f: &Frame) -> Place {
    (
        f.class.clone(),
        f.method.clone(),
        f.descriptor.clone(),
        f.line,
    )
}

/// Splits every site (one frame, exact counts) over the sampled stacks whose allocating frame is the
/// site's method and line, or, when none is, its method at any line. A site no sample reached stays
/// as it is, with its one frame. Counts and bytes are split by largest remainder, so a site's stacks
/// add up to its exact totals.
pub fn split(sites: Vec<Site>, samples: Vec<(Vec<u32>, u64)>, table: &[Frame]) -> Vec<Site> {
    let mut by_line: HashMap<Place, Vec<usize>> = HashMap::new();
    let mut by_method: HashMap<Place, Vec<usize>> = HashMap::new();
    for (i, (frames, _)) in samples.iter().enumerate() {
        let Some(&top) = frames.first() else { continue };
        let p = place(&table[top as usize]);
        by_method
            .entry((p.0.clone(), p.1.clone(), p.2.clone(), None))
            .or_default()
            .push(i);
        by_line.entry(p).or_default().push(i);
    }
    let mut out = Vec::with_capacity(sites.len());
    for site in sites {
        let Some(&top) = site.frames.first() else {
            out.push(site);
            continue;
        };
        let p = place(&table[top as usize]);
        let method = (p.0.clone(), p.1.clone(), p.2.clone(), None);
        let matched = by_line.get(&p).or_else(|| by_method.get(&method));
        let Some(matched) = matched.filter(|m| !m.is_empty()) else {
            out.push(site);
            continue;
        };
        let weights: Vec<u64> = matched.iter().map(|&i| samples[i].1).collect();
        let counts = apportion(site.count, &weights);
        let bytes = apportion(site.bytes, &weights);
        for ((&i, count), bytes) in matched.iter().zip(counts).zip(bytes) {
            if count == 0 && bytes == 0 {
                continue;
            }
            out.push(Site {
                class: site.class.clone(),
                count,
                bytes,
                frames: samples[i].0.clone(),
                site_id: site.site_id,
                live: site.live,
                estimated: true,
                before_profiling: false,
            });
        }
    }
    out
}

/// `total` split in proportion to `weights`, rounded so that the parts add up to `total` exactly
/// (largest remainder; ties to the earlier part).
pub fn apportion(total: u64, weights: &[u64]) -> Vec<u64> {
    let sum: u128 = weights.iter().map(|&w| w as u128).sum();
    if sum == 0 {
        let mut parts = vec![0; weights.len()];
        if let Some(first) = parts.first_mut() {
            *first = total;
        }
        return parts;
    }
    let exact: Vec<(u64, u128)> = weights
        .iter()
        .map(|&w| {
            let scaled = total as u128 * w as u128;
            ((scaled / sum) as u64, scaled % sum)
        })
        .collect();
    let mut parts: Vec<u64> = exact.iter().map(|e| e.0).collect();
    let left = total - parts.iter().sum::<u64>();
    let mut order: Vec<usize> = (0..parts.len()).collect();
    order.sort_by(|&a, &b| exact[b].1.cmp(&exact[a].1).then(a.cmp(&b)));
    for &i in order.iter().take(left as usize) {
        parts[i] += 1;
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apportioned_parts_add_up_exactly() {
        assert_eq!(apportion(10, &[3, 1]), vec![8, 2]);
        assert_eq!(apportion(7, &[1, 1, 1]), vec![3, 2, 2]);
        assert_eq!(apportion(5, &[0, 0]), vec![5, 0]);
        assert_eq!(apportion(0, &[4, 9]), vec![0, 0]);
        let parts = apportion(1_000_003, &[512, 1537, 77, 3]);
        assert_eq!(parts.iter().sum::<u64>(), 1_000_003);
    }

    #[test]
    fn a_site_is_split_over_the_stacks_sampled_at_its_line() {
        let mut table = instr_profile::model::FrameTable::default();
        let mut frame = |method: &str, line: i64| {
            table.intern(Frame {
                class: "a.B".into(),
                method: method.into(),
                descriptor: "()V".into(),
                file: None,
                line: Some(line),
            })
        };
        let (leaf10, leaf99) = (frame("leaf", 10), frame("leaf", 99));
        let site = |line, leaf| Site {
            class: "a.Item".into(),
            count: 400,
            bytes: 6400,
            frames: vec![leaf],
            site_id: Some(line as u32),
            live: None,
            estimated: false,
            before_profiling: false,
        };
        let samples = vec![
            (vec![frame("leaf", 10), frame("viaA", 3)], 300),
            (vec![frame("leaf", 10), frame("viaB", 4)], 100),
            (vec![frame("other", 1), frame("viaB", 4)], 100),
        ];
        let out = split(
            vec![site(10, leaf10), site(99, leaf99)],
            samples,
            &table.frames,
        );
        let rows: Vec<(u64, u64, &str, bool)> = out
            .iter()
            .map(|s| {
                (
                    s.count,
                    s.bytes,
                    table.frames[*s.frames.last().unwrap() as usize]
                        .method
                        .as_str(),
                    s.estimated,
                )
            })
            .collect();
        // Line 99 had no sample of its own: the method's samples at any line split it.
        assert_eq!(
            rows,
            vec![
                (300, 4800, "viaA", true),
                (100, 1600, "viaB", true),
                (300, 4800, "viaA", true),
                (100, 1600, "viaB", true),
            ]
        );
    }
}
