//! Starting the workers, and the handle that stops them.

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use bufslab::{FreeList, Pool, QueueFreeList, StackFreeList};
use mio::{Poll, Waker};
use socket2::{Domain, Protocol, Socket, Type};

use crate::config::{Config, ConfigError, IoMode, Strategy};
use crate::deferred::{Mailbox, Wake};
use crate::service::{MakeService, Service, WorkerInfo};
use crate::shared::Shared;
use crate::stats::{ServerStats, WorkerCounters};
use crate::uring::{self, UringWorker};
use crate::worker::{App, Worker, WAKER};

/// Why the server could not start or did not stop cleanly.
#[derive(Debug)]
#[non_exhaustive]
pub enum ServerError {
    /// The configuration is unusable.
    Config(ConfigError),
    /// Binding or listening on the address failed.
    Bind(SocketAddr, io::Error),
    /// Creating a poll, a waker or a thread failed.
    Setup(io::Error),
    /// A worker's event loop failed.
    Worker(usize, io::Error),
    /// A worker thread panicked.
    Panicked(usize),
    /// `--io uring` was asked for and io_uring cannot run here (the reason says why).
    Uring(bufslab_uring::Error),
}

impl fmt::Display for ServerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServerError::Config(e) => write!(f, "invalid configuration: {e}"),
            ServerError::Bind(addr, e) => write!(f, "cannot listen on {addr}: {e}"),
            ServerError::Setup(e) => write!(f, "cannot set up a worker: {e}"),
            ServerError::Worker(id, e) => write!(f, "worker {id} failed: {e}"),
            ServerError::Panicked(id) => write!(f, "worker {id} panicked"),
            ServerError::Uring(e) => write!(f, "--io uring: {e}"),
        }
    }
}

impl std::error::Error for ServerError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ServerError::Config(e) => Some(e),
            ServerError::Bind(_, e) | ServerError::Setup(e) | ServerError::Worker(_, e) => Some(e),
            ServerError::Panicked(_) => None,
            ServerError::Uring(e) => Some(e),
        }
    }
}

impl From<ConfigError> for ServerError {
    fn from(e: ConfigError) -> Self {
        ServerError::Config(e)
    }
}

/// The server: [`Server::start`] binds, spawns the workers and returns a [`ServerHandle`].
#[derive(Debug)]
pub struct Server;

impl Server {
    /// Validates `config`, builds the pool, binds one `SO_REUSEPORT` listener per worker on
    /// each address (so the kernel spreads connections over them) and starts the workers. Returns once every
    /// listener is listening: connections made after this are queued, never refused.
    ///
    /// # Errors
    /// [`ServerError::Config`], [`ServerError::Bind`] or [`ServerError::Setup`].
    pub fn start<M: MakeService>(config: Config, make: M) -> Result<ServerHandle, ServerError> {
        config.validate()?;
        let make = Arc::new(make);
        match config.pool.strategy {
            Strategy::Queue => {
                Self::start_with(config.build_pool::<QueueFreeList>()?, config, make)
            }
            Strategy::Stack => {
                Self::start_with(config.build_pool::<StackFreeList>()?, config, make)
            }
        }
    }

    fn start_with<F: FreeList, M: MakeService>(
        pool: Pool<F>,
        config: Config,
        make: Arc<M>,
    ) -> Result<ServerHandle, ServerError> {
        let uring = choose_uring(config.io)?;
        fit_descriptor_limit(config.workers, config.max_conns, config.listener_count());
        // `listeners[w]` is worker w's socket on each address. Worker 0's resolves port 0;
        // the other workers join it on the port it got.
        let mut addrs = Vec::with_capacity(config.listener_count());
        let mut listeners: Vec<Vec<std::net::TcpListener>> =
            (0..config.workers).map(|_| Vec::new()).collect();
        for i in 0..config.listener_count() {
            let first = bind(config.listener(i).0)?;
            let addr = first.local_addr().map_err(ServerError::Setup)?;
            listeners[0].push(first);
            for mine in &mut listeners[1..] {
                mine.push(bind(addr)?);
            }
            addrs.push(addr);
        }
        let shared = Arc::new(Shared {
            counters: (0..config.workers)
                .map(|_| WorkerCounters::default())
                .collect(),
            pool: Box::new(pool.clone()),
            shutdown: AtomicBool::new(false),
            alloc_counter: config.alloc_counter,
            driver: if uring { "uring" } else { "epoll" },
        });
        let mut handle = ServerHandle {
            addrs,
            shared: shared.clone(),
            wakers: Vec::new(),
            threads: Vec::new(),
        };
        for (id, mine) in listeners.into_iter().enumerate() {
            let poll = Poll::new().map_err(ServerError::Setup)?;
            let waker = Arc::new(Waker::new(poll.registry(), WAKER).map_err(ServerError::Setup)?);
            let (shared, cfg, pool) = (shared.clone(), config.clone(), pool.clone());
            let make = make.clone();
            let wake = if uring {
                Wake::EventFd(event_fd().map_err(ServerError::Setup)?)
            } else {
                Wake::Mio(waker.clone())
            };
            let mailbox: Mailbox<<M::Service as Service>::State> =
                Mailbox::new(config.max_conns, wake);
            let info = WorkerInfo::new(id, config.workers, mailbox.clone());
            let thread = std::thread::Builder::new()
                .name(format!("bufslab-worker-{id}"))
                .spawn(move || {
                    let app = App {
                        service: make.make(info),
                        mailbox,
                    };
                    if uring {
                        UringWorker::new(id, mine, &pool, shared, cfg, app)?.run()
                    } else {
                        Worker::new(id, poll, mine, &pool, shared, cfg, app)?.run()
                    }
                })
                .map_err(ServerError::Setup)?;
            handle.wakers.push(waker);
            handle.threads.push(thread);
        }
        Ok(handle)
    }
}

