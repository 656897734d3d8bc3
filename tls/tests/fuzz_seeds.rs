//! Every committed seed of the fuzz targets (`fuzz/seeds/<target>/`) through the check its
//! target runs (`fuzz/checks/<target>.rs`, the same file the target includes), so a change
//! that breaks a seed fails `cargo test`, not only a fuzzing run.

use std::path::{Path, PathBuf};

#[path = "../fuzz/checks/handshake.rs"]
mod handshake;
#[path = "../fuzz/checks/records.rs"]
mod records;

/// Runs `check` on each seed of `target`; fails naming every seed that panicked, and why.
fn replay(target: &str, check: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/seeds")
        .join(target);
    let mut seeds: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .collect();
    seeds.sort();
    assert!(!seeds.is_empty(), "no seeds in {}", dir.display());
    let failed: Vec<String> = seeds
        .iter()
        .filter_map(|seed| {
            let data = std::fs::read(seed).unwrap_or_else(|e| panic!("{}: {e}", seed.display()));
            let panic = std::panic::catch_unwind(|| check(&data)).err()?;
            let why = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("a panic");
            Some(format!("{}: {why}", seed.display()))
        })
        .collect();
    assert!(
        failed.is_empty(),
        "{} of {} {target} seeds fail (replay one with `cargo +nightly fuzz run {target} <seed>` in fuzz/):\n{}",
        failed.len(),
        seeds.len(),
        failed.join("\n")
    );
}

#[test]
fn records_seeds_pass_the_records_target() {
    replay("records", records::check);
}

#[test]
fn handshake_seeds_pass_the_handshake_target() {
    replay("handshake", handshake::check);
}
