//! The repository's files as git keeps them: everything under a folder but `target/`, dot-folders and the fuzzer's corpus and findings.

use std::path::{Path, PathBuf};

/// The files under `root` (or `root` itself, if it is a file) whose name ends with one of
/// `endings` (every file if `endings` is empty), sorted.
pub fn files(root: &Path, endings: &[&str]) -> Vec<PathBuf> {
    let wanted = |name: &str| endings.is_empty() || endings.iter().any(|ending| name.ends_with(ending));
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(path) = stack.pop() {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if !path.is_dir() {
            if wanted(&name) {
                found.push(path);
            }
            continue;
        }
        let skipped = path != root
            && (name.starts_with('.') || ["target", "corpus", "artifacts"].contains(&name.as_str()));
        if !skipped {
            stack.extend(std::fs::read_dir(&path).unwrap().map(|entry| entry.unwrap().path()));
        }
    }
    found.sort();
    found
}
