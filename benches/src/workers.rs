//! The worker threads of the tokio peer servers (the hyper baseline, the WebSocket echoes):
//! one current-thread runtime per thread, each accepting on its own `SO_REUSEPORT` listener,
//! stopped by a one-shot message, and a count of the connections open over all of them. The
//! servers differ only in what `accept` does with each connection.

use std::future::Future;
use std::io;
use std::net::{SocketAddr, TcpListener as StdListener};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};

use socket2::{Domain, Protocol, Socket, Type};
use tokio::sync::oneshot;

/// Same backlog as server-demo's listeners, so neither refuses a connection burst the other
/// would queue.
const BACKLOG: i32 = 4096;

/// Running worker threads and their listeners' address.
#[derive(Debug)]
pub(crate) struct Workers {
    addr: SocketAddr,
    workers: Vec<Worker>,
    open: Arc<AtomicU64>,
}

/// One worker thread and the sender that stops it.
#[derive(Debug)]
struct Worker {
    stop: oneshot::Sender<()>,
    thread: JoinHandle<io::Result<()>>,
}

impl Workers {
    /// Binds `workers` listeners on `addr` (port 0: any free port, the same one for all) and
    /// starts a thread named `<name>-worker-<id>` on each, running `accept` on its listener
    /// with the open-connection count.
    ///
    /// # Errors
    /// When a listener cannot be bound or a thread cannot be spawned.
    pub(crate) fn start<A, F>(
        addr: SocketAddr,
        workers: usize,
        name: &str,
        accept: A,
    ) -> io::Result<Workers>
    where
        A: Fn(tokio::net::TcpListener, Arc<AtomicU64>) -> F + Clone + Send + 'static,
        F: Future<Output = ()> + Send + 'static,
    {
        // Every listener is bound before any worker starts, so a client that sees the address
        // is never refused. The first resolves port 0; the others join it on its port.
        let first = bind(addr)?;
        let addr = first.local_addr()?;
        let mut listeners = vec![first];
        for _ in 1..workers {
            listeners.push(bind(addr)?);
        }
        let mut set = Workers {
            addr,
            workers: Vec::with_capacity(workers),
            open: Arc::new(AtomicU64::new(0)),
        };
        for (id, listener) in listeners.into_iter().enumerate() {
            let (stop, stopped) = oneshot::channel();
            let open = Arc::clone(&set.open);
            let accept = accept.clone();
            let thread = thread::Builder::new()
                .name(format!("{name}-worker-{id}"))
                .spawn(move || worker(listener, stopped, move |l| accept(l, open)))?;
            set.workers.push(Worker { stop, thread });
        }
        Ok(set)
    }

    /// The address the listeners are bound to.
    pub(crate) fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Connections accepted and not yet closed, over all workers.
    pub(crate) fn open_connections(&self) -> u64 {
        self.open.load(Ordering::Relaxed)
    }

    /// Stops every worker (connections still open are dropped) and waits for their threads.
    pub(crate) fn stop(self) -> io::Result<()> {
        let threads: Vec<_> = self
            .workers
            .into_iter()
            .map(|w| {
                // A worker that already ended has dropped its receiver; nothing to stop.
                let _ = w.stop.send(());
                w.thread
            })
            .collect();
        join(threads)
    }

    /// Serves until a worker fails (they do not end otherwise).
    pub(crate) fn wait(self) -> io::Result<()> {
        let (stops, threads): (Vec<_>, Vec<_>) =
            self.workers.into_iter().map(|w| (w.stop, w.thread)).unzip();
        let result = join(threads);
        drop(stops);
        result
    }
}

/// One worker thread's life: a current-thread runtime that runs `accept` on its listener
/// until `stop` fires or its sender is dropped. Dropping the runtime then drops every
/// connection's task.
fn worker<F: Future<Output = ()> + Send + 'static>(
    listener: StdListener,
    stop: oneshot::Receiver<()>,
    accept: impl FnOnce(tokio::net::TcpListener) -> F,
) -> io::Result<()> {
    // No time driver: nothing here sleeps on tokio's clock, and without one each park skips
    // the timer wheel.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        let accepting = tokio::spawn(accept(listener));
        let _ = stop.await;
        accepting.abort();
        Ok(())
    })
}

fn join(threads: Vec<JoinHandle<io::Result<()>>>) -> io::Result<()> {
    let mut result = Ok(());
    for t in threads {
        let r = t
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("a worker thread panicked")));
        if result.is_ok() {
            result = r;
        }
    }
    result
}

fn bind(addr: SocketAddr) -> io::Result<StdListener> {
    let with_addr =
        |e: io::Error| io::Error::new(e.kind(), format!("cannot listen on {addr}: {e}"));
    let sock = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    sock.set_reuse_address(true).map_err(with_addr)?;
    // Each worker accepts on its own socket and the kernel hashes connections over them: no
    // shared accept queue, no work stealing, as in server-demo.
    sock.set_reuse_port(true).map_err(with_addr)?;
    sock.set_nonblocking(true).map_err(with_addr)?;
    sock.bind(&addr.into()).map_err(with_addr)?;
    sock.listen(BACKLOG).map_err(with_addr)?;
    Ok(sock.into())
}

/// Counts a connection as open for as long as its task lives (dropped when the connection
/// ends, or when the runtime drops the task at stop).
pub(crate) struct OpenConnection(Arc<AtomicU64>);

impl OpenConnection {
    pub(crate) fn new(open: &Arc<AtomicU64>) -> Self {
        open.fetch_add(1, Ordering::Relaxed);
        OpenConnection(Arc::clone(open))
    }
}

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}
