//! The ownership stress test: a real ring receives from several loopback connections while the
//! loop refills at random turns (running the ring dry on purpose), and the received blocks
//! travel between worker threads that hold, pass on and drop them at random.
//!
//! Every owner transition is checked with stamps. When a block changes hands, its new owner
//! writes a fresh stamp into its first bytes and records `address -> stamp` in a registry; each
//! later transition checks both. A block with two owners at once shows up as a registry clash
//! (the same address claimed twice), a kernel write into a block the application owns shows up
//! as a changed stamp, and a block handed out for the wrong slot shows up as bytes out of place
//! in the received streams.
#![cfg(not(miri))]

mod common;

use std::collections::HashMap;
use std::io::Write;
use std::net::TcpStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::Duration;

use bufslab::{ClassConfig, Pool, PoolBuf};
use bufslab_uring::BufRing;
use common::{arm_recv, ring_or_skip, stream_bytes, tcp_pair};
use io_uring::cqueue;

const BLOCK: usize = 512;
const CONNS: usize = 4;
const WORKERS: usize = 3;
const PER_CONN: usize = 384 * 1024;

/// A small xorshift generator: reproducible from the printed seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Who owns each application-held block: its address and the stamp of its owner.
#[derive(Default)]
struct Owners {
    map: Mutex<HashMap<usize, u64>>,
    next_stamp: AtomicUsize,
}

impl Owners {
    fn stamp(&self) -> u64 {
        self.next_stamp.fetch_add(1, Ordering::Relaxed) as u64 + 1
    }

    /// A block comes out of the ring: nobody may own it yet.
    fn claim(&self, buf: &mut PoolBuf) -> u64 {
        let stamp = self.stamp();
        let addr = buf.as_ptr() as usize;
        if let Some(other) = self.map.lock().unwrap().insert(addr, stamp) {
            panic!("block {addr:#x} handed out while owned (stamp {other}): two owners");
        }
        write_stamp(buf, stamp);
        stamp
    }

    /// The owner `stamp` hands the block to a new owner.
    fn pass(&self, buf: &mut PoolBuf, stamp: u64) -> u64 {
        self.check(buf, stamp);
        let next = self.stamp();
        self.map.lock().unwrap().insert(buf.as_ptr() as usize, next);
        write_stamp(buf, next);
        next
    }

    /// The owner `stamp` drops the block: it goes home.
    fn release(&self, buf: PoolBuf, stamp: u64) {
        self.check(&buf, stamp);
        let addr = buf.as_ptr() as usize;
        assert_eq!(self.map.lock().unwrap().remove(&addr), Some(stamp));
        drop(buf);
    }

    fn check(&self, buf: &PoolBuf, stamp: u64) {
        let addr = buf.as_ptr() as usize;
        assert_eq!(
            self.map.lock().unwrap().get(&addr),
            Some(&stamp),
            "block {addr:#x}: registry disagrees with its holder"
        );
        assert_eq!(
            &buf[..8],
            &stamp.to_le_bytes(),
            "block {addr:#x}: its stamp was overwritten while owned"
        );
    }
}

fn write_stamp(buf: &mut PoolBuf, stamp: u64) {
    buf.clear();
    buf.write_all(&stamp.to_le_bytes()).unwrap();
}

enum Msg {
    Block(PoolBuf, u64),
    Stop,
}

