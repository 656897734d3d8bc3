//! Drives the `tokio_echo` example over real TCP: several clients, messages larger than a
//! block, and every block back in the pool afterwards.
#![cfg(not(miri))]

#[allow(dead_code)]
#[path = "../examples/tokio_echo.rs"]
mod tokio_echo;

use bufslab::Pool;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

#[tokio::test]
async fn echoes_through_pooled_buffers() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let pool = Pool::new();
    let server = tokio::spawn(tokio_echo::serve(listener, pool.clone()));

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
