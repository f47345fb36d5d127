//! Rebuilds the crate when a file is added to or removed from `labs/`.
//!
//! `include_dir!` (src/lab/loader.rs) embeds `labs/` and tracks the files it embedded through
//! `include_bytes!`, but a new bundle goes unnoticed on stable Rust: include_dir_macros 0.7.4 tracks
//! paths only with its `nightly` feature (src/lib.rs:253-265). Cargo rescans a directory named in
//! `rerun-if-changed` recursively, so a new or removed lab triggers a rebuild.

fn main() {
    println!("cargo:rerun-if-changed=labs");
}
