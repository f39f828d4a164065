//! Allocation stacks: counts and bytes per (site, frames), sharded so that threads allocating at once
//! rarely meet on a lock. A stack seen before costs a hash and a compare; only a new one allocates.
//!
//! Each shard is laid out flat: every stack's frames end to end in one vector, its entries in another,
//! and a map from hash to entry. Reading the table at exit is then two sequential walks per shard: with
//! a vector of frames per stack behind a vector per bucket, it was two cache misses per stack, which a
//! loop doing any work between them waits for one after the other (40 of the 50 ms of reading 100,000
//! stacks).

use std::collections::HashMap;
use std::sync::Mutex;

use crate::jvmti::FrameInfo;
use crate::state::lock;

/// One frame: a jmethodID (as an integer) and a bytecode index.
pub type Frame = (usize, i64);

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    pub count: u64,
    /// Summed per allocation for arrays; objects are sized in the report (count x instance size).
    pub bytes: u64,
}

const SHARDS: usize = 64;

/// No next entry.
const END: u32 = u32::MAX;

/// One stack of a shard.
struct Entry {
    /// The rewriter's allocation-site id: the allocating instruction, hence also what it allocates.
    site: i32,
    /// Its frames: `frames[start..start + len]` of the shard.
    start: usize,
    len: u32,
    /// The next entry of the same hash (the rare collision), or `END`.
    next: u32,
    totals: Totals,
}

#[derive(Default)]
struct Shard {
    /// The first entry of each hash of (site, frames).
    by_hash: HashMap<u64, u32>,
    entries: Vec<Entry>,
    frames: Vec<Frame>,
}

impl Shard {
    fn frames_of(&self, e: &Entry) -> &[Frame] {
        &self.frames[e.start..e.start + e.len as usize]
    }
}

pub struct Stacks {
    shards: Vec<Mutex<Shard>>,
}

impl Default for Stacks {
    fn default() -> Self {
        Stacks {
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
        }
    }
}

fn hash(site: i32, frames: &[FrameInfo]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h = (site as u64).wrapping_mul(K);
    for f in frames {
        h = (h.rotate_left(5) ^ f.method as u64).wrapping_mul(K);
        h = (h.rotate_left(5) ^ f.location as u64).wrapping_mul(K);
    }
    h ^ (h >> 29)
}

fn same(known: &[Frame], frames: &[FrameInfo]) -> bool {
    known.len() == frames.len()
        && known
            .iter()
            .zip(frames)
            .all(|(&(m, l), f)| m == f.method as usize && l == f.location)
}

impl Stacks {
    pub fn add(&self, site: i32, frames: &[FrameInfo], bytes: u64) {
        let h = hash(site, frames);
        let mut guard = lock(&self.shards[(h >> 58) as usize % SHARDS]);
        let shard = &mut *guard;
        let head = shard.by_hash.get(&h).copied().unwrap_or(END);
        let mut at = head;
        while at != END {
            let e = &shard.entries[at as usize];
            if e.site == site && same(shard.frames_of(e), frames) {
                break;
            }
            at = e.next;
        }
        if at == END {
            // A shard of 4 billion stacks would have run out of memory long before.
            at = shard.entries.len() as u32;
            let start = shard.frames.len();
            shard
                .frames
                .extend(frames.iter().map(|f| (f.method as usize, f.location)));
            shard.entries.push(Entry {
                site,
                start,
                len: frames.len() as u32,
                next: head,
                totals: Totals::default(),
            });
            shard.by_hash.insert(h, at);
        }
        let totals = &mut shard.entries[at as usize].totals;
        totals.count += 1;
        totals.bytes += bytes;
    }

    /// How many stacks, a shard at a time (a capacity to reserve: on demand the probes keep adding).
    pub fn count(&self) -> usize {
        self.shards.iter().map(|s| lock(s).entries.len()).sum()
    }

    /// Every stack's site, frames and totals, each shard read under its lock, in place (at exit the
    /// probes are stopped; on demand an allocation that meets the shard being read waits for it, as it
    /// waits for another allocation).
    pub fn for_each(&self, mut f: impl FnMut(i32, &[Frame], Totals)) {
        for shard in &self.shards {
            let shard = lock(shard);
            for e in &shard.entries {
                f(e.site, shard.frames_of(e), e.totals);
            }
        }
    }

    /// The table as it is now, copied.
    pub fn snapshot(&self) -> Snapshot {
        let mut out = Snapshot::default();
        self.for_each(|site, frames, totals| {
            let start = out.frames.len();
            out.frames.extend_from_slice(frames);
            out.stacks.push((site, start..out.frames.len(), totals));
        });
        out
    }
}

/// Every stack of a [`Stacks`] at one moment.
#[derive(Default)]
pub struct Snapshot {
    /// Every stack's frames, end to end.
    frames: Vec<Frame>,
    /// Per stack: its site, where its frames are in `frames`, its totals.
    stacks: Vec<(i32, std::ops::Range<usize>, Totals)>,
}

impl Snapshot {
    /// Each stack's site, frames and totals.
    pub fn iter(&self) -> impl Iterator<Item = (i32, &[Frame], Totals)> + '_ {
        self.stacks
            .iter()
            .map(|(site, range, totals)| (*site, &self.frames[range.clone()], *totals))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(ids: &[usize]) -> Vec<FrameInfo> {
        ids.iter()
            .map(|&m| FrameInfo {
                method: m as jni_sys::jmethodID,
                location: m as i64 * 10,
            })
            .collect()
    }

    #[test]
    fn one_entry_per_site_and_frames() {
        let s = Stacks::default();
        s.add(1, &frames(&[1, 2, 3]), 8);
        s.add(1, &frames(&[1, 2, 3]), 16);
        s.add(2, &frames(&[1, 2, 3]), 4);
        s.add(1, &frames(&[1, 2]), 1);
        s.add(1, &frames(&[]), 2);
        let mut seen = Vec::new();
        s.for_each(|site, f, t| seen.push((site, f.to_vec(), t.count, t.bytes)));
        seen.sort();
        let f = |ids: &[usize]| ids.iter().map(|&m| (m, m as i64 * 10)).collect::<Vec<_>>();
        assert_eq!(
            seen,
            [
                (1, f(&[]), 1, 2),
                (1, f(&[1, 2]), 1, 1),
                (1, f(&[1, 2, 3]), 2, 24),
                (2, f(&[1, 2, 3]), 1, 4),
            ]
        );
        assert_eq!(s.count(), 4);
        let copy: Vec<_> = s
            .snapshot()
            .iter()
            .map(|(site, f, t)| (site, f.len(), t.count))
            .collect();
        assert_eq!(copy.len(), 4);
    }
}
