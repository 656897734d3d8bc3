//! `PoolBytes::try_into_mut`: a frozen block becomes writable again only when one view is left.
//! Single-threaded and small, for Miri.

use bufslab::{ClassConfig, Pool};
use bytes::{Buf, BufMut};

fn pool() -> Pool {
    Pool::builder()
        .class(ClassConfig::new(64).blocks_per_slab(4).max_slabs(1))
        .build()
        .unwrap()
}

#[test]
fn the_only_view_becomes_writable_again() {
    let pool = pool();
    let mut buf = pool.get(64).unwrap();
    buf.put_slice(b"hello");
    let addr = buf.as_ptr();
    let mut buf = buf.freeze().try_into_mut().unwrap();
    assert_eq!(buf.as_ptr(), addr, "same block, no copy");
    assert_eq!(&buf[..], b"hello");
    assert_eq!(buf.spare_capacity(), 59);
    buf.put_slice(b", world");
    assert_eq!(&buf[..], b"hello, world");
    // And frozen again: a fresh count.
    let view = buf.freeze();
    let clone = view.clone();
    drop(view);
    assert_eq!(&clone[..], b"hello, world");
    drop(clone);
    assert_eq!(pool.stats().rented_blocks, 0);
}

#[test]
fn shared_views_refuse_until_the_others_go() {
    let pool = pool();
    let mut buf = pool.get(64).unwrap();
    buf.put_slice(b"abcdef");
    let view = buf.freeze();
    let slice = view.slice(1..3);
    let view = view.try_into_mut().unwrap_err();
    assert_eq!(&view[..], b"abcdef", "handed back untouched");
    let bytes = view.clone().into_bytes();
    let view = view.try_into_mut().unwrap_err();
    drop(view);
    drop(bytes);
    // The slice is now the only view: its own range is the buffer's filled part.
    let mut buf = slice.try_into_mut().unwrap();
    assert_eq!(&buf[..], b"bc");
    assert_eq!(buf.spare_capacity(), 61);
    buf.compact();
    assert_eq!(buf.spare_capacity(), 62);
    assert_eq!(&buf[..], b"bc");
    drop(buf);
    assert_eq!(pool.stats().rented_blocks, 0);
    assert_eq!(pool.stats().pooled_bytes, 256);
}

#[test]
fn an_advanced_view_keeps_its_remaining_bytes() {
    let pool = pool();
    let mut buf = pool.get(10).unwrap();
    buf.put_slice(b"0123456789");
    let mut view = buf.freeze();
    view.advance(4);
    let buf = view.try_into_mut().unwrap();
    assert_eq!(&buf[..], b"456789");
    assert_eq!(buf.len(), 6);
    drop(buf);
    // Every block can be rented again: nothing lost or counted twice.
    let all: Vec<_> = (0..4).map(|_| pool.try_get(64).unwrap()).collect();
    assert!(pool.try_get(64).is_err());
    drop(all);
}

#[test]
fn a_view_dropped_on_another_thread_lets_the_last_one_convert() {
    let pool = pool();
    let mut buf = pool.get(8).unwrap();
    buf.put_slice(b"shared");
    let view = buf.freeze();
    let other = view.clone();
    std::thread::spawn(move || assert_eq!(&other[..], b"shared"))
        .join()
        .unwrap();
    let buf = view.try_into_mut().unwrap();
    assert_eq!(&buf[..], b"shared");
}
