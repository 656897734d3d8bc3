//! Zero heap allocations per request through the service API, after warm-up, under each
//! driver: a service that answers at once, reads a body and writes it back as it arrives,
//! pulls a 20 KB body as the output drains, defers an answer to another thread, serializes
//! JSON in place (`body_with`), and hands over owned bodies: a 16 KiB value kept frozen in a
//! block rented from the engine's pool, a block rented per response, and static `Bytes`.
//! Counted by dhat over the whole process: the server's threads,
//! the answering thread and this test's client, which reads into stack buffers and writes
//! static bytes. dhat allows one profiler per process: one test in this file.

use std::net::TcpStream;
use std::sync::mpsc::{sync_channel, SyncSender};

use bufslab::PoolBytes;
use bufslab_http::{BodyFraming, KnownHeader, Request};
use bufslab_server::{Deferred, Exchange, IoMode, Service, StaticResponse, WorkerInfo};
use bytes::BufMut;

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

const NOW: &[u8] = b"GET /now HTTP/1.1\r\nHost: t\r\n\r\n";
const ECHO: &[u8] = b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello";
const PULL: &[u8] = b"GET /pull HTTP/1.1\r\nHost: t\r\n\r\n";
const DEFER: &[u8] = b"GET /defer HTTP/1.1\r\nHost: t\r\n\r\n";
const JSON: &[u8] = b"GET /json HTTP/1.1\r\nHost: t\r\n\r\n";
const VALUE: &[u8] = b"GET /value HTTP/1.1\r\nHost: t\r\n\r\n";
const RENTED: &[u8] = b"GET /rented HTTP/1.1\r\nHost: t\r\n\r\n";
const STATIC: &[u8] = b"GET /static HTTP/1.1\r\nHost: t\r\n\r\n";
const REQUESTS: [&[u8]; 8] = [NOW, ECHO, PULL, DEFER, JSON, VALUE, RENTED, STATIC];
/// The length of the value `/value` sends by reference.
const VALUE_LEN: usize = 16 * 1024;

/// The `/json` body, serialized in place.
#[derive(serde::Serialize)]
struct Message {
    message: &'static str,
}
const ROUNDS: usize = 300;
const PULL_LEN: u64 = 20_000;

/// What the service keeps of a request.
#[derive(Default)]
enum State {
    #[default]
    Idle,
    /// A pulled body, this many bytes to go.
    Pull(u64),
    /// The answer of the other thread.
    Answer(u64),
}

struct Svc {
    now: StaticResponse,
    /// A value kept in a block of the engine's pool, rented at the first request.
    value: Option<PoolBytes>,
    /// Deferred exchanges go to the answering thread.
    jobs: SyncSender<Deferred>,
}

impl Service for Svc {
    type State = State;

    fn head(&mut self, req: &Request<'_, '_>, ex: &mut Exchange<'_>, st: &mut State) {
        let r = match req.path() {
            b"/now" => ex.send_static(&self.now),
            b"/echo" => {
                ex.read_body();
                let BodyFraming::Length(n) = req.framing() else {
                    panic!("the test sends a Content-Length");
                };
                ex.respond(200).stream(n)
            }
            b"/pull" => {
                *st = State::Pull(PULL_LEN);
                ex.respond(200).stream(PULL_LEN).and_then(|()| ex.pull())
            }
            b"/defer" => ex.defer().map(|d| self.jobs.send(d).unwrap()),
            b"/json" => ex.respond(200).body_with(64, |w| {
                serde_json::to_writer(w, &Message { message: "Hello" })
            }),
            b"/value" => {
                let value = self.value.get_or_insert_with(|| {
                    let mut b = ex.rent(VALUE_LEN).expect("a block for the value");
                    b.put_bytes(b'v', VALUE_LEN);
                    b.freeze()
                });
                ex.respond(200).body_owned(value.clone())
            }
            b"/rented" => {
                let mut b = ex.rent(64).expect("a block");
                b.put_slice(b"rented per response");
                ex.respond(200).body_owned(b)
            }
            b"/static" => ex
                .respond(200)
                .body_owned(bytes::Bytes::from_static(b"static bytes")),
            _ => ex.respond(404).body(b""),
        };
        r.unwrap();
    }

    fn data(&mut self, data: &[u8], ex: &mut Exchange<'_>, _: &mut State) {
        ex.write(data).unwrap();
    }

    fn fill(&mut self, ex: &mut Exchange<'_>, st: &mut State) {
        let State::Pull(left) = st else {
            panic!("fill without a pulled body")
        };
        let n = (*left).min(ex.write_room() as u64).min(4096);
        ex.write(&[b'p'; 4096][..n as usize]).unwrap();
        *left -= n;
    }

    fn resume(&mut self, ex: &mut Exchange<'_>, st: &mut State) {
        let State::Answer(n) = st else {
            panic!("resumed without an answer")
        };
        let mut digits = itoa::Buffer::new();
        ex.respond(200).body(digits.format(*n).as_bytes()).unwrap();
    }
}

/// Each worker's service, and its answering thread (made at start-up, so its allocations are
/// the start-up's).
fn make(info: WorkerInfo) -> Svc {
    let mailbox = info.mailbox::<State>().expect("the service's state");
    let (jobs, queue) = sync_channel::<Deferred>(64);
    std::thread::spawn(move || {
        let mut n = 0;
        for d in queue {
            n += 1;
            // One digit: every answer has the same length.
            let _ = mailbox.answer(d, State::Answer(n % 10));
        }
    });
    let now = StaticResponse::new(200, &[(KnownHeader::ContentType, b"text/plain")], b"now");
    Svc {
        now: now.unwrap(),
        value: None,
        jobs,
    }
}

#[path = "support/client.rs"]
mod client;
use client::{exchange, response_len, start_under};

#[test]
fn the_service_api_allocates_nothing_per_request() {
    let _profiler = dhat::Profiler::builder().testing().build();
    for io in [IoMode::Epoll, IoMode::Uring] {
        let Some(server) = start_under(io, make) else {
            continue;
        };
        let mut c = TcpStream::connect(server.local_addr()).unwrap();
        c.set_nodelay(true).unwrap();
        let mut lens = [0; REQUESTS.len()];
        for _ in 0..20 {
            for (req, len) in REQUESTS.iter().zip(&mut lens) {
                *len = response_len(&mut c, req);
            }
        }
        let before = dhat::HeapStats::get();
        for _ in 0..ROUNDS {
            for (req, len) in REQUESTS.iter().zip(&lens) {
                assert_eq!(exchange(&mut c, req, *len), 200);
            }
        }
        let after = dhat::HeapStats::get();
        let served = ROUNDS * REQUESTS.len();
        assert_eq!(
            after.total_blocks - before.total_blocks,
            0,
            "{io:?}: heap allocations in {served} requests (answered at once, echoed, pulled, deferred, written in place, owned)"
        );
        drop(c);
        let stats = server.stop().unwrap().stats;
        assert_eq!(stats.service_errors, 0);
        assert_eq!(stats.pool.rented_blocks, 0, "{io:?}: blocks still rented");
    }
}
