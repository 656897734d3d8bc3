//! The public API names only `std` (with `core` and `alloc`) and `bytes` types, so that a
//! release of `crossbeam-queue` or `parking_lot` is never a breaking change for this crate's
//! users. Checked on rustdoc's JSON output (nightly, `--output-format json`): every path that a
//! public item's signature, field, bound or trait impl mentions must belong to this crate or to
//! an allowed one. Doc links are not API and are not looked at.
//!
//! Needs the nightly toolchain (`rustup toolchain install nightly`); set
//! `BUFSLAB_SKIP_PUBLIC_API=1` to skip it where there is none.
#![cfg(not(miri))]

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

const ALLOWED: &[&str] = &["std", "core", "alloc", "bytes"];

/// Every `{ "path": .., "id": .. }` (a path to an item) under `value`.
fn referenced_ids(value: &Value, ids: &mut BTreeSet<u64>) {
    match value {
        Value::Object(map) => {
            if let (Some(id), Some(Value::String(_))) = (map.get("id"), map.get("path")) {
                if let Some(id) = id.as_u64() {
                    ids.insert(id);
                }
            }
            map.values().for_each(|v| referenced_ids(v, ids));
        }
        Value::Array(items) => items.iter().for_each(|v| referenced_ids(v, ids)),
        _ => {}
    }
}

#[test]
fn public_api_mentions_only_std_and_bytes() {
    if std::env::var_os("BUFSLAB_SKIP_PUBLIC_API").is_some() {
        eprintln!("skipped: BUFSLAB_SKIP_PUBLIC_API is set");
        return;
    }
    let pool_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("public-api");
    let output = Command::new("rustup")
        .args([
            "run",
            "nightly",
            "cargo",
            "rustdoc",
            "--quiet",
            "--lib",
            // Every feature's items are API too (`StackFreeList` is behind `stack`).
            "--all-features",
            "--manifest-path",
        ])
        .arg(pool_dir.join("Cargo.toml"))
        .args(["-Zunstable-options", "--output-format", "json"])
        .env("CARGO_TARGET_DIR", &target)
        .env_remove("RUSTFLAGS")
        .env_remove("RUSTDOCFLAGS")
        .output()
        .expect("run rustup (set BUFSLAB_SKIP_PUBLIC_API=1 where there is no nightly toolchain)");
    assert!(
        output.status.success(),
        "rustdoc JSON failed (set BUFSLAB_SKIP_PUBLIC_API=1 where there is no nightly \
         toolchain):\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let json = std::fs::read(target.join("doc/bufslab.json")).unwrap();
    let doc: Value = serde_json::from_slice(&json).unwrap();

    let mut ids = BTreeSet::new();
    for item in doc["index"].as_object().unwrap().values() {
        if item["crate_id"] == 0 {
            referenced_ids(&item["inner"], &mut ids);
        }
    }
    let mut crates = BTreeSet::new();
    let mut offenders = Vec::new();
    for id in ids {
        let Some(summary) = doc["paths"].get(id.to_string()) else {
            continue; // an item of this crate that is not public (e.g. the sealed trait)
        };
        let krate = summary["crate_id"].as_u64().unwrap();
        if krate == 0 {
            continue;
        }
        let name = doc["external_crates"][krate.to_string()]["name"]
            .as_str()
            .unwrap()
            .to_owned();
        if !ALLOWED.contains(&name.as_str()) {
            offenders.push(summary["path"].to_string());
        }
        crates.insert(name);
    }
    assert!(
        offenders.is_empty(),
        "the public API names types of crates outside {ALLOWED:?}: {offenders:?}"
    );
    // The check saw the API at all: `PoolBuf` implements `bytes::BufMut`.
    assert!(crates.contains("bytes"), "crates seen: {crates:?}");
}
