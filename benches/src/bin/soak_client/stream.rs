//! The client's side of a connection: plain TCP, or TLS 1.3 (`--tls-ca`) with rustls.
//!
//! A TLS connection's handshake runs in [`Stream::connect`], so a scenario starts on a
//! connection ready for requests, as over plain TCP. Reads and writes can then come from two
//! threads at once (a large echo is written from a second thread while its answer is read):
//! the rustls state is shared behind a lock held only to seal or open, never across a socket
//! call, and the sealed bytes go to the socket under a second lock, in the order they were
//! sealed. A read that opens records which call for an answer (the server's `KeyUpdate` asking
//! for ours) sends it only if no write is under way; otherwise the writer sends it with its next
//! bytes, so a reader never waits for a writer the server does not read from.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Duration;

use rustls::crypto::ring::{cipher_suite, default_provider};
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, SupportedCipherSuite};

/// The three TLS 1.3 suites; connections take them in turn.
const SUITES: [SupportedCipherSuite; 3] = [
    cipher_suite::TLS13_AES_128_GCM_SHA256,
    cipher_suite::TLS13_AES_256_GCM_SHA384,
    cipher_suite::TLS13_CHACHA20_POLY1305_SHA256,
];

/// Plaintext sealed per write: one record's worth, so a large body streams.
const WRITE_STEP: usize = 16 * 1024;

/// One client configuration per suite (each with its own ticket store, so a connection that
/// resumes resumes with the suite it asked for), set once by [`init_tls`].
static TLS: OnceLock<[Arc<ClientConfig>; 3]> = OnceLock::new();
static NEXT_SUITE: AtomicUsize = AtomicUsize::new(0);

/// Speaks TLS from now on, trusting the certificates in the PEM file `ca`.
pub fn init_tls(ca: &Path) -> Result<(), String> {
    TLS.set(client_configs(ca)?)
        .map_err(|_| "TLS is set up already".to_owned())
}

/// A client configuration per suite, trusting the certificates in the PEM file `ca`.
fn client_configs(ca: &Path) -> Result<[Arc<ClientConfig>; 3], String> {
    let roots = bufslab_benches::root_store(ca)?;
    let config = |suite: SupportedCipherSuite| -> Result<Arc<ClientConfig>, String> {
        let mut provider = default_provider();
        provider.cipher_suites = vec![suite];
        let mut c = ClientConfig::builder_with_provider(Arc::new(provider))
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(|e| e.to_string())?
            .with_root_certificates(roots.clone())
            .with_no_client_auth();
        c.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Arc::new(c))
    };
    Ok([config(SUITES[0])?, config(SUITES[1])?, config(SUITES[2])?])
}

/// Whether connections speak TLS.
pub fn tls() -> bool {
    TLS.get().is_some()
}

/// A handshake that ended before a byte of the server's came: the server closed the
/// connection at once (as it does when its connection slots are full).
#[derive(Debug)]
pub struct ClosedAtOnce;

impl std::fmt::Display for ClosedAtOnce {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("closed before the TLS handshake's first byte")
    }
}

impl std::error::Error for ClosedAtOnce {}

/// Whether `e` is [`ClosedAtOnce`].
pub fn closed_at_once(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|e| e.is::<ClosedAtOnce>())
}

/// A connection's rustls state and what came from the socket that rustls has not taken yet (it
/// takes more only once the plaintext it opened has been read).
struct State {
    conn: ClientConnection,
    raw: Vec<u8>,
}

pub struct Shared {
    state: Mutex<State>,
    /// Held from taking sealed bytes out of `conn` until they are on the socket.
    out: Mutex<()>,
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sends what `conn` has sealed; the caller holds `out`.
    fn send(&self, tcp: &TcpStream) -> io::Result<()> {
        let mut bytes = Vec::new();
        {
            let c = &mut self.state().conn;
            while c.wants_write() {
                c.write_tls(&mut bytes)?;
            }
        }
        (&*tcp).write_all(&bytes)
    }
}

pub enum Stream {
    Plain(TcpStream),
    Tls { tcp: TcpStream, shared: Arc<Shared> },
}

