//! Every committed seed of the fuzz targets (`fuzz/seeds/<target>/`) through the checks its
//! target runs (`fuzz/checks/<target>.rs`, the same file the target includes), so a change
//! that breaks a seed fails `cargo test`, not only a fuzzing run. Each seed is the target's
//! whole input: the mode byte, then the bytes.
// Each check file includes the helpers it needs, as its target compiles it alone; here the
// head and response checks both bring `split.rs` and `tests/common`.
#![allow(clippy::duplicate_mod)]

#[path = "../fuzz/checks/chunked.rs"]
mod chunked;
#[path = "../../tools/fuzz_seeds.rs"]
mod fuzz_seeds;
#[path = "../fuzz/checks/head.rs"]
mod head;
#[path = "../fuzz/checks/response.rs"]
mod response;

#[test]
fn head_seeds_pass_the_head_target() {
    fuzz_seeds::replay(env!("CARGO_MANIFEST_DIR"), "head", head::check);
}

#[test]
fn response_seeds_pass_the_response_target() {
    fuzz_seeds::replay(env!("CARGO_MANIFEST_DIR"), "response", response::check);
}

#[test]
fn chunked_seeds_pass_the_chunked_target() {
    fuzz_seeds::replay(env!("CARGO_MANIFEST_DIR"), "chunked", chunked::check);
}
