//! The control channel: a Unix domain socket per JVM that `instr ctl PID COMMAND` talks to.
//!
//! Where: `/tmp/instr-UID/PID.sock`, the socket mode 0600 in a directory of mode 0700 that the JVM's
//! user owns, so that only that user (and root) can reach it; a directory that is not so (another owner,
//! group or world access, a symbolic link) is refused and the agent runs without a channel. Nothing
//! listens on TCP. Each connection's peer is checked again with SO_PEERCRED: its uid must be the JVM's,
//! or root's.
//!
//! Protocol, one command per connection: the client sends one line of at most [`MAX_LINE`] bytes ending
//! in `\n`; the agent answers `ok` or `error: MESSAGE` on the first line, the command's output after it,
//! and closes. A longer line, a client that sends nothing for [`IO_TIMEOUT`], or one that does not read
//! its answer, gets an error or is dropped; the buffer never grows past the limit. One thread
//! (`instr-control`) serves the connections one after the other: a hung client delays the next by at most
//! the timeout, and no application thread ever waits on the socket.
//!
//! That thread is a plain native thread, not a Java one, while it waits in `accept`, and joins the VM
//! (as a daemon) only for the length of one command. HotSpot's exit waits up to 300 ms for every Java
//! thread that is in native code to come back (`VM_Exit::wait_for_threads_in_native_to_block`), and a
//! Java thread blocked in `accept` never does: every program run under the agent ended 300 ms late.

use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

use crate::ffi::Jni;
use crate::state::agent;

/// The longest command line, newline included.
pub const MAX_LINE: usize = 4096;
/// How long a connection may take to send its line, or to take the answer.
pub const IO_TIMEOUT: Duration = Duration::from_secs(5);

static ENABLED: AtomicBool = AtomicBool::new(true);
static LISTENER: OnceLock<(UnixListener, PathBuf)> = OnceLock::new();

/// `control=on|off`, at load.
pub fn configure(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

fn euid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// The per-user directory of the sockets.
pub fn directory(uid: u32) -> PathBuf {
    PathBuf::from(format!("/tmp/instr-{uid}"))
}

/// The socket of the JVM `pid`, when it runs as `uid`.
pub fn socket_path(uid: u32, pid: u32) -> PathBuf {
    directory(uid).join(format!("{pid}.sock"))
}

/// Opens the socket and starts the thread that serves it; a failure is one `instr:` line, and the agent
/// profiles on without a channel.
pub fn start(jni: Jni) {
    start_thread(jni, None);
}

/// The same, with `first` run on the thread before it serves (attach.rs's late set-up); the thread
/// starts for `first` even with `control=off`. False if the thread could not start.
pub fn start_with(jni: Jni, first: fn(Jni)) -> bool {
    start_thread(jni, Some(first))
}

fn start_thread(jni: Jni, first: Option<fn(Jni)>) -> bool {
    let Some(a) = agent() else { return false };
    if ENABLED.load(Ordering::Relaxed) && LISTENER.get().is_none() {
        match listen() {
            Ok(l) => {
                let _ = LISTENER.set(l);
            }
            Err(e) => eprintln!("instr: no control channel: {e}"),
        }
    }
    let Some(first) = first else {
        return LISTENER.get().is_none() || spawn_server();
    };
    // `first` needs a Java thread from the start (attach.rs engages HeapProxy on it); it starts the
    // server when it is done, so that no command runs before the agent is set up.
    *crate::state::lock(&FIRST) = Some(first);
    let started = crate::threads::new_agent_thread(jni, "instr-control").is_some_and(|thread| {
        let e = crate::ffi::events::run_agent_thread(a.jvmti, thread, run_first, 5);
        jni.delete_local(thread);
        e == crate::jvmti::ERROR_NONE
    });
    if !started {
        eprintln!("instr: cannot start the control thread; no control channel");
        close();
    }
    started
}

/// What the agent thread runs before the server starts.
static FIRST: std::sync::Mutex<Option<fn(Jni)>> = std::sync::Mutex::new(None);

fn run_first(jni: Jni) {
    let first = crate::state::lock(&FIRST).take();
    if let Some(first) = first {
        first(jni);
    }
    if LISTENER.get().is_some() {
        spawn_server();
    }
}

/// Starts the native thread that serves the socket; false (and the socket closed) if it cannot.
fn spawn_server() -> bool {
    let spawned = std::thread::Builder::new()
        .name("instr-control".into())
        .spawn(serve)
        .is_ok();
    if !spawned {
        eprintln!("instr: cannot start the control thread; no control channel");
        close();
    }
    spawned
}

/// Removes the socket file (VM death): the next JVM with this pid must not find a dead one.
pub fn close() {
    if let Some((listener, path)) = LISTENER.get() {
        let _ = std::fs::remove_file(path);
        // Wakes the control thread from accept() so that it ends with the VM. It waits there outside the
        // VM (serve), because the VM's exit waits at least 300 ms for every Java thread still in native
        // code (VM_Exit::wait_for_threads_in_native_to_block); ending it also frees the listener.
        CLOSED.store(true, Ordering::Release);
        let _ = rustix::net::shutdown(listener, rustix::net::Shutdown::Both);
    }
}

/// Set once the socket is closed: the control thread then ends instead of waiting for connections.
static CLOSED: AtomicBool = AtomicBool::new(false);

fn listen() -> Result<(UnixListener, PathBuf), String> {
    let uid = euid();
    let dir = directory(uid);
    private_directory(&dir, uid)?;
    let path = socket_path(uid, std::process::id());
    // A socket left by a JVM that had this pid and died without VM death: no one listens on it.
    let _ = std::fs::remove_file(&path);
    let listener = UnixListener::bind(&path)
        .map_err(|e| format!("cannot listen on {}: {e}", path.display()))?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| format!("cannot make {} private: {e}", path.display()))?;
    Ok((listener, path))
}

