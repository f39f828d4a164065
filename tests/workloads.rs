//! Every workload of the evaluation kit (`../shared/workloads/*/run.sh`: h2, lucene, xalan, fop, sunflow,
//! javac) runs under the agent with rules/default.yaml and still prints its known result: each `run.sh`
//! checks the program's output against a fixed value and exits non-zero on any difference. Skipped, with a
//! note, on a machine without the kit (`INSTR_WORKLOADS=DIR` points at another copy).

mod support;

use std::fs;
use std::path::PathBuf;
use std::process::Command;

use support::*;

fn kit() -> Option<PathBuf> {
    let dir = std::env::var_os("INSTR_WORKLOADS")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("../shared/workloads"));
    dir.join("run-all.sh").exists().then_some(dir)
}

const WORKLOADS: &[&str] = &["h2", "lucene", "xalan", "fop", "sunflow", "javac"];

#[test]
fn every_workload_runs_unchanged_under_the_agent() {
    let Some(kit) = kit() else {
        println!("workload kit not found (../shared/workloads); skipped");
        return;
    };
    let lib = agent_lib();
    let rules = workspace().join("rules/default.yaml");
    let tmp = scratch("workloads");
    // The programs of the kit (its other directories with a run.sh are tools, e.g. asm-bench).
    let names: Vec<&str> = WORKLOADS
        .iter()
        .copied()
        .filter(|n| kit.join(n).join("run.sh").exists())
        .collect();
    assert_eq!(
        names.len(),
        WORKLOADS.len(),
        "workloads missing from {}",
        kit.display()
    );
    let mut failures = Vec::new();
    for &name in &names {
        let reports = tmp.join(name);
        fs::create_dir_all(&reports).unwrap();
        let opts = format!(
            "-agentpath:{}=rules={},file={}/report-%p",
            lib.display(),
            rules.display(),
            reports.display()
        );
        let out = run(Command::new("bash")
            .arg(kit.join(name).join("run.sh"))
            .env("JAVA_OPTS", &opts)
            .env("WL_TMP", tmp.join("scratch")));
        let stdout = text(&out.stdout);
        let ok = stdout.lines().find(|l| l.starts_with("ok:")).unwrap_or("");
        let wall = stdout
            .lines()
            .find(|l| l.starts_with("wall_seconds:"))
            .unwrap_or("");
        println!(
            "{name}: {} {ok} ({wall})",
            if out.status.success() { "PASS" } else { "FAIL" }
        );
        let report = fs::read_dir(&reports)
            .unwrap()
            .flatten()
            .any(|e| e.file_name().to_string_lossy().ends_with(".json"));
        // run.sh exits non-zero when the program's checked result differs (sunflow compares its image
        // itself and prints no `ok:` line).
        if !out.status.success() || !report {
            failures.push(format!(
                "{name}: exit {:?}, report written: {report}\n{}\n{}",
                out.status.code(),
                tail(&stdout, 10),
                tail(&text(&out.stderr), 10)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
