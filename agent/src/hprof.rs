//! The binary HPROF writer ("JAVA PROFILE 1.0.2", identifiers of 8 bytes, the heap in segments): pure
//! Rust over any `Write`, with no JVM in sight, so that the byte layout is tested on its own
//! (heap_dump.rs gathers what goes in it from JVMTI).
//!
//! The layout is the one HotSpot's heap dumper and the old hprof agent document: a NUL-terminated header,
//! the identifier size (u4) and a millisecond timestamp (u8), then records of `tag u1, time u4, length u4,
//! body`. Everything is big-endian. The heap itself goes into HEAP_DUMP_SEGMENT (0x1C) records closed by
//! one HEAP_DUMP_END (0x2C): a single HEAP_DUMP record's u4 length would cap a dump at 4 GB.

use std::io::{self, Write};

pub const HEADER: &[u8] = b"JAVA PROFILE 1.0.2\0";
/// Object and name identifiers are 8 bytes: the agent's object ids are 64-bit JVMTI tags.
pub const ID_SIZE: u32 = 8;

/// Top-level record tags.
pub mod tag {
    pub const UTF8: u8 = 0x01;
    pub const LOAD_CLASS: u8 = 0x02;
    pub const FRAME: u8 = 0x04;
    pub const TRACE: u8 = 0x05;
    pub const HEAP_DUMP_SEGMENT: u8 = 0x1C;
    pub const HEAP_DUMP_END: u8 = 0x2C;
}

/// Heap sub-record tags.
pub mod sub {
    pub const ROOT_UNKNOWN: u8 = 0xFF;
    pub const ROOT_JNI_GLOBAL: u8 = 0x01;
    pub const ROOT_JNI_LOCAL: u8 = 0x02;
    pub const ROOT_JAVA_FRAME: u8 = 0x03;
    pub const ROOT_STICKY_CLASS: u8 = 0x05;
    pub const ROOT_MONITOR_USED: u8 = 0x07;
    pub const ROOT_THREAD_OBJ: u8 = 0x08;
    pub const CLASS_DUMP: u8 = 0x20;
    pub const INSTANCE_DUMP: u8 = 0x21;
    pub const OBJ_ARRAY_DUMP: u8 = 0x22;
    pub const PRIM_ARRAY_DUMP: u8 = 0x23;
}

/// Basic types of fields and array elements.
pub mod ty {
    pub const OBJECT: u8 = 2;
    pub const BOOLEAN: u8 = 4;
    pub const CHAR: u8 = 5;
    pub const FLOAT: u8 = 6;
    pub const DOUBLE: u8 = 7;
    pub const BYTE: u8 = 8;
    pub const SHORT: u8 = 9;
    pub const INT: u8 = 10;
    pub const LONG: u8 = 11;
}

/// Bytes a value of basic type `t` takes in a record (0 for an unknown type).
pub fn type_size(t: u8) -> usize {
    match t {
        ty::OBJECT => ID_SIZE as usize,
        ty::BOOLEAN | ty::BYTE => 1,
        ty::CHAR | ty::SHORT => 2,
        ty::FLOAT | ty::INT => 4,
        ty::DOUBLE | ty::LONG => 8,
        _ => 0,
    }
}

/// The basic type of a field from the first character of its JVM signature (`I`, `Ljava/lang/String;`,
/// `[J`...); the JVMTI primitive type codes are the same characters.
pub fn type_of(signature_char: u8) -> u8 {
    match signature_char {
        b'Z' => ty::BOOLEAN,
        b'C' => ty::CHAR,
        b'F' => ty::FLOAT,
        b'D' => ty::DOUBLE,
        b'B' => ty::BYTE,
        b'S' => ty::SHORT,
        b'I' => ty::INT,
        b'J' => ty::LONG,
        _ => ty::OBJECT,
    }
}

/// Appends `bits` (the value in its low bytes) as a big-endian value of type `t`.
pub fn put_value(buf: &mut Vec<u8>, t: u8, bits: u64) {
    let n = type_size(t);
    buf.extend_from_slice(&bits.to_be_bytes()[8 - n..]);
}

/// Writes `bits` as a big-endian value of type `t` into `slot` (which is `type_size(t)` long).
pub fn set_value(slot: &mut [u8], t: u8, bits: u64) {
    let n = type_size(t).min(slot.len());
    slot[..n].copy_from_slice(&bits.to_be_bytes()[8 - n..]);
}

