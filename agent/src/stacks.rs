//! Allocation stacks: counts and bytes per (what was allocated, frames), sharded so that threads
//! allocating at once rarely meet on a lock.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Mutex;

use crate::state::lock;

/// What a stack allocated: a HeapProxy class slot (objects) or a rewriter site id (arrays).
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub enum Allocated {
    Object { slot: i32 },
    Array { site: i32 },
}

/// One frame: a jmethodID (as an integer) and a bytecode index.
pub type Frame = (usize, i64);

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub struct StackKey {
    pub allocated: Allocated,
    pub frames: Vec<Frame>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    pub count: u64,
    pub bytes: u64,
}

const SHARDS: usize = 32;

pub struct Stacks {
    shards: Vec<Mutex<HashMap<StackKey, Totals>>>,
}

impl Default for Stacks {
    fn default() -> Self {
        Stacks {
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
        }
    }
}

impl Stacks {
    pub fn add(&self, allocated: Allocated, frames: &[Frame], bytes: u64) {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        allocated.hash(&mut h);
        frames.hash(&mut h);
        let shard = &self.shards[h.finish() as usize % SHARDS];
        let mut map = lock(shard);
        let key = StackKey {
            allocated,
            frames: frames.to_vec(),
        };
        let t = map.entry(key).or_default();
        t.count += 1;
        t.bytes += bytes;
    }

    pub fn snapshot(&self) -> Vec<(StackKey, Totals)> {
        let mut all = Vec::new();
        for shard in &self.shards {
            all.extend(lock(shard).iter().map(|(k, v)| (k.clone(), *v)));
        }
        all
    }
}
