//! The order of the report's rows: its sites sorted, and its frame table numbered most used first, so
//! that the report is the same whatever order the stacks were counted in.
//!
//! At 100,000 sites this is a fifth of the exit, bound by memory reads: each site's class and frames
//! are behind pointers of their own, and following them was half of it. So the names are compared once,
//! to rank each distinct class and frame; each half of the sites has its keys built and sorted on a
//! thread of its own (the other core is idle while the report collects), and the halves are merged;
//! the sort compares integers and moves indexes. (Comparing the strings while moving the sites was 100
//! ms at 100,000 sites of a few sizes, where most comparisons reach the frames.)

use std::cmp::{Ordering, Reverse};
use std::collections::HashMap;
use std::sync::Mutex;

use instr_profile::fast_hash::Fx;
use instr_profile::model::{Frame, FrameTable};

use crate::report::Site;
use crate::state::lock;

/// Sorts the sites into the reports' order: the most live bytes, bytes, count first, then by class
/// name, by their frames (class, method, descriptor, file, line, outermost last) and by site id.
pub fn sort_sites(sites: &mut [Site], table: &[Frame]) {
    let frame_rank = ranks(table.iter());
    let packed = table.len() < PACKED_RANK_LIMIT;
    let half = match sites.len() >= PARALLEL_FROM {
        true => sites.len().div_ceil(2),
        false => sites.len().max(1),
    };
    let chunks: Vec<&[Site]> = sites.chunks(half).collect();
    let parts: Vec<Mutex<Part>> = on_two_threads(chunks.len(), |n| {
        Mutex::new(Part::new(chunks[n], n * half, &frame_rank, packed))
    });
    // The classes ranked by name over all the parts.
    let mut names: Vec<&str> = parts.iter().flat_map(|p| lock(p).classes.clone()).collect();
    names.sort_unstable();
    names.dedup();
    on_two_threads(parts.len(), |n| lock(&parts[n]).sort(&names));
    let parts: Vec<Part> = parts
        .into_iter()
        .map(|p| p.into_inner().unwrap_or_else(|e| e.into_inner()))
        .collect();
    let order = merged(&parts);
    drop(parts);
    permute(sites, order);
}

/// Builds and sorts in two parts from this many sites: below it a thread costs more than it saves.
const PARALLEL_FROM: usize = 20_000;

/// `[f(0), f(1), ..., f(n - 1)]`, with `f(0)` run on a scoped thread of its own while this thread runs
/// the rest (a thread that cannot be made leaves them all to this one). The parts are behind mutexes
/// because `f` is shared by both threads, and each call takes its own part by index.
fn on_two_threads<R: Send>(n: usize, f: impl Fn(usize) -> R + Sync) -> Vec<R> {
    if n < 2 {
        return (0..n).map(f).collect();
    }
    std::thread::scope(|s| {
        let helper = std::thread::Builder::new()
            .name("instr-sort".into())
            .spawn_scoped(s, || f(0));
        let rest: Vec<R> = (1..n).map(&f).collect();
        let first = match helper {
            Ok(h) => match h.join() {
                Ok(r) => r,
                Err(e) => std::panic::resume_unwind(e),
            },
            Err(_) => f(0),
        };
        std::iter::once(first).chain(rest).collect()
    })
}

/// Some consecutive sites as the sort sees them.
struct Part<'a> {
    keys: Vec<SortKey>,
    /// The sites' frames as ranks, end to end (`SortKey::frames` are ranges of it).
    ranked: Vec<u32>,
    /// The sites' classes, numbered in the order they are first met (`SiteOrder::class` until `sort`).
    classes: Vec<&'a str>,
}

impl<'a> Part<'a> {
    /// The keys of `sites`, the first of which is the `first`th site of all.
    fn new(sites: &'a [Site], first: usize, frame_rank: &[u32], packed: bool) -> Part<'a> {
        let mut numbers: HashMap<&str, u32, Fx> = HashMap::default();
        let mut classes = Vec::new();
        let mut ranked: Vec<u32> = Vec::with_capacity(sites.iter().map(|s| s.frames.len()).sum());
        let keys = sites
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let class = *numbers.entry(s.class.as_str()).or_insert_with(|| {
                    classes.push(s.class.as_str());
                    classes.len() as u32 - 1
                });
                let start = ranked.len();
                ranked.extend(s.frames.iter().map(|&f| frame_rank[f as usize]));
                // The first eight frames packed into one integer, so that most comparisons read the
                // two elements alone (following an index into `ranked` per comparison was most of the
                // sort, and with four frames packed, sites of one size whose stacks share their first
                // four frames, as deep recursive programs make, still reached it in a third of them).
                let head = match packed {
                    true => ranked[start..]
                        .iter()
                        .take(PACKED_FRAMES)
                        .enumerate()
                        .fold(0u128, |h, (k, &r)| h | u128::from(r + 1) << (112 - 16 * k)),
                    false => 0,
                };
                SortKey {
                    order: SiteOrder {
                        live_bytes: Reverse(s.live.map_or(0, |l| l.1)),
                        bytes: Reverse(s.bytes),
                        count: Reverse(s.count),
                        class,
                    },
                    head,
                    frames: start..ranked.len(),
                    site_id: s.site_id.unwrap_or(0),
                    index: (first + i) as u32,
                }
            })
            .collect();
        Part {
            keys,
            ranked,
            classes,
        }
    }

    /// Numbers the keys' classes by their rank in `names` (every class of every part, sorted), then
    /// sorts the keys.
    fn sort(&mut self, names: &[&str]) {
        let rank: Vec<u32> = self
            .classes
            .iter()
            .map(|c| names.binary_search(c).unwrap_or(0) as u32)
            .collect();
        for k in &mut self.keys {
            k.order.class = rank[k.order.class as usize];
        }
        let ranked = &self.ranked;
        self.keys
            .sort_unstable_by(|x, y| x.cmp_in(ranked, y, ranked));
    }
}

