//! What alloc-reports measures: a [`Subject`] is a server it can start in process, once per
//! scenario, on a free loopback port, and stop afterwards.
//!
//! Two servers are built in: [`ServerDemo`] (this workspace's server, one subject per I/O
//! driver: `server-demo-epoll`, `server-demo-uring`, `server-demo-auto`; the test gates on
//! the first two) and [`Hyper`] (the hyper 1.x baseline of the load harness, reported beside
//! them). Any other
//! server that can run inside this process can be measured the same way: implement
//! [`Subject`] and [`Running`] and hand it to [`crate::run::main_with`] (or to
//! [`crate::measure::run_profiled`] in a test).
//!
//! # Examples
//!
//! A server of one's own, here a thread that answers every connection with one fixed
//! response and closes it:
//!
//! ```no_run
//! use std::io::{Read, Write};
//! use std::net::{SocketAddr, TcpListener};
//! use std::process::ExitCode;
//!
//! use alloc_reports::subject::{Running, Subject, SubjectError, Hyper, ServerDemo};
//! use alloc_reports::Scenario;
//! use server_demo::IoMode;
//!
//! #[global_allocator]
//! static ALLOC: dhat::Alloc = dhat::Alloc;
//!
//! struct Tiny;
//!
//! struct TinyRunning {
//!     addr: SocketAddr,
//! }
//!
//! impl Subject for Tiny {
//!     fn name(&self) -> &str {
//!         "tiny"
//!     }
//!
//!     // Only the scenarios this server can answer as expected.
//!     fn applies_to(&self, scenario: Scenario) -> bool {
//!         scenario == Scenario::ConnectClose
//!     }
//!
//!     fn start(&self, _scenario: Scenario) -> Result<Box<dyn Running>, SubjectError> {
//!         let listener = TcpListener::bind("127.0.0.1:0")?;
//!         let addr = listener.local_addr()?;
//!         std::thread::spawn(move || {
//!             let mut head = [0u8; 1024];
//!             for mut conn in listener.incoming().flatten() {
//!                 let _ = conn.read(&mut head);
//!                 let _ = conn.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
//!             }
//!         });
//!         Ok(Box::new(TinyRunning { addr }))
//!     }
//! }
//!
//! impl Running for TinyRunning {
//!     fn local_addr(&self) -> SocketAddr {
//!         self.addr
//!     }
//!
//!     // Without `open_connections`, the window waits a fixed grace period for closes.
//!     fn stop(self: Box<Self>) -> Result<(), SubjectError> {
//!         Ok(()) // a real server joins its threads here
//!     }
//! }
//!
//! fn main() -> ExitCode {
//!     let subjects: Vec<Box<dyn Subject>> = vec![
//!         Box::new(ServerDemo::with_io(IoMode::Epoll)),
//!         Box::new(Hyper),
//!         Box::new(Tiny),
//!     ];
//!     alloc_reports::run::main_with(&subjects)
//! }
//! ```

use std::net::SocketAddr;

use ::server_demo::{IoMode, PoolStats};
use bufslab_benches::WsPeer;

use crate::measure::{HeapCounts, Method};
use crate::scenario::Scenario;

mod hyper;
mod process;
mod server_demo;
mod ws_peer;

pub use self::hyper::Hyper;
pub use self::process::{Process, Program};
pub use self::server_demo::ServerDemo;
pub use self::ws_peer::WsEcho;

/// Why a subject's server did not start or stop cleanly: whatever error the server has.
pub type SubjectError = Box<dyn std::error::Error + Send + Sync>;

/// A server that alloc-reports can start, measure and stop.
pub trait Subject {
    /// The name in the report, in `--subject` and in the profiles' file names: lowercase
    /// ASCII letters, digits and `-`, distinct among the subjects of a run. A variant of a
    /// server (another configuration, another I/O driver) is a subject of its own, with a
    /// name of its own.
    fn name(&self) -> &str;

    /// Whether `scenario` applies. By default every HTTP scenario that does not ask for a
    /// pool free list ([`Scenario::strategy`]), which only a server built on bufslab can
    /// honour; the WebSocket scenarios ([`Scenario::WEBSOCKET`]) only where a subject says so,
    /// and the HTTPS ones ([`Scenario::HTTPS`]) only to a server in a process of its own (the
    /// TLS client allocates, and would count under dhat beside an in-process server).
    fn applies_to(&self, scenario: Scenario) -> bool {
        scenario.is_http() && scenario.strategy().is_none()
    }