/// A non-blocking eventfd, for an io_uring worker's mailbox to wake it through.
fn event_fd() -> io::Result<std::os::fd::OwnedFd> {
    use rustix::event::{eventfd, EventfdFlags};
    eventfd(0, EventfdFlags::NONBLOCK | EventfdFlags::CLOEXEC).map_err(io::Error::from)
}

/// Whether the workers run io_uring: `auto` probes and falls back to epoll with a one-line
/// reason on stderr; `uring` fails to start where io_uring is refused.
fn choose_uring(io: IoMode) -> Result<bool, ServerError> {
    match io {
        IoMode::Epoll => Ok(false),
        IoMode::Uring => uring::probe().map(|()| true).map_err(ServerError::Uring),
        IoMode::Auto => match uring::probe() {
            Ok(()) => Ok(true),
            Err(e) => {
                eprintln!("bufslab-server: io_uring unavailable ({e}); using epoll");
                Ok(false)
            }
        },
    }
}

/// Descriptors a worker holds besides its connections and listeners: its poll and waker, and
/// under io_uring its ring and eventfd.
const FDS_PER_WORKER: u64 = 4;

/// Descriptors left to the rest of the process: stdio, a signal pipe, a log file or two.
const FDS_FOR_THE_PROCESS: u64 = 16;

/// Raises the soft `RLIMIT_NOFILE` to the hard limit: every connection is a descriptor, and the
/// usual soft limit (1024) is far below a worker's 10 000 slots by default, where the hard limit
/// usually is not. Then says on stderr, in one line like the io_uring fallback's, when the
/// configuration may still need more than the limit allows. Never fails the start: past the
/// limit, accepts fail with `EMFILE` and the workers back off until a descriptor is free.
fn fit_descriptor_limit(workers: usize, max_conns: usize, listeners: usize) {
    use rustix::process::{getrlimit, setrlimit, Resource};
    let mut limit = getrlimit(Resource::Nofile);
    if let (Some(soft), Some(hard)) = (limit.current, limit.maximum) {
        if soft < hard {
            let raised = rustix::process::Rlimit {
                current: Some(hard),
                maximum: Some(hard),
            };
            // Where it is refused, the soft limit stays, and the check below says whether it
            // is enough.
            if setrlimit(Resource::Nofile, raised).is_ok() {
                limit.current = Some(hard);
            }
        }
    }
    // `None`: no limit.
    let Some(soft) = limit.current else { return };
    let (workers, max_conns) = (workers as u64, max_conns as u64);
    let per_worker = FDS_PER_WORKER + listeners as u64;
    let needed = workers
        .saturating_mul(max_conns.saturating_add(per_worker))
        .saturating_add(FDS_FOR_THE_PROCESS);
    if needed > soft {
        eprintln!(
            "bufslab-server: descriptor limit {soft} is below the {needed} needed for \
             {workers} worker(s) of {max_conns} connections; accepts past it wait for a free \
             descriptor (raise it with ulimit -n)"
        );
    }
}

