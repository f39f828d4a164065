//! HotSpot's `-XX` flags, found through the tables libjvm exports for its serviceability agent
//! (`gHotSpotVMStructs`, `gHotSpotVMTypes`): each entry names a type, a field, its offset or, for a static
//! field, its address. `JVMFlag::flags` is the array of every flag, each with its name, the address of its
//! value and where the value came from.
//!
//! A flag is found by its name, and is used only when its `JVMFlag::_type` is the type the caller reads and
//! writes (a flag's type can change between releases: `ObjectAlignmentInBytes` is an intx on JDK 17 and an
//! int on 25), and its flags word and type are the 4-byte fields the tables say. Its origin tells whether
//! anyone set it; the origin's mask and values come from the VM's own constants table. When a table,
//! entry or constant is missing (another JVM, a stripped build), or a type differs, nothing is touched.

use std::ffi::{c_char, c_void, CStr};

use super::libjvm::variable as exported;

/// A flag whose value is a T: the caller knows the type a flag has.
pub struct Flag<T> {
    value: *mut T,
    flags: *mut i32,
    origin: Origin,
}

/// `JVMFlag::Flags`' value-origin bits and the two origins the agent tells apart, from the VM's constants.
#[derive(Clone, Copy)]
struct Origin {
    mask: i32,
    default: i32,
    ergonomic: i32,
}

/// A value type a flag can have, with the numbers `JVMFlag::_type` gives it (`JVMFlag::FlagType`: bool,
/// int, uint, intx, uintx, uint64_t, size_t, double, ccstr, ccstrlist, in that order on JDK 17 to 25).
pub trait FlagValue: Copy {
    const TYPES: &'static [i32];
}

impl FlagValue for bool {
    const TYPES: &'static [i32] = &[0];
}

impl FlagValue for usize {
    const TYPES: &'static [i32] = &[6];
}

impl FlagValue for *const c_char {
    const TYPES: &'static [i32] = &[8, 9];
}

impl<T: FlagValue> Flag<T> {
    /// Whether the flag holds the JVM's default: nobody (user, environment, ergonomics) set it.
    pub fn is_default(&self) -> bool {
        // SAFETY: `flags` is the flag's JVMFlag::Flags word, which the VM keeps for its whole life.
        unsafe { self.flags.read_unaligned() & self.origin.mask == self.origin.default }
    }

    pub fn get(&self) -> T {
        // SAFETY: `value` is the flag's storage, a T the VM keeps for its whole life; volatile, as the VM
        // may write it (a manageable flag) while this thread reads it.
        unsafe { self.value.read_volatile() }
    }

    /// Sets the flag, and its origin to "ergonomic", as HotSpot marks a default it chose itself, so that
    /// `-XX:+PrintFlagsFinal`, `jcmd VM.flags` and the management beans show it was not left alone. Only
    /// from Agent_OnLoad: the VM reads the flags the agent sets once it initialises its heap and metaspace,
    /// after the agents have loaded, and no other thread runs yet.
    pub fn set(&self, v: T) {
        // SAFETY: as in `get` and `is_default`; single-threaded at Agent_OnLoad.
        unsafe {
            self.value.write(v);
            let f = self.flags.read_unaligned();
            self.flags
                .write_unaligned((f & !self.origin.mask) | self.origin.ergonomic);
        }
    }

    /// Sets the flag's value while the VM runs, leaving its origin alone, and returns the value it had:
    /// for a flag the VM reads each time it acts on it, and that the caller puts back when done.
    pub fn replace(&self, v: T) -> T {
        let old = self.get();
        // SAFETY: as in `get`. A flag read on each use is a plain load in the VM: the write is seen by the
        // next use, and another thread's use meanwhile reads either value.
        unsafe { self.value.write_volatile(v) };
        old
    }
}

impl Flag<*const c_char> {
    /// Whether a string flag holds no string: null or "".
    pub fn is_empty(&self) -> bool {
        let value = self.get();
        // SAFETY: a ccstr flag's value is null or a NUL-terminated string the VM keeps while the flag holds it.
        value.is_null() || unsafe { *value == 0 }
    }

    /// A string flag's value ("" for null), for a flag no one changes while the VM runs.
    pub fn text(&self) -> String {
        let value = self.get();
        if value.is_null() {
            return String::new();
        }
        // SAFETY: as in `is_empty`.
        unsafe { CStr::from_ptr(value) }
            .to_string_lossy()
            .into_owned()
    }
}

