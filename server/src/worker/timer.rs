//! Per-worker deadlines: one intrusive FIFO list per timeout kind, threaded through an array
//! parallel to the connection slab.
//!
//! Every timeout of a kind has the same duration, so arming a connection at `now` always
//! gives the latest deadline of its list: appending at the tail keeps each list sorted by
//! deadline with no heap and no sorting. Arming, re-arming (moving to the tail), disarming
//! and expiring are all O(1), and nothing allocates after construction: the link array is
//! sized for every slot up front. This replaces a timer per connection (which would cost a
//! heap node or a timerfd per connection) with a few words per slot.

use std::time::{Duration, Instant};

/// Which timeout a connection is waiting on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TimerKind {
    /// Between requests, or no progress while reading a body or writing output.
    Idle = 0,
    /// A request head started arriving and must complete in time (slowloris defence). Not
    /// refreshed by further bytes.
    Header = 1,
    /// Lingering close: reading and discarding what the peer still sends after our final
    /// response, so that closing does not reset the connection under that response.
    Drain = 2,
    /// Reading a request body under `Config::min_body_rate`: each time it passes, the body
    /// must have moved on by the rate's bytes since the last time. Not refreshed by progress.
    Body = 3,
}

const KINDS: usize = 4;
const NIL: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Link {
    prev: u32,
    next: u32,
    /// `None` when the slot is on no list.
    kind: Option<TimerKind>,
    deadline: Instant,
}

#[derive(Clone, Copy, Debug)]
struct List {
    head: u32,
    tail: u32,
    timeout: Duration,
    /// `timeout` less the refresh grain (1/64 of it): a deadline later than `now` plus this
    /// was set within the grain.
    fresh_for: Duration,
}

/// The deadline lists of one worker.
#[derive(Debug)]
pub(crate) struct Timers {
    links: Vec<Link>,
    lists: [List; KINDS],
    /// The lists in use: the body list only with a minimum body rate.
    active: usize,
}

impl Timers {
    /// Lists for `slots` connections with the given timeouts.
    pub(crate) fn new(
        slots: usize,
        idle: Duration,
        header: Duration,
        drain: Duration,
        body: Option<Duration>,
    ) -> Self {
        let now = Instant::now();
        let list = |timeout: Duration| List {
            head: NIL,
            tail: NIL,
            timeout,
            fresh_for: timeout - timeout / 64,
        };
        Timers {
            links: vec![
                Link {
                    prev: NIL,
                    next: NIL,
                    kind: None,
                    deadline: now,
                };
                slots
            ],
            lists: [
                list(idle),
                list(header),
                list(drain),
                list(body.unwrap_or(idle)),
            ],
            active: if body.is_some() { KINDS } else { KINDS - 1 },
        }
    }

    /// The deadline that stands for `kind` here: without a minimum body rate (no body list), a
    /// body being read is under the idle deadline.
    #[inline(always)]
    pub(crate) fn in_use(&self, kind: TimerKind) -> TimerKind {
        if kind as usize >= self.active {
            TimerKind::Idle
        } else {
            kind
        }
    }

    /// The kind `slot` is armed with, if any.
    pub(crate) fn kind(&self, slot: usize) -> Option<TimerKind> {
        self.links.get(slot).and_then(|l| l.kind)
    }

    /// (Re-)arms `slot` with `kind`'s timeout from `now`, moving it to the tail of that list.
    pub(crate) fn arm(&mut self, slot: usize, kind: TimerKind, now: Instant) {
        if slot >= self.links.len() {
            return;
        }
        self.disarm(slot);
        let list = &mut self.lists[kind as usize];
        let deadline = now + list.timeout;
        let old_tail = list.tail;
        list.tail = slot as u32;
        if old_tail == NIL {
            list.head = slot as u32;
        }
        self.links[slot] = Link {
            prev: old_tail,
            next: NIL,
            kind: Some(kind),
            deadline,
        };
        if let Some(prev) = self.links.get_mut(old_tail as usize) {
            prev.next = slot as u32;
        }
    }

    /// Pushes an armed `slot`'s deadline back to a full timeout from `now`, unless it was armed
    /// less than 1/64 of the timeout ago. Progress on a busy connection then moves it along its
    /// list about once per that grain (a second of the default minute) instead of on every
    /// request; the price is a timeout that may fire up to 1/64 early.
    #[inline]
    pub(crate) fn refresh(&mut self, slot: usize, kind: TimerKind, now: Instant) {
        let fresh_for = self.lists[kind as usize].fresh_for;
        let fresh = self
            .links
            .get(slot)
            .is_some_and(|l| l.kind == Some(kind) && l.deadline > now + fresh_for);
        if !fresh {
            self.arm(slot, kind, now);
        }
    }

