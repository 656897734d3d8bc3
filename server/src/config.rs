//! Server configuration, its validation, and the pool it implies.

use std::fmt;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use bufslab::{ClassConfig, FreeList, Pool};

/// Block size of the small class: one read of a typical request, or a batch of small
/// responses. 4 KiB is a page and a typical socket read.
pub const SMALL_BLOCK: usize = 4096;

/// Which free list the shared pool keeps its blocks on. Workers rent through their local
/// caches either way; the strategy decides what a cache refill gets and what a block dropped
/// on another thread goes back to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Strategy {
    /// FIFO: a lock-free `crossbeam-queue` ring (the pool's default).
    #[default]
    Queue,
    /// LIFO: the most recently returned, cache-hot block first (a `parking_lot` mutex).
    Stack,
}

impl Strategy {
    /// The name the command line takes.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Queue => "queue",
            Strategy::Stack => "stack",
        }
    }
}

impl std::str::FromStr for Strategy {
    type Err = ();

    /// The inverse of [`Strategy::name`].
    fn from_str(s: &str) -> Result<Self, ()> {
        [Strategy::Queue, Strategy::Stack]
            .into_iter()
            .find(|st| st.name() == s)
            .ok_or(())
    }
}

/// Which driver moves the bytes of the connections (`--io`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IoMode {
    /// io_uring when a ring with a provided buffer ring can be set up here, else epoll (with a
    /// one-line reason on stderr).
    #[default]
    Auto,
    /// Readiness with mio (epoll).
    Epoll,
    /// Completions with io_uring; the server does not start where io_uring is refused.
    Uring,
}

impl IoMode {
    /// The name the command line takes.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            IoMode::Auto => "auto",
            IoMode::Epoll => "epoll",
            IoMode::Uring => "uring",
        }
    }
}

impl std::str::FromStr for IoMode {
    type Err = ();

    /// The inverse of [`IoMode::name`].
    fn from_str(s: &str) -> Result<Self, ()> {
        [IoMode::Auto, IoMode::Epoll, IoMode::Uring]
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or(())
    }
}

/// How the shared buffer pool is sized. Every worker draws from the same pool through its own
/// local cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolConfig {
    /// Small (4 KiB) blocks per slab (one allocation each).
    pub blocks_per_slab: usize,
    /// Slabs of small blocks allocated at start-up (the floor trimming never goes below).
    pub prealloc_slabs: usize,
    /// Upper bound on the block memory of the whole pool, in bytes. At the bound the server
    /// stops reading and accepting until blocks come back; it never allocates past it.
    pub max_bytes: usize,
    /// Blocks each worker's local cache may hold.
    pub local_capacity: usize,
    /// The shared free list.
    pub strategy: Strategy,
}

impl Default for PoolConfig {
    fn default() -> Self {
        PoolConfig {
            blocks_per_slab: 64,
            prealloc_slabs: 4,
            max_bytes: 256 << 20,
            local_capacity: 64,
            strategy: Strategy::Queue,
        }
    }
}

