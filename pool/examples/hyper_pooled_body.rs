//! A hyper 1.x HTTP/1.1 server whose response bodies are pooled blocks: each body is written
//! into a block rented through [`Pool::get_local`], frozen, and sent as
//! `http_body_util::Full<PoolBytes>`. `PoolBytes` implements `bytes::Buf`, which is all `Full`
//! asks of its data; the block goes home once hyper has written the response out.
//!
//! ```text
//! cargo run -p bufslab --example hyper_pooled_body -- 127.0.0.1:7002
//! curl http://127.0.0.1:7002/hello
//! ```
//!
//! Its test counts heap allocations per request with dhat, for this server and for the same
//! server with `Full<Bytes>` bodies built in a `BytesMut`.

use std::convert::Infallible;

use bufslab::{Pool, PoolBytes};
use bytes::{Buf, BufMut, Bytes, BytesMut};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

// Counts allocations for the test; outside a dhat profiler it only forwards to the system
// allocator.
#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

const GREETING: &[u8] = b"hello from ";

/// The response body for `path`, written into `out`.
fn write_body(path: &[u8], out: &mut impl BufMut) {
    out.put_slice(GREETING);
    out.put_slice(path);
    out.put_u8(b'\n');
}

fn body_len(path: &[u8]) -> usize {
    GREETING.len() + path.len() + 1
}

/// The pooled handler: the body in a block from this worker thread's cache of the pool. When
/// the pool is exhausted the error closes the connection (a server that prefers a 503 makes the
/// body an `http_body_util::Either`).
pub fn pooled(
    pool: &Pool,
    req: &Request<Incoming>,
) -> Result<Response<Full<PoolBytes>>, bufslab::Error> {
    let path = req.uri().path().as_bytes();
    let mut buf = pool.get_local(body_len(path))?;
    write_body(path, &mut buf);
    Ok(Response::new(Full::new(buf.freeze())))
}

/// The same response with a `Bytes` body, as a server without a pool builds it.
pub fn unpooled(req: &Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let path = req.uri().path().as_bytes();
    let mut buf = BytesMut::with_capacity(body_len(path));
    write_body(path, &mut buf);
    Ok(Response::new(Full::new(buf.freeze())))
}

/// Accepts connections forever, serving each with `handler` on its own task.
pub async fn serve<B, E, H>(listener: TcpListener, handler: H) -> std::io::Result<()>
where
    H: Fn(&Request<Incoming>) -> Result<Response<Full<B>>, E> + Clone + Send + 'static,
    B: Buf + Send + 'static,
    E: std::error::Error + Send + Sync + 'static,
{
    loop {
        let (stream, _) = listener.accept().await?;
        let handler = handler.clone();
        tokio::spawn(async move {
            let service = service_fn(move |req| std::future::ready(handler(&req)));
            let conn = http1::Builder::new().serve_connection(TokioIo::new(stream), service);
            if let Err(e) = conn.await {
                eprintln!("connection: {e}");
            }
        });
    }
}

fn main() -> std::io::Result<()> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:7002".into());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_io()
        .build()?;
    runtime.block_on(async {
        let listener = TcpListener::bind(&addr).await?;
        println!(
            "hyper server with pooled bodies on {}",
            listener.local_addr()?
        );
        let pool = Pool::new();
        serve(listener, move |req: &Request<Incoming>| pooled(&pool, req)).await
    })
}

/// `cargo test` runs this: bounded runs of both servers over loopback, counting allocations.
#[cfg(test)]
mod tests {
    use std::future::Future;
    use std::io::{Read, Write};
    use std::net::TcpStream;

    use super::*;

    const WARM_UP: usize = 50;
    const MEASURED: usize = 500;

    /// One keep-alive request and its response, read into `buf`; returns the body's range. The
    /// client allocates nothing per request, so dhat's count is the server's.
    fn round_trip(stream: &mut TcpStream, request: &[u8], buf: &mut [u8]) -> (usize, usize) {
        stream.write_all(request).unwrap();
        let mut filled = 0;
        loop {
            let n = stream.read(&mut buf[filled..]).unwrap();
            assert!(n > 0, "the server closed the connection");
            filled += n;
            let Some(head_end) = buf[..filled].windows(4).position(|w| w == b"\r\n\r\n") else {
                continue;
            };
            let head = &buf[..head_end];
            let at = head
                .windows(16)
                .position(|w| w.eq_ignore_ascii_case(b"content-length: "))
                .expect("a content-length header");
            let len: usize = head[at + 16..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .fold(0, |n, &d| n * 10 + usize::from(d - b'0'));
            let body = head_end + 4;
            if filled >= body + len {
                assert_eq!(filled, body + len, "one response per request");
                return (body, body + len);
            }
        }
    }

    /// Heap allocations per request, in the steady state, of the server that `serve` starts.
    fn allocations_per_request<S>(serve: impl FnOnce(TcpListener) -> S) -> f64
    where
        S: Future<Output = std::io::Result<()>> + Send + 'static,
    {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_io()
            .build()
            .unwrap();
        let listener = runtime.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
        let addr = listener.local_addr().unwrap();
        runtime.spawn(serve(listener));
        let mut stream = TcpStream::connect(addr).unwrap();
        let request = b"GET /hello HTTP/1.1\r\nhost: localhost\r\n\r\n";
        let mut buf = [0u8; 1024];
        for _ in 0..WARM_UP {
            let (start, end) = round_trip(&mut stream, request, &mut buf);
            assert_eq!(&buf[start..end], b"hello from /hello\n");
        }
        let before = dhat::HeapStats::get();
        for _ in 0..MEASURED {
            round_trip(&mut stream, request, &mut buf);
        }
        let after = dhat::HeapStats::get();
        drop(stream);
        runtime.shutdown_background();
        (after.total_blocks - before.total_blocks) as f64 / MEASURED as f64
    }

    #[test]
    #[cfg_attr(miri, ignore = "sockets")]
    fn pooled_bodies_allocate_less_per_request() {
        let _profiler = dhat::Profiler::builder().testing().build();
        let pool = Pool::new();
        let p = pool.clone();
        let pooled = allocations_per_request(move |listener| {
            serve(listener, move |req: &Request<Incoming>| pooled(&p, req))
        });
        let unpooled = allocations_per_request(|listener| serve(listener, unpooled));
        println!(
            "heap allocations per request over {MEASURED} keep-alive requests: \
             Full<PoolBytes> {pooled:.2}, Full<Bytes> {unpooled:.2}"
        );
        // The `BytesMut` behind each `Bytes` body is one allocation the pool does not make.
        assert!(
            pooled <= unpooled - 1.0,
            "pooled {pooled}, unpooled {unpooled}"
        );
    }
}