impl Stream {
    /// Wraps a connected socket; with TLS, runs the handshake (bounded by the socket's
    /// timeouts).
    pub fn connect(tcp: TcpStream, addr: SocketAddr) -> io::Result<Stream> {
        let config = TLS
            .get()
            .map(|c| c[NEXT_SUITE.fetch_add(1, Relaxed) % SUITES.len()].clone());
        Stream::connect_with(tcp, addr, config)
    }

    fn connect_with(
        tcp: TcpStream,
        addr: SocketAddr,
        config: Option<Arc<ClientConfig>>,
    ) -> io::Result<Stream> {
        let Some(config) = config else {
            return Ok(Stream::Plain(tcp));
        };
        let name = ServerName::IpAddress(addr.ip().into());
        let mut conn = ClientConnection::new(config, name).map_err(io::Error::other)?;
        let mut got = 0u64;
        while conn.is_handshaking() {
            while conn.wants_write() {
                conn.write_tls(&mut &tcp)?;
            }
            if !conn.is_handshaking() {
                break;
            }
            let mut buf = [0u8; 16 * 1024];
            let n = match (&tcp).read(&mut buf) {
                Ok(0) if got == 0 => return Err(io::Error::other(ClosedAtOnce)),
                Err(e)
                    if got == 0
                        && matches!(
                            e.kind(),
                            io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionAborted
                        ) =>
                {
                    return Err(io::Error::other(ClosedAtOnce));
                }
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        format!("closed after {got} bytes of the TLS handshake"),
                    ))
                }
                r => r?,
            };
            got += n as u64;
            handshake_feed(&mut conn, &buf[..n]).inspect_err(|_| {
                // The alert, if the socket still takes it.
                let _ = conn.write_tls(&mut &tcp);
            })?;
        }
        while conn.wants_write() {
            conn.write_tls(&mut &tcp)?;
        }
        Ok(Stream::Tls {
            tcp,
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    conn,
                    raw: Vec::new(),
                }),
                out: Mutex::new(()),
            }),
        })
    }

    pub fn tcp(&self) -> &TcpStream {
        match self {
            Stream::Plain(s) | Stream::Tls { tcp: s, .. } => s,
        }
    }

    /// A second handle on the same connection (for a writer thread).
    pub fn try_clone(&self) -> io::Result<Stream> {
        Ok(match self {
            Stream::Plain(s) => Stream::Plain(s.try_clone()?),
            Stream::Tls { tcp, shared } => Stream::Tls {
                tcp: tcp.try_clone()?,
                shared: shared.clone(),
            },
        })
    }

    pub fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        self.tcp().shutdown(how)
    }

    pub fn set_read_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        self.tcp().set_read_timeout(t)
    }

    /// Sends a TLS `KeyUpdate` that asks the server to update its key too. False over plain
    /// TCP.
    pub fn key_update(&mut self) -> io::Result<bool> {
        let Stream::Tls { tcp, shared } = self else {
            return Ok(false);
        };
        let _out = shared.out.lock().unwrap_or_else(PoisonError::into_inner);
        shared
            .state()
            .conn
            .refresh_traffic_keys()
            .map_err(io::Error::other)?;
        shared.send(tcp)?;
        Ok(true)
    }
}