/// The `size_t` flag `name`, if this VM describes its flags.
pub fn size_flag(name: &str) -> Option<Flag<usize>> {
    flag(name)
}

/// The `bool` flag `name`, if this VM describes its flags.
pub fn bool_flag(name: &str) -> Option<Flag<bool>> {
    flag(name)
}

/// The `ccstr` or `ccstrlist` flag `name` (a C string, null or NUL-terminated), if this VM describes its flags.
pub fn ccstr_flag(name: &str) -> Option<Flag<*const c_char>> {
    flag(name)
}

fn flag<T: FlagValue>(name: &str) -> Option<Flag<T>> {
    let t = Tables::find()?;
    let flags_array = t.static_address("JVMFlag", "flags")? as *const *const u8;
    let count = t.static_address("JVMFlag", "numFlags")? as *const usize;
    let name_at = t.field_offset("JVMFlag", "_name")?;
    let addr_at = t.field_offset("JVMFlag", "_addr")?;
    let flags_at = t.four_byte_field("JVMFlag", "_flags")?;
    let type_at = t.four_byte_field("JVMFlag", "_type")?;
    let stride = t.type_size("JVMFlag")?;
    let origin = Origin {
        mask: t.int_constant("JVMFlag::VALUE_ORIGIN_MASK")?,
        default: t.int_constant("JVMFlagOrigin::DEFAULT")?,
        ergonomic: t.int_constant("JVMFlagOrigin::ERGONOMIC")?,
    };
    // SAFETY: the tables give the addresses of JVMFlag::flags and JVMFlag::numFlags, statics of libjvm.
    let (first, count) = unsafe { (flags_array.read(), count.read()) };
    if first.is_null() || count > 10_000 {
        return None;
    }
    for i in 0..count {
        // SAFETY: `first` is an array of `count` JVMFlag records, `stride` bytes apart; the offsets are
        // the VM's own for their fields, and `_type` is 4 bytes.
        unsafe {
            let flag = first.cast_mut().add(i * stride);
            let flag_name = (flag.add(name_at) as *const *const c_char).read();
            if flag_name.is_null() || CStr::from_ptr(flag_name).to_bytes() != name.as_bytes() {
                continue;
            }
            if !T::TYPES.contains(&(flag.add(type_at) as *const i32).read_unaligned()) {
                return None;
            }
            let flags = flag.add(flags_at) as *mut i32;
            let value = (flag.add(addr_at) as *const *mut T).read();
            return (!value.is_null()).then_some(Flag {
                value,
                flags,
                origin,
            });
        }
    }
    None
}

/// The two tables and the layout of their entries, as libjvm exports them.
struct Tables {
    structs: *const u8,
    struct_stride: usize,
    struct_type_name: usize,
    struct_field_name: usize,
    struct_type_string: usize,
    struct_is_static: usize,
    struct_offset: usize,
    struct_address: usize,
    types: *const u8,
    type_stride: usize,
    type_name: usize,
    type_size: usize,
    ints: *const u8,
    int_stride: usize,
    int_name: usize,
    int_value: usize,
}

impl Tables {
    fn find() -> Option<Tables> {
        let offset = |name: &CStr| exported::<u64>(name).map(|v| v as usize);
        Some(Tables {
            structs: exported::<*const u8>(c"gHotSpotVMStructs").filter(|p| !p.is_null())?,
            struct_stride: offset(c"gHotSpotVMStructEntryArrayStride")?,
            struct_type_name: offset(c"gHotSpotVMStructEntryTypeNameOffset")?,
            struct_field_name: offset(c"gHotSpotVMStructEntryFieldNameOffset")?,
            struct_type_string: offset(c"gHotSpotVMStructEntryTypeStringOffset")?,
            struct_is_static: offset(c"gHotSpotVMStructEntryIsStaticOffset")?,
            struct_offset: offset(c"gHotSpotVMStructEntryOffsetOffset")?,
            struct_address: offset(c"gHotSpotVMStructEntryAddressOffset")?,
            types: exported::<*const u8>(c"gHotSpotVMTypes").filter(|p| !p.is_null())?,
            type_stride: offset(c"gHotSpotVMTypeEntryArrayStride")?,
            type_name: offset(c"gHotSpotVMTypeEntryTypeNameOffset")?,
            type_size: offset(c"gHotSpotVMTypeEntrySizeOffset")?,
            ints: exported::<*const u8>(c"gHotSpotVMIntConstants").filter(|p| !p.is_null())?,
            int_stride: offset(c"gHotSpotVMIntConstantEntryArrayStride")?,
            int_name: offset(c"gHotSpotVMIntConstantEntryNameOffset")?,
            int_value: offset(c"gHotSpotVMIntConstantEntryValueOffset")?,
        })
    }

