//! Applies an edit to a class file, a jar or a directory tree, writing outputs atomically.

use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use instr_rewriter::classfile::ClassFile;
use instr_rewriter::{dump, rewrite, MethodEdit, Options};

/// Totals over one run, and what went wrong.
#[derive(Default, Debug)]
pub struct Summary {
    pub classes: u64,
    pub rewritten: u64,
    pub methods_edited: u64,
    pub copied_files: u64,
    /// One line each: a file whose class could not be parsed (it was copied unchanged).
    pub errors: Vec<String>,
    /// One line each: a method left unedited, and why.
    pub warnings: Vec<String>,
}

pub struct Rewriter<'e> {
    pub edit: &'e dyn MethodEdit,
    pub dump: Option<String>,
    pub summary: Summary,
}

impl Rewriter<'_> {
    /// Rewrites one class's bytes; on any error the input is returned unchanged and the error recorded.
    pub fn class(&mut self, origin: &str, bytes: &[u8]) -> Vec<u8> {
        self.summary.classes += 1;
        match rewrite(bytes, self.edit, Options::default()) {
            Ok(r) => {
                self.summary
                    .warnings
                    .extend(r.warnings.into_iter().map(|w| format!("{origin}: {w}")));
                if let Some(out) = r.bytes {
                    self.summary.rewritten += 1;
                    self.summary.methods_edited += r.edited_methods as u64;
                    self.print_dump(origin, bytes, &out);
                    return out;
                }
                self.print_dump(origin, bytes, bytes);
                bytes.to_vec()
            }
            Err(e) => {
                self.summary.errors.push(format!("{origin}: {e}"));
                bytes.to_vec()
            }
        }
    }

    fn print_dump(&self, origin: &str, before: &[u8], after: &[u8]) {
        let Some(selector) = &self.dump else { return };
        let listing = |bytes: &[u8]| match ClassFile::read(bytes) {
            Ok(c) => dump::list_methods(&c, selector)
                .unwrap_or_else(|e| format!("  (cannot list: {e})\n")),
            Err(e) => format!("  (cannot parse: {e})\n"),
        };
        let b = listing(before);
        if b.is_empty() {
            return;
        }
        println!(
            "=== {origin}: before\n{b}=== {origin}: after\n{}",
            listing(after)
        );
    }

    /// Dispatches on the input kind.
    pub fn path(&mut self, input: &Path, output: &Path) -> Result<(), String> {
        if input.is_dir() {
            self.directory(input, output)
        } else if has_extension(input, "jar") || has_extension(input, "zip") {
            self.jar(input, output)
        } else {
            let bytes = fs::read(input).map_err(|e| format!("{}: {e}", input.display()))?;
            let out = self.class(&input.display().to_string(), &bytes);
            write_atomically(output, &out)
        }
    }

    fn directory(&mut self, input: &Path, output: &Path) -> Result<(), String> {
        let mut files = Vec::new();
        walk(input, &mut files).map_err(|e| format!("{}: {e}", input.display()))?;
        files.sort();
        for file in files {
            let relative = file
                .strip_prefix(input)
                .expect("walked paths are under the input");
            let target = output.join(relative);
            if has_extension(&file, "class") {
                let bytes = fs::read(&file).map_err(|e| format!("{}: {e}", file.display()))?;
                let out = self.class(&file.display().to_string(), &bytes);
                write_atomically(&target, &out)?;
            } else {
                if let Some(parent) = target.parent() {
                    fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
                }
                fs::copy(&file, &target).map_err(|e| format!("{}: {e}", file.display()))?;
                self.summary.copied_files += 1;
            }
        }
        Ok(())
    }

    fn jar(&mut self, input: &Path, output: &Path) -> Result<(), String> {
        let fail = |e: &dyn std::fmt::Display| format!("{}: {e}", input.display());
        let mut archive = zip::ZipArchive::new(fs::File::open(input).map_err(|e| fail(&e))?)
            .map_err(|e| fail(&e))?;
        let tmp = temporary_path(output);
        let result = (|| -> Result<(), String> {
            let mut writer = zip::ZipWriter::new(fs::File::create(&tmp).map_err(|e| fail(&e))?);
            for i in 0..archive.len() {
                let name = archive
                    .by_index_raw(i)
                    .map_err(|e| fail(&e))?
                    .name()
                    .to_string();
                if name.ends_with(".class") {
                    let mut entry = archive.by_index(i).map_err(|e| fail(&e))?;
                    let mut bytes = Vec::with_capacity(entry.size() as usize);
                    entry.read_to_end(&mut bytes).map_err(|e| fail(&e))?;
                    let options = zip::write::SimpleFileOptions::default()
                        .compression_method(entry.compression())
                        .last_modified_time(entry.last_modified().unwrap_or_default());
                    drop(entry);
                    let out = self.class(&format!("{}!/{name}", input.display()), &bytes);
                    writer.start_file(name, options).map_err(|e| fail(&e))?;
                    writer.write_all(&out).map_err(|e| fail(&e))?;
                } else {
                    let entry = archive.by_index_raw(i).map_err(|e| fail(&e))?;
                    writer.raw_copy_file(entry).map_err(|e| fail(&e))?;
                    self.summary.copied_files += 1;
                }
            }
            writer.finish().map_err(|e| fail(&e))?;
            Ok(())
        })();
        match result {
            Ok(()) => fs::rename(&tmp, output).map_err(|e| format!("{}: {e}", output.display())),
            Err(e) => {
                let _ = fs::remove_file(&tmp);
                Err(e)
            }
        }
    }
}

fn has_extension(p: &Path, ext: &str) -> bool {
    p.extension().is_some_and(|e| e.eq_ignore_ascii_case(ext))
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            walk(&path, out)?;
        } else {
            out.push(path);
        }
    }
    Ok(())
}

fn temporary_path(target: &Path) -> PathBuf {
    let mut name = target.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".tmp{}", std::process::id()));
    target.with_file_name(name)
}

/// Writes `bytes` to `target` through a temporary file and a rename, so a reader never sees half a file.
/// On failure (disk full, rename refused) the temporary file is removed: a partial copy nobody will read
/// must not be left behind, filling the disk further.
pub fn write_atomically(target: &Path, bytes: &[u8]) -> Result<(), String> {
    let fail = |e: std::io::Error| format!("{}: {e}", target.display());
    if let Some(parent) = target.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent).map_err(fail)?;
    }
    let tmp = temporary_path(target);
    fs::write(&tmp, bytes)
        .and_then(|()| fs::rename(&tmp, target))
        .map_err(|e| {
            let _ = fs::remove_file(&tmp);
            fail(e)
        })
}
