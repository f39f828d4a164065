//! `instr ctl PID COMMAND...`: one command to the agent's control socket (agent/src/control.rs), its
//! answer printed. The socket is `/tmp/instr-UID/NSPID.sock` in the JVM's file system, UID being the
//! JVM's user: only that user (or root) can connect.
//!
//! Exit status: 0 the agent did it; 1 the agent answered with an error; 2 no answer (no such process,
//! no agent or no socket, refused, timed out) or a usage error.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use crate::attach::Target;

/// The agent's longest command line, newline included (control.rs, `MAX_LINE`).
pub const MAX_LINE: usize = 4096;

#[derive(Args, Debug)]
#[command(
    after_help = "Commands: status; start alloc|methods [RULES | include=PATTERN,...]; start live|monitors; start cpu [INTERVAL]; \
    stop alloc|methods|live|monitors|cpu; dump [FORMAT] FILE (json, txt, collapsed, html, pprof, cpu, wall); \
    reset; threads; deadlocks; help. See docs/ATTACH.md."
)]
pub struct CtlArgs {
    /// The JVM's process id.
    pub pid: u32,
    /// The command and its arguments.
    #[arg(required = true, num_args = 1.., trailing_var_arg = true, allow_hyphen_values = true)]
    pub command: Vec<String>,
    /// Seconds to wait for the answer (start and stop retransform classes: seconds on a big program).
    #[arg(long, default_value_t = 120)]
    pub timeout: u64,
}

pub fn main(args: &CtlArgs) -> ExitCode {
    match send(args) {
        Ok((true, output)) => {
            print!("{output}");
            ExitCode::SUCCESS
        }
        Ok((false, message)) => {
            eprintln!("instr: {}: {}", args.pid, message.trim_end());
            ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("instr: ctl {}: {e}", args.pid);
            ExitCode::from(2)
        }
    }
}

/// The socket of the agent in the JVM `target`.
pub fn socket_of(target: &Target) -> PathBuf {
    target
        .tmp()
        .join(format!("instr-{}/{}.sock", target.uid, target.ns_pid))
}

/// (the agent did it, the output or the error message).
fn send(args: &CtlArgs) -> Result<(bool, String), String> {
    let target = Target::of(args.pid)?;
    let line = command_line(&args.command)?;
    request(&target, &line, Duration::from_secs(args.timeout.max(1)))
}

/// Sends `line` (newline-terminated) to the agent in `target` and reads its answer.
pub fn request(target: &Target, line: &str, timeout: Duration) -> Result<(bool, String), String> {
    let socket = socket_of(target);
    let mut stream = UnixStream::connect(&socket).map_err(|e| {
        format!(
            "cannot connect to {} ({e}): no agent in that JVM (instr attach {}), started with \
             control=off, or another user's JVM",
            socket.display(),
            target.pid
        )
    })?;
    stream
        .set_read_timeout(Some(timeout))
        .and_then(|()| stream.set_write_timeout(Some(timeout)))
        .map_err(|e| e.to_string())?;
    stream
        .write_all(line.as_bytes())
        .map_err(|e| format!("sending the command: {e}"))?;
    let mut answer = String::new();
    stream
        .read_to_string(&mut answer)
        .map_err(|e| format!("reading the answer: {e}"))?;
    if let Some(body) = answer.strip_prefix("ok\n") {
        Ok((true, body.to_string()))
    } else if let Some(message) = answer.strip_prefix("error: ") {
        Ok((false, message.to_string()))
    } else if answer.is_empty() {
        Err("the agent closed the connection without an answer".into())
    } else {
        Err(format!("unexpected answer: {}", answer.trim_end()))
    }
}

/// The line sent: the words joined by spaces, a relative dump file made absolute from here (the JVM's
/// working directory is not the caller's).
fn command_line(words: &[String]) -> Result<String, String> {
    let mut words = words.to_vec();
    let absolute = |path: &str| -> Result<String, String> {
        if Path::new(path).is_absolute() {
            return Ok(path.to_string());
        }
        let cwd = std::env::current_dir().map_err(|e| format!("no working directory: {e}"))?;
        Ok(cwd.join(path).display().to_string())
    };
    match words.first().map(String::as_str) {
        Some("dump") if words.len() > 1 => {
            let file = words.last_mut().expect("two words at least");
            *file = absolute(file)?;
        }
        // start PROBE RULES.yaml, or start PROBE rules=RULES.yaml; live, monitors and cpu take no file
        Some("start")
            if words.len() == 3 && !matches!(words[1].as_str(), "live" | "monitors" | "cpu") =>
        {
            let setting = &mut words[2];
            if let Some(path) = setting.strip_prefix("rules=") {
                *setting = format!("rules={}", absolute(path)?);
            } else if !setting.contains('=') {
                *setting = absolute(setting)?;
            }
        }
        _ => {}
    }
    if words.iter().any(|w| w.contains(['\n', '\r'])) {
        return Err("a command word holds a line break".into());
    }
    let line = format!("{}\n", words.join(" "));
    if line.len() > MAX_LINE {
        return Err(format!(
            "the command is {} bytes; the agent takes lines of at most {MAX_LINE}",
            line.len()
        ));
    }
    Ok(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines() {
        let w = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            command_line(&w(&["start", "alloc"])).unwrap(),
            "start alloc\n"
        );
        let dump = command_line(&w(&["dump", "txt", "out.txt"])).unwrap();
        assert!(
            dump.starts_with("dump txt /") && dump.ends_with("/out.txt\n"),
            "{dump}"
        );
        assert!(command_line(&w(&["status\nstop"])).is_err());
        let start = command_line(&w(&["start", "methods", "r.yaml"])).unwrap();
        assert!(
            start.starts_with("start methods /") && start.ends_with("/r.yaml\n"),
            "{start}"
        );
        let start = command_line(&w(&["start", "methods", "rules=r.yaml"])).unwrap();
        assert!(start.starts_with("start methods rules=/"), "{start}");
        assert_eq!(
            command_line(&w(&["start", "live", "512k"])).unwrap(),
            "start live 512k\n"
        );
        assert_eq!(
            command_line(&w(&["start", "cpu", "1ms"])).unwrap(),
            "start cpu 1ms\n"
        );
        assert!(command_line(&w(&["start", &"x".repeat(MAX_LINE)]))
            .unwrap_err()
            .contains("at most 4096"));
    }
}
