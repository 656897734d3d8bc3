//! Serving what the read block holds: heads, the service's calls, bodies in and out, the
//! error statuses, until the input runs out, the output queue fills, or the connection must
//! close.

use super::*;

impl<T: Default> Conn<T> {
    /// Serves what the read block holds: complete requests, then body bytes, until the input
    /// runs out, the output queue fills, or the connection must close.
    pub(super) fn process<F: FreeList, S: Service<State = T>>(
        &mut self,
        env: &mut Env<'_, F, S>,
    ) -> Result<(), Blocked> {
        loop {
            if !self.holds_input() {
                return Ok(());
            }
            match self.phase {
                // The next request waits for the current exchange's answer or pulled body:
                // responses leave in request order.
                Phase::Head if !self.ex.is_settled() => return Ok(()),
                Phase::Head => {
                    if !self.head(env)? {
                        return Ok(()); // partial head: need more input
                    }
                }
                Phase::Body(_) => {
                    if !self.body(env)? {
                        return Ok(()); // partial framing: need more input
                    }
                }
                // The `101` (or what the service wrote) goes out first, and the service hears
                // of the switch before any byte.
                Phase::Upgraded => {
                    if !self.out.is_empty() || !self.up.started {
                        return Ok(());
                    }
                    self.deliver(env);
                }
                Phase::Closing { .. } | Phase::Drain { .. } | Phase::Closed => return Ok(()),
            }
        }
    }

    /// Parses and answers one request head. `Ok(false)`: the head is incomplete.
    ///
    /// The parse is inlined here, and what a head needs only off its common path (a refusal,
    /// a misuse, a body, a deferred answer, a pulled body) is not: inlined as well, those
    /// cost the parse about 20 instructions per pipelined request in spilled registers.
    pub(super) fn head<F: FreeList, S: Service<State = T>>(
        &mut self,
        env: &mut Env<'_, F, S>,
    ) -> Result<bool, Blocked> {
        // Backpressure: the next pipelined head waits until the output has room for a whole
        // response of the promised size, so no response finds the queue full; what is queued
        // is sent first (the serving loop sends on `OutputFull`).
        if self.out.blocks() > env.head_gate {
            return Err(Blocked::OutputFull);
        }
        let Some(rb) = self.rbuf.as_mut() else {
            return Ok(false);
        };
        // A finished parse leaves the parser fresh: only a partial one may need starting over.
        if self.mid_head && *env.slots_owner != Some(env.slot) {
            self.parser.reset();
        }
        // The room behind the head can become the response's only while nothing is queued
        // before it (see below): only then is the block split.
        let (input, behind) = if self.out.is_empty() {
            let (input, behind) = rb.split_spare();
            (input, Some(behind))
        } else {
            (&**rb, None)
        };
        let parsed = self.parser.parse(input, env.slots);
        *env.slots_owner = None;
        self.mid_head = false;
        let req = match parsed {
            Ok(Status::Complete(req)) => req,
            Ok(Status::Partial) => {
                *env.slots_owner = Some(env.slot);
                self.mid_head = true;
                return Ok(false);
            }
            Err(e) => {
                // Nothing after a framing error is served: the request boundaries can no
                // longer be trusted.
                WorkerCounters::add(&env.counters.requests, 1);
                self.refuse(env, e.status())?;
                return Ok(true);
            }
        };
        let head = Head::of(&req, env.shutting_down, &mut self.ex);
        if let BodyFraming::Length(n) = head.framing {
            if n > env.max_body {
                WorkerCounters::add(&env.counters.requests, 1);
                self.refuse(env, 413)?;
                return Ok(true);
            }
        }
        // The common case, one request and nothing behind it: the response is written behind
        // the head in the same block, which then becomes the response block (see
        // `Exchange::behind_head`).
        let behind = behind.filter(|room| {
            !self.ex.has_body() && input.len() == head.head_len && room.len() >= RESPONSE_ROOM
        });
        let reuse = behind.is_some();
        // Otherwise room for the response before the service runs: its call is never
        // repeated, so it must not find the pool empty for a response of ordinary size.
        // Should the pool be empty now, the head is parsed again once blocks come back.
        if !reuse {
            self.ex.start = self.out.reserve_start(env.cache, RESPONSE_ROOM)?;
        }
        let mut ex = exchange!(self, env);
        if let Some(room) = behind {
            ex.behind_head(room);
        }
        if head.options_star {
            // A question about the server as a whole (RFC 9110 §9.3.7): `200`, no content;
            // which methods each resource allows is the service's to say, for its targets.
            let _ = ex.respond(200).body(b"");
        } else {
            self.state = T::default();
            env.service.head(&req, &mut ex, &mut self.state);
            if ex.reads_body_now() {
                env.service.end(&mut ex, &mut self.state);
            }
        }
        let written = ex.behind_head_written();
        WorkerCounters::add(&env.counters.requests, 1);
        if reuse {
            if let Some(mut rb) = self.rbuf.take() {
                rb.commit(written);
                rb.advance(head.head_len);
                if !rb.is_empty() {
                    self.out.push_front(rb);
                }
            }
        } else if let Some(rb) = self.rbuf.as_mut() {
            rb.advance(head.head_len.min(rb.len()));
        }
        self.after_head(env, head.framing)
    }

