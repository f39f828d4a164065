//! `instr attach PID [OPTIONS]`: loads libinstr.so into a running HotSpot JVM through the JVM's own attach
//! mechanism, the one `jcmd` uses, spoken here so that no JDK tool is needed on the machine.
//!
//! HotSpot on Linux: the JVM listens on the Unix socket `/tmp/.java_pidNSPID` once its attach listener
//! runs. It starts it lazily: the client creates the file `.attach_pidNSPID` in the JVM's working
//! directory (or its /tmp), owned by the JVM's user, and sends SIGQUIT; the JVM's signal thread sees the
//! file and starts listening. The request is NUL-terminated strings: the protocol version `1`, the command
//! `load`, and three arguments: the library path, `true` (the path is absolute) and the agent's options.
//! The answer is the command's status on the first line (0: done), then the command's output (for
//! `load`, the agent's `Agent_OnAttach` return code). A JVM in another mount or pid namespace (a
//! container) is reached through `/proc/PID/root` and `/proc/PID/cwd`, under its own pid there (NSpid).

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;

#[derive(Args, Debug)]
pub struct AttachArgs {
    /// The JVM's process id.
    pub pid: u32,
    /// The agent's options, as after -agentpath:libinstr.so= (e.g. rules=app.yaml,start=off).
    #[arg(default_value = "")]
    pub options: String,
    /// The agent library (default: libinstr.so beside this instr binary).
    #[arg(long, value_name = "PATH")]
    pub agent: Option<PathBuf>,
    /// Seconds to wait for the JVM to answer (the attach, and the agent's first retransformation).
    #[arg(long, default_value_t = 60)]
    pub timeout: u64,
}

/// How long the attach listener takes to start after SIGQUIT, at most.
const LISTENER_START: Duration = Duration::from_secs(10);