/// Everything a [`Server`](crate::Server) needs to start. `Default` gives the binary's
/// defaults on 127.0.0.1:8080; tests usually set `addr` to port 0 and shorten the timeouts.
#[derive(Clone, Debug)]
pub struct Config {
    /// Address to listen on; port 0 picks a free port (all workers share it).
    pub addr: SocketAddr,
    /// Worker threads, each with its own `SO_REUSEPORT` listener, poll and connections.
    pub workers: usize,
    /// Most connections accepted per readiness event of a listener (1 = accept-one).
    pub accept_batch: usize,
    /// Connection slots per worker, preallocated; further connections are closed at once.
    pub max_conns: usize,
    /// Largest request head in bytes (431 beyond).
    pub max_head: usize,
    /// Largest request body in bytes (413 beyond).
    pub max_body: u64,
    /// Time allowed for a request head to arrive once it started (then 408 and close).
    pub header_timeout: Duration,
    /// Time a connection may sit without progress: idle between requests, or stalled while
    /// reading a body or writing a response.
    pub idle_timeout: Duration,
    /// On shutdown, how long connections get to finish the exchange in flight.
    pub shutdown_grace: Duration,
    /// How often worker 0 asks the pool to give idle slabs back (`None`: never).
    pub evict_interval: Option<Duration>,
    /// The pool's sizing.
    pub pool: PoolConfig,
    /// The I/O driver.
    pub io: IoMode,
    /// Optional heap-allocation counter (total allocations so far), reported in
    /// [`ServerStats::allocations`](crate::ServerStats::allocations).
    pub alloc_counter: Option<fn() -> u64>,
    /// The `Server` header of every response the engine frames (`None`: no such header). At
    /// most 40 bytes of field-value; a longer one is left out.
    pub server_name: Option<&'static str>,
    /// Output entries a connection may queue (pooled 4 KiB blocks, or bodies handed over
    /// whole), 4 ..= 1024; their slots are allocated with the connection slots (40 bytes
    /// each). Half of them are the room every response is promised: a pipelined head is
    /// taken only while that much is free (else what is queued is sent first), and a whole
    /// body may be up to [`whole_body_limit`](Self::whole_body_limit).
    pub out_blocks: usize,
    /// The slowest a request body may come (`None`: no minimum, only `idle_timeout` between
    /// bytes): every `per`, a body being read must have moved on by `bytes`, else it is
    /// answered `408` (or the connection closed, if its response had started going out). A
    /// defence against clients that trickle a body to hold a connection and its blocks.
    pub min_body_rate: Option<MinBodyRate>,
    /// Whether a service may switch a connection to `h2c` (HTTP/2 over cleartext, RFC 7540
    /// §3.2) with [`Exchange::switch_protocols`](crate::Exchange::switch_protocols). Off by
    /// default: RFC 9113 removed that upgrade, and a request offering it is answered as an
    /// ordinary HTTP/1.1 request.
    pub upgrade_h2c: bool,
    /// HTTPS: every connection to `addr` speaks TLS (`None`: plain HTTP). See
    /// [`TlsConfig`](crate::TlsConfig).
    pub tls: Option<crate::TlsConfig>,
    /// Listeners beside `addr`, each plain HTTP or HTTPS, served by the same workers, service
    /// and pool: a plain-HTTP port beside an HTTPS one, say. The service tells them apart by
    /// [`Exchange::tls`](crate::Exchange::tls). With `addr`, at most [`MAX_LISTENERS`].
    pub listeners: Vec<Listener>,
}

/// The most addresses one server listens on: [`Config::addr`] and [`Config::listeners`].
pub const MAX_LISTENERS: usize = 8;

/// One more address to serve ([`Config::listeners`]), plain HTTP or HTTPS. Every worker
/// listens on it with its own `SO_REUSEPORT` socket, as on [`Config::addr`].
///
/// # Examples
///
/// ```no_run
/// use bufslab_server::{Config, Listener, TlsConfig};
///
/// // HTTPS on 8443, plain HTTP on 8080.
/// let mut config = Config::default();
/// config.addr = "127.0.0.1:8443".parse().unwrap();
/// config.tls = Some(TlsConfig::from_pem_files("cert.pem".as_ref(), "key.pem".as_ref())?);
/// config.listeners.push(Listener::plain("127.0.0.1:8080".parse().unwrap()));
/// assert!(config.validate().is_ok());
/// # Ok::<(), bufslab_tls::LoadError>(())
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Listener {
    /// The address; port 0 picks a free port (see
    /// [`ServerHandle::local_addrs`](crate::ServerHandle::local_addrs)).
    pub addr: SocketAddr,
    /// HTTPS on this address (`None`: plain HTTP).
    pub tls: Option<crate::TlsConfig>,
}

