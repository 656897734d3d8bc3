//! Every committed seed of the fuzz targets (`fuzz/seeds/<target>/`) through the check its
//! target runs (`fuzz/checks/<target>.rs`, the same file the target includes), so a change
//! that breaks a seed fails `cargo test`, not only a fuzzing run.

#[path = "../../tools/fuzz_seeds.rs"]
mod fuzz_seeds;
#[path = "../fuzz/checks/handshake.rs"]
mod handshake;
#[path = "../fuzz/checks/records.rs"]
mod records;

#[test]
fn records_seeds_pass_the_records_target() {
    fuzz_seeds::replay(env!("CARGO_MANIFEST_DIR"), "records", records::check);
}

#[test]
fn handshake_seeds_pass_the_handshake_target() {
    fuzz_seeds::replay(env!("CARGO_MANIFEST_DIR"), "handshake", handshake::check);
}
