//! The little of the protobuf wire format pprof needs: varints, and length-delimited fields (strings,
//! packed repeated integers, nested messages). Written by hand because a profile is a handful of
//! message types with integer and string fields: a code generator and its runtime would be more code
//! than this, and a dependency the agent links.
//!
//! Scalar fields equal to 0 are left out, as proto3 does: a reader takes a missing field for 0.

const VARINT: u8 = 0;
const LEN: u8 = 2;

/// A protobuf message being written, field after field.
#[derive(Default)]
pub struct Writer {
    buf: Vec<u8>,
}

/// The bytes a varint of `v` takes: 7 bits each.
pub fn varint_len(v: u64) -> usize {
    // 1 for 0, else one byte per started group of 7 significant bits.
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

impl Writer {
    pub fn with_capacity(bytes: usize) -> Writer {
        Writer {
            buf: Vec::with_capacity(bytes),
        }
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }

    pub fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.buf.push(v as u8 | 0x80);
            v >>= 7;
        }
        self.buf.push(v as u8);
    }

    fn key(&mut self, field: u32, wire_type: u8) {
        self.varint(u64::from(field) << 3 | u64::from(wire_type));
    }

    /// A `uint64`, or an `int64` that is not negative (the same bytes); left out when 0.
    pub fn uint(&mut self, field: u32, v: u64) {
        if v != 0 {
            self.key(field, VARINT);
            self.varint(v);
        }
    }

    /// A `string` or `bytes` field; written even when empty, because in a repeated field (pprof's string
    /// table) an empty element is an element.
    pub fn bytes(&mut self, field: u32, b: &[u8]) {
        self.key(field, LEN);
        self.varint(b.len() as u64);
        self.buf.extend_from_slice(b);
    }

    /// A packed repeated `uint64` or non-negative `int64`: one length-delimited field holding the
    /// varints; left out when there are none.
    pub fn packed(&mut self, field: u32, values: impl Iterator<Item = u64> + Clone) {
        let len: usize = values.clone().map(varint_len).sum();
        if len == 0 {
            return;
        }
        self.key(field, LEN);
        self.varint(len as u64);
        for v in values {
            self.varint(v);
        }
    }

    /// A nested message, written by `body` into this writer's buffer. Its length is known only once it
    /// is written, so the body goes first and the length varint is inserted before it afterwards: this
    /// moves the body's bytes (a few dozen for pprof's messages) rather than allocating a buffer per
    /// message.
    pub fn message(&mut self, field: u32, body: impl FnOnce(&mut Writer)) {
        self.key(field, LEN);
        // One byte for the length, which is its whole varint when the body is under 128 bytes (a
        // sample, a location, a function): the body is then written in place, not moved.
        let at = self.buf.len();
        self.buf.push(0);
        body(self);
        let len = (self.buf.len() - at - 1) as u64;
        if len < 0x80 {
            self.buf[at] = len as u8;
        } else {
            let mut prefix = [0u8; 10];
            let mut n = 0;
            let mut v = len;
            while v >= 0x80 {
                prefix[n] = v as u8 | 0x80;
                v >>= 7;
                n += 1;
            }
            prefix[n] = v as u8;
            self.buf.splice(at..at + 1, prefix[..=n].iter().copied());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints() {
        // The examples of the protobuf encoding guide: 1 is one byte, 150 is 0x96 0x01.
        let mut w = Writer::default();
        w.varint(1);
        w.varint(150);
        w.varint(u64::MAX);
        assert_eq!(
            w.into_bytes(),
            [1, 0x96, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]
        );
        for v in [0, 1, 127, 128, 16383, 16384, u64::MAX >> 1, u64::MAX] {
            let mut w = Writer::default();
            w.varint(v);
            assert_eq!(w.into_bytes().len(), varint_len(v), "{v}");
        }
    }

    #[test]
    fn fields() {
        let mut w = Writer::default();
        w.uint(1, 0); // left out
        w.uint(1, 150);
        w.bytes(2, b"");
        w.bytes(2, b"ab");
        w.packed(4, [3u64, 270, 86942].into_iter());
        w.packed(5, std::iter::empty());
        w.message(3, |m| m.uint(1, 150));
        assert_eq!(
            w.into_bytes(),
            [
                0x08, 0x96, 0x01, // 1: 150
                0x12, 0x00, // 2: ""
                0x12, 0x02, b'a', b'b', // 2: "ab"
                0x22, 0x06, 0x03, 0x8e, 0x02, 0x9e, 0xa7, 0x05, // 4: [3, 270, 86942]
                0x1a, 0x03, 0x08, 0x96, 0x01, // 3: {1: 150}
            ]
        );
    }
}
