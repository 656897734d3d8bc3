//! The drivers: what moves bytes between the sockets and the connections. Each drives a
//! connection through its `Link` (the core, behind TLS on an HTTPS listener).

pub(crate) mod epoll;
pub(crate) mod link;
pub(crate) mod sys;
// Only the io_uring driver may use `unsafe` (requests that name memory the kernel reads).
#[allow(unsafe_code)]
pub(crate) mod uring;
