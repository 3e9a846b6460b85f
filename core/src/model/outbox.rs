//! The queue of outputs a state machine leaves for its host to poll.

use std::collections::VecDeque;

/// Takes the oldest output. A queue left empty starts over at the front of its buffer: a host
/// that polls after every step then reuses one slot, still cached, rather than walking every
/// slot of a buffer an earlier burst of outputs grew (a write to a cold cache line per step).
pub(crate) fn poll<T>(out: &mut VecDeque<T>) -> Option<T> {
    let next = out.pop_front();
    if out.is_empty() {
        // `clear` also moves the ring's head back to the start; popping alone does not.
        out.clear();
    }
    next
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_emptied_queue_writes_its_first_slot_again() {
        let mut q = VecDeque::with_capacity(64);
        q.push_back(0);
        let start = q.as_slices().0.as_ptr();
        q.extend(1..40);
        q.drain(..39);
        assert_eq!(poll(&mut q), Some(39));
        q.push_back(7);
        // a plain pop would have left it at slot 40
        assert_eq!(q.as_slices().0.as_ptr(), start);
        assert_eq!(poll(&mut q), Some(7));
        assert_eq!(poll(&mut q), None);
    }
}