/// The sites' indexes in order, from the sorted parts (one or two).
fn merged(parts: &[Part]) -> Vec<u32> {
    let index = |k: &SortKey| k.index;
    let [first, second] = match parts {
        [one] => return one.keys.iter().map(index).collect(),
        [first, second] => [first, second],
        // Not made today (one part, or two halves); sorted whole rather than merged.
        _ => {
            let mut all: Vec<(&SortKey, &[u32])> = parts
                .iter()
                .flat_map(|p| p.keys.iter().map(|k| (k, &p.ranked[..])))
                .collect();
            all.sort_by(|x, y| x.0.cmp_in(x.1, y.0, y.1));
            return all.iter().map(|(k, _)| k.index).collect();
        }
    };
    let mut order = Vec::with_capacity(first.keys.len() + second.keys.len());
    let (a, b) = (&first.keys, &second.keys);
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        // Ties go to the first part, as a stable merge would.
        if b[j].cmp_in(&second.ranked, &a[i], &first.ranked).is_lt() {
            order.push(b[j].index);
            j += 1;
        } else {
            order.push(a[i].index);
            i += 1;
        }
    }
    order.extend(a[i..].iter().map(index));
    order.extend(b[j..].iter().map(index));
    order
}

/// The frame table with the frames the sites use most first (ties in the order the sorted sites first
/// use them), and the sites' stacks renumbered to match. The table was in the order the stack table was
/// read, which its layout decides: now the JSON is the same whatever order the stacks were counted in,
/// and the numbers written most often are the shortest. Frames no site uses come last, in their order.
pub fn renumber_frames(sites: &mut [Site], table: FrameTable) -> FrameTable {
    let mut frames = table.frames;
    // Per old frame: its uses, and its first use as a position among all the sites' frames.
    let mut uses = vec![(0u64, usize::MAX); frames.len()];
    let all = sites.iter().flat_map(|s| s.frames.iter());
    for (position, &f) in all.enumerate() {
        let u = &mut uses[f as usize];
        u.0 += 1;
        u.1 = u.1.min(position);
    }
    let mut order: Vec<usize> = (0..frames.len()).collect();
    order.sort_by_key(|&old| (Reverse(uses[old].0), uses[old].1, old));
    let mut new_id = vec![0u32; frames.len()];
    for (new, &old) in order.iter().enumerate() {
        new_id[old] = new as u32;
    }
    for f in sites.iter_mut().flat_map(|s| s.frames.iter_mut()) {
        *f = new_id[*f as usize];
    }
    FrameTable::from_frames(
        order
            .into_iter()
            .map(|old| std::mem::take(&mut frames[old]))
            .collect(),
    )
}

/// Puts `items[order[p]]` at `p` for every `p`, in place: moving the sites into a second vector
/// touched 20 MB of fresh pages at 100,000 sites, and their page faults cost more than the moves.
fn permute<T>(items: &mut [T], mut order: Vec<u32>) {
    const DONE: u32 = u32::MAX;
    for start in 0..order.len() {
        // Each cycle of the permutation once: the item first at `start` is carried along it by the
        // swaps, and lands where the cycle closes.
        let mut p = start;
        while order[p] != DONE {
            let from = order[p] as usize;
            order[p] = DONE;
            if from == start {
                break;
            }
            items.swap(p, from);
            p = from;
        }
    }
}

/// Frame ranks below this fit 16 bits once one is added (0: no frame), eight to a `u128`.
const PACKED_RANK_LIMIT: usize = u16::MAX as usize;
const PACKED_FRAMES: usize = 8;

