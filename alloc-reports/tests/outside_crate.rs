//! alloc-reports as a dev-dependency of a crate outside this workspace (`example-crate/`, a
//! tiny server with its own allocation test): `cargo test` there passes, i.e. the library's
//! gate works from another crate's test, passes a server that allocates nothing per request
//! and fails one that does. Built in this workspace's target directory, so the dependencies
//! already built are reused.

use std::path::{Path, PathBuf};
use std::process::Command;

#[test]
fn a_server_author_gates_their_own_server() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| here.join("../target"), PathBuf::from);
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .arg("test")
        .arg("--locked")
        .arg("--manifest-path")
        .arg(here.join("example-crate/Cargo.toml"))
        .env("CARGO_TARGET_DIR", target)
        .output()
        .expect("cargo runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "cargo test of example-crate failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    assert!(
        stdout.contains("test no_allocation_per_request ... ok"),
        "the example's gate test did not run:\n{stdout}"
    );
}