impl Listener {
    /// Plain HTTP on `addr`.
    #[must_use]
    pub fn plain(addr: SocketAddr) -> Listener {
        Listener { addr, tls: None }
    }

    /// HTTPS on `addr`, with `tls`.
    #[must_use]
    pub fn https(addr: SocketAddr, tls: crate::TlsConfig) -> Listener {
        Listener {
            addr,
            tls: Some(tls),
        }
    }
}

/// A minimum rate for request bodies ([`Config::min_body_rate`]): `bytes` every `per`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct MinBodyRate {
    /// Bytes a body must move on by...
    pub bytes: u64,
    /// ...in each interval of this length.
    pub per: Duration,
}

impl MinBodyRate {
    /// `bytes` every `per`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use bufslab_server::{Config, MinBodyRate};
    ///
    /// let mut config = Config::default();
    /// // At least 1 KiB every 5 seconds (about 200 bytes a second), as a floor for uploads.
    /// config.min_body_rate = Some(MinBodyRate::new(1024, Duration::from_secs(5)));
    /// assert!(config.validate().is_ok());
    /// ```
    #[must_use]
    pub fn new(bytes: u64, per: Duration) -> MinBodyRate {
        MinBodyRate { bytes, per }
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            addr: SocketAddr::from((Ipv4Addr::LOCALHOST, 8080)),
            workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
            accept_batch: 64,
            max_conns: 10_000,
            max_head: 16 * 1024,
            max_body: 16 << 20,
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            shutdown_grace: Duration::from_secs(5),
            evict_interval: Some(Duration::from_secs(10)),
            pool: PoolConfig::default(),
            io: IoMode::default(),
            alloc_counter: None,
            server_name: None,
            out_blocks: 16,
            upgrade_h2c: false,
            min_body_rate: None,
            tls: None,
            listeners: Vec::new(),
        }
    }
}

/// Why a configuration cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigError {
    /// A count that must be at least 1 was 0.
    Zero(&'static str),
    /// `max_head` is below the smallest sensible head or above the codec's limit.
    MaxHead(usize),
    /// A timeout of zero would close every connection at once.
    ZeroTimeout(&'static str),
    /// The pool bound cannot hold even one block per class.
    Pool(String),
    /// `server_name` is longer than 40 bytes or holds a control byte.
    ServerName,
    /// `out_blocks` is out of range (4 ..= 1024).
    OutBlocks(usize),
    /// More than [`MAX_LISTENERS`] addresses to listen on.
    Listeners(usize),
    /// Two listeners name the same address (with the port not 0): under `SO_REUSEPORT` the
    /// kernel would spread one port's connections over both.
    SameAddr(SocketAddr),
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::Zero(what) => write!(f, "{what} must be at least 1"),
            ConfigError::MaxHead(n) => {
                write!(f, "max-head {n} is out of range (256 ..= 1048576 bytes)")
            }
            ConfigError::ZeroTimeout(what) => write!(f, "{what} must be longer than 0 ms"),
            ConfigError::Pool(why) => write!(f, "pool configuration rejected: {why}"),
            ConfigError::ServerName => {
                f.write_str("server name must be at most 40 bytes with no control byte")
            }
            ConfigError::OutBlocks(n) => write!(f, "out-blocks {n} is out of range (4 ..= 1024)"),
            ConfigError::Listeners(n) => {
                write!(f, "{n} listeners; at most {MAX_LISTENERS}")
            }
            ConfigError::SameAddr(addr) => write!(f, "{addr} is given to two listeners"),
        }
    }
}

impl std::error::Error for ConfigError {}

