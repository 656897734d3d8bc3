//! What the engine reads from a request head before the service sees it.

use bufslab_http::{BodyFraming, Method, Request, TargetForm, Version};

use crate::exchange::{flag, ExchangeState};

/// Room the engine's own answers take at most: status line, Content-Type, Content-Length,
/// Server (up to 40 bytes), Date, `Connection: close`, and the reason phrase as the body.
pub(crate) const ERROR_ROOM: usize = 384;

/// What the engine needs of a complete head, copied out so the head's borrow of the read
/// block can end.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Head {
    pub(crate) head_len: usize,
    pub(crate) framing: BodyFraming,
    /// `OPTIONS *`: a question about the server as a whole, which the engine answers.
    pub(crate) options_star: bool,
}

impl Head {
    /// Reads what the engine needs from a complete head, and starts its exchange in `st`.
    #[inline]
    pub(crate) fn of(req: &Request<'_, '_>, shutting_down: bool, st: &mut ExchangeState) -> Head {
        let framing = req.framing();
        let has_body = !matches!(framing, BodyFraming::None | BodyFraming::Length(0));
        let bit = |on: bool, f: u16| if on { f } else { 0 };
        st.begin(
            bit(req.method() == Method::Head, flag::HEAD_ONLY)
                | bit(req.version() == Version::Http10, flag::HTTP10)
                | bit(req.keep_alive(), flag::KEEP_ALIVE)
                | bit(req.expect_continue(), flag::EXPECT_CONTINUE)
                | bit(has_body, flag::HAS_BODY)
                | bit(shutting_down, flag::CLOSE),
        );
        Head {
            head_len: req.head_len(),
            framing,
            options_star: req.target_form() == TargetForm::Asterisk,
        }
    }
}
