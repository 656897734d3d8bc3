//! A line-protocol server on tokio's multi-thread runtime whose tasks rent through
//! [`Pool::get_local`]: every rent and return is served by the cache of the worker thread the
//! task happens to run on, with no handle to carry across `.await` points (a `LocalCache` is
//! not `Send`, so a task could not hold one). Each request line is answered with the line in
//! upper case, written into a pooled block and sent as a frozen `PoolBytes`.
//!
//! ```text
//! cargo run -p bufslab --example tokio_multi -- 127.0.0.1:7001
//! printf 'hello\nworld\n' | nc 127.0.0.1 7001
//! ```

use bufslab::{Pool, PoolBuf};
use bytes::{Buf, BufMut};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The longest request line; a longer one closes the connection.
const MAX_LINE: usize = 4096;

/// Accepts connections forever, each on its own task (which the runtime may move between
/// worker threads at every `.await`).
pub async fn serve(listener: TcpListener, pool: Pool) -> std::io::Result<()> {
    loop {
        let (stream, _) = listener.accept().await?;
        let pool = pool.clone();
        tokio::spawn(async move {
            if let Err(e) = connection(stream, &pool).await {
                eprintln!("connection: {e}");
            }
        });
    }
}

fn exhausted(e: bufslab::Error) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::OutOfMemory, e)
}

/// Answers each `\n`-terminated line until the peer closes the connection.
async fn connection(mut stream: TcpStream, pool: &Pool) -> std::io::Result<()> {
    let mut input = pool.get_local(MAX_LINE).map_err(exhausted)?;
    loop {
        while let Some(end) = input.iter().position(|&b| b == b'\n') {
            let reply = upper_case(pool, &input[..=end])?.freeze();
            input.advance(end + 1);
            // The task may resume on another worker thread: `get_local` above found that
            // thread's cache, and the block goes into whichever cache is there at the drop.
            stream.write_all(&reply).await?;
        }
        input.compact();
        if input.spare_capacity() == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "line too long",
            ));
        }
        // There is room, so `Ok(0)` is the end of the stream.
        if stream.read_buf(&mut input).await? == 0 {
            return Ok(());
        }
    }
}

/// The reply to one line, in a block of its own.
fn upper_case(pool: &Pool, line: &[u8]) -> std::io::Result<PoolBuf> {
    let mut reply = pool.get_local(line.len()).map_err(exhausted)?;
    for &b in line {
        reply.put_u8(b.to_ascii_uppercase());
    }
    Ok(reply)
}

fn main() -> std::io::Result<()> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:7001".into());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_io()
        .build()?;
    runtime.block_on(async {
        let listener = TcpListener::bind(&addr).await?;
        println!("upper-case server on {}", listener.local_addr()?);
        serve(listener, Pool::new()).await
    })
}

/// `cargo test` runs this: clients on a two-worker runtime, every reply checked, and every
/// block back home once the runtime (and with it its worker threads) is gone.
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg_attr(miri, ignore = "sockets")]
    fn replies_from_every_worker_and_returns_every_block() {
        let pool = Pool::new();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_io()
            .build()
            .unwrap();
        runtime.block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let server = tokio::spawn(serve(listener, pool.clone()));
            let clients: Vec<_> = (0..8)
                .map(|c| {
                    tokio::spawn(async move {
                        let mut stream = TcpStream::connect(addr).await.unwrap();
                        let mut expected = Vec::new();
                        for i in 0..20 {
                            let line = format!("client {c} line {i}\n");
                            stream.write_all(line.as_bytes()).await.unwrap();
                            expected.extend_from_slice(line.to_ascii_uppercase().as_bytes());
                        }
                        stream.shutdown().await.unwrap();
                        let mut got = Vec::new();
                        stream.read_to_end(&mut got).await.unwrap();
                        assert_eq!(
                            String::from_utf8(got).unwrap(),
                            String::from_utf8(expected).unwrap()
                        );
                    })
                })
                .collect();
            for client in clients {
                client.await.unwrap();
            }
            server.abort();
        });
        // The workers' exit sent their caches home.
        drop(runtime);
        let stats = pool.class_stats(0).unwrap();
        assert_eq!((stats.rented_blocks, stats.cached_blocks), (0, 0));
        assert_eq!(stats.free_blocks, stats.slabs * 32);
    }
}
