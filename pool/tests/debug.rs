//! The `debug` feature's aids: `cargo test -p bufslab --features debug`.
#![cfg(feature = "debug")]

use bufslab::{ClassConfig, Pool, POISON};
use bytes::BufMut;

fn pool() -> Pool {
    Pool::builder()
        .class(ClassConfig::new(128).blocks_per_slab(2).prealloc_slabs(1))
        .local_capacity(0)
        .build()
        .unwrap()
}

#[test]
fn free_blocks_are_poisoned() {
    let pool = pool();
    let mut buf = pool.get(1).unwrap();
    assert!(
        buf.spare_mut().iter().all(|&b| b == POISON),
        "a new slab is poisoned"
    );
    buf.put_slice(b"secret");
    drop(buf);
    // Both blocks cycle through the queue: whichever comes back is poisoned again.
    for _ in 0..2 {
        let mut buf = pool.get(1).unwrap();
        assert!(
            buf.spare_mut().iter().all(|&b| b == POISON),
            "returned bytes are wiped"
        );
    }
}

#[test]
fn frozen_views_are_poisoned_when_the_last_goes() {
    let pool = pool();
    let mut buf = pool.get(1).unwrap();
    buf.put_slice(b"shared");
    let view = buf.freeze();
    let other = view.clone();
    drop(view);
    assert_eq!(&other[..], b"shared", "a live view is untouched");
    drop(other);
    let mut a = pool.get(1).unwrap();
    let mut b = pool.get(1).unwrap();
    assert!(a
        .spare_mut()
        .iter()
        .chain(b.spare_mut().iter())
        .all(|&x| x == POISON));
}