/// Feeds handshake bytes to rustls (no plaintext comes before the handshake ends).
fn handshake_feed(conn: &mut ClientConnection, mut bytes: &[u8]) -> io::Result<()> {
    while !bytes.is_empty() {
        conn.read_tls(&mut bytes)?;
        conn.process_new_packets()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    }
    Ok(())
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let (tcp, shared) = match self {
            Stream::Plain(s) => return s.read(buf),
            Stream::Tls { tcp, shared } => (tcp, shared),
        };
        loop {
            let mut st = shared.state();
            let State { conn, raw } = &mut *st;
            match conn.reader().read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
            if !raw.is_empty() {
                // As much as rustls takes, then what it opened is read first.
                let mut rest = &raw[..];
                let took = conn.read_tls(&mut rest);
                let used = raw.len() - rest.len();
                raw.drain(..used);
                let opened = took.and_then(|_| {
                    conn.process_new_packets()
                        .map(|_| ())
                        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
                });
                drop(st);
                // Whatever the records called for (an alert, our KeyUpdate), unless a writer
                // is sending: it sends it next.
                if let Ok(_out) = shared.out.try_lock() {
                    let _ = shared.send(tcp);
                }
                opened?;
                continue;
            }
            drop(st);
            let mut got = [0u8; 32 * 1024];
            let n = tcp.read(&mut got)?;
            if n == 0 {
                // The end without close_notify reads as the end, as over plain TCP.
                return Ok(0);
            }
            shared.state().raw.extend_from_slice(&got[..n]);
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let (tcp, shared) = match self {
            Stream::Plain(s) => return s.write(buf),
            Stream::Tls { tcp, shared } => (tcp, shared),
        };
        let _out = shared.out.lock().unwrap_or_else(PoisonError::into_inner);
        let step = &buf[..buf.len().min(WRITE_STEP)];
        let n = shared.state().conn.writer().write(step)?;
        shared.send(tcp)?;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;
    use std::thread;

    use rustls::pki_types::PrivateKeyDer;
    use rustls::{ServerConfig, ServerConnection, StreamOwned};

    /// A certificate for 127.0.0.1 in a PEM file, and a rustls server config serving it.
    fn certificate(name: &str) -> (std::path::PathBuf, Arc<ServerConfig>) {
        let ck = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).expect("cert");
        let path =
            std::env::temp_dir().join(format!("soak-client-{}-{name}.pem", std::process::id()));
        std::fs::write(&path, ck.cert.pem()).expect("write");
        let key = PrivateKeyDer::try_from(ck.key_pair.serialize_der()).expect("key");
        let server = ServerConfig::builder_with_provider(Arc::new(default_provider()))
            .with_protocol_versions(&[&rustls::version::TLS13])
            .expect("versions")
            .with_no_client_auth()
            .with_single_cert(vec![ck.cert.der().clone()], key)
            .expect("server config");
        (path, Arc::new(server))
    }

    #[test]
    fn tls_echoes_from_a_writer_thread_and_after_key_updates_in_every_suite() {
        let (ca, server) = certificate("echo");
        let configs = client_configs(&ca).expect("client configs");
        let _ = std::fs::remove_file(&ca);
        for config in configs {
            let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
            let addr = listener.local_addr().expect("address");
            let server = server.clone();
            // An echo: what comes is sent back, until the client's end.
            let echo = thread::spawn(move || {
                let (tcp, _) = listener.accept().expect("accept");
                let mut s = StreamOwned::new(ServerConnection::new(server).expect("conn"), tcp);
                let mut buf = [0u8; 8192];
                loop {
                    match s.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => s.write_all(&buf[..n]).expect("echo"),
                    }
                }
            });
            let tcp = TcpStream::connect(addr).expect("connect");
            tcp.set_read_timeout(Some(Duration::from_secs(10)))
                .expect("timeout");
            let mut s = Stream::connect_with(tcp, addr, Some(config)).expect("handshake");
            let data: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
            let mut w = s.try_clone().expect("clone");
            let mut got = vec![0u8; data.len()];
            thread::scope(|sc| {
                sc.spawn(|| w.write_all(&data).expect("write"));
                s.read_exact(&mut got).expect("read");
            });
            assert!(got == data, "the echo differs");
            for round in 0..3u8 {
                assert!(s.key_update().expect("key update"), "a TLS stream updates");
                let msg = [b'k', round];
                s.write_all(&msg).expect("write after the update");
                let mut back = [0u8; 2];
                s.read_exact(&mut back).expect("read after the update");
                assert_eq!(back, msg);
            }
            s.shutdown(Shutdown::Both).expect("shutdown");
            echo.join().expect("echo thread");
        }
    }

    #[test]
    fn a_close_before_the_handshake_is_told_apart() {
        let (ca, _) = certificate("closed");
        let configs = client_configs(&ca).expect("client configs");
        let _ = std::fs::remove_file(&ca);
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("address");
        let closer = thread::spawn(move || drop(listener.accept().expect("accept")));
        let tcp = TcpStream::connect(addr).expect("connect");
        closer.join().expect("closer");
        let e = Stream::connect_with(tcp, addr, Some(configs[0].clone()))
            .err()
            .expect("no handshake");
        assert!(closed_at_once(&e), "{e}");
        assert!(!closed_at_once(&io::Error::other("another")));
    }
}
