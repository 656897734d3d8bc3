//! The result of one body-decoding step, shared by every body decoder.

/// One step of body decoding: how much input was used, the body bytes found in it, and
/// whether the body is complete.
///
/// # Examples
///
/// ```
/// use bufslab_http::LengthDecoder;
///
/// let mut body = LengthDecoder::new(5);
/// let step = body.decode(b"helloGET /");
/// assert_eq!((step.consumed, step.data, step.done), (5, &b"hello"[..], true));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Decoded<'b> {
    /// Input bytes used by this step (framing and data); advance the input by this much.
    pub consumed: usize,
    /// Body bytes, a sub-slice of the input (possibly empty).
    pub data: &'b [u8],
    /// The body is complete; any input after `consumed` belongs to the next message.
    pub done: bool,
}
