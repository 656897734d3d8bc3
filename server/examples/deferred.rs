//! Work handed to a thread pool, answered later: `GET /fib?n=30` is computed off the worker,
//! which goes on serving other connections meanwhile. `cargo run --release --example deferred`.
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};

use bufslab_http::{KnownHeader, Request};
use bufslab_server::{Config, Deferred, Exchange, Mailbox, Server, Service, WorkerInfo};

/// What a request carries between its head and its answer.
#[derive(Default)]
enum Fib {
    #[default]
    Asked,
    Answer(u64),
}

/// A job for the pool, and where its answer goes.
type Job = (Deferred, u64, Mailbox<Fib>);

struct Front {
    pool: SyncSender<Job>,
    mailbox: Mailbox<Fib>,
}

impl Service for Front {
    type State = Fib;

    fn head(&mut self, req: &Request<'_, '_>, ex: &mut Exchange<'_>, _: &mut Fib) {
        let n = req
            .query()
            .and_then(|q| q.strip_prefix(b"n="))
            .and_then(parse);
        let _ = match (req.path(), n) {
            (b"/fib", Some(n)) if n <= 90 => match ex.defer() {
                // A full queue answers 503 at once rather than block the worker.
                Ok(d) if self.pool.try_send((d, n, self.mailbox.clone())).is_ok() => Ok(()),
                _ => ex.respond(503).body(b"busy"),
            },
            _ => ex.respond(404).body(b"try /fib?n=30"),
        };
    }

    fn resume(&mut self, ex: &mut Exchange<'_>, fib: &mut Fib) {
        let Fib::Answer(v) = fib else { return };
        let _ = ex
            .respond(200)
            .header(KnownHeader::ContentType, b"text/plain")
            .body(itoa::Buffer::new().format(*v).as_bytes());
    }
}

fn parse(s: &[u8]) -> Option<u64> {
    std::str::from_utf8(s).ok()?.parse().ok()
}

fn fib(n: u64) -> u64 {
    if n < 2 {
        n
    } else {
        fib(n - 1) + fib(n - 2)
    }
}

/// `threads` threads take jobs from one queue of `queue` places (no allocation per job).
fn thread_pool(threads: usize, queue: usize) -> SyncSender<Job> {
    let (tx, rx) = sync_channel::<Job>(queue);
    let rx: Arc<Mutex<Receiver<Job>>> = Arc::new(Mutex::new(rx));
    for _ in 0..threads {
        let rx = rx.clone();
        std::thread::spawn(move || loop {
            let job = rx.lock().map(|rx| rx.recv());
            let Ok(Ok((d, n, mailbox))) = job else {
                return;
            };
            let _ = mailbox.answer(d, Fib::Answer(fib(n.min(40))));
        });
    }
    tx
}

fn front(info: WorkerInfo, pool: &SyncSender<Job>) -> Front {
    let mailbox = info.mailbox::<Fib>().expect("Front's state is Fib");
    Front {
        pool: pool.clone(),
        mailbox,
    }
}

fn main() -> Result<(), bufslab_server::ServerError> {
    let pool = thread_pool(4, 1024);
    let server = Server::start(Config::default(), move |info| front(info, &pool))?;
    println!("http://{}/fib?n=30", server.local_addr());
    server.join().map(|_| ())
}

#[test]
fn answers_pipelined_requests_in_order() {
    use std::io::{Read, Write};
    let config = Config {
        addr: "127.0.0.1:0".parse().unwrap(),
        workers: 1,
        ..Config::default()
    };
    let pool = thread_pool(4, 1024);
    let server = Server::start(config, move |info| front(info, &pool)).unwrap();
    let mut c = std::net::TcpStream::connect(server.local_addr()).unwrap();
    // The slow one first: the quick ones behind it wait their turn.
    c.write_all(b"GET /fib?n=32 HTTP/1.1\r\nHost: x\r\n\r\nGET /fib?n=10 HTTP/1.1\r\nHost: x\r\n\r\nGET /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
    let mut got = String::new();
    c.read_to_string(&mut got).unwrap();
    let bodies: Vec<&str> = got
        .split("HTTP/1.1 ")
        .skip(1)
        .map(|r| r.rsplit("\r\n\r\n").next().unwrap())
        .collect();
    assert_eq!(bodies, ["2178309", "55", "try /fib?n=30"], "{got}");
    server.stop().unwrap();
}

#[test]
fn a_full_queue_is_answered_503_at_once() {
    use std::io::{Read, Write};
    let config = Config {
        addr: "127.0.0.1:0".parse().unwrap(),
        workers: 1,
        ..Config::default()
    };
    // No thread and no place in the queue: every hand-off fails.
    let pool = thread_pool(0, 0);
    let server = Server::start(config, move |info| front(info, &pool)).unwrap();
    let mut c = std::net::TcpStream::connect(server.local_addr()).unwrap();
    c.write_all(b"GET /fib?n=5 HTTP/1.1\r\nHost: x\r\n\r\nGET /fib?n=6 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
    let mut got = String::new();
    c.read_to_string(&mut got).unwrap();
    assert_eq!(got.matches("HTTP/1.1 503 ").count(), 2, "{got}");
    assert!(got.ends_with("busy"), "{got}");
    assert_eq!(server.stop().unwrap().stats.service_errors, 0);
}
