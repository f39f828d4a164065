//! Allocation stacks: counts and bytes per (site, frames), sharded so that threads allocating at once
//! rarely meet on a lock. A stack seen before costs a hash and a compare; only a new one allocates.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::jvmti::FrameInfo;
use crate::state::lock;

/// One frame: a jmethodID (as an integer) and a bytecode index.
pub type Frame = (usize, i64);

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StackKey {
    /// The rewriter's allocation-site id: the allocating instruction, hence also what it allocates.
    pub site: i32,
    pub frames: Vec<Frame>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    pub count: u64,
    /// Summed per allocation for arrays; objects are sized in the report (count x instance size).
    pub bytes: u64,
}

const SHARDS: usize = 64;

/// Entries by hash of (site, frames); the rare equal hashes share a bucket.
type Shard = HashMap<u64, Vec<(StackKey, Totals)>>;

pub struct Stacks {
    shards: Vec<Mutex<Shard>>,
}

impl Default for Stacks {
    fn default() -> Self {
        Stacks {
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
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

fn same(key: &StackKey, site: i32, frames: &[FrameInfo]) -> bool {
    key.site == site
        && key.frames.len() == frames.len()
        && key
            .frames
            .iter()
            .zip(frames)
            .all(|(&(m, l), f)| m == f.method as usize && l == f.location)
}

impl Stacks {
    pub fn add(&self, site: i32, frames: &[FrameInfo], bytes: u64) {
        let h = hash(site, frames);
        let mut shard = lock(&self.shards[(h >> 58) as usize % SHARDS]);
        let bucket = shard.entry(h).or_default();
        let totals = match bucket.iter().position(|(k, _)| same(k, site, frames)) {
            Some(i) => &mut bucket[i].1,
            None => {
                let frames = frames
                    .iter()
                    .map(|f| (f.method as usize, f.location))
                    .collect();
                bucket.push((StackKey { site, frames }, Totals::default()));
                &mut bucket.last_mut().expect("just pushed").1
            }
        };
        totals.count += 1;
        totals.bytes += bytes;
    }

    /// The table as it is now, copied flat: two vectors for every stack together rather than one per
    /// stack, which at 100,000 stacks was most of the time of reading them (and of freeing them after).
    /// Reading the table is two cache misses per stack (its bucket, its frames); a loop that does
    /// nothing else has many of them in flight at once, where a loop that resolves and allocates
    /// between them waits for each in turn: the copy then the work on it took 35 ms at 100,000
    /// stacks, the work reading the table in place 47 ms.
    pub fn snapshot(&self) -> Snapshot {
        let mut out = Snapshot::default();
        // Sized up front (from the first stack's depth, which is most stacks' depth): growing by
        // copying tens of megabytes into fresh pages cost as much as the copy itself.
        let (stacks, depth) = self.shards.iter().fold((0, 0), |(n, depth), shard| {
            let shard = lock(shard);
            let first = shard.values().flatten().next();
            (
                n + shard.len(),
                depth.max(first.map_or(0, |(k, _)| k.frames.len())),
            )
        });
        out.stacks.reserve(stacks);
        out.frames.reserve(stacks * depth);
        for shard in &self.shards {
            for (key, totals) in lock(shard).values().flatten() {
                let start = out.frames.len();
                out.frames.extend_from_slice(&key.frames);
                out.stacks
                    .push((key.site, start..out.frames.len(), *totals));
            }
        }
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
    /// How many stacks.
    pub fn stacks(&self) -> usize {
        self.stacks.len()
    }

    /// Each stack's site, frames and totals.
    pub fn iter(&self) -> impl Iterator<Item = (i32, &[Frame], Totals)> + '_ {
        self.stacks
            .iter()
            .map(|(site, range, totals)| (*site, &self.frames[range.clone()], *totals))
    }
}
