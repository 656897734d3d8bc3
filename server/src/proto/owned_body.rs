//! [`OwnedBody`]: a response body handed to the engine whole, sent by reference.

use std::fmt;

use bufslab::{PoolBuf, PoolBytes};
use bytes::Bytes;

use crate::out_queue::OutBuf;

/// A response body the service hands over whole ([`Response::body_owned`]): queued as it is,
/// by reference, and sent with the head in one vectored write, so its bytes are never copied
/// in user space. It is dropped once the kernel has taken its last byte (a pooled block goes
/// back to its pool then).
///
/// Made from a filled [`PoolBuf`] (rented with [`Exchange::rent`], say), a [`PoolBytes`] view
/// (a value a store keeps frozen and clones per response: one atomic increment), or any
/// [`bytes::Bytes`].
///
/// [`Response::body_owned`]: crate::Response::body_owned
/// [`Exchange::rent`]: crate::Exchange::rent
///
/// # Examples
///
/// ```
/// use bufslab_server::OwnedBody;
/// use bytes::BufMut;
///
/// let pool = bufslab::Pool::new();
/// let mut value = pool.get(4096)?;
/// value.put_slice(b"a value kept in a pooled block");
/// let value = value.freeze();
///
/// // Per response: a clone of the view, no copy of the bytes.
/// let body = OwnedBody::from(value.clone());
/// assert_eq!(body.len(), 30);
/// let body = OwnedBody::from(bytes::Bytes::from_static(b"static"));
/// assert_eq!(body.len(), 6);
/// # Ok::<(), bufslab::Error>(())
/// ```
pub struct OwnedBody(pub(crate) OutBuf);

impl OwnedBody {
    /// The body's length in bytes.
    #[must_use]
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the body is empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl fmt::Debug for OwnedBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnedBody")
            .field("len", &self.len())
            .finish()
    }
}

impl From<PoolBuf> for OwnedBody {
    fn from(b: PoolBuf) -> Self {
        OwnedBody(OutBuf::Buf(b))
    }
}

impl From<PoolBytes> for OwnedBody {
    fn from(b: PoolBytes) -> Self {
        OwnedBody(OutBuf::Shared(b))
    }
}

impl From<Bytes> for OwnedBody {
    fn from(b: Bytes) -> Self {
        OwnedBody(OutBuf::Bytes(b))
    }
}

impl From<&'static [u8]> for OwnedBody {
    fn from(b: &'static [u8]) -> Self {
        OwnedBody(OutBuf::Bytes(Bytes::from_static(b)))
    }
}