impl Config {
    /// Checks the values that would otherwise make the server useless or the pool unbuildable.
    ///
    /// # Errors
    /// The first problem found.
    pub fn validate(&self) -> Result<(), ConfigError> {
        for (v, name) in [
            (self.workers, "workers"),
            (self.accept_batch, "accept-batch"),
            (self.max_conns, "max-conns"),
            (self.pool.blocks_per_slab, "pool blocks-per-slab"),
            (self.pool.local_capacity, "pool local-capacity"),
        ] {
            if v == 0 {
                return Err(ConfigError::Zero(name));
            }
        }
        if !(256..=1 << 20).contains(&self.max_head) {
            return Err(ConfigError::MaxHead(self.max_head));
        }
        if self.header_timeout.is_zero() {
            return Err(ConfigError::ZeroTimeout("header-timeout"));
        }
        if self.idle_timeout.is_zero() {
            return Err(ConfigError::ZeroTimeout("idle-timeout"));
        }
        if let Some(name) = self.server_name {
            if name.len() > 40 || !bufslab_http::is_field_value(name.as_bytes()) {
                return Err(ConfigError::ServerName);
            }
        }
        if let Some(rate) = self.min_body_rate {
            if rate.per.is_zero() {
                return Err(ConfigError::ZeroTimeout("min-body-rate interval"));
            }
            if rate.bytes == 0 {
                return Err(ConfigError::Zero("min-body-rate bytes"));
            }
        }
        if !(4..=1024).contains(&self.out_blocks) {
            return Err(ConfigError::OutBlocks(self.out_blocks));
        }
        let n = 1 + self.listeners.len();
        if n > MAX_LISTENERS {
            return Err(ConfigError::Listeners(n));
        }
        for i in 0..n {
            let (addr, tls) = self.listener(i);
            if tls.is_some_and(|t| t.max_handshakes == 0) {
                return Err(ConfigError::Zero("tls max-handshakes"));
            }
            if addr.port() != 0 && (0..i).any(|j| self.listener(j).0 == addr) {
                return Err(ConfigError::SameAddr(addr));
            }
        }
        if self.max_conns > u32::MAX as usize / 2 {
            return Err(ConfigError::Zero("max-conns below 2^31"));
        }
        Ok(())
    }

    /// Listener `i`'s address and TLS: 0 is `addr` with `tls`, then `listeners` in order.
    pub(crate) fn listener(&self, i: usize) -> (SocketAddr, Option<&crate::TlsConfig>) {
        match i.checked_sub(1) {
            None => (self.addr, self.tls.as_ref()),
            Some(j) => {
                let l = &self.listeners[j];
                (l.addr, l.tls.as_ref())
            }
        }
    }

    /// How many addresses the server listens on.
    pub(crate) fn listener_count(&self) -> usize {
        1 + self.listeners.len()
    }

    /// The largest whole body a response may have ([`Response::body`], a
    /// [`StaticResponse`]): half of [`out_blocks`](Self::out_blocks) 4 KiB blocks, 32 KiB by
    /// default. Every response of up to that size (with a head of ordinary size, under
    /// 1 KiB of headers) finds room wherever it falls in a pipelined batch; a larger whole
    /// body is refused with [`ResponseError::TooLarge`]. Stream larger bodies
    /// ([`Response::stream`], [`Response::chunked`]) or hand them over owned
    /// ([`Response::body_owned`]: any size, no copy).
    ///
    /// [`Response::body`]: crate::Response::body
    /// [`Response::stream`]: crate::Response::stream
    /// [`Response::chunked`]: crate::Response::chunked
    /// [`Response::body_owned`]: crate::Response::body_owned
    /// [`StaticResponse`]: crate::StaticResponse
    /// [`ResponseError::TooLarge`]: crate::ResponseError::TooLarge
    #[must_use]
    pub fn whole_body_limit(&self) -> usize {
        self.out_blocks / 2 * SMALL_BLOCK
    }

    /// The most output entries a connection may have queued when it takes the next pipelined
    /// head. The response then has the other slots: a whole body of
    /// [`whole_body_limit`](Self::whole_body_limit) fills half of them, one more holds a head
    /// of ordinary size, and one the bytes left unused where a header line or the head's end
    /// did not fit the rest of a block.
    pub(crate) fn head_gate(&self) -> usize {
        self.out_blocks - (self.out_blocks / 2 + 2)
    }

