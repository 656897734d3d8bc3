//! A TCP echo server on tokio that reads straight into pooled blocks with `read_buf` and writes
//! them back: `bufslab` as a dependency of another server, with no runtime of its own.
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
/// the pool as soon as its bytes are written back.
async fn echo(mut stream: TcpStream, pool: &Pool) -> std::io::Result<()> {
    loop {
        let mut buf = pool
            .get(4096)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::OutOfMemory, e))?;
        // `PoolBuf` implements `bytes::BufMut`, so tokio reads into its spare capacity.
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
