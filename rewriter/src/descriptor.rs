//! Field and method descriptors (JVMS §4.3).

use std::borrow::Cow;

use crate::attributes::stack_map::{ClassRef, VType};
use crate::error::{bail, Result};

/// Walks the parameter types of a method descriptor, yielding each field descriptor as a slice.
pub struct Params<'a> {
    d: &'a [u8],
    pos: usize,
}

impl<'a> Params<'a> {
    pub fn new(descriptor: &'a [u8]) -> Result<Self> {
        if descriptor.first() != Some(&b'(') {
            bail!(
                0,
                "method descriptor {} does not start with '('",
                String::from_utf8_lossy(descriptor)
            );
        }
        Ok(Params {
            d: descriptor,
            pos: 1,
        })
    }

    /// The next parameter type, or `None` at the closing parenthesis.
    pub fn next_type(&mut self) -> Result<Option<&'a [u8]>> {
        if self.d.get(self.pos) == Some(&b')') {
            return Ok(None);
        }
        let end = field_type_end(self.d, self.pos)?;
        let t = &self.d[self.pos..end];
        self.pos = end;
        Ok(Some(t))
    }

    /// The return type, after all parameters were read.
    pub fn return_type(mut self) -> Result<&'a [u8]> {
        while self.next_type()?.is_some() {}
        let start = self.pos + 1;
        if self.d.get(start) == Some(&b'V') && start + 1 == self.d.len() {
            return Ok(&self.d[start..]);
        }
        let end = field_type_end(self.d, start)?;
        if end != self.d.len() {
            bail!(
                0,
                "trailing characters in method descriptor {}",
                String::from_utf8_lossy(self.d)
            );
        }
        Ok(&self.d[start..end])
    }
}

/// The end of the field descriptor starting at `pos`.
fn field_type_end(d: &[u8], mut pos: usize) -> Result<usize> {
    while d.get(pos) == Some(&b'[') {
        pos += 1;
    }
    match d.get(pos) {
        Some(b'B' | b'C' | b'D' | b'F' | b'I' | b'J' | b'S' | b'Z') => Ok(pos + 1),
        Some(b'L') => match d[pos..].iter().position(|&b| b == b';') {
            Some(i) if i > 1 => Ok(pos + i + 1),
            _ => bail!(
                0,
                "unterminated class type in descriptor {}",
                String::from_utf8_lossy(d)
            ),
        },
        _ => bail!(0, "invalid descriptor {}", String::from_utf8_lossy(d)),
    }
}

/// The verification type of a value of field type `t`.
pub fn vtype_of(t: &[u8]) -> VType<'_> {
    match t[0] {
        b'B' | b'C' | b'I' | b'S' | b'Z' => VType::Integer,
        b'F' => VType::Float,
        b'J' => VType::Long,
        b'D' => VType::Double,
        b'L' => VType::Object(ClassRef {
            name: Cow::Borrowed(&t[1..t.len() - 1]),
            index: 0,
        }),
        _ => VType::Object(ClassRef {
            name: Cow::Borrowed(t),
            index: 0,
        }),
    }
}

/// Number of argument words a method descriptor takes (long/double count two), excluding `this`.
pub fn argument_slots(descriptor: &[u8]) -> Result<u16> {
    let mut p = Params::new(descriptor)?;
    let mut n = 0u16;
    while let Some(t) = p.next_type()? {
        n += if matches!(t, b"J" | b"D") { 2 } else { 1 };
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_parameters_and_return() {
        let mut p = Params::new(b"(I[[Ljava/lang/String;J)V").unwrap();
        assert_eq!(p.next_type().unwrap(), Some(&b"I"[..]));
        assert_eq!(p.next_type().unwrap(), Some(&b"[[Ljava/lang/String;"[..]));
        assert_eq!(p.return_type().unwrap(), b"V");
        assert_eq!(argument_slots(b"(JDI)V").unwrap(), 5);
        assert!(Params::new(b"(Lfoo)V").unwrap().next_type().is_err());
    }
}