    /// Block size of the large class: a request head that outgrows a small block moves there,
    /// so it must hold `max_head` bytes (plus one, so the codec sees an over-long head and
    /// answers 431 itself).
    #[must_use]
    pub fn large_block(&self) -> usize {
        // Under TLS it also holds a whole record (16,645 bytes) and what follows it.
        let https = (0..self.listener_count()).any(|i| self.listener(i).1.is_some());
        let floor = if https { 32 * 1024 } else { SMALL_BLOCK * 2 };
        (self.max_head + 1).next_power_of_two().max(floor)
    }

    /// Builds the shared pool: 4 KiB blocks for reads and responses, and a large class for
    /// heads beyond 4 KiB, both bounded by `pool.max_bytes`.
    ///
    /// # Errors
    /// [`ConfigError::Pool`] when the bounds cannot hold one slab of each class.
    pub fn build_pool<F: FreeList>(&self) -> Result<Pool<F>, ConfigError> {
        let p = &self.pool;
        let small_slab = SMALL_BLOCK * p.blocks_per_slab;
        let large = self.large_block();
        let large_per_slab = 4;
        // The small class leaves room for one slab of the large class under the bound:
        // otherwise small blocks can fill the whole bound, and a head over 4 KiB waits for a
        // large block that can never be made until its header deadline answers 408.
        let small_max = (p.max_bytes.saturating_sub(large * large_per_slab) / small_slab).max(1);
        let large_max = (p.max_bytes / (large * large_per_slab)).max(1);
        Pool::builder()
            .class(
                ClassConfig::new(SMALL_BLOCK)
                    .blocks_per_slab(p.blocks_per_slab)
                    .prealloc_slabs(p.prealloc_slabs.min(small_max))
                    .max_slabs(small_max),
            )
            .class(
                ClassConfig::new(large)
                    .blocks_per_slab(large_per_slab)
                    .prealloc_slabs(0)
                    .max_slabs(large_max),
            )
            .max_bytes(p.max_bytes)
            .local_capacity(p.local_capacity)
            .build_with()
            .map_err(|e| ConfigError::Pool(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bufslab::QueueFreeList;

    #[test]
    fn listeners_are_bounded_and_distinct() {
        let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let mut config = Config {
            addr: any,
            ..Config::default()
        };
        // Port 0 picks a port per listener: no clash.
        config.listeners = vec![Listener::plain(any); MAX_LISTENERS - 1];
        assert_eq!(config.validate(), Ok(()));
        config.listeners.push(Listener::plain(any));
        assert_eq!(
            config.validate(),
            Err(ConfigError::Listeners(MAX_LISTENERS + 1))
        );
        let port: SocketAddr = "127.0.0.1:8443".parse().unwrap();
        config.listeners = vec![Listener::plain(port), Listener::plain(any)];
        assert_eq!(config.validate(), Ok(()));
        config.listeners.push(Listener::plain(port));
        assert_eq!(config.validate(), Err(ConfigError::SameAddr(port)));
        assert_eq!(
            ConfigError::SameAddr(port).to_string(),
            "127.0.0.1:8443 is given to two listeners"
        );
    }

    /// Small blocks filling the pool to its bound still leave a large block for a long head.
    #[test]
    fn small_blocks_leave_room_for_a_large_one() {
        let mut config = Config::default();
        config.pool.max_bytes = 1 << 20;
        config.pool.prealloc_slabs = 4;
        let pool: Pool<QueueFreeList> = config.build_pool().expect("pool");
        let mut small = Vec::new();
        while let Ok(b) = pool.get(SMALL_BLOCK) {
            small.push(b);
        }
        assert!(!small.is_empty());
        assert!(
            pool.get(config.large_block()).is_ok(),
            "no large block left"
        );
    }
}
