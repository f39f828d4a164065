//! Writing report files: each through a temporary file and a rename, so that a reader never sees half
//! a report, and, for a set of reports, on a thread of their own as they are rendered.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::Mutex;
use std::thread::JoinHandle;

use crate::state::lock;

/// The temporary file `write_atomically` writes `path` through, in the same directory (a rename does not
/// cross file systems): `PATH.tmpPID.N`. N is new for every call because an on-demand report (signal
/// dispatcher or attach listener thread) can be written while another one, or the exit report, is: with
/// one name per process, two writers would share one file, and one could rename the other's half-written
/// bytes into place.
pub fn temp_path(path: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("{path}.tmp{}.{n}", std::process::id())
}

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename, so that `path` is
/// always either the previous whole file or the new whole file, even if the process is killed mid-write.
/// On any failure (directory gone, disk full, file size limit, rename refused) the temporary file is
/// removed: a full disk must not be left fuller by a partial copy of the report nobody will read.
pub fn write_atomically(path: &str, bytes: &[u8]) -> Result<(), String> {
    let tmp = temp_path(path);
    std::fs::write(&tmp, bytes)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            format!("cannot write {path}: {e}")
        })
}

/// Writes a set of reports (`write_atomically` each) and says on one line what could not be written.
pub fn write_reports(files: Vec<(String, Vec<u8>)>) {
    let writer = Writer::start();
    for (path, bytes) in files {
        writer.write(path, bytes);
    }
    writer.finish();
}

/// A set of report files, written (`write_atomically` each) on a thread of their own in the order they
/// are handed over, so that whoever renders them goes on meanwhile: copying megabytes into the page
/// cache is CPU time, and a rename over the file of the run before waits for the file system (ext4
/// starts writing the new file out before it replaces a file: 10-15 ms for 12 MB, most of it waiting).
///
/// The files are independent (a small disk may hold the text and not the JSON), but one cause (a
/// directory deleted under the program) should not print one line per file: `finish` prints one line
/// for all the failures.
pub struct Writer {
    to_thread: Option<Sender<(String, Vec<u8>)>>,
    thread: Option<JoinHandle<Vec<String>>>,
    /// The failures of files written by the caller, when there is no thread.
    inline_failures: Mutex<Vec<String>>,
}

impl Writer {
    pub fn start() -> Writer {
        let (to_thread, files) = channel::<(String, Vec<u8>)>();
        let thread = std::thread::Builder::new()
            .name("instr-write".into())
            .spawn(move || {
                files
                    .into_iter()
                    .filter_map(|(path, bytes)| write_atomically(&path, &bytes).err())
                    .collect()
            })
            .ok();
        Writer {
            // A thread that cannot be made (a process at its thread limit) leaves the writing to the
            // caller.
            to_thread: thread.is_some().then_some(to_thread),
            thread,
            inline_failures: Mutex::new(Vec::new()),
        }
    }

    /// Writes `bytes` to `path`, soon: callable from several rendering threads at once.
    pub fn write(&self, path: String, bytes: Vec<u8>) {
        let (path, bytes) = match &self.to_thread {
            Some(to_thread) => match to_thread.send((path, bytes)) {
                Ok(()) => return,
                // The thread ended early (it panicked): the file is written here.
                Err(e) => e.0,
            },
            None => (path, bytes),
        };
        if let Err(e) = write_atomically(&path, &bytes) {
            lock(&self.inline_failures).push(e);
        }
    }

    /// Waits until every file handed over is written, and prints one line if any could not be.
    pub fn finish(mut self) {
        drop(self.to_thread.take());
        let mut failures = std::mem::take(&mut *lock(&self.inline_failures));
        if let Some(thread) = self.thread.take() {
            match thread.join() {
                Ok(f) => failures.extend(f),
                Err(e) => std::panic::resume_unwind(e),
            }
        }
        if let Some(first) = failures.first() {
            match failures.len() {
                1 => eprintln!("instr: {first}"),
                n => eprintln!("instr: {first} (and {} more report files)", n - 1),
            }
        }
    }
}
