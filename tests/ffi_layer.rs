//! The agent's FFI layer is the only place that may hold `unsafe` code or define a function the VM calls,
//! and every such function runs its body under the one guard (agent/src/ffi/guard.rs).
//!
//! The workspace denies `unsafe_code` and agent/src/ffi/mod.rs alone allows it, so an `unsafe` block added
//! anywhere else fails the build; `unsafe_outside_the_layer_fails_the_build` shows that on a copy of the
//! agent's lint settings. The entry-point test reads the exported symbols of the built libinstr.so with
//! `nm -D` and the callbacks the layer registers, and checks each one's body.

mod support;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use support::*;

fn agent_sources() -> Vec<PathBuf> {
    let root = workspace().join("agent/src");
    files_under(&root)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .map(|p| root.join(p))
        .collect()
}

fn in_layer(p: &Path) -> bool {
    p.components().any(|c| c.as_os_str() == "ffi")
}

/// Source lines without comments (`//` to the end of the line), where the word `unsafe` would be code.
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.split("//").next().unwrap_or("")))
}

#[test]
fn only_the_layer_writes_unsafe_or_allows_it() {
    let mut offenders = Vec::new();
    for p in agent_sources() {
        let text = fs::read_to_string(&p).unwrap();
        for (n, line) in code_lines(&text) {
            let words_unsafe = line
                .split(|c: char| !c.is_alphanumeric() && c != '_')
                .any(|w| w == "unsafe");
            let allows = line.contains("allow(unsafe_code)");
            if (words_unsafe || allows) && !in_layer(&p) {
                offenders.push(format!("{}:{n}: {}", p.display(), line.trim()));
            }
            if allows && !p.ends_with("ffi/mod.rs") {
                offenders.push(format!(
                    "{}:{n}: allow(unsafe_code) outside ffi/mod.rs",
                    p.display()
                ));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "unsafe outside the FFI layer:\n{}",
        offenders.join("\n")
    );
    let manifest = fs::read_to_string(workspace().join("Cargo.toml")).unwrap();
    assert!(
        manifest.contains("unsafe_code = \"deny\""),
        "the workspace lints must deny unsafe_code"
    );
    let agent_manifest = fs::read_to_string(workspace().join("agent/Cargo.toml")).unwrap();
    assert!(agent_manifest.contains("[lints]\nworkspace = true"));
}

/// Builds a two-file crate with the workspace's lint and the layer's arrangement: `unsafe` inside the
/// allowed module compiles, the same block in a sibling module does not.
#[test]
fn unsafe_outside_the_layer_fails_the_build() {
    let dir = scratch("ffi-lint-crate");
    let build = |outside: &str| {
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("src/ffi")).unwrap();
        fs::write(
            dir.join("Cargo.toml"),
            "[package]\nname = \"lint-probe\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\
             [lints.rust]\nunsafe_code = \"deny\"\n[workspace]\n",
        )
        .unwrap();
        fs::write(
            dir.join("src/lib.rs"),
            format!("pub mod ffi;\npub fn outside() -> u8 {{ {outside} }}\n"),
        )
        .unwrap();
        fs::write(
            dir.join("src/ffi/mod.rs"),
            "#![allow(unsafe_code)]\npub fn inside() -> u8 { let x = 1u8; unsafe { *(&x as *const u8) } }\n",
        )
        .unwrap();
        Command::new(env!("CARGO"))
            .args(["build", "--offline", "--quiet"])
            .env("CARGO_TARGET_DIR", dir.join("target"))
            .current_dir(&dir)
            .output()
            .unwrap()
    };
    let safe = build("ffi::inside()");
    assert!(safe.status.success(), "{}", text(&safe.stderr));
    let unsafe_outside = build("let x = 2u8; unsafe { *(&x as *const u8) }");
    assert!(
        !unsafe_outside.status.success(),
        "unsafe outside ffi/ compiled"
    );
    assert!(
        text(&unsafe_outside.stderr).contains("usage of an `unsafe` block"),
        "{}",
        text(&unsafe_outside.stderr)
    );
}

#[test]
fn every_entry_point_is_a_guarded_function_of_the_layer() {
    let lib = agent_lib();
    let nm = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(&lib)
        .output()
        .expect("nm (binutils) is installed by scripts/setup.sh");
    assert!(nm.status.success());
    let exported: Vec<String> = text(&nm.stdout)
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (_, kind, name) = (f.next()?, f.next()?, f.next()?);
            (kind == "T").then(|| name.to_string())
        })
        .filter(|n| n.starts_with("Agent_") || n.starts_with("Java_"))
        .collect();
    assert!(exported.iter().any(|n| n == "Agent_OnLoad"), "{exported:?}");
    assert!(exported.len() >= 10, "natives missing from {exported:?}");

    let layer: Vec<(PathBuf, String)> = agent_sources()
        .into_iter()
        .filter(|p| in_layer(p))
        .map(|p| {
            let t = fs::read_to_string(&p).unwrap();
            (p, t)
        })
        .collect();
    // Every function the VM calls: the exported symbols, and every extern "system" function defined in
    // the layer (event trampolines, whether written out or as a macro's template, agent threads, the
    // AllocObject wrapper). Each body must run under the guard.
    let mut entries: Vec<String> = Vec::new();
    let mut unguarded = Vec::new();
    for (p, t) in &layer {
        let lines: Vec<&str> = code_lines(t).map(|(_, l)| l).collect();
        for (i, line) in lines.iter().enumerate() {
            let Some(at) = line.find("extern \"system\" fn ") else {
                continue;
            };
            if line.trim_start().starts_with("type ") || line.contains("= unsafe extern") {
                continue;
            }
            let name: String = line[at + 19..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '$')
                .collect();
            // The body ends at the first `}` indented as the signature is.
            let indent = &line[..line.len() - line.trim_start().len()];
            let close = format!("{indent}}}");
            let end = (i + 1..lines.len())
                .find(|&j| lines[j].trim_end() == close)
                .unwrap_or(lines.len());
            let first = lines[i..end].join("\n");
            if !first.contains("guard(") {
                unguarded.push(format!("{name} ({}:{})", p.display(), i + 1));
            }
            entries.push(name);
        }
    }
    for sym in &exported {
        assert!(
            entries.iter().any(|n| n == sym),
            "{sym} is exported but not defined in agent/src/ffi"
        );
    }
    assert!(
        unguarded.is_empty(),
        "entry points without the guard: {unguarded:?}"
    );
    // Outside the layer, no function the VM could call.
    for p in agent_sources().into_iter().filter(|p| !in_layer(p)) {
        let t = fs::read_to_string(&p).unwrap();
        for (n, line) in code_lines(&t) {
            assert!(
                !line.contains("extern \"system\"") && !line.contains("no_mangle"),
                "{}:{n}: an entry point outside agent/src/ffi",
                p.display()
            );
        }
    }
    println!(
        "{} exported symbols, {} guarded entry points",
        exported.len(),
        entries.len()
    );
}