/// Array elements as the VM holds them (native byte order) to the big-endian bytes of a record.
pub fn elements_to_big_endian(native: &[u8], element_size: usize, out: &mut Vec<u8>) {
    if element_size <= 1 || cfg!(target_endian = "big") {
        out.extend_from_slice(native);
        return;
    }
    for e in native.chunks_exact(element_size) {
        out.extend(e.iter().rev());
    }
}

/// A class as CLASS_DUMP describes it.
pub struct ClassDump<'a> {
    pub id: u64,
    pub trace: u32,
    pub super_id: u64,
    pub loader: u64,
    /// Bytes of an INSTANCE_DUMP's values for this class, superclasses included.
    pub instance_size: u32,
    /// (name id, type, value bits).
    pub statics: &'a [(u64, u8, u64)],
    /// (name id, type) of the fields the class itself declares, in the order its instances' values are.
    pub fields: &'a [(u64, u8)],
}

/// The largest heap segment body before a new segment is started: HPROF lengths are u4, and readers
/// need no segment that large; 64 MB keeps the buffer small.
const SEGMENT_LIMIT: usize = 64 << 20;

/// Writes one dump: `new` writes the header, the methods their records, `finish` the heap's end.
pub struct Writer<W: Write> {
    out: W,
    /// The heap segment being built: its length must precede it.
    segment: Vec<u8>,
    segment_limit: usize,
    written: u64,
}

impl<W: Write> Writer<W> {
    pub fn new(out: W, timestamp_ms: u64) -> io::Result<Self> {
        let mut w = Writer {
            out,
            segment: Vec::new(),
            segment_limit: SEGMENT_LIMIT,
            written: 0,
        };
        w.raw(HEADER)?;
        w.raw(&ID_SIZE.to_be_bytes())?;
        w.raw(&timestamp_ms.to_be_bytes())?;
        Ok(w)
    }

    /// Bytes written so far (the open segment not included).
    pub fn written(&self) -> u64 {
        self.written
    }

    #[cfg(test)]
    fn with_segment_limit(mut self, limit: usize) -> Self {
        self.segment_limit = limit;
        self
    }