    /// Has the service write the answer to its deferred exchange, which just arrived. The
    /// output is empty here (it is sent before anything else goes on).
    #[inline(never)]
    pub(super) fn answered<F: FreeList, S: Service<State = T>>(
        &mut self,
        env: &mut Env<'_, F, S>,
    ) -> Result<(), Blocked> {
        let start = self.out.reserve_start(env.cache, RESPONSE_ROOM)?;
        self.ex.progress = Progress::NotStarted;
        self.ex.start = start;
        let mut ex = exchange!(self, env);
        env.service.resume(&mut ex, &mut self.state);
        if self.ex.error.is_some() || !self.ex.is_answered() {
            self.service_failed(env, Some(start))?;
        } else {
            self.close_if_asked();
        }
        Ok(())
    }

    /// The service asked to close ([`Exchange::close`]) in a call after the head's (the
    /// exchange's flags are read for the `Connection` header and the next request only once,
    /// after `head`): once the response is complete, nothing more is read or answered on this
    /// connection. Lingering, since what the client sent behind it may still come.
    pub(super) fn close_if_asked(&mut self) {
        if self.ex.is(flag::CLOSE)
            && self.ex.progress == Progress::Done
            && matches!(self.phase, Phase::Head | Phase::Body(_))
        {
            self.rbuf = None;
            self.phase = Phase::Closing { linger: true };
        }
    }

    /// Has the service write the next part of a pulled body into a block of up to
    /// [`PULL_ROOM`] bytes. The output is empty here. A fill that writes nothing and does not
    /// end the body (or misuses the exchange) ends the connection: the head has gone out, so
    /// no other status can be sent.
    #[inline(never)]
    pub(super) fn pull<F: FreeList, S: Service<State = T>>(
        &mut self,
        env: &mut Env<'_, F, S>,
    ) -> Result<(), Blocked> {
        self.out
            .reserve(env.cache, env.large_block.min(PULL_ROOM))?;
        let mut ex = exchange!(self, env);
        env.service.fill(&mut ex, &mut self.state);
        let wrote = self.out.queued() > 0;
        if self.ex.error.is_some() || (!wrote && self.ex.pulls()) {
            self.service_failed(env, None)?;
        } else {
            self.close_if_asked();
        }
        Ok(())
    }

