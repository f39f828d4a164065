//! `INSTR_EXIT_TIMES=1` in the environment: each report prints one line on stderr with the wall and
//! CPU time of its steps (reading the counters, building the profile, rendering, writing, freeing),
//! which is how bench/profile/many-stacks.sh splits the VM's exit. Two CPU times: the reporting
//! thread's, and the process's (every thread's: the renderers run on helper threads, but so do the
//! JVM's compilers, which may still be at work when the program ends). Without the variable a report
//! reads the environment once and nothing else.

use std::time::{Duration, Instant};

use crate::ffi::libc::{process_cpu_now, thread_cpu_now};

pub struct Steps {
    /// Where the last step ended: wall clock, thread and process CPU nanoseconds; `None`: not asked
    /// for.
    last: Option<(Instant, i64, i64)>,
    done: Vec<(&'static str, Duration, i64, i64)>,
}

impl Steps {
    pub fn start() -> Steps {
        let on = std::env::var_os("INSTR_EXIT_TIMES").is_some_and(|v| v == "1");
        Steps {
            last: on.then(|| (Instant::now(), thread_cpu_now(), process_cpu_now())),
            done: Vec::new(),
        }
    }

    /// The step `name` ended now.
    pub fn step(&mut self, name: &'static str) {
        if let Some(last) = &mut self.last {
            let now = (Instant::now(), thread_cpu_now(), process_cpu_now());
            self.done
                .push((name, now.0 - last.0, now.1 - last.1, now.2 - last.2));
            *last = now;
        }
    }

    /// The line, when asked for: `instr: report steps, ms wall/thread CPU/process CPU: collect
    /// 12.3/12.0/12.1, ...`.
    pub fn print(&self) {
        if self.last.is_none() {
            return;
        }
        let ms = |ns: f64| ns / 1e6;
        let steps: Vec<String> = self
            .done
            .iter()
            .map(|(name, wall, thread, process)| {
                format!(
                    "{name} {:.1}/{:.1}/{:.1}",
                    ms(wall.as_nanos() as f64),
                    ms(*thread as f64),
                    ms(*process as f64)
                )
            })
            .collect();
        let wall: Duration = self.done.iter().map(|d| d.1).sum();
        let thread: i64 = self.done.iter().map(|d| d.2).sum();
        let process: i64 = self.done.iter().map(|d| d.3).sum();
        eprintln!(
            "instr: report steps, ms wall/thread CPU/process CPU: {}; all {:.1}/{:.1}/{:.1}",
            steps.join(", "),
            ms(wall.as_nanos() as f64),
            ms(thread as f64),
            ms(process as f64)
        );
    }
}
