//! Writes a class file: everything not edited is copied from the input bytes, so an unedited class comes
//! out byte-identical.

use crate::attributes::names;
use crate::bytes::ByteSink;
use crate::classfile::{Attributes, ClassFile, Member};
use crate::pool_builder::PoolBuilder;

/// Writes `class` with the pool from `pool` and, for each method index with `Some`, that new Code body.
pub fn write_class(
    class: &ClassFile<'_>,
    pool: &PoolBuilder<'_, '_>,
    new_code: &[Option<&[u8]>],
    out: &mut Vec<u8>,
) {
    out.u4(0xCAFE_BABE);
    out.u2(class.minor_version);
    out.u2(class.major_version);
    pool.write(out);
    out.u2(class.access);
    out.u2(class.this_class);
    out.u2(class.super_class);
    out.extend_from_slice(class.interfaces);
    if new_code.iter().all(Option::is_none) {
        out.extend_from_slice(class.members_raw);
    } else {
        out.u2(class.fields.len() as u16);
        for f in &class.fields {
            out.extend_from_slice(f.raw);
        }
        out.u2(class.methods.len() as u16);
        for (m, code) in class.methods.iter().zip(new_code) {
            match code {
                None => out.extend_from_slice(m.raw),
                Some(code) => write_method(class, m, code, out),
            }
        }
    }
    write_attributes(&class.attributes, out);
}

fn write_method(class: &ClassFile<'_>, m: &Member<'_>, code: &[u8], out: &mut Vec<u8>) {
    out.u2(m.access);
    out.u2(m.name_index);
    out.u2(m.descriptor_index);
    out.u2(m.attributes.len() as u16);
    for a in &m.attributes {
        out.u2(a.name_index);
        let body = if class.attribute_name(&a) == names::CODE {
            code
        } else {
            a.data
        };
        out.u4(body.len() as u32);
        out.extend_from_slice(body);
    }
}

fn write_attributes(attributes: &Attributes<'_>, out: &mut Vec<u8>) {
    out.u2(attributes.len() as u16);
    for a in attributes {
        out.u2(a.name_index);
        out.u4(a.data.len() as u32);
        out.extend_from_slice(a.data);
    }
}