    /// Starts a server for `scenario` in this process, listening on a free loopback port,
    /// with one worker thread where the server has a choice (so that warm-up fills the
    /// caches the window uses). It runs under the profiler: its start-up heap counts in
    /// `peak heap`, not in the window.
    ///
    /// # Errors
    /// When the server cannot start.
    fn start(&self, scenario: Scenario) -> Result<Box<dyn Running>, SubjectError>;

    /// The I/O mode this subject is configured with, for a server that takes server-demo's
    /// choice of driver; `None` (the default) for any other. `--io` keeps the subjects whose
    /// mode it names, and `--subject` takes such a subject also by its name without the
    /// `-<mode>` suffix (`server-demo` for `server-demo-epoll` and `server-demo-uring`).
    fn io(&self) -> Option<IoMode> {
        None
    }

    /// Why this subject cannot run on this machine (io_uring refused by the kernel or a
    /// seccomp profile, say), or `None` (the default) when it can. Asked once per run, before
    /// any profiler starts; a subject with a reason is left out of the run and the report
    /// says why.
    fn unavailable(&self) -> Option<String> {
        None
    }

    /// How this subject's allocations are counted: [`Method::Dhat`] (the default) for a
    /// server in this process under dhat, [`Method::Preload`] for a server in a process of
    /// its own that counts through the preloaded counter and reports through
    /// [`Running::heap`].
    fn method(&self) -> Method {
        Method::Dhat
    }
}

/// A server that a [`Subject`] started. Nothing here may allocate: `open_connections` and
/// `pool` are read inside the measured window.
pub trait Running {
    /// The address the server listens on.
    fn local_addr(&self) -> SocketAddr;

    /// Connections the server has open now, if it counts them. The window ends once this
    /// equals the client's (so a close is the server's work inside the window); without it
    /// the window waits [`crate::measure::GRACE`] instead.
    fn open_connections(&self) -> Option<u64> {
        None
    }

    /// The buffer pool's counters, for a server built on bufslab (`bufslab::Stats` converts
    /// into [`PoolStats`]).
    fn pool(&self) -> Option<PoolStats> {
        None
    }

    /// The pool's free list (`queue` or `stack`), for a server built on bufslab.
    fn free_list(&self) -> Option<&'static str> {
        None
    }

    /// What moves the server's bytes (`epoll`, `uring`, ...), for a server that has a choice;
    /// read after start-up, so a server that picks at run time reports its pick.
    fn driver(&self) -> Option<&'static str> {
        None
    }

    /// The heap's counters now, for a server whose allocations are counted outside this
    /// process's allocator ([`Method::Preload`]); `None` (the default) for one counted by
    /// dhat. Read at the window's two ends and between them for the curve.
    fn heap(&self) -> Option<HeapCounts> {
        None
    }

    /// Stops the server and waits for its threads, so that every allocation it makes is
    /// over before the profile is written.
    ///
    /// # Errors
    /// When the server did not stop cleanly.
    fn stop(self: Box<Self>) -> Result<(), SubjectError>;
}

/// The built-in subjects, in report order: in this process under dhat, server-demo under
/// each I/O mode (epoll, uring, auto) and hyper; then as binaries under the preloaded counter
/// ([`Process`]), server-demo's own binary under each mode, the hyper and may-minihttp
/// baselines of the load harness, and nginx where it is installed. `--io` picks among the
/// server-demo ones (by default epoll and uring).
#[must_use]
pub fn builtin() -> Vec<Box<dyn Subject>> {
    vec![
        Box::new(ServerDemo::with_io(IoMode::Epoll)),
        Box::new(ServerDemo::with_io(IoMode::Uring)),
        Box::new(ServerDemo::with_io(IoMode::Auto)),
        Box::new(Hyper),
        Box::new(process::server_demo(IoMode::Epoll)),
        Box::new(process::server_demo(IoMode::Uring)),
        Box::new(process::server_demo(IoMode::Auto)),
        Box::new(process::hyper()),
        Box::new(process::may_minihttp()),
        Box::new(process::nginx()),
        Box::new(WsEcho(WsPeer::Tungstenite)),
        Box::new(WsEcho(WsPeer::FastWebSockets)),
        Box::new(process::bufslab_ws(IoMode::Epoll)),
        Box::new(process::bufslab_ws(IoMode::Uring)),
        Box::new(process::ws_peer("ws-tungstenite-bin", "ws_tungstenite")),
        Box::new(process::ws_peer(
            "ws-fastwebsockets-bin",
            "ws_fastwebsockets",
        )),
    ]
}

