//! Cargo features only add: a crate outside this workspace that turns on every feature of
//! `bufslab` (as some crate in a large build graph will) still compiles code written against
//! the defaults, `Pool<QueueFreeList>` from `Pool::new()` included. The crate is written to a
//! temporary directory and checked with `cargo check --offline`, so the test needs no network.
#![cfg(not(miri))]

use std::path::Path;
use std::process::Command;

/// The features `pool/Cargo.toml` declares, read from its `[features]` table.
fn all_features(manifest: &str) -> Vec<String> {
    manifest
        .lines()
        .skip_while(|line| line.trim() != "[features]")
        .skip(1)
        .take_while(|line| !line.trim_start().starts_with('['))
        .filter_map(|line| {
            let line = line.trim();
            let (name, _) = line.split_once('=')?;
            (!line.starts_with('#')).then(|| name.trim().to_owned())
        })
        .collect()
}

const MAIN: &str = r#"
use bufslab::{ClassConfig, LocalCache, Pool, QueueFreeList, StackFreeList};

fn main() {
    let p: Pool<QueueFreeList> = Pool::new();
    let b: Pool<QueueFreeList> = Pool::builder().class(ClassConfig::new(4096)).build().unwrap();
    let d: Pool = Pool::default();
    let s: Pool<StackFreeList> = Pool::builder().build_with().unwrap();
    let c: LocalCache<QueueFreeList> = p.local_cache();
    let _ = (b, d, s, c.get(1), p.get_local(1));
}
"#;

#[test]
fn every_feature_on_keeps_the_default_types() {
    let pool_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(pool_dir.join("Cargo.toml")).unwrap();
    let features = all_features(&manifest);
    assert!(features.iter().any(|f| f == "debug"), "parsed {features:?}");

    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("additive-features");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let quoted: Vec<String> = features.iter().map(|f| format!("{f:?}")).collect();
    let cargo_toml = format!(
        "[package]\nname = \"uses-bufslab\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
         [dependencies]\nbufslab = {{ path = {:?}, features = [{}] }}\n\n\
         # Not a member of the workspace this directory happens to sit in.\n[workspace]\n",
        pool_dir.display().to_string(),
        quoted.join(", ")
    );
    std::fs::write(dir.join("Cargo.toml"), cargo_toml).unwrap();
    std::fs::write(dir.join("src/main.rs"), MAIN).unwrap();
    // The workspace's lock file pins the same versions already fetched: no resolution online.
    std::fs::copy(pool_dir.join("../Cargo.lock"), dir.join("Cargo.lock")).unwrap();

    let output = Command::new(env!("CARGO"))
        .args(["check", "--offline", "--quiet", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .env_remove("RUSTFLAGS")
        .output()
        .expect("run cargo");
    assert!(
        output.status.success(),
        "cargo check of a crate with bufslab features {features:?} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
