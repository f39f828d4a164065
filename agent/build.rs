//! Compiles java/HeapProxy/java/lang/*.java (HeapProxy, HeapProxyAllocs, HeapProxyCalls, HeapProxyLambdas) with javac so
//! that libinstr.so can embed the class bytes: one file ships, nothing else needs to be on a path.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let root =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("../java/HeapProxy");
    let sources: Vec<PathBuf> = [
        "HeapProxy.java",
        "HeapProxyAllocs.java",
        "HeapProxyCalls.java",
        "HeapProxyLambdas.java",
    ]
    .iter()
    .map(|f| root.join("java/lang").join(f))
    .collect();
    for source in &sources {
        println!("cargo:rerun-if-changed={}", source.display());
    }
    println!("cargo:rerun-if-env-changed=JAVA_HOME");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("heap-proxy");
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    let javac = find_javac();
    let status = Command::new(&javac)
        .args([
            "-source",
            "17",
            "-target",
            "17",
            "-nowarn",
            "-XDignore.symbol.file",
        ])
        .arg("--patch-module")
        .arg(format!("java.base={}", root.display()))
        .arg("-d")
        .arg(&out)
        .args(&sources)
        .status()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", javac.display()));
    assert!(status.success(), "javac failed on {sources:?}");
}

/// $JAVA_HOME's javac, else the oldest JDK under /usr/lib/jvm (the class must load on every supported JDK),
/// else `javac` from PATH.
fn find_javac() -> PathBuf {
    if let Some(home) = std::env::var_os("JAVA_HOME") {
        let javac = Path::new(&home).join("bin/javac");
        if javac.exists() {
            return javac;
        }
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/jvm")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin/javac"))
        .filter(|p| p.exists())
        .collect();
    found.sort_by_key(|p| feature_release(p));
    found
        .into_iter()
        .next()
        .unwrap_or_else(|| PathBuf::from("javac"))
}

fn feature_release(javac: &Path) -> u32 {
    let release = javac
        .parent()
        .and_then(Path::parent)
        .map(|h| h.join("release"));
    let text = release
        .and_then(|r| std::fs::read_to_string(r).ok())
        .unwrap_or_default();
    text.lines()
        .find_map(|l| l.strip_prefix("JAVA_VERSION=\""))
        .and_then(|v| v.split('.').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(u32::MAX)
}
