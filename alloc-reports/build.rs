//! Builds the allocation counter that process subjects preload (`preload/alloc_counter.c`,
//! see `src/subject/process.rs`) into a shared object, and tells the crate where it is.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    let src = "preload/alloc_counter.c";
    println!("cargo:rerun-if-changed={src}");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let so = out.join("alloc_counter.so");
    // The C compiler cargo's linker already needs; `cc` finds it as for any C dependency.
    let compiler = cc::Build::new().opt_level(2).get_compiler();
    let status = Command::new(compiler.path())
        .args([
            "-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-Werror", "-o",
        ])
        .arg(&so)
        .arg(src)
        .status()
        .unwrap_or_else(|e| panic!("cannot run the C compiler {:?}: {e}", compiler.path()));
    assert!(status.success(), "building {src} failed: {status}");
    println!("cargo:rustc-env=ALLOC_COUNTER_SO={}", so.display());
}