    /// Takes `slot` off whatever list it is on.
    pub(crate) fn disarm(&mut self, slot: usize) {
        let Some(link) = self.links.get(slot).copied() else {
            return;
        };
        let Some(kind) = link.kind else {
            return;
        };
        let list = &mut self.lists[kind as usize];
        if link.prev == NIL {
            list.head = link.next;
        }
        if link.next == NIL {
            list.tail = link.prev;
        }
        if let Some(p) = self.links.get_mut(link.prev as usize) {
            p.next = link.next;
        }
        if let Some(n) = self.links.get_mut(link.next as usize) {
            n.prev = link.prev;
        }
        self.links[slot] = Link {
            prev: NIL,
            next: NIL,
            kind: None,
            deadline: link.deadline,
        };
    }

    /// The earliest deadline over all lists.
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        let head = |l: &List| self.links.get(l.head as usize).map(|h| h.deadline);
        // The body list only where it is in use: the others' loop has a length known here.
        let first = self.lists[..KINDS - 1].iter().filter_map(head).min();
        if self.active < KINDS {
            return first;
        }
        match (first, head(&self.lists[KINDS - 1])) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Takes one expired connection off its list, with the kind that expired.
    pub(crate) fn pop_expired(&mut self, now: Instant) -> Option<(usize, TimerKind)> {
        let expired = |list: &List| {
            let head = self.links.get(list.head as usize)?;
            (head.deadline <= now).then_some((list.head as usize, head.kind?))
        };
        let [idle, header, drain, body] = &self.lists;
        let (slot, kind) = expired(idle)
            .or_else(|| expired(header))
            .or_else(|| expired(drain))
            .or_else(|| (self.active == KINDS).then(|| expired(body)).flatten())?;
        self.disarm(slot);
        Some((slot, kind))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_expire_in_order_and_rearm_moves_to_tail() {
        let ms = Duration::from_millis;
        let mut t = Timers::new(8, ms(100), ms(10), ms(50), None);
        let t0 = Instant::now();
        t.arm(1, TimerKind::Idle, t0);
        t.arm(2, TimerKind::Idle, t0 + ms(1));
        t.arm(3, TimerKind::Header, t0);
        t.arm(1, TimerKind::Idle, t0 + ms(2)); // refresh: 1 now expires after 2
        assert_eq!(t.next_deadline(), Some(t0 + ms(10)));
        assert_eq!(t.pop_expired(t0 + ms(5)), None);
        assert_eq!(t.pop_expired(t0 + ms(10)), Some((3, TimerKind::Header)));
        assert_eq!(t.pop_expired(t0 + ms(200)), Some((2, TimerKind::Idle)));
        assert_eq!(t.pop_expired(t0 + ms(200)), Some((1, TimerKind::Idle)));
        assert_eq!(t.pop_expired(t0 + ms(200)), None);
        t.arm(4, TimerKind::Drain, t0);
        t.arm(5, TimerKind::Drain, t0);
        t.arm(6, TimerKind::Drain, t0);
        t.disarm(5);
        t.disarm(4);
        assert_eq!(t.kind(6), Some(TimerKind::Drain));
        assert_eq!(t.pop_expired(t0 + ms(60)), Some((6, TimerKind::Drain)));
        assert_eq!(t.next_deadline(), None);
        t.disarm(99); // out of range: ignored
    }

    #[test]
    fn refresh_moves_a_slot_only_once_per_grain() {
        let ms = Duration::from_millis;
        let mut t = Timers::new(4, ms(640), ms(10), ms(50), Some(ms(640)));
        let t0 = Instant::now();
        t.arm(1, TimerKind::Idle, t0);
        t.arm(2, TimerKind::Idle, t0 + ms(1));
        t.refresh(1, TimerKind::Idle, t0 + ms(5)); // within the 10 ms grain: stays first
        assert_eq!(t.next_deadline(), Some(t0 + ms(640)));
        t.refresh(1, TimerKind::Idle, t0 + ms(20)); // past it: moves behind 2
        assert_eq!(t.next_deadline(), Some(t0 + ms(641)));
        assert_eq!(t.pop_expired(t0 + ms(700)), Some((2, TimerKind::Idle)));
        assert_eq!(t.pop_expired(t0 + ms(700)), Some((1, TimerKind::Idle)));
        t.refresh(3, TimerKind::Idle, t0); // not armed: arms it
        assert_eq!(t.kind(3), Some(TimerKind::Idle));
    }
}