    /// Decides what follows a head the service has seen: its body (delivered or skipped), the
    /// next request, or the close.
    #[inline]
    pub(super) fn after_head<F: FreeList, S: Service<State = T>>(
        &mut self,
        env: &mut Env<'_, F, S>,
        framing: BodyFraming,
    ) -> Result<bool, Blocked> {
        let st = &self.ex;
        // The common case first: answered whole, no body, and the connection goes on.
        if st.done_and_kept() {
            return Ok(true);
        }
        let delivers = st.is(flag::HAS_BODY | flag::READS_BODY);
        let (start, has_body, keep) = (st.start, st.has_body(), st.keep());
        let keep_alive = st.is(flag::KEEP_ALIVE);
        if st.error.is_some() || (!delivers && !st.is_answered()) {
            self.service_failed(env, Some(start))?;
            return Ok(true);
        }
        if st.is(flag::UPGRADED) {
            // Whatever follows the head in the read block is the new protocol's.
            self.phase = Phase::Upgraded;
            self.up = UpState::default();
            self.upgraded = true;
            // The service hears of the switch before the `101` goes out: whatever it sets up
            // then (a registration) is in place when the client learns of it.
            let _ = self.upgraded_step(env);
            return Ok(true);
        }
        if has_body && (keep || delivers) {
            let using = if delivers {
                BodyUse::Deliver
            } else {
                BodyUse::Skip
            };
            let limit = st.body_limit.min(env.max_body);
            self.phase = Phase::Body(Body::new(framing, using, start, limit));
            if let (BodyUse::Deliver, BodyFraming::Length(n)) = (using, framing) {
                if n > limit {
                    // Over the service's own limit for this request: refused before a byte of
                    // it is read.
                    self.body_fault(env, BodyFault::TooLarge)?;
                    return Ok(true);
                }
            }
            // A close the client asked for needs no linger once its body is read.
            self.close_after_body = (!keep).then_some(keep_alive);
        } else if !keep {
            // An unread body may still be on its way.
            let linger = keep_alive || has_body;
            self.phase = Phase::Closing { linger };
        }
        Ok(true)
    }

    /// Writes an error response with `Connection: close` for the current request (already
    /// counted) and stops serving: the rest of the input is dropped.
    #[cold]
    #[inline(never)]
    pub(super) fn refuse<F: FreeList, S: Service<State = T>>(
        &mut self,
        env: &mut Env<'_, F, S>,
        status: u16,
    ) -> Result<(), Blocked> {
        // The method of a request refused for its framing is not to be trusted: the body goes.
        self.final_error(env, status, false)?;
        WorkerCounters::add(&env.counters.bad_requests, 1);
        Ok(())
    }

    /// Queues `status` with `Connection: close` as the last response, and drops the input.
    #[cold]
    #[inline(never)]
    pub(super) fn final_error<F: FreeList, S: Service<State = T>>(
        &mut self,
        env: &mut Env<'_, F, S>,
        status: u16,
        head_only: bool,
    ) -> Result<(), Blocked> {
        self.out.reserve(env.cache, ERROR_ROOM)?;
        // The engine's answer ends the exchange, through the writer a service's goes through:
        // a deferred answer or a pulled body of the service's can no longer follow it.
        self.ex.begin_closing(head_only);
        let _ = exchange!(self, env)
            .respond(status)
            .header(KnownHeader::ContentType, b"text/plain")
            .body(bufslab_http::reason(status).as_bytes());
        self.rbuf = None;
        self.phase = Phase::Closing { linger: true };
        Ok(())
    }

    /// The service misused its [`Exchange`] or left its response unfinished. While none of its
    /// response has gone out (`unsent_from`: the queued bytes before it), the response is
    /// taken back and a `500` sent in its place (`503` when it was the pool that ran dry);
    /// after, what is queued goes out and the connection closes. Either way nothing more is
    /// served on it.
    #[cold]
    #[inline(never)]
    pub(super) fn service_failed<F: FreeList, S: Service<State = T>>(
        &mut self,
        env: &mut Env<'_, F, S>,
        unsent_from: Option<usize>,
    ) -> Result<(), Blocked> {
        WorkerCounters::add(&env.counters.service_errors, 1);
        // Whatever the service left pending (a pulled body) is over; a 500 to a HEAD has no
        // body either.
        let (head_only, error) = (self.ex.head_only(), self.ex.error);
        self.ex.begin_closing(head_only);
        match unsent_from {
            Some(start) => {
                self.out.truncate(start);
                let status = match error {
                    Some(crate::exchange::ResponseError::NoRoom) => 503,
                    _ => 500,
                };
                self.final_error(env, status, head_only)
            }
            None => {
                self.rbuf = None;
                self.phase = Phase::Closing { linger: true };
                Ok(())
            }
        }
    }