/// Creates `dir` with mode 0700, or accepts it only if it is a real directory of `uid` that no one else
/// may enter: otherwise another user could have made it, and could read or replace the sockets in it.
fn private_directory(dir: &std::path::Path, uid: u32) -> Result<(), String> {
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(format!("cannot create {}: {e}", dir.display())),
    }
    let m = std::fs::symlink_metadata(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    if !m.is_dir() || m.uid() != uid || m.mode() & 0o077 != 0 {
        return Err(format!(
            "{} is not a directory of uid {uid} with mode 0700; remove it",
            dir.display()
        ));
    }
    Ok(())
}

/// The control thread: one connection at a time, for the life of the VM. It is in the VM only while a
/// command runs.
fn serve() {
    let Some((listener, _)) = LISTENER.get() else {
        return;
    };
    for stream in listener.incoming() {
        if CLOSED.load(Ordering::Acquire) {
            return;
        }
        match stream {
            Ok(s) => {
                let Some(a) = agent() else { return };
                // The VM refuses once it is shutting down: the socket is about to go with it.
                let Some(jni) = a.java_vm.attach_daemon(c"instr-control") else {
                    return;
                };
                // A panic must not leave the thread attached, or the VM's exit waits for it again.
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handle(jni, s)));
                a.java_vm.detach();
            }
            // EMFILE and the like: wait instead of spinning, and go on.
            Err(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}

fn handle(jni: Jni, mut stream: UnixStream) {
    let _ = stream.set_read_timeout(Some(IO_TIMEOUT));
    let _ = stream.set_write_timeout(Some(IO_TIMEOUT));
    let reply = match peer_allowed(&stream) {
        Err(refusal) => format!("error: {refusal}\n"),
        Ok(()) => match read_line(&mut stream) {
            Ok(line) => crate::commands::run(jni, &line),
            Err(e) => format!("error: {e}\n"),
        },
    };
    let _ = stream.write_all(reply.as_bytes());
    let _ = stream.shutdown(std::net::Shutdown::Both);
}

fn peer_allowed(stream: &UnixStream) -> Result<(), String> {
    let ours = euid();
    let peer = rustix::net::sockopt::socket_peercred(stream)
        .map_err(|e| format!("cannot read the peer's credentials: {e}"))?
        .uid
        .as_raw();
    if peer == ours || peer == 0 {
        Ok(())
    } else {
        Err(format!(
            "refused: uid {peer} is not the JVM's user (uid {ours})"
        ))
    }
}

/// One line, without its `\n`; at most MAX_LINE bytes are ever held.
fn read_line(stream: &mut UnixStream) -> Result<String, String> {
    let mut line = Vec::with_capacity(256);
    let mut chunk = [0u8; 512];
    loop {
        let n = match stream.read(&mut chunk) {
            Ok(n) => n,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Err(format!(
                    "no complete command line within {} s",
                    IO_TIMEOUT.as_secs()
                ))
            }
            Err(e) => return Err(format!("reading the command: {e}")),
        };
        let got = &chunk[..n];
        if let Some(end) = got.iter().position(|&b| b == b'\n') {
            line.extend_from_slice(&got[..end]);
            if line.len() >= MAX_LINE {
                return Err(too_long());
            }
            return String::from_utf8(line).map_err(|_| "the command is not UTF-8".into());
        }
        line.extend_from_slice(got);
        if line.len() >= MAX_LINE {
            return Err(too_long());
        }
        if n == 0 {
            return Err("the connection closed before a complete command line".into());
        }
    }
}

fn too_long() -> String {
    format!("command line longer than {MAX_LINE} bytes")
}

/// The socket's path, for `status`.
pub fn listening_on() -> Option<PathBuf> {
    LISTENER.get().map(|(_, p)| p.clone())
}
