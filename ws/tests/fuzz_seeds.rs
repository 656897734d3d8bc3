//! Every committed seed of the fuzz target (`fuzz/seeds/frames/`) through the checks it runs
//! (`fuzz/checks/frames.rs`, the same file the target includes), so a change that breaks a seed
//! fails `cargo test`, not only a fuzzing run. Each seed is the target's whole input: the mode
//! byte, then the bytes.

#[path = "../fuzz/checks/frames.rs"]
mod frames;
#[path = "../../tools/fuzz_seeds.rs"]
mod fuzz_seeds;

#[test]
fn frames_seeds_pass_the_frames_target() {
    fuzz_seeds::replay(env!("CARGO_MANIFEST_DIR"), "frames", frames::check);
}
