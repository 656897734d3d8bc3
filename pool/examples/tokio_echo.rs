//! A TCP echo server on tokio that reads straight into pooled blocks with `read_buf` and writes
//! them back: `bufslab` as a dependency of another server, with no runtime of its own. Each
//! read rents through [`Pool::get_local`], the calling worker thread's cache of the pool.
//!
//! ```text
//! cargo run -p bufslab --example tokio_echo -- 127.0.0.1:7000
//! ```

use bufslab::Pool;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Accepts connections forever, echoing each on its own task.
pub async fn serve(listener: TcpListener, pool: Pool) -> std::io::Result<()> {
    loop {
        let (stream, _) = listener.accept().await?;
        let pool = pool.clone();
        tokio::spawn(async move {
            if let Err(e) = echo(stream, &pool).await {
                eprintln!("connection: {e}");
            }
        });
    }
}

/// Echoes one connection until the peer closes it. A block is rented per read and returns to
/// the pool (into this thread's cache) as soon as its bytes are written back.
async fn echo(mut stream: TcpStream, pool: &Pool) -> std::io::Result<()> {
    loop {
        let mut buf = pool
            .get_local(4096)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::OutOfMemory, e))?;
        // `PoolBuf` implements `bytes::BufMut`, so tokio reads into its spare capacity. A fresh
        // block has room, so `Ok(0)` here is the end of the stream, not a full buffer.
        if stream.read_buf(&mut buf).await? == 0 {
            return Ok(());
        }
        stream.write_all(&buf).await?;
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:7000".into());
    let listener = TcpListener::bind(&addr).await?;
    println!("echo server on {}", listener.local_addr()?);
    serve(listener, Pool::new()).await
}

/// `cargo test` runs this: several clients over loopback, messages larger than a block, and
/// every block back in the pool afterwards.
#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    #[cfg_attr(miri, ignore = "sockets")]
    async fn echoes_through_pooled_buffers() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let pool = Pool::new();
        let server = tokio::spawn(serve(listener, pool.clone()));

        let mut clients = Vec::new();
        for c in 0..8u8 {
            clients.push(tokio::spawn(async move {
                let mut stream = TcpStream::connect(addr).await.unwrap();
                // 20 KiB: spans several 4 KiB blocks on the server side.
                let message: Vec<u8> = (0..20_000u32).map(|i| (i as u8) ^ c).collect();
                let (mut rd, mut wr) = stream.split();
                let mut echoed = vec![0u8; message.len()];
                let (w, r) = tokio::join!(wr.write_all(&message), rd.read_exact(&mut echoed));
                w.unwrap();
                r.unwrap();
                assert_eq!(echoed, message);
            }));
        }
        for client in clients {
            client.await.unwrap();
        }
        // Connections are closed; their tasks finish and return their blocks.
        for _ in 0..100 {
            if pool.stats().rented_blocks == 0 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert_eq!(pool.stats().rented_blocks, 0);
        assert!(
            pool.stats().misses <= 1,
            "one slab of 32 blocks served 8 clients"
        );
        server.abort();
    }
}
