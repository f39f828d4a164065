//! Big-endian byte cursor for reading and a growable buffer for writing.

use crate::error::{bail, Result};

/// A read position in a borrowed byte slice. Offsets in errors are absolute within the class file,
/// so a cursor over a sub-slice remembers where that slice started.
#[derive(Clone)]
pub struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    base: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Cursor {
            data,
            pos: 0,
            base: 0,
        }
    }

    /// A cursor over `data`, which starts at absolute offset `base` in the class file.
    pub fn at(data: &'a [u8], base: usize) -> Self {
        Cursor { data, pos: 0, base }
    }

    /// Absolute offset of the next byte.
    pub fn offset(&self) -> usize {
        self.base + self.pos
    }

    /// Position relative to the start of this cursor's slice.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// The unread bytes, without consuming them.
    pub fn rest(&self) -> &'a [u8] {
        &self.data[self.pos..]
    }

    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    pub fn is_empty(&self) -> bool {
        self.pos == self.data.len()
    }

    #[inline]
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.remaining() < n {
            bail!(
                self.offset(),
                "unexpected end of data: need {n} bytes, {} left",
                self.remaining()
            );
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    #[inline]
    pub fn u1(&mut self) -> Result<u8> {
        Ok(self.bytes(1)?[0])
    }

    #[inline]
    pub fn u2(&mut self) -> Result<u16> {
        let b = self.bytes(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }

    #[inline]
    pub fn u4(&mut self) -> Result<u32> {
        let b = self.bytes(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub fn skip(&mut self, n: usize) -> Result<()> {
        self.bytes(n).map(|_| ())
    }

    /// Fails unless every byte was consumed; `what` names the structure for the message.
    pub fn finish(&self, what: &str) -> Result<()> {
        if !self.is_empty() {
            bail!(
                self.offset(),
                "{} trailing bytes after {what}",
                self.remaining()
            );
        }
        Ok(())
    }
}

#[inline]
pub fn read_u2(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

#[inline]
pub fn read_i2(b: &[u8], at: usize) -> i16 {
    i16::from_be_bytes([b[at], b[at + 1]])
}

#[inline]
pub fn read_i4(b: &[u8], at: usize) -> i32 {
    i32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Writing helpers on `Vec<u8>`, the output buffer of every encoder.
pub trait ByteSink {
    fn u1(&mut self, v: u8);
    fn u2(&mut self, v: u16);
    fn u4(&mut self, v: u32);
    fn patch_u2(&mut self, at: usize, v: u16);
    fn patch_u4(&mut self, at: usize, v: u32);
}

impl ByteSink for Vec<u8> {
    #[inline]
    fn u1(&mut self, v: u8) {
        self.push(v);
    }
    #[inline]
    fn u2(&mut self, v: u16) {
        self.extend_from_slice(&v.to_be_bytes());
    }
    #[inline]
    fn u4(&mut self, v: u32) {
        self.extend_from_slice(&v.to_be_bytes());
    }
    fn patch_u2(&mut self, at: usize, v: u16) {
        self[at..at + 2].copy_from_slice(&v.to_be_bytes());
    }
    fn patch_u4(&mut self, at: usize, v: u32) {
        self[at..at + 4].copy_from_slice(&v.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursor_reports_absolute_offset_on_truncation() {
        let mut c = Cursor::at(&[1, 2, 3], 0x10);
        assert_eq!(c.u2().unwrap(), 0x0102);
        let err = c.u2().unwrap_err();
        assert_eq!(err.offset(), Some(0x12));
    }

    #[test]
    fn sink_patches_in_place() {
        let mut v = Vec::new();
        v.u2(0);
        v.u4(7);
        v.patch_u2(0, 0xbeef);
        assert_eq!(v, [0xbe, 0xef, 0, 0, 0, 7]);
    }
}
