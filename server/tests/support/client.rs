//! A client that allocates nothing once warmed up, for the zero-allocation checks: it writes
//! static requests and reads into stack buffers, responses of lengths learnt in warm-up.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpStream;

/// Sends `req` and reads one response framed by Content-Length (or without content, as a 204
/// is); returns its length in bytes. For warm-up: it finds the length by parsing the head.
pub fn response_len(s: &mut TcpStream, req: &[u8]) -> usize {
    s.write_all(req).unwrap();
    let mut buf = [0u8; 32 * 1024];
    let mut have = 0;
    loop {
        let n = s.read(&mut buf[have..]).unwrap();
        assert!(n > 0, "closed mid-response");
        have += n;
        let Some(end) = buf[..have].windows(4).position(|w| w == b"\r\n\r\n") else {
            continue;
        };
        let key = b"Content-Length: ";
        let head = &buf[..end];
        let len = match head.windows(key.len()).position(|w| w == key) {
            Some(at) => head[at + key.len()..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .fold(0, |acc, b| acc * 10 + usize::from(b - b'0')),
            None => 0,
        };
        let total = end + 4 + len;
        while have < total {
            have += s.read(&mut buf[have..total]).unwrap();
        }
        return total;
    }
}

/// Sends `req` and reads exactly `len` bytes back into a stack buffer; returns the status.
pub fn exchange(s: &mut TcpStream, req: &[u8], len: usize) -> u16 {
    let mut buf = [0u8; 32 * 1024];
    s.write_all(req).unwrap();
    s.read_exact(&mut buf[..len]).unwrap();
    assert!(buf.starts_with(b"HTTP/1.1 "), "{:?}", &buf[..len.min(64)]);
    buf[9..12]
        .iter()
        .fold(0, |acc, b| acc * 10 + u16::from(b - b'0'))
}

/// One worker under `io` on a free port, the rest as default.
pub fn config(io: bufslab_server::IoMode) -> bufslab_server::Config {
    bufslab_server::Config {
        addr: "127.0.0.1:0".parse().unwrap(),
        workers: 1,
        io,
        ..bufslab_server::Config::default()
    }
}

/// Starts `make`'s service on one worker under `io` on a free port; `None` (said on stderr)
/// where the kernel refuses io_uring: `EPERM` or `EACCES` (a seccomp profile, a security
/// module, `kernel.io_uring_disabled`) or `ENOSYS`. Any other failure panics, so a broken
/// driver fails the test instead of skipping it; with `BUFSLAB_REQUIRE_URING=1` (CI sets it
/// where io_uring runs) a refusal panics too.
pub fn start_under<M: bufslab_server::MakeService>(
    io: bufslab_server::IoMode,
    make: M,
) -> Option<bufslab_server::ServerHandle> {
    start_with(config(io), make)
}

/// Starts `make`'s service with `config`; `None` where the kernel refuses io_uring, as for
/// [`start_under`].
pub fn start_with<M: bufslab_server::MakeService>(
    config: bufslab_server::Config,
    make: M,
) -> Option<bufslab_server::ServerHandle> {
    match bufslab_server::Server::start(config, make) {
        Ok(s) => Some(s),
        Err(bufslab_server::ServerError::Uring(e)) if e.is_kernel_refusal() => {
            assert!(
                std::env::var("BUFSLAB_REQUIRE_URING").as_deref() != Ok("1"),
                "io_uring refused ({e}), but BUFSLAB_REQUIRE_URING=1 requires it"
            );
            // The stderr handle, not `eprintln!`: libtest captures that of a passing test.
            let _ = writeln!(std::io::stderr(), "io_uring skipped: {e}");
            None
        }
        Err(e) => panic!("{e}"),
    }
}
