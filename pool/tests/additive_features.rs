//! Cargo features only add: a crate outside this workspace still compiles code written against
//! the defaults (`Pool<QueueFreeList>` from `Pool::new()` included) under every combination of
//! `bufslab`'s features, with default features on or off, as crates in a large build graph will
//! pick them. The crate is written to a temporary directory and checked with
//! `cargo check --offline`, so the test needs no network.
#![cfg(not(miri))]

use std::path::Path;
use std::process::Command;

/// The features `pool/Cargo.toml` declares, read from its `[features]` table; `default` names a
/// set of them and is not one.
fn declared_features(manifest: &str) -> Vec<String> {
    manifest
        .lines()
        .skip_while(|line| line.trim() != "[features]")
        .skip(1)
        .take_while(|line| !line.trim_start().starts_with('['))
        .filter_map(|line| {
            let line = line.trim();
            let (name, _) = line.split_once('=')?;
            let name = name.trim();
            (!line.starts_with('#') && name != "default").then(|| name.to_owned())
        })
        .collect()
}

/// Code written against the defaults: it must compile whatever the features.
const DEFAULTS: &str = r#"
use bufslab::{ClassConfig, DefaultFreeList, LocalCache, Pool, QueueFreeList};

// Compiles only while the default free list is the queue.
fn queue(default: DefaultFreeList) -> QueueFreeList {
    default
}

fn defaults() {
    let p: Pool<QueueFreeList> = Pool::new();
    let b: Pool<QueueFreeList> = Pool::builder().class(ClassConfig::new(4096)).build().unwrap();
    let d: Pool = Pool::default();
    let same: Pool = p.clone();
    let c: LocalCache<QueueFreeList> = p.local_cache();
    let l: LocalCache = c.clone();
    let _ = (b, d, same, l, c.get(1), p.get_local(1), queue as fn(_) -> _);
}
"#;

/// What the `stack` feature adds, beside the defaults.
const STACK: &str = r#"
fn stack() {
    let s: bufslab::Pool<bufslab::StackFreeList> = Pool::builder().build_with().unwrap();
    let c: LocalCache<bufslab::StackFreeList> = s.local_cache();
    let _ = (s.strategy(), c.get(1));
}
"#;

#[test]
fn every_feature_combination_keeps_the_default_types() {
    let pool_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(pool_dir.join("Cargo.toml")).unwrap();
    let features = declared_features(&manifest);
    for expected in ["debug", "stack"] {
        assert!(
            features.iter().any(|f| f == expected),
            "parsed {features:?}"
        );
    }

    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("additive-features");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    // Every subset, with the defaults off: the subsets that hold the defaults are what a crate
    // with them on gets, so this covers `--no-default-features`, the defaults, each feature on
    // its own and `--all-features`.
    for mask in 0..1u32 << features.len() {
        let on: Vec<&str> = (0..features.len())
            .filter(|i| mask & (1 << i) != 0)
            .map(|i| features[i].as_str())
            .collect();
        let quoted: Vec<String> = on.iter().map(|f| format!("{f:?}")).collect();
        let cargo_toml = format!(
            "[package]\nname = \"uses-bufslab\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
             [dependencies]\nbufslab = {{ path = {:?}, default-features = false, features = [{}] }}\n\n\
             # Not a member of the workspace this directory happens to sit in.\n[workspace]\n",
            pool_dir.display().to_string(),
            quoted.join(", ")
        );
        let stack = on.contains(&"stack");
        let main = format!(
            "{DEFAULTS}{}\nfn main() {{\n    defaults();\n{}}}\n",
            if stack { STACK } else { "" },
            if stack { "    stack();\n" } else { "" }
        );
        std::fs::write(dir.join("Cargo.toml"), cargo_toml).unwrap();
        std::fs::write(dir.join("src/main.rs"), main).unwrap();
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
            "cargo check of a crate with bufslab's default features off and {on:?} on failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}