fn bind(addr: SocketAddr) -> Result<std::net::TcpListener, ServerError> {
    let e = |err| ServerError::Bind(addr, err);
    let sock =
        Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP)).map_err(e)?;
    sock.set_reuse_address(true).map_err(e)?;
    // Every worker listens on the same port; the kernel hashes connections over them.
    sock.set_reuse_port(true).map_err(e)?;
    sock.set_nonblocking(true).map_err(e)?;
    // Accepted sockets inherit it (the io_uring driver sets it nowhere else). A connection
    // takes the listener's options when its handshake completes, not when it is accepted, so
    // it is set before `listen`: one made before a later setsockopt would keep Nagle, and a
    // response of several segments would wait for the client's delayed ACK (40 ms).
    sock.set_tcp_nodelay(true).map_err(e)?;
    sock.bind(&addr.into()).map_err(e)?;
    sock.listen(4096).map_err(e)?;
    Ok(sock.into())
}

/// What a server did over its life, returned by [`ServerHandle::join`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    /// The final statistics.
    pub stats: ServerStats,
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.stats;
        write!(
            f,
            "served {} requests on {} connections ({} rejected, {} timed out); pool: {} blocks still rented, peak {} KiB out",
            s.requests,
            s.connections_accepted,
            s.connections_rejected,
            s.header_timeouts + s.idle_timeouts,
            s.pool.rented_blocks,
            s.pool.peak_out_bytes / 1024
        )
    }
}

/// A running server. Dropping it shuts the server down and waits for its workers.
pub struct ServerHandle {
    /// Every listener's address: `Config::addr`'s, then `Config::listeners`' in order.
    addrs: Vec<SocketAddr>,
    shared: Arc<Shared>,
    wakers: Vec<Arc<Waker>>,
    threads: Vec<JoinHandle<io::Result<()>>>,
}

impl fmt::Debug for ServerHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerHandle")
            .field("addrs", &self.addrs)
            .field("workers", &self.threads.len())
            .finish_non_exhaustive()
    }
}

impl ServerHandle {
    /// The address the server listens on, [`Config::addr`](crate::Config::addr) (with the
    /// real port when started on port 0).
    #[must_use]
    pub fn local_addr(&self) -> SocketAddr {
        self.addrs[0]
    }

    /// Every address the server listens on: [`local_addr`](Self::local_addr), then one for
    /// each of [`Config::listeners`](crate::Config::listeners), in order, with the real ports.
    #[must_use]
    pub fn local_addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }

    /// Number of worker threads.
    #[must_use]
    pub fn workers(&self) -> usize {
        self.shared.counters.len()
    }

    /// A snapshot of the counters and the pool. Allocates nothing.
    #[must_use]
    pub fn stats(&self) -> ServerStats {
        self.shared.snapshot()
    }

    /// Asks every worker to stop: listeners close at once, idle connections close, busy ones
    /// finish their current exchange (within `shutdown_grace`). Returns without waiting.
    pub fn shutdown(&self) {
        self.shared.shutdown.store(true, Ordering::Release);
        for w in &self.wakers {
            // A failed wake only delays the worker until its next timer (at most a second).
            let _ = w.wake();
        }
    }

    /// Waits for every worker to finish (call [`shutdown`](Self::shutdown) first, or this
    /// waits forever).
    ///
    /// # Errors
    /// The first worker failure.
    pub fn join(mut self) -> Result<Summary, ServerError> {
        self.join_workers()
    }

    /// [`shutdown`](Self::shutdown) then [`join`](Self::join).
    ///
    /// # Errors
    /// The first worker failure.
    pub fn stop(self) -> Result<Summary, ServerError> {
        self.shutdown();
        self.join()
    }

    fn join_workers(&mut self) -> Result<Summary, ServerError> {
        let mut result = Ok(());
        for (id, t) in self.threads.drain(..).enumerate() {
            let r = match t.join() {
                Ok(Ok(())) => Ok(()),
                Ok(Err(e)) => Err(ServerError::Worker(id, e)),
                Err(_) => Err(ServerError::Panicked(id)),
            };
            if result.is_ok() {
                result = r;
            }
        }
        result.map(|()| Summary {
            stats: self.stats(),
        })
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        if !self.threads.is_empty() {
            self.shutdown();
            let _ = self.join_workers();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A connection whose handshake completes before any worker runs (queued on the listener)
    /// still comes out of `accept` with `TCP_NODELAY`: the listener had it before it listened.
    #[test]
    fn connections_queued_before_the_workers_run_have_nodelay() {
        let listener = bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = listener.local_addr().unwrap();
        let _client = std::net::TcpStream::connect(addr).unwrap();
        listener.set_nonblocking(false).unwrap();
        let (accepted, _) = listener.accept().unwrap();
        assert!(accepted.nodelay().unwrap());
    }
}