/// Whether `name`, as given to `--subject`, names `subject`: its whole name, or, for a
/// subject with an I/O mode, its name without the `-<mode>` suffix.
#[must_use]
pub fn answers_to(subject: &dyn Subject, name: &str) -> bool {
    let own = subject.name();
    own == name
        || subject.io().is_some_and(|io| {
            own.strip_suffix(io.name())
                .and_then(|rest| rest.strip_suffix('-'))
                == Some(name)
        })
}

/// Whether `name` can name a subject: non-empty lowercase ASCII letters, digits and `-`.
#[must_use]
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_names_are_valid_and_distinct() {
        let subjects = builtin();
        let names: Vec<&str> = subjects.iter().map(|s| s.name()).collect();
        assert_eq!(
            names,
            [
                "server-demo-epoll",
                "server-demo-uring",
                "server-demo-auto",
                "hyper",
                "server-demo-bin-epoll",
                "server-demo-bin-uring",
                "server-demo-bin-auto",
                "hyper-bin",
                "may-minihttp-bin",
                "nginx",
                "ws-tungstenite",
                "ws-fastwebsockets",
                "bufslab-ws-bin-epoll",
                "bufslab-ws-bin-uring",
                "ws-tungstenite-bin",
                "ws-fastwebsockets-bin",
            ]
        );
        assert!(names.iter().all(|n| valid_name(n)));
        assert!(!valid_name("") && !valid_name("a/b") && !valid_name("Hyper"));
    }

    #[test]
    fn family_names() {
        let epoll = ServerDemo::with_io(IoMode::Epoll);
        assert!(answers_to(&epoll, "server-demo-epoll"));
        assert!(answers_to(&epoll, "server-demo"));
        assert!(!answers_to(&epoll, "server-demo-uring"));
        assert!(!answers_to(&epoll, "server"));
        assert!(answers_to(&Hyper, "hyper"));
        assert!(!answers_to(&Hyper, "hyp"));
        // A variant under a name of its own answers to that name only.
        let own = ServerDemo::with_config("mine", epoll.base().clone());
        assert!(answers_to(&own, "mine") && !answers_to(&own, "server-demo"));
    }

    #[test]
    fn pool_scenarios_apply_to_server_demo_only() {
        for s in Scenario::ALL {
            let ws = s.websocket_payload().is_some();
            let https = s.https().is_some();
            assert_eq!(ServerDemo::default().applies_to(s), !ws && !https);
            assert_eq!(WsEcho(WsPeer::Tungstenite).applies_to(s), ws);
            let hyper = s.strategy().is_none() && s != Scenario::Malformed && !ws && !https;
            assert_eq!(Hyper.applies_to(s), hyper, "{}", s.name());
        }
    }

    #[test]
    fn https_scenarios_apply_to_binaries_that_speak_it() {
        let subjects = builtin();
        let https = |name: &str| -> Vec<&'static str> {
            let s = subjects.iter().find(|s| s.name() == name).unwrap();
            Scenario::HTTPS
                .into_iter()
                .filter(|h| s.applies_to(*h))
                .map(Scenario::name)
                .collect()
        };
        let every: Vec<&str> = Scenario::HTTPS.into_iter().map(Scenario::name).collect();
        for name in [
            "server-demo-bin-epoll",
            "server-demo-bin-uring",
            "hyper-bin",
        ] {
            assert_eq!(https(name), every, "{name}");
        }
        // nginx has no echo; may-minihttp and the WebSocket servers no TLS.
        assert_eq!(https("nginx").len(), 15);
        assert!(https("nginx").iter().all(|n| !n.contains("echo")));
        for name in [
            "may-minihttp-bin",
            "bufslab-ws-bin-epoll",
            "ws-tungstenite-bin",
        ] {
            assert!(https(name).is_empty(), "{name}");
        }
    }
}
