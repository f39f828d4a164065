//! The values of named functions in the symbol table (`.symtab`) of an ELF64 little-endian file: the
//! table `nm` reads, which also lists the functions a library does not export. The agent reads libjvm's
//! to check a function pointer HotSpot hands out against the name of the function it must be
//! (ffi/libjvm.rs), before calling it.
//!
//! Only the section headers, the symbol table and its string table are read, with positioned reads; a
//! file whose tables are missing, truncated or implausibly large is an error, never a panic.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

const SECTION_HEADER_BYTES: usize = 64;
const SYMBOL_BYTES: usize = 24;
const SHT_SYMTAB: u32 = 2;
const STT_FUNC: u8 = 2;
/// More than any libjvm's tables (symbols 1-2 MB, names 2-4 MB in JDK 17 and 25): a bound, not a guess.
const LARGEST_TABLE: u64 = 256 << 20;

/// For each of `names`, the value (`st_value`, the address before relocation) of the function symbol of
/// that name in `path`'s symbol table; `None` for a name the table does not list.
pub fn function_values(path: &Path, names: &[&str]) -> Result<Vec<Option<u64>>, String> {
    let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let elf = Elf { file: &file };
    elf.function_values(names)
        .map_err(|e| format!("{}: {e}", path.display()))
}

struct Elf<'f> {
    file: &'f File,
}

struct Section {
    kind: u32,
    offset: u64,
    size: u64,
    link: u32,
}

impl Elf<'_> {
    fn function_values(&self, names: &[&str]) -> Result<Vec<Option<u64>>, String> {
        let header = self.read(0, 64)?;
        if header[..4] != *b"\x7fELF" || header[4] != 2 || header[5] != 1 {
            return Err("not an ELF64 little-endian file".into());
        }
        let section_headers = u64_at(&header, 0x28);
        let entry_size = u16_at(&header, 0x3a) as usize;
        let count = u16_at(&header, 0x3c) as u64;
        if entry_size != SECTION_HEADER_BYTES || count == 0 {
            return Err("no section headers".into());
        }
        let sections = self.read(section_headers, count * SECTION_HEADER_BYTES as u64)?;
        let section = |i: usize| -> Option<Section> {
            let h = sections.get(i * SECTION_HEADER_BYTES..(i + 1) * SECTION_HEADER_BYTES)?;
            Some(Section {
                kind: u32_at(h, 4),
                offset: u64_at(h, 24),
                size: u64_at(h, 32),
                link: u32_at(h, 40),
            })
        };
        let symtab = (0..count as usize)
            .filter_map(section)
            .find(|s| s.kind == SHT_SYMTAB)
            .ok_or("no symbol table (a stripped build)")?;
        let strtab =
            section(symtab.link as usize).ok_or("the symbol table names no string table")?;
        let symbols = self.read(symtab.offset, symtab.size)?;
        let strings = self.read(strtab.offset, strtab.size)?;
        let mut found = vec![None; names.len()];
        for symbol in symbols.chunks_exact(SYMBOL_BYTES) {
            if symbol[4] & 0xf != STT_FUNC {
                continue;
            }
            let name = name_at(&strings, u32_at(symbol, 0) as usize);
            if let Some(i) = names.iter().position(|n| n.as_bytes() == name) {
                found[i].get_or_insert(u64_at(symbol, 8));
            }
        }
        Ok(found)
    }

    fn read(&self, offset: u64, len: u64) -> Result<Vec<u8>, String> {
        if len > LARGEST_TABLE {
            return Err(format!("a table of {len} bytes"));
        }
        let mut bytes = vec![0; len as usize];
        self.file
            .read_exact_at(&mut bytes, offset)
            .map_err(|e| format!("{len} bytes at {offset}: {e}"))?;
        Ok(bytes)
    }
}

/// The NUL-terminated name at `at` in a string table; empty when `at` is outside it.
fn name_at(strings: &[u8], at: usize) -> &[u8] {
    let rest = strings.get(at..).unwrap_or_default();
    &rest[..rest.iter().position(|&b| b == 0).unwrap_or(rest.len())]
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The libjvm.so of every JDK under /usr/lib/jvm.
    fn installed_libjvms() -> Vec<std::path::PathBuf> {
        let mut found: Vec<_> = std::fs::read_dir("/usr/lib/jvm")
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path().join("lib/server/libjvm.so"))
            .filter(|p| p.is_file())
            .collect();
        found.sort();
        found.dedup_by_key(|p| std::fs::canonicalize(p).ok());
        found
    }

    /// The names ffi/libjvm.rs and ffi/management.rs look for, so that on these JDKs the management
    /// table's slot is checked by name, not taken from a known layout.
    #[test]
    fn finds_exported_and_local_functions_of_every_installed_libjvm() {
        let libjvms = installed_libjvms();
        assert!(!libjvms.is_empty(), "no JDK under /usr/lib/jvm");
        for path in libjvms {
            let found = function_values(
                &path,
                &[
                    "JVM_GetManagement",
                    "jmm_GetVersion",
                    "jmm_ExecuteDiagnosticCommand",
                    "no_such_function_here",
                ],
            )
            .unwrap_or_else(|e| panic!("{e}"));
            let values: Vec<u64> = found[..3]
                .iter()
                .map(|v| v.unwrap_or_else(|| panic!("{}: {found:?}", path.display())))
                .collect();
            assert!(values.iter().all(|&v| v > 0), "{}", path.display());
            assert!(values[0] != values[1] && values[1] != values[2]);
            assert_eq!(found[3], None);
        }
    }

    #[test]
    fn refuses_what_is_not_an_elf_file_with_its_tables() {
        let dir = std::env::temp_dir().join(format!("instr-elf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let text = dir.join("text");
        std::fs::write(
            &text,
            b"not a library at all, but long enough to hold an ELF header's 64 bytes",
        )
        .unwrap();
        let err = function_values(&text, &["f"]).unwrap_err();
        assert!(err.contains("not an ELF64"), "{err}");
        // A real header whose section headers are cut off.
        let libjvm = &installed_libjvms()[0];
        let cut = dir.join("cut.so");
        std::fs::write(&cut, &std::fs::read(libjvm).unwrap()[..4096]).unwrap();
        let err = function_values(&cut, &["f"]).unwrap_err();
        assert!(err.contains("bytes at"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