pub fn main(args: &AttachArgs) -> ExitCode {
    match attach(args) {
        Ok(output) => {
            println!(
                "instr: agent loaded into {}; control it with `instr ctl {} status`",
                args.pid, args.pid
            );
            if !output.trim().is_empty() {
                println!("{}", output.trim_end());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("instr: attach {}: {e}", args.pid);
            ExitCode::from(2)
        }
    }
}

fn attach(args: &AttachArgs) -> Result<String, String> {
    let lib = match &args.agent {
        Some(p) => p.clone(),
        None => std::env::current_exe()
            .map_err(|e| format!("cannot find this binary: {e}"))?
            .with_file_name("libinstr.so"),
    };
    let lib = lib
        .canonicalize()
        .map_err(|e| format!("{}: {e}", lib.display()))?;
    let target = Target::of(args.pid)?;
    let timeout = Duration::from_secs(args.timeout.max(1));
    let mut socket = target.connect()?;
    socket
        .set_read_timeout(Some(timeout))
        .and_then(|()| socket.set_write_timeout(Some(timeout)))
        .map_err(|e| e.to_string())?;
    let lib = lib.to_str().ok_or("the agent's path is not UTF-8")?;
    let request = request(&["load", lib, "true", &args.options])?;
    socket
        .write_all(&request)
        .map_err(|e| format!("sending the request: {e}"))?;
    let mut answer = String::new();
    socket
        .read_to_string(&mut answer)
        .map_err(|e| format!("reading the JVM's answer: {e}"))?;
    let output = load_result(&answer)?;
    if args.options.split(',').any(|o| o.trim() == "control=off") {
        return Ok(output);
    }
    // The agent engages and retransforms on its control thread, which serves the socket once that is
    // done: the status answered then says what is on.
    let deadline = Instant::now() + timeout;
    loop {
        match crate::ctl::request(&target, "status\n", timeout) {
            Ok((_, status)) => return Ok(format!("{output}{status}")),
            Err(e) if Instant::now() > deadline => {
                return Err(format!(
                    "loaded, but the control socket does not answer: {e}"
                ))
            }
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// The request: protocol version 1, the command and exactly three arguments, each NUL-terminated.
fn request(command: &[&str]) -> Result<Vec<u8>, String> {
    let mut out = b"1\0".to_vec();
    for part in command.iter().chain(std::iter::repeat(&"")).take(4) {
        if part.contains('\0') {
            return Err("an argument holds a NUL byte".into());
        }
        out.extend_from_slice(part.as_bytes());
        out.push(0);
    }
    Ok(out)
}

/// The JVM's answer to `load`: its status line, then the agent's return code (`0` on JDK 17,
/// `return code: 0` on later JDKs).
fn load_result(answer: &str) -> Result<String, String> {
    let (status, rest) = answer.split_once('\n').unwrap_or((answer, ""));
    if status.trim() != "0" {
        return Err(format!(
            "the JVM refused the load (status {}): {}",
            status.trim(),
            rest.trim()
        ));
    }
    let mut lines = rest.lines();
    let first = lines.next().unwrap_or("").trim();
    let code = first.strip_prefix("return code:").unwrap_or(first).trim();
    match code.parse::<i64>() {
        Ok(0) => Ok(lines.collect::<Vec<_>>().join("\n")),
        Ok(n) => Err(format!(
            "the agent refused to start (Agent_OnAttach returned {n}); its reason is on the JVM's stderr"
        )),
        Err(_) if first.is_empty() => Ok(String::new()),
        Err(_) => Err(format!("unexpected answer: {}", rest.trim())),
    }
}

/// A JVM seen from here: its files through /proc, its pid inside its own namespace.
pub struct Target {
    pub pid: u32,
    /// The pid the JVM knows itself by (the last NSpid field); the same as `pid` outside containers.
    pub ns_pid: u32,
    /// The JVM's effective uid and gid.
    pub uid: u32,
    pub gid: u32,
    /// `/proc/PID/root`: the JVM's file system root.
    pub root: PathBuf,
}

impl Target {
    pub fn of(pid: u32) -> Result<Target, String> {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
            .map_err(|e| format!("no such process ({e})"))?;
        let field = |name: &str| -> Option<Vec<u32>> {
            status.lines().find_map(|l| l.strip_prefix(name)).map(|v| {
                v.split_whitespace()
                    .filter_map(|n| n.parse().ok())
                    .collect()
            })
        };
        let ns_pid = field("NSpid:")
            .and_then(|v| v.last().copied())
            .unwrap_or(pid);
        // Real, effective, saved, file system: the effective ids are the second field.
        let uid = field("Uid:").and_then(|v| v.get(1).copied());
        let gid = field("Gid:").and_then(|v| v.get(1).copied());
        let (Some(uid), Some(gid)) = (uid, gid) else {
            return Err("cannot read the process's user".into());
        };
        Ok(Target {
            pid,
            ns_pid,
            uid,
            gid,
            root: PathBuf::from(format!("/proc/{pid}/root")),
        })
    }

    /// The JVM's /tmp, seen from here.
    pub fn tmp(&self) -> PathBuf {
        self.root.join("tmp")
    }

    fn connect(&self) -> Result<UnixStream, String> {
        let socket = self.tmp().join(format!(".java_pid{}", self.ns_pid));
        if let Ok(s) = UnixStream::connect(&socket) {
            return Ok(s);
        }
        // SIGQUIT would end most other programs: signal only a process that has a HotSpot VM in it.
        self.check_hotspot()?;
        let trigger = self.start_listener()?;
        let deadline = Instant::now() + LISTENER_START;
        let mut pause = Duration::from_millis(20);
        let result = loop {
            if let Ok(s) = UnixStream::connect(&socket) {
                break Ok(s);
            }
            if Instant::now() > deadline {
                break Err(format!(
                    "the JVM did not open {} within {} s: not a HotSpot JVM, started with \
                     -XX:+DisableAttachMechanism, or not answering",
                    socket.display(),
                    LISTENER_START.as_secs()
                ));
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(500));
        };
        let _ = std::fs::remove_file(trigger);
        result
    }

    fn check_hotspot(&self) -> Result<(), String> {
        let maps = std::fs::read_to_string(format!("/proc/{}/maps", self.pid))
            .map_err(|e| format!("cannot read its memory map ({e})"))?;
        if maps.lines().any(|l| l.ends_with("/libjvm.so")) {
            Ok(())
        } else {
            Err("not a HotSpot JVM (no libjvm.so in its memory map); not signalled".into())
        }
    }

    /// Creates the trigger file (the JVM's working directory first, its /tmp if that is not writable)
    /// and sends SIGQUIT. Returns the file, for removal.
    fn start_listener(&self) -> Result<PathBuf, String> {
        let name = format!(".attach_pid{}", self.ns_pid);
        let candidates = [
            PathBuf::from(format!("/proc/{}/cwd", self.pid)).join(&name),
            self.tmp().join(&name),
        ];
        let trigger = candidates
            .iter()
            .find(|p| create_owned_by(p, self.uid, self.gid).is_ok())
            .ok_or_else(|| {
                format!(
                    "cannot create {} or {}",
                    candidates[0].display(),
                    candidates[1].display()
                )
            })?
            .clone();
        let pid = rustix::process::Pid::from_raw(self.pid as i32).ok_or("pid 0")?;
        if let Err(e) = rustix::process::kill_process(pid, rustix::process::Signal::QUIT) {
            let _ = std::fs::remove_file(&trigger);
            return Err(format!("cannot signal the process: {e}"));
        }
        Ok(trigger)
    }
}

/// The JVM only honours a trigger file its own user owns (root may create it on that user's behalf).
fn create_owned_by(path: &Path, uid: u32, gid: u32) -> std::io::Result<()> {
    std::fs::write(path, b"")?;
    if let Err(e) = std::os::unix::fs::chown(path, Some(uid), Some(gid)) {
        if e.kind() != std::io::ErrorKind::PermissionDenied {
            let _ = std::fs::remove_file(path);
            return Err(e);
        }
        // Not root: the file is ours, and the JVM is ours too or will not answer anyway.
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_bytes() {
        assert_eq!(
            request(&["load", "/x/libinstr.so", "true", "start=off"]).unwrap(),
            b"1\0load\0/x/libinstr.so\0true\0start=off\0"
        );
        assert_eq!(request(&["properties"]).unwrap(), b"1\0properties\0\0\0\0");
        assert!(request(&["load", "a\0b"]).is_err());
    }

    #[test]
    fn answers() {
        assert_eq!(load_result("0\n0\n"), Ok(String::new()));
        assert_eq!(load_result("0\nreturn code: 0\n"), Ok(String::new()));
        assert!(load_result("0\nreturn code: -1\n")
            .unwrap_err()
            .contains("returned -1"));
        assert!(load_result("0\n-1\n").unwrap_err().contains("returned -1"));
        assert!(load_result("101\nbad\n")
            .unwrap_err()
            .contains("status 101"));
    }
}