fn worker(
    id: usize,
    rx: mpsc::Receiver<Msg>,
    peers: Vec<mpsc::Sender<Msg>>,
    owners: Arc<Owners>,
    in_flight: Arc<AtomicUsize>,
    seed: u64,
) {
    let mut rng = Rng(seed ^ (id as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let mut held: Vec<(PoolBuf, u64)> = Vec::new();
    while let Ok(msg) = rx.recv() {
        let (mut buf, stamp) = match msg {
            Msg::Block(buf, stamp) => (buf, stamp),
            Msg::Stop => break,
        };
        owners.check(&buf, stamp);
        match rng.below(4) {
            0 => owners.release(buf, stamp),
            1 => {
                let next = owners.pass(&mut buf, stamp);
                let to = rng.below(peers.len() as u64) as usize;
                in_flight.fetch_add(1, Ordering::SeqCst);
                peers[to].send(Msg::Block(buf, next)).unwrap();
            }
            _ => {
                let next = owners.pass(&mut buf, stamp);
                held.push((buf, next));
            }
        }
        // Let go of held blocks at random, oldest or newest.
        while held.len() > 24 || (!held.is_empty() && rng.below(3) == 0) {
            let i = if rng.below(2) == 0 { 0 } else { held.len() - 1 };
            let (buf, stamp) = held.swap_remove(i);
            owners.release(buf, stamp);
        }
        in_flight.fetch_sub(1, Ordering::SeqCst);
    }
    for (buf, stamp) in held {
        owners.release(buf, stamp);
    }
}

fn sender(mut socket: TcpStream, stream: u64, seed: u64) {
    let mut rng = Rng(seed ^ (stream + 7).wrapping_mul(0xff51_afd7_ed55_8ccd));
    let mut sent = 0;
    while sent < PER_CONN {
        let len = (1 + rng.below(3000) as usize).min(PER_CONN - sent);
        socket
            .write_all(&stream_bytes(stream, sent as u64, len))
            .unwrap();
        sent += len;
        if rng.below(8) == 0 {
            thread::sleep(Duration::from_micros(rng.below(200)));
        }
    }
}

#[test]
fn no_block_ever_has_two_owners() {
    let Some(mut ring) = ring_or_skip("no_block_ever_has_two_owners", 256) else {
        return;
    };
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    println!("seed {seed:#x}");
    let mut rng = Rng(seed);
    let pool = Pool::builder()
        .class(
            ClassConfig::new(BLOCK)
                .blocks_per_slab(64)
                .prealloc_slabs(1)
                .max_slabs(3),
        )
        .build()
        .unwrap();
    let cache = pool.local_cache();
    let mut bufs = BufRing::new(&ring, &cache, 9, 64, BLOCK).unwrap();
    let owners = Arc::new(Owners::default());
    let in_flight = Arc::new(AtomicUsize::new(0));

    let (txs, rxs): (Vec<_>, Vec<_>) = (0..WORKERS).map(|_| mpsc::channel()).unzip();
    let workers: Vec<_> = rxs
        .into_iter()
        .enumerate()
        .map(|(id, rx)| {
            let (peers, owners, in_flight) = (txs.clone(), owners.clone(), in_flight.clone());
            thread::spawn(move || worker(id, rx, peers, owners, in_flight, seed))
        })
        .collect();

    let mut servers = Vec::new();
    let mut senders = Vec::new();
    for c in 0..CONNS {
        let (client, server) = tcp_pair();
        senders.push(thread::spawn(move || sender(client, c as u64, seed)));
        arm_recv(&mut ring, &server, bufs.group(), c as u64);
        servers.push(server);
    }

    let mut offsets = [0usize; CONNS];
    let mut armed = [true; CONNS];
    let mut finished = [false; CONNS];
    let mut kept: Vec<(PoolBuf, u64)> = Vec::new();
    let mut enobufs = 0;
    let mut completions = 0;
    while !finished.iter().all(|&f| f) {
        if armed.iter().any(|&a| a) {
            ring.submit_and_wait(1).unwrap();
        }
        while let Some(cqe) = ring.completion().next() {
            completions += 1;
            let c = cqe.user_data() as usize;
            // SAFETY: from this ring, for the single-buffer receive of connection `c` on
            // `bufs`' group, taken once.
            if let Some(mut buf) = unsafe { bufs.take(&cqe) } {
                assert_eq!(
                    &buf[..],
                    &stream_bytes(c as u64, offsets[c] as u64, buf.len())[..],
                    "connection {c} at {}: bytes out of place",
                    offsets[c]
                );
                offsets[c] += buf.len();
                if buf.is_empty() {
                    drop(buf); // the end of the stream consumed an empty block
                } else {
                    let stamp = owners.claim(&mut buf);
                    match rng.below(4) {
                        0 => owners.release(buf, stamp),
                        1 => kept.push((buf, stamp)),
                        _ => {
                            let to = rng.below(WORKERS as u64) as usize;
                            let next = owners.pass(&mut buf, stamp);
                            in_flight.fetch_add(1, Ordering::SeqCst);
                            txs[to].send(Msg::Block(buf, next)).unwrap();
                        }
                    }
                }
            }
            if !cqueue::more(cqe.flags()) {
                armed[c] = false;
                match cqe.result() {
                    0 => finished[c] = true,
                    r if r == -libc::ENOBUFS => enobufs += 1,
                    r => panic!("connection {c}: receive ended with {r}"),
                }
            }
        }
        // The loop thread hands its kept blocks on, at random.
        while !kept.is_empty() && (kept.len() > 16 || rng.below(2) == 0) {
            let (buf, stamp) = kept.swap_remove(0);
            owners.release(buf, stamp);
        }
        // Refill on most turns, not all: the ring runs dry now and then.
        let nothing_armed = !armed.iter().zip(&finished).any(|(&a, &f)| a && !f);
        if rng.below(5) != 0 || nothing_armed {
            bufs.refill();
            if bufs.held() == 0 {
                thread::sleep(Duration::from_micros(100)); // every block is with the workers
                continue;
            }
            for c in 0..CONNS {
                if !armed[c] && !finished[c] {
                    arm_recv(&mut ring, &servers[c], bufs.group(), c as u64);
                    armed[c] = true;
                }
            }
        }
    }
    for s in senders {
        s.join().unwrap();
    }
    for (c, &off) in offsets.iter().enumerate() {
        assert_eq!(off, PER_CONN, "connection {c}");
    }
    for (buf, stamp) in kept.drain(..) {
        owners.release(buf, stamp);
    }
    while in_flight.load(Ordering::SeqCst) != 0 {
        thread::sleep(Duration::from_millis(1));
    }
    for tx in &txs {
        tx.send(Msg::Stop).unwrap();
    }
    for w in workers {
        w.join().unwrap();
    }
    assert!(owners.map.lock().unwrap().is_empty());
    println!(
        "{completions} completions, {} owner stamps, {enobufs} ENOBUFS re-arms",
        owners.next_stamp.load(Ordering::Relaxed)
    );
    // SAFETY: every receive has posted its final completion (end of stream), and all were taken.
    unsafe { bufs.release() };
    drop(ring);
    assert_eq!(pool.stats().rented_blocks, 0);
}