/// A site as the sort sees it.
#[derive(Clone)]
struct SortKey {
    order: SiteOrder,
    /// The ranks (plus one) of the first eight frames, the first in the high bits: compared as one
    /// number, they order as the frames do. 0 when the frame table is too large to pack.
    head: u128,
    /// Where the site's frame ranks are in its part's `ranked`.
    frames: std::ops::Range<usize>,
    site_id: u32,
    /// The site's place before the sort.
    index: u32,
}

impl SortKey {
    /// The order of two keys whose frames are in `ranked` and `other_ranked`.
    fn cmp_in(&self, ranked: &[u32], other: &SortKey, other_ranked: &[u32]) -> Ordering {
        (&self.order, self.head)
            .cmp(&(&other.order, other.head))
            .then_with(|| ranked[self.frames.clone()].cmp(&other_ranked[other.frames.clone()]))
            .then(self.site_id.cmp(&other.site_id))
    }
}

/// The first keys of the sites' order, before their frames.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
struct SiteOrder {
    live_bytes: Reverse<u64>,
    bytes: Reverse<u64>,
    count: Reverse<u64>,
    /// The class name's rank among the sites' classes.
    class: u32,
}

/// Each item's rank in the sorted order of `items`, equal items sharing one.
fn ranks<T: Ord>(items: impl Iterator<Item = T>) -> Vec<u32> {
    let items: Vec<T> = items.collect();
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by(|&x, &y| items[x].cmp(&items[y]));
    let mut rank = vec![0; items.len()];
    let mut r = 0;
    for (k, &i) in order.iter().enumerate() {
        if k > 0 && items[order[k - 1]] != items[i] {
            r += 1;
        }
        rank[i] = r;
    }
    rank
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(frames: &[u32]) -> Site {
        Site {
            class: "C".into(),
            count: 1,
            bytes: 1,
            frames: frames.to_vec(),
            site_id: None,
            live: None,
            estimated: false,
            before_profiling: false,
        }
    }

    #[test]
    fn frames_numbered_most_used_first() {
        let frame = |m: &str| Frame {
            class: "C".into(),
            method: m.into(),
            ..Frame::default()
        };
        let table = FrameTable::from_frames(["a", "b", "c", "unused", "d"].map(frame).to_vec());
        // a: 3 uses, c: 2, then d and b once each, d first used first.
        let mut sites = vec![site(&[2, 0]), site(&[0, 4, 2]), site(&[1, 0])];
        let table = renumber_frames(&mut sites, table);
        let names: Vec<&str> = table.frames.iter().map(|f| f.method.as_str()).collect();
        assert_eq!(names, ["a", "c", "d", "b", "unused"]);
        let stacks: Vec<&[u32]> = sites.iter().map(|s| &s.frames[..]).collect();
        assert_eq!(stacks, [&[1, 0][..], &[0, 2, 1], &[3, 0]]);
    }

    #[test]
    fn two_parts_sort_as_one_sort_of_the_names() {
        // Few distinct keys before the frames, so that the merge meets ties and the frames decide;
        // stacks longer than the packed head, so that some ties reach past it.
        let mut x = 12345u64;
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let frames: Vec<Frame> = (0..40)
            .map(|k| Frame {
                class: format!("C{}", k % 7),
                method: format!("m{}", (k * 13) % 11),
                descriptor: "()V".into(),
                file: None,
                line: Some(k % 3),
            })
            .collect();
        let mut sites: Vec<Site> = (0..PARALLEL_FROM * 2 + 7)
            .map(|_| {
                let depth = 1 + next(12) as usize;
                Site {
                    class: ["int[]", "java.lang.String", "byte[]"][next(3) as usize].into(),
                    count: 3,
                    bytes: next(4),
                    frames: (0..depth).map(|_| next(3) as u32 * 13 % 40).collect(),
                    site_id: Some(next(1000) as u32),
                    live: None,
                    estimated: false,
                    before_profiling: false,
                }
            })
            .collect();
        let key = |s: &Site| {
            let stack: Vec<&Frame> = s.frames.iter().map(|&f| &frames[f as usize]).collect();
            (Reverse(s.bytes), s.class.clone(), stack, s.site_id)
        };
        let mut expected: Vec<_> = sites.iter().map(key).collect();
        expected.sort();
        sort_sites(&mut sites, &frames);
        let got: Vec<_> = sites.iter().map(key).collect();
        assert!(
            got == expected,
            "the two parts' order is not the one sort's"
        );
    }

    #[test]
    fn permute_puts_each_item_where_the_order_says() {
        // Fixed points, a 2-cycle and a 3-cycle.
        let order = vec![0, 3, 4, 1, 5, 2];
        let mut items: Vec<char> = "abcdef".chars().collect();
        let expected: Vec<char> = order.iter().map(|&i| items[i as usize]).collect();
        permute(&mut items, order);
        assert_eq!(items, expected);
        let mut none: Vec<u8> = Vec::new();
        permute(&mut none, Vec::new());
        assert!(none.is_empty());
    }
}
