#![allow(dead_code)] // each test binary uses a different part
//! The class corpora the tests run on: every JDK runtime image installed under /usr/lib/jvm, extracted
//! with its own `jimage` (or another JDK's, for a runtime image) into a cache under `target/` on first use.

use std::path::{Path, PathBuf};
use std::process::Command;

pub struct Image {
    /// The JDK directory name, for example `temurin-25-jdk-amd64`.
    pub jdk: String,
    pub classes: Vec<PathBuf>,
}

fn workspace_target() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../target")
}

/// JDK homes that have a runtime image, one per real directory (Debian adds symlinked aliases).
pub fn jdk_homes() -> Vec<PathBuf> {
    let mut homes: Vec<PathBuf> = std::fs::read_dir("/usr/lib/jvm")
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    homes.retain(|h| h.join("lib/modules").is_file() && !h.is_symlink());
    homes.sort();
    homes.dedup_by_key(|h| std::fs::canonicalize(&*h).unwrap_or_default());
    homes
}

/// The JDK's own `jimage`, or for a runtime image without one (scripts/install-java25.sh) another JDK's:
/// the image format has not changed since JDK 9.
fn jimage_for(home: &Path) -> PathBuf {
    std::iter::once(home.to_path_buf())
        .chain(jdk_homes())
        .map(|h| h.join("bin/jimage"))
        .find(|p| p.is_file())
        .unwrap_or_else(|| home.join("bin/jimage"))
}

/// Extracts (once) and lists the classes of a JDK's runtime image.
pub fn image(home: &Path) -> Image {
    // Tests of one binary run on threads of one process: extract one image at a time.
    static EXTRACTING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = EXTRACTING.lock().unwrap_or_else(|e| e.into_inner());
    let jdk = home.file_name().unwrap().to_string_lossy().into_owned();
    let dir = workspace_target().join("jdk-corpus").join(&jdk);
    if !dir.join(".done").exists() {
        let tmp = workspace_target()
            .join("jdk-corpus")
            .join(format!("{jdk}.tmp{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp).unwrap();
        let status = Command::new(jimage_for(home))
            .arg("extract")
            .arg("--dir")
            .arg(&tmp)
            .arg(home.join("lib/modules"))
            .status()
            .expect("run jimage");
        assert!(status.success(), "jimage extract failed for {jdk}");
        std::fs::write(tmp.join(".done"), b"").unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        if std::fs::rename(&tmp, &dir).is_err() {
            // Another test binary finished first; use its copy.
            let _ = std::fs::remove_dir_all(&tmp);
        }
    }
    let mut classes = Vec::new();
    walk(&dir, &mut classes);
    classes.sort();
    Image { jdk, classes }
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|x| x == "class") {
            out.push(p);
        }
    }
}