    /// The struct entry for `type_name::field`, as a pointer to the entry.
    fn struct_entry(&self, type_name: &str, field: &str) -> Option<*const u8> {
        let field_at = self.struct_field_name;
        find(
            self.structs,
            self.struct_stride,
            self.struct_type_name,
            type_name,
            |e| {
                // SAFETY: the field name pointer of an entry of the table, at the VM's offset.
                unsafe {
                    let f = (e.add(field_at) as *const *const c_char).read();
                    !f.is_null() && CStr::from_ptr(f).to_bytes() == field.as_bytes()
                }
            },
        )
    }

    fn static_address(&self, type_name: &str, field: &str) -> Option<*const c_void> {
        let e = self.struct_entry(type_name, field)?;
        // SAFETY: fields of an entry of the table, at the VM's offsets.
        unsafe {
            let is_static = (e.add(self.struct_is_static) as *const i32).read() != 0;
            let address = (e.add(self.struct_address) as *const *const c_void).read();
            (is_static && !address.is_null()).then_some(address)
        }
    }

    fn field_offset(&self, type_name: &str, field: &str) -> Option<usize> {
        let e = self.struct_entry(type_name, field)?;
        // SAFETY: as in `static_address`.
        unsafe {
            let is_static = (e.add(self.struct_is_static) as *const i32).read() != 0;
            let offset = (e.add(self.struct_offset) as *const u64).read();
            (!is_static).then_some(offset as usize)
        }
    }

    /// The offset of a field whose type, as the struct entry names it, is 4 bytes long in the types table.
    fn four_byte_field(&self, type_name: &str, field: &str) -> Option<usize> {
        let e = self.struct_entry(type_name, field)?;
        // SAFETY: the type string pointer of an entry of the table, at the VM's offset.
        let declared = unsafe { (e.add(self.struct_type_string) as *const *const c_char).read() };
        if declared.is_null() {
            return None;
        }
        // SAFETY: a NUL-terminated type name of the table.
        let declared = unsafe { CStr::from_ptr(declared) }.to_str().ok()?;
        (self.type_size(declared)? == 4).then_some(())?;
        self.field_offset(type_name, field)
    }

    /// The VM's integer constant `name` (`JVMFlagOrigin::ERGONOMIC`).
    fn int_constant(&self, name: &str) -> Option<i32> {
        let e = find(self.ints, self.int_stride, self.int_name, name, |_| true)?;
        // SAFETY: the value field, an int32_t, of an entry of the constants table, at the VM's offset.
        Some(unsafe { (e.add(self.int_value) as *const i32).read_unaligned() })
    }

    fn type_size(&self, type_name: &str) -> Option<usize> {
        let e = find(
            self.types,
            self.type_stride,
            self.type_name,
            type_name,
            |_| true,
        )?;
        // SAFETY: the size field of an entry of the types table, at the VM's offset.
        let size = unsafe { (e.add(self.type_size) as *const u64).read() } as usize;
        (size > 0).then_some(size)
    }
}

/// The first entry of a VMStructs table (entries `stride` bytes apart, ending with one whose name is null)
/// named `type_name` that `also` accepts; the constants tables end and are searched the same way.
fn find(
    table: *const u8,
    stride: usize,
    type_name_at: usize,
    type_name: &str,
    also: impl Fn(*const u8) -> bool,
) -> Option<*const u8> {
    for i in 0.. {
        // SAFETY: entries are `stride` bytes apart up to the null-named one; the offset is the VM's.
        unsafe {
            let e = table.add(i * stride);
            let t = (e.add(type_name_at) as *const *const c_char).read();
            if t.is_null() {
                return None;
            }
            if CStr::from_ptr(t).to_bytes() == type_name.as_bytes() && also(e) {
                return Some(e);
            }
        }
    }
    None
}