    /// Consumes body bytes from the input. `Ok(false)`: it needs more input to go on.
    #[inline(never)]
    pub(super) fn body<F: FreeList, S: Service<State = T>>(
        &mut self,
        env: &mut Env<'_, F, S>,
    ) -> Result<bool, Blocked> {
        let (Phase::Body(body), Some(rb)) = (&mut self.phase, self.rbuf.as_mut()) else {
            return Ok(false);
        };
        let stepped = match body.using() {
            BodyUse::Skip => body.skip(rb, env.max_body),
            BodyUse::Deliver => {
                // Feed the decoder only as much input as the output block can take, so that
                // a service writing each piece back out never blocks, with room for the
                // response head while it is still to be written.
                let head_room = if self.ex.progress == Progress::NotStarted {
                    RESPONSE_ROOM
                } else {
                    0
                };
                let buf = self.out.reserve(env.cache, 64 + head_room)?;
                let room = buf.spare_capacity() - CHUNK_FRAMING - head_room;
                let input = rb.get(..rb.len().min(room)).unwrap_or_default();
                body.decode(input).map(|(data, consumed, done)| {
                    let mut ex = exchange!(self, env);
                    if !data.is_empty() {
                        env.service.data(data, &mut ex, &mut self.state);
                    }
                    if done {
                        env.service.end(&mut ex, &mut self.state);
                    }
                    (consumed, done)
                })
            }
        };
        match stepped {
            Ok((consumed, done)) => {
                rb.advance(consumed);
                let failed = body.using() == BodyUse::Deliver
                    && (self.ex.error.is_some() || (done && !self.ex.is_answered()));
                if failed {
                    let unsent = body.unsent_from();
                    self.service_failed(env, unsent)?;
                    return Ok(true);
                }
                // `close()` called while the body was read is read again once the response is
                // complete: as the client's own close when the body is done too, else the rest
                // of the body is not read (the connection closes lingering).
                let asked = self.ex.is(flag::CLOSE) && self.ex.progress == Progress::Done;
                if done {
                    let close = self
                        .close_after_body
                        .or(asked.then(|| self.ex.is(flag::KEEP_ALIVE)));
                    self.phase = match close {
                        Some(linger) => Phase::Closing { linger },
                        None => Phase::Head,
                    };
                } else if asked {
                    self.close_if_asked();
                }
                Ok(done || consumed > 0)
            }
            Err(fault) => self.body_fault(env, fault).map(|()| true),
        }
    }

    /// A body that cannot be consumed further (malformed, or over `max_body`).
    ///
    /// While no byte of its request's response has been sent, that response is taken back
    /// from the output and replaced by the fault's status with `Connection: close`: the
    /// client learns why, and gets one well-formed answer to its request. Once the response
    /// has started going out, nothing else can be said in-band: what is queued is sent, then
    /// the connection closes, and the statistics count it (`late_body_faults`).
    #[cold]
    #[inline(never)]
    pub(super) fn body_fault<F: FreeList, S: Service<State = T>>(
        &mut self,
        env: &mut Env<'_, F, S>,
        fault: BodyFault,
    ) -> Result<(), Blocked> {
        let Phase::Body(body) = &self.phase else {
            return Ok(());
        };
        match body.unsent_from() {
            Some(start) => {
                self.out.truncate(start);
                self.refuse(env, fault.status())
            }
            None => {
                WorkerCounters::add(&env.counters.late_body_faults, 1);
                self.rbuf = None;
                self.phase = Phase::Closing { linger: true };
                Ok(())
            }
        }
    }
}
