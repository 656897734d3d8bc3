//! A FIFO of connection slots threaded through an array parallel to the slab, for the
//! connections of a worker that wait for pool blocks.
//!
//! Intrusive, like the deadline lists (`timer.rs`): the links are sized for every slot when the
//! worker starts, so queuing never allocates, and a connection that closes while it waits
//! leaves the queue in O(1) instead of leaving a stale entry behind for a later occupant of its
//! slot to inherit. A slot is in the queue at most once.

const NIL: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Link {
    prev: u32,
    next: u32,
    queued: bool,
}

const UNLINKED: Link = Link {
    prev: NIL,
    next: NIL,
    queued: false,
};

/// The waiting connections of one worker, oldest first.
#[derive(Debug)]
pub(crate) struct WaitQueue {
    links: Vec<Link>,
    head: u32,
    tail: u32,
    len: usize,
}

impl WaitQueue {
    /// An empty queue for `slots` connection slots.
    pub(crate) fn new(slots: usize) -> Self {
        WaitQueue {
            links: vec![UNLINKED; slots],
            head: NIL,
            tail: NIL,
            len: 0,
        }
    }

    /// No connection waits.
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether `slot` waits.
    pub(crate) fn contains(&self, slot: usize) -> bool {
        self.links.get(slot).is_some_and(|l| l.queued)
    }

    /// Queues `slot` behind the others, unless it waits already (it keeps its place); whether
    /// it was queued now.
    pub(crate) fn push_back(&mut self, slot: usize) -> bool {
        if slot >= self.links.len() || self.contains(slot) {
            return false;
        }
        let old_tail = self.tail;
        self.links[slot] = Link {
            prev: old_tail,
            next: NIL,
            queued: true,
        };
        match self.links.get_mut(old_tail as usize) {
            Some(prev) => prev.next = slot as u32,
            None => self.head = slot as u32,
        }
        self.tail = slot as u32;
        self.len += 1;
        true
    }

    /// Queues `slot` ahead of the others, unless it waits already; whether it was queued now.
    pub(crate) fn push_front(&mut self, slot: usize) -> bool {
        if slot >= self.links.len() || self.contains(slot) {
            return false;
        }
        let old_head = self.head;
        self.links[slot] = Link {
            prev: NIL,
            next: old_head,
            queued: true,
        };
        match self.links.get_mut(old_head as usize) {
            Some(next) => next.prev = slot as u32,
            None => self.tail = slot as u32,
        }
        self.head = slot as u32;
        self.len += 1;
        true
    }

    /// Takes the oldest waiting connection off the queue.
    pub(crate) fn pop_front(&mut self) -> Option<usize> {
        let slot = self.head as usize;
        self.remove(slot).then_some(slot)
    }

    /// Takes `slot` off the queue; whether it was waiting.
    pub(crate) fn remove(&mut self, slot: usize) -> bool {
        if !self.contains(slot) {
            return false;
        }
        let link = self.links[slot];
        match self.links.get_mut(link.prev as usize) {
            Some(p) => p.next = link.next,
            None => self.head = link.next,
        }
        match self.links.get_mut(link.next as usize) {
            Some(n) => n.prev = link.prev,
            None => self.tail = link.prev,
        }
        self.links[slot] = UNLINKED;
        self.len -= 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(q: &mut WaitQueue) -> Vec<usize> {
        std::iter::from_fn(|| q.pop_front()).collect()
    }

    #[test]
    fn first_in_first_out_once_each() {
        let mut q = WaitQueue::new(8);
        assert!(q.push_back(3));
        assert!(q.push_back(1));
        assert!(!q.push_back(3), "a waiting slot keeps its place");
        assert!(q.push_back(5));
        assert_eq!((q.len, q.contains(1), q.contains(2)), (3, true, false));
        assert_eq!(drain(&mut q), [3, 1, 5]);
        assert!(q.is_empty());
        assert!(!q.push_back(8), "out of range: ignored");
        assert_eq!(q.pop_front(), None);
    }

    #[test]
    fn remove_anywhere_and_push_front() {
        let mut q = WaitQueue::new(8);
        for s in [0, 1, 2, 3] {
            q.push_back(s);
        }
        assert!(q.remove(0)); // the head
        assert!(q.remove(2)); // the middle
        assert!(q.remove(3)); // the tail
        assert!(!q.remove(3));
        assert!(q.push_front(6));
        assert!(q.push_back(7));
        assert!(q.push_front(4));
        assert_eq!(drain(&mut q), [4, 6, 1, 7]);
        assert!(q.push_front(2));
        assert_eq!(drain(&mut q), [2]);
    }
}
