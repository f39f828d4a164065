//! A hasher for maps keyed by what the agent measured (frame ids, stacks of small integers, names): the
//! flame graph's tree and the agent's report look such keys up millions of times, and SipHash's
//! resistance to chosen keys, the standard maps' default, buys nothing on data no adversary picked.

/// A multiplicative hasher (the Fx hash's idea, written here), for `HashMap<K, V, Fx>`.
#[derive(Default, Clone, Copy)]
pub struct Fx;

pub struct FxHasher(u64);

impl std::hash::BuildHasher for Fx {
    type Hasher = FxHasher;
    fn build_hasher(&self) -> FxHasher {
        FxHasher(0)
    }
}

impl std::hash::Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(b));
        }
    }
    fn write_u32(&mut self, v: u32) {
        self.write_u64(u64::from(v));
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}
