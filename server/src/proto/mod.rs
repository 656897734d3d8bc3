//! The I/O-free HTTP/1.1 connection core: a connection's state machine (`conn`), the exchange
//! a service answers through (`exchange`, `upgrade`), bodies in and out, and the output queue.
//! It does no I/O and knows neither the drivers nor TLS: whoever owns the socket feeds it
//! bytes and sends what it queues.

pub(crate) mod body;
pub(crate) mod body_writer;
pub(crate) mod conn;
pub(crate) mod deferred;
pub(crate) mod exchange;
pub(crate) mod exchange_state;
pub(crate) mod out_queue;
pub(crate) mod owned_body;
pub(crate) mod protocol;
pub(crate) mod response_error;
pub(crate) mod static_response;
pub(crate) mod tls_info;
pub(crate) mod upgrade;