    fn raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.written += bytes.len() as u64;
        self.out.write_all(bytes)
    }

    fn record(&mut self, tag: u8, body: &[u8]) -> io::Result<()> {
        let len = u32::try_from(body.len())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "HPROF record over 4 GB"))?;
        let mut head = [0u8; 9];
        head[0] = tag;
        // The time field: microseconds since the header's timestamp; everything is "now".
        head[5..].copy_from_slice(&len.to_be_bytes());
        self.raw(&head)?;
        self.raw(body)
    }

    pub fn utf8(&mut self, id: u64, text: &str) -> io::Result<()> {
        let mut b = Vec::with_capacity(8 + text.len());
        b.extend_from_slice(&id.to_be_bytes());
        b.extend_from_slice(text.as_bytes());
        self.record(tag::UTF8, &b)
    }

    pub fn load_class(
        &mut self,
        serial: u32,
        class_id: u64,
        trace: u32,
        name_id: u64,
    ) -> io::Result<()> {
        let mut b = Vec::with_capacity(24);
        b.extend_from_slice(&serial.to_be_bytes());
        b.extend_from_slice(&class_id.to_be_bytes());
        b.extend_from_slice(&trace.to_be_bytes());
        b.extend_from_slice(&name_id.to_be_bytes());
        self.record(tag::LOAD_CLASS, &b)
    }

    /// A stack frame: `line` > 0, or -1 unknown, -2 compiled, -3 native.
    pub fn frame(
        &mut self,
        id: u64,
        method_name: u64,
        signature: u64,
        source_file: u64,
        class_serial: u32,
        line: i32,
    ) -> io::Result<()> {
        let mut b = Vec::with_capacity(40);
        for v in [id, method_name, signature, source_file] {
            b.extend_from_slice(&v.to_be_bytes());
        }
        b.extend_from_slice(&class_serial.to_be_bytes());
        b.extend_from_slice(&line.to_be_bytes());
        self.record(tag::FRAME, &b)
    }

    pub fn trace(&mut self, serial: u32, thread_serial: u32, frames: &[u64]) -> io::Result<()> {
        let mut b = Vec::with_capacity(12 + 8 * frames.len());
        b.extend_from_slice(&serial.to_be_bytes());
        b.extend_from_slice(&thread_serial.to_be_bytes());
        b.extend_from_slice(&(frames.len() as u32).to_be_bytes());
        for f in frames {
            b.extend_from_slice(&f.to_be_bytes());
        }
        self.record(tag::TRACE, &b)
    }

    /// Starts a heap sub-record of about `size` bytes, closing the current segment first if it would
    /// outgrow the limit.
    fn sub(&mut self, tag: u8, size: usize) -> io::Result<&mut Vec<u8>> {
        if !self.segment.is_empty() && self.segment.len() + size + 1 > self.segment_limit {
            self.flush_segment()?;
        }
        self.segment.push(tag);
        Ok(&mut self.segment)
    }

    fn flush_segment(&mut self) -> io::Result<()> {
        let body = std::mem::take(&mut self.segment);
        let r = self.record(tag::HEAP_DUMP_SEGMENT, &body);
        self.segment = body;
        self.segment.clear();
        r
    }

    fn root_ids(&mut self, t: u8, id: u64, rest: &[u32]) -> io::Result<()> {
        let s = self.sub(t, 8 + 4 * rest.len())?;
        s.extend_from_slice(&id.to_be_bytes());
        for v in rest {
            s.extend_from_slice(&v.to_be_bytes());
        }
        Ok(())
    }

    pub fn root_unknown(&mut self, id: u64) -> io::Result<()> {
        self.root_ids(sub::ROOT_UNKNOWN, id, &[])
    }

    pub fn root_sticky_class(&mut self, id: u64) -> io::Result<()> {
        self.root_ids(sub::ROOT_STICKY_CLASS, id, &[])
    }

    pub fn root_monitor_used(&mut self, id: u64) -> io::Result<()> {
        self.root_ids(sub::ROOT_MONITOR_USED, id, &[])
    }

    pub fn root_jni_global(&mut self, id: u64, global_ref: u64) -> io::Result<()> {
        let s = self.sub(sub::ROOT_JNI_GLOBAL, 16)?;
        s.extend_from_slice(&id.to_be_bytes());
        s.extend_from_slice(&global_ref.to_be_bytes());
        Ok(())
    }

    /// `depth`: the frame's index in the thread's STACK_TRACE (-1: none).
    pub fn root_jni_local(&mut self, id: u64, thread_serial: u32, depth: i32) -> io::Result<()> {
        self.root_ids(sub::ROOT_JNI_LOCAL, id, &[thread_serial, depth as u32])
    }

    pub fn root_java_frame(&mut self, id: u64, thread_serial: u32, depth: i32) -> io::Result<()> {
        self.root_ids(sub::ROOT_JAVA_FRAME, id, &[thread_serial, depth as u32])
    }

    pub fn root_thread_obj(&mut self, id: u64, thread_serial: u32, trace: u32) -> io::Result<()> {
        self.root_ids(sub::ROOT_THREAD_OBJ, id, &[thread_serial, trace])
    }

    pub fn class_dump(&mut self, c: &ClassDump) -> io::Result<()> {
        let size = 64 + c.statics.len() * 17 + c.fields.len() * 9;
        let s = self.sub(sub::CLASS_DUMP, size)?;
        s.extend_from_slice(&c.id.to_be_bytes());
        s.extend_from_slice(&c.trace.to_be_bytes());
        // super, loader, signers, protection domain, two reserved
        for v in [c.super_id, c.loader, 0, 0, 0, 0] {
            s.extend_from_slice(&v.to_be_bytes());
        }
        s.extend_from_slice(&c.instance_size.to_be_bytes());
        s.extend_from_slice(&0u16.to_be_bytes()); // constant pool entries
        s.extend_from_slice(&(c.statics.len() as u16).to_be_bytes());
        for &(name, t, bits) in c.statics {
            s.extend_from_slice(&name.to_be_bytes());
            s.push(t);
            put_value(s, t, bits);
        }
        s.extend_from_slice(&(c.fields.len() as u16).to_be_bytes());
        for &(name, t) in c.fields {
            s.extend_from_slice(&name.to_be_bytes());
            s.push(t);
        }
        Ok(())
    }

    /// `values`: the instance's field values, big-endian, the class's own fields first, then its
    /// superclass's, up to java.lang.Object.
    pub fn instance_dump(
        &mut self,
        id: u64,
        trace: u32,
        class_id: u64,
        values: &[u8],
    ) -> io::Result<()> {
        let s = self.sub(sub::INSTANCE_DUMP, 24 + values.len())?;
        s.extend_from_slice(&id.to_be_bytes());
        s.extend_from_slice(&trace.to_be_bytes());
        s.extend_from_slice(&class_id.to_be_bytes());
        s.extend_from_slice(&(values.len() as u32).to_be_bytes());
        s.extend_from_slice(values);
        Ok(())
    }

    pub fn obj_array_dump(
        &mut self,
        id: u64,
        trace: u32,
        class_id: u64,
        elements: &[u64],
    ) -> io::Result<()> {
        let s = self.sub(sub::OBJ_ARRAY_DUMP, 24 + 8 * elements.len())?;
        s.extend_from_slice(&id.to_be_bytes());
        s.extend_from_slice(&trace.to_be_bytes());
        s.extend_from_slice(&(elements.len() as u32).to_be_bytes());
        s.extend_from_slice(&class_id.to_be_bytes());
        for e in elements {
            s.extend_from_slice(&e.to_be_bytes());
        }
        Ok(())
    }

    /// `data`: `count` big-endian elements of type `t`.
    pub fn prim_array_dump(
        &mut self,
        id: u64,
        trace: u32,
        t: u8,
        count: u32,
        data: &[u8],
    ) -> io::Result<()> {
        let s = self.sub(sub::PRIM_ARRAY_DUMP, 17 + data.len())?;
        s.extend_from_slice(&id.to_be_bytes());
        s.extend_from_slice(&trace.to_be_bytes());
        s.extend_from_slice(&count.to_be_bytes());
        s.push(t);
        s.extend_from_slice(data);
        Ok(())
    }

    /// Closes the last heap segment and the heap, and flushes; returns the output.
    pub fn finish(mut self) -> io::Result<W> {
        if !self.segment.is_empty() {
            self.flush_segment()?;
        }
        self.record(tag::HEAP_DUMP_END, &[])?;
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads back top-level records: (tag, body).
    fn records(bytes: &[u8]) -> Vec<(u8, Vec<u8>)> {
        assert!(bytes.starts_with(HEADER));
        let mut at = HEADER.len();
        assert_eq!(&bytes[at..at + 4], &8u32.to_be_bytes());
        at += 12;
        let mut out = Vec::new();
        while at < bytes.len() {
            let t = bytes[at];
            let len = u32::from_be_bytes(bytes[at + 5..at + 9].try_into().unwrap()) as usize;
            out.push((t, bytes[at + 9..at + 9 + len].to_vec()));
            at += 9 + len;
        }
        assert_eq!(at, bytes.len(), "the last record ends the file");
        out
    }

    #[test]
    fn header_and_top_level_records() {
        let mut w = Writer::new(Vec::new(), 0x0102_0304_0506_0708).unwrap();
        w.utf8(7, "java/lang/String").unwrap();
        w.load_class(1, 0x10, 1, 7).unwrap();
        w.frame(0x20, 7, 7, 7, 1, -3).unwrap();
        w.trace(2, 1, &[0x20]).unwrap();
        let bytes = w.finish().unwrap();
        assert_eq!(&bytes[19..23], &[0, 0, 0, 8]);
        assert_eq!(&bytes[23..31], &[1, 2, 3, 4, 5, 6, 7, 8]);
        let r = records(&bytes);
        let tags: Vec<u8> = r.iter().map(|x| x.0).collect();
        assert_eq!(
            tags,
            [
                tag::UTF8,
                tag::LOAD_CLASS,
                tag::FRAME,
                tag::TRACE,
                tag::HEAP_DUMP_END
            ]
        );
        assert_eq!(&r[0].1[..8], &7u64.to_be_bytes());
        assert_eq!(&r[0].1[8..], b"java/lang/String");
        assert_eq!(r[1].1.len(), 24);
        assert_eq!(&r[2].1[36..40], &(-3i32).to_be_bytes());
        assert_eq!(
            r[3].1,
            [0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0x20]
        );
        assert!(r[4].1.is_empty());
    }

    #[test]
    fn heap_sub_records_are_laid_out_as_documented() {
        let mut w = Writer::new(Vec::new(), 0).unwrap();
        w.root_thread_obj(5, 1, 2).unwrap();
        w.class_dump(&ClassDump {
            id: 3,
            trace: 1,
            super_id: 4,
            loader: 0,
            instance_size: 12,
            statics: &[(9, ty::INT, 42)],
            fields: &[(10, ty::OBJECT), (11, ty::INT)],
        })
        .unwrap();
        let mut values = Vec::new();
        put_value(&mut values, ty::OBJECT, 5);
        put_value(&mut values, ty::INT, 0xFFFF_FFFF);
        w.instance_dump(6, 1, 3, &values).unwrap();
        w.obj_array_dump(7, 1, 8, &[6, 0]).unwrap();
        let mut data = Vec::new();
        elements_to_big_endian(&[1u16, 0x0203].map(u16::to_ne_bytes).concat(), 2, &mut data);
        w.prim_array_dump(9, 1, ty::CHAR, 2, &data).unwrap();
        let r = records(&w.finish().unwrap());
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].0, tag::HEAP_DUMP_SEGMENT);
        let s = &r[0].1;
        let mut expected = vec![
            sub::ROOT_THREAD_OBJ,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            5,
            0,
            0,
            0,
            1,
            0,
            0,
            0,
            2,
        ];
        expected.push(sub::CLASS_DUMP);
        expected.extend(3u64.to_be_bytes());
        expected.extend(1u32.to_be_bytes());
        expected.extend(4u64.to_be_bytes());
        expected.extend([0u8; 40]);
        expected.extend(12u32.to_be_bytes());
        expected.extend([0, 0, 0, 1]);
        expected.extend(9u64.to_be_bytes());
        expected.extend([ty::INT, 0, 0, 0, 42, 0, 2]);
        expected.extend(10u64.to_be_bytes());
        expected.push(ty::OBJECT);
        expected.extend(11u64.to_be_bytes());
        expected.push(ty::INT);
        expected.push(sub::INSTANCE_DUMP);
        expected.extend(6u64.to_be_bytes());
        expected.extend(1u32.to_be_bytes());
        expected.extend(3u64.to_be_bytes());
        expected.extend(12u32.to_be_bytes());
        expected.extend(5u64.to_be_bytes());
        expected.extend([0xFF; 4]);
        expected.push(sub::OBJ_ARRAY_DUMP);
        expected.extend(7u64.to_be_bytes());
        expected.extend(1u32.to_be_bytes());
        expected.extend(2u32.to_be_bytes());
        expected.extend(8u64.to_be_bytes());
        expected.extend(6u64.to_be_bytes());
        expected.extend(0u64.to_be_bytes());
        expected.push(sub::PRIM_ARRAY_DUMP);
        expected.extend(9u64.to_be_bytes());
        expected.extend(1u32.to_be_bytes());
        expected.extend(2u32.to_be_bytes());
        expected.extend([ty::CHAR, 0, 1, 2, 3]);
        assert_eq!(s, &expected);
        assert_eq!(r[1], (tag::HEAP_DUMP_END, vec![]));
    }

    #[test]
    fn segments_split_between_sub_records() {
        let mut w = Writer::new(Vec::new(), 0).unwrap().with_segment_limit(40);
        for id in 1..=5 {
            w.instance_dump(id, 1, 99, &[0; 8]).unwrap(); // 33 bytes each
        }
        let r = records(&w.finish().unwrap());
        assert_eq!(r.len(), 6);
        assert!(r[..5]
            .iter()
            .all(|(t, b)| *t == tag::HEAP_DUMP_SEGMENT && b.len() == 33));
    }

    #[test]
    fn values_and_types() {
        assert_eq!(type_of(b'L'), ty::OBJECT);
        assert_eq!(type_of(b'['), ty::OBJECT);
        assert_eq!(type_of(b'J'), ty::LONG);
        let mut slot = [0u8; 2];
        set_value(&mut slot, ty::SHORT, 0xFFFF_8001);
        assert_eq!(slot, [0x80, 0x01]);
        let mut v = Vec::new();
        put_value(&mut v, ty::BOOLEAN, 1);
        put_value(&mut v, ty::DOUBLE, 1.5f64.to_bits());
        assert_eq!(v[0], 1);
        assert_eq!(f64::from_be_bytes(v[1..].try_into().unwrap()), 1.5);
    }
}
