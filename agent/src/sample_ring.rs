//! The sampler's hand-over from the SIGPROF handler to the drain thread: a preallocated, lock-free ring of
//! fixed-size slots, each holding one stack. The handler runs on the sampled thread at any instruction,
//! so pushing may not allocate, lock or wait: seq_ring.rs's protocol (one CAS to claim, relaxed stores,
//! one release store to publish), with a slot wide enough for a whole stack; a full ring drops the
//! sample and counts it. Any number of producers, one consumer at a time (the drain, under its lock).

use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};

use crate::seq_ring::SeqRing;

use crate::ffi::signals::{RawFrame, Trigger, MAX_FRAMES};

/// The largest weight a slot holds (15 bits).
const MAX_WEIGHT: u32 = (1 << 15) - 1;

/// A slot's stack, as atomics (seq_ring.rs).
struct Body {
    /// Bit 63: wall (else CPU); bits 48..63: weight; bits 32..48: frame count; bits 0..32: OS thread id.
    meta: AtomicU64,
    methods: [AtomicU64; MAX_FRAMES],
    bcis: [AtomicI32; MAX_FRAMES],
}

/// One sample as the drain reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sample {
    pub trigger: Trigger,
    pub tid: i32,
    /// The sampling intervals the sample stands for (signals.rs, SampleHandler).
    pub weight: u32,
    /// (jmethodID as an address, bci), the leaf first.
    pub frames: Vec<(usize, i32)>,
}

pub struct SampleRing {
    ring: SeqRing<Body>,
    dropped: AtomicU64,
}

impl SampleRing {
    /// A ring of `capacity` stacks, rounded up to a power of two (at least 2); all its memory is taken
    /// here, before any signal is enabled.
    pub fn new(capacity: usize) -> SampleRing {
        SampleRing {
            ring: SeqRing::new(capacity, || Body {
                meta: AtomicU64::new(0),
                methods: [const { AtomicU64::new(0) }; MAX_FRAMES],
                bcis: [const { AtomicI32::new(0) }; MAX_FRAMES],
            }),
            dropped: AtomicU64::new(0),
        }
    }

    pub fn capacity(&self) -> usize {
        self.ring.capacity()
    }

    /// Copies a stack in, or counts it as dropped when the ring is full. Async-signal-safe: no
    /// allocation, no lock, no wait.
    pub fn push(&self, trigger: Trigger, tid: i32, weight: u32, frames: &[RawFrame]) -> bool {
        let n = frames.len().min(MAX_FRAMES);
        let weight = u64::from(weight.clamp(1, MAX_WEIGHT));
        let wall = u64::from(trigger == Trigger::Wall) << 63;
        let pushed = self.ring.push(|b| {
            b.meta.store(
                wall | weight << 48 | (n as u64) << 32 | u64::from(tid as u32),
                Ordering::Relaxed,
            );
            for (k, f) in frames.iter().take(n).enumerate() {
                b.methods[k].store(f.method as u64, Ordering::Relaxed);
                b.bcis[k].store(f.bci, Ordering::Relaxed);
            }
        });
        if !pushed {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
        pushed
    }

    /// Hands every published sample to `f`, oldest first, and frees the slots; stops at a slot claimed
    /// but not yet published. Callers must not drain concurrently.
    pub fn drain(&self, mut f: impl FnMut(&Sample)) -> usize {
        let mut sample = Sample {
            trigger: Trigger::Cpu,
            tid: 0,
            weight: 1,
            frames: Vec::with_capacity(MAX_FRAMES),
        };
        self.ring.drain(|b| {
            let meta = b.meta.load(Ordering::Relaxed);
            let n = ((meta >> 32) & 0xffff) as usize;
            sample.trigger = if meta >> 63 == 1 {
                Trigger::Wall
            } else {
                Trigger::Cpu
            };
            sample.tid = meta as u32 as i32;
            sample.weight = ((meta >> 48) as u32) & MAX_WEIGHT;
            sample.frames.clear();
            for k in 0..n.min(MAX_FRAMES) {
                sample.frames.push((
                    b.methods[k].load(Ordering::Relaxed) as usize,
                    b.bcis[k].load(Ordering::Relaxed),
                ));
            }
            f(&sample);
        })
    }

    /// Samples dropped because the ring was full.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(n: usize, seed: usize) -> Vec<RawFrame> {
        (0..n)
            .map(|k| RawFrame {
                bci: k as i32,
                method: seed * 1000 + k,
            })
            .collect()
    }

    #[test]
    fn full_ring_drops_and_counts_then_reuses_slots() {
        let ring = SampleRing::new(2);
        assert!(ring.push(Trigger::Cpu, 7, 3, &frames(3, 1)));
        assert!(ring.push(Trigger::Wall, 8, 1, &frames(MAX_FRAMES + 5, 2)));
        assert!(!ring.push(Trigger::Cpu, 9, 1, &frames(1, 3)));
        assert_eq!(ring.dropped(), 1);
        let mut seen = Vec::new();
        assert_eq!(ring.drain(|s| seen.push(s.clone())), 2);
        assert_eq!(seen[0].trigger, Trigger::Cpu);
        assert_eq!((seen[0].tid, seen[0].weight), (7, 3));
        assert_eq!(seen[0].frames, vec![(1000, 0), (1001, 1), (1002, 2)]);
        assert_eq!(seen[1].trigger, Trigger::Wall);
        assert_eq!(seen[1].frames.len(), MAX_FRAMES, "a deeper stack is cut");
        assert!(ring.push(Trigger::Cpu, 10, 1, &frames(1, 4)));
        seen.clear();
        ring.drain(|s| seen.push(s.clone()));
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0].tid, 10);
    }

    #[test]
    fn concurrent_producers_lose_nothing_uncounted() {
        let ring = SampleRing::new(16);
        let per_thread = 5_000usize;
        let mut received = 0usize;
        let mut check = |s: &Sample| {
            // A torn slot would mix two pushes: each stack's frames come from one seed.
            let seed = s.frames[0].0 / 1000;
            assert!(s.frames.iter().all(|f| f.0 / 1000 == seed));
            assert_eq!(s.frames.len(), 1 + seed % 5);
            received += 1;
        };
        crate::seq_ring::hammer(
            4,
            per_thread,
            |t, i| {
                ring.push(Trigger::Cpu, t as i32, 1, &frames(1 + i % 5, i));
            },
            || {
                ring.drain(&mut check);
            },
        );
        assert_eq!(received as u64 + ring.dropped(), 4 * per_thread as u64);
    }
}
