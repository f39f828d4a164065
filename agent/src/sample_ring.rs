//! The sampler's hand-over from the SIGPROF handler to the drain thread: a preallocated, lock-free ring of
//! fixed-size slots, each holding one stack. The handler runs on the sampled thread at any instruction,
//! so pushing may not allocate, lock or wait: a producer claims a slot with one CAS, fills it with
//! relaxed stores and publishes it with one release store; a full ring drops the sample and counts it.
//!
//! The protocol is event_ring.rs's (a per-slot sequence number saying whose turn it is), with a slot
//! wide enough for a whole stack: the frames are atomics too, so that nothing here needs `unsafe`.
//! Any number of producers, one consumer at a time (the drain thread, or VM death after it stopped).

use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};

use crate::ffi::signals::{RawFrame, Trigger, MAX_FRAMES};

/// The largest weight a slot holds (15 bits).
const MAX_WEIGHT: u32 = (1 << 15) - 1;

struct Slot {
    seq: AtomicU64,
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
    slots: Box<[Slot]>,
    mask: u64,
    tail: AtomicU64,
    head: AtomicU64,
    dropped: AtomicU64,
}

impl SampleRing {
    /// A ring of `capacity` stacks, rounded up to a power of two (at least 2); all its memory is taken
    /// here, before any signal is enabled.
    pub fn new(capacity: usize) -> SampleRing {
        let n = capacity.max(2).next_power_of_two();
        SampleRing {
            slots: (0..n as u64)
                .map(|i| Slot {
                    seq: AtomicU64::new(i),
                    meta: AtomicU64::new(0),
                    methods: [const { AtomicU64::new(0) }; MAX_FRAMES],
                    bcis: [const { AtomicI32::new(0) }; MAX_FRAMES],
                })
                .collect(),
            mask: n as u64 - 1,
            tail: AtomicU64::new(0),
            head: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
        }
    }

    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Copies a stack in, or counts it as dropped when the ring is full. Async-signal-safe: no
    /// allocation, no lock, no wait (a failed CAS means another producer took the slot; retry the next).
    pub fn push(&self, trigger: Trigger, tid: i32, weight: u32, frames: &[RawFrame]) -> bool {
        let weight = u64::from(weight.clamp(1, MAX_WEIGHT));
        let n = frames.len().min(MAX_FRAMES);
        let mut pos = self.tail.load(Ordering::Relaxed);
        loop {
            let slot = &self.slots[(pos & self.mask) as usize];
            let seq = slot.seq.load(Ordering::Acquire);
            if seq == pos {
                if self
                    .tail
                    .compare_exchange_weak(pos, pos + 1, Ordering::Relaxed, Ordering::Relaxed)
                    .is_ok()
                {
                    let wall = u64::from(trigger == Trigger::Wall) << 63;
                    slot.meta.store(
                        wall | weight << 48 | (n as u64) << 32 | u64::from(tid as u32),
                        Ordering::Relaxed,
                    );
                    for (k, f) in frames.iter().take(n).enumerate() {
                        slot.methods[k].store(f.method as u64, Ordering::Relaxed);
                        slot.bcis[k].store(f.bci, Ordering::Relaxed);
                    }
                    slot.seq.store(pos + 1, Ordering::Release);
                    return true;
                }
                pos = self.tail.load(Ordering::Relaxed);
            } else if seq < pos {
                self.dropped.fetch_add(1, Ordering::Relaxed);
                return false;
            } else {
                pos = self.tail.load(Ordering::Relaxed);
            }
        }
    }

    /// Hands every published sample to `f`, oldest first, and frees the slots; stops at a slot claimed
    /// but not yet published. Callers must not drain concurrently.
    pub fn drain(&self, mut f: impl FnMut(&Sample)) -> usize {
        let mut pos = self.head.load(Ordering::Relaxed);
        let start = pos;
        let mut sample = Sample {
            trigger: Trigger::Cpu,
            tid: 0,
            weight: 1,
            frames: Vec::with_capacity(MAX_FRAMES),
        };
        loop {
            let slot = &self.slots[(pos & self.mask) as usize];
            if slot.seq.load(Ordering::Acquire) != pos + 1 {
                break;
            }
            let meta = slot.meta.load(Ordering::Relaxed);
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
                    slot.methods[k].load(Ordering::Relaxed) as usize,
                    slot.bcis[k].load(Ordering::Relaxed),
                ));
            }
            slot.seq.store(pos + self.mask + 1, Ordering::Release);
            pos += 1;
            f(&sample);
        }
        self.head.store(pos, Ordering::Relaxed);
        (pos - start) as usize
    }

    /// Samples dropped because the ring was full.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

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
        let ring = Arc::new(SampleRing::new(16));
        let per_thread = 5_000usize;
        let producers: Vec<_> = (0..4usize)
            .map(|t| {
                let ring = ring.clone();
                std::thread::spawn(move || {
                    for i in 0..per_thread {
                        ring.push(Trigger::Cpu, t as i32, 1, &frames(1 + i % 5, i));
                    }
                })
            })
            .collect();
        let mut received = 0usize;
        let mut check = |s: &Sample| {
            // A torn slot would mix two pushes: each stack's frames come from one seed.
            let seed = s.frames[0].0 / 1000;
            assert!(s.frames.iter().all(|f| f.0 / 1000 == seed));
            assert_eq!(s.frames.len(), 1 + seed % 5);
            received += 1;
        };
        while producers.iter().any(|p| !p.is_finished()) {
            ring.drain(&mut check);
        }
        for p in producers {
            p.join().unwrap();
        }
        ring.drain(&mut check);
        assert_eq!(received as u64 + ring.dropped(), 4 * per_thread as u64);
    }
}
