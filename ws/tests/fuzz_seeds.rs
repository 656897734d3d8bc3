//! Every committed seed of the fuzz target (`fuzz/seeds/frames/`) through the checks it runs
//! (`fuzz/checks/frames.rs`, the same file the target includes), so a change that breaks a seed
//! fails `cargo test`, not only a fuzzing run. Each seed is the target's whole input: the mode
//! byte, then the bytes.

use std::path::{Path, PathBuf};

#[path = "../fuzz/checks/frames.rs"]
mod frames;

#[test]
fn frames_seeds_pass_the_frames_target() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds/frames");
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
            let panic = std::panic::catch_unwind(|| frames::check(&data)).err()?;
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
        "{} of {} seeds fail (replay one with `cargo +nightly fuzz run frames <seed>` in fuzz/):\n{}",
        failed.len(),
        seeds.len(),
        failed.join("\n")
    );
}
