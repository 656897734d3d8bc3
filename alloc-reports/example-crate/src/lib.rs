//! A tiny HTTP/1.1 server, standing in for a server author's own: one thread, one connection
//! at a time, keep-alive and pipelining, `GET /plaintext` and `GET /json`, 404 otherwise. Its
//! test (`tests/allocations.rs`) gates it with alloc-reports.
//!
//! It allocates nothing per request: one read buffer for the server's life, responses from
//! constant bytes. `Options::allocate_per_request` makes it copy each response into a fresh
//! `Vec`, the mistake the gate is there to catch.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

const PLAINTEXT: &[u8] =
    b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 13\r\n\r\nHello, World!";
const JSON: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 27\r\n\r\n{\"message\":\"Hello, World!\"}";
const NOT_FOUND: &[u8] = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";

/// How the server behaves.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Copy every response into a new `Vec` before writing it (a per-request allocation).
    pub allocate_per_request: bool,
}

/// A running server.
pub struct Server {
    addr: SocketAddr,
    open: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    /// Starts serving on `addr` (port 0: any free port).
    ///
    /// # Errors
    /// When the address cannot be bound.
    pub fn start(addr: SocketAddr, options: Options) -> io::Result<Server> {
        let listener = TcpListener::bind(addr)?;
        let addr = listener.local_addr()?;
        let open = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (open, stop) = (open.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut buf = vec![0u8; 64 * 1024];
                for conn in listener.incoming() {
                    if stop.load(Ordering::Acquire) {
                        break;
                    }
                    let Ok(conn) = conn else { continue };
                    open.fetch_add(1, Ordering::AcqRel);
                    let _ = serve(conn, &mut buf, options);
                    open.fetch_sub(1, Ordering::AcqRel);
                }
            })
        };
        Ok(Server {
            addr,
            open,
            stop,
            thread: Some(thread),
        })
    }

    /// The address it listens on.
    #[must_use]
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Connections it has open now.
    #[must_use]
    pub fn open_connections(&self) -> u64 {
        self.open.load(Ordering::Acquire)
    }

    /// Stops it and waits for its thread.
    pub fn stop(mut self) {
        self.stop.store(true, Ordering::Release);
        // Wakes the blocking accept.
        let _ = TcpStream::connect(self.addr);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Serves one connection until the client closes it.
fn serve(mut conn: TcpStream, buf: &mut [u8], options: Options) -> io::Result<()> {
    let mut filled = 0;
    loop {
        let n = conn.read(&mut buf[filled..])?;
        if n == 0 {
            return Ok(());
        }
        filled += n;
        let mut start = 0;
        while let Some(end) = find(&buf[start..filled], b"\r\n\r\n") {
            let head = &buf[start..start + end];
            let response = if head.starts_with(b"GET /plaintext ") {
                PLAINTEXT
            } else if head.starts_with(b"GET /json ") {
                JSON
            } else {
                NOT_FOUND
            };
            if options.allocate_per_request {
                // What a server that builds each response in a fresh buffer does.
                let mut owned = Vec::with_capacity(response.len());
                owned.extend_from_slice(response);
                conn.write_all(&owned)?;
            } else {
                conn.write_all(response)?;
            }
            start += end + 4;
        }
        buf.copy_within(start..filled, 0);
        filled -= start;
        if filled == buf.len() {
            return conn.shutdown(Shutdown::Both);
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}
