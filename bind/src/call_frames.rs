//! The native calls in progress on one thread, for bindings whose callbacks cannot be handed
//! their context: one frame per call, pushed when the call starts and popped when it returns,
//! holding what the call's callbacks need (the host's environment, the object the callbacks
//! live on) and the first failure a callback had. The first failure of a call is the one its
//! caller gets, as every driver keeps only its first error; later ones are given back to be
//! disposed of.

use std::cell::RefCell;

/// The frames of one thread; `C` is a call's context, `F` a failure.
pub struct CallFrames<C, F> {
    stack: RefCell<Vec<(C, Option<F>)>>,
}

impl<C: Copy, F> CallFrames<C, F> {
    pub const fn new() -> Self {
        CallFrames {
            stack: RefCell::new(Vec::new()),
        }
    }

    /// Opens the frame of a call; pass what this returns to [`CallFrames::close`].
    pub fn open(&self, context: C) -> usize {
        let mut stack = self.stack.borrow_mut();
        stack.push((context, None));
        stack.len() - 1
    }

    /// Closes the frame `open` returned (and any a panic left open above it); the first
    /// failure of the call, if any.
    pub fn close(&self, depth: usize) -> Option<F> {
        let mut stack = self.stack.borrow_mut();
        let mut this = None;
        while stack.len() > depth {
            this = stack.pop();
        }
        this.and_then(|(_, failure)| failure)
    }

    /// Keeps `failure` for the call under way when it is the call's first; otherwise gives it
    /// back with the call's context. Outside any call it is dropped.
    pub fn record(&self, failure: F) -> Option<(C, F)> {
        let mut stack = self.stack.borrow_mut();
        match stack.last_mut() {
            Some((_, first @ None)) => {
                *first = Some(failure);
                None
            }
            Some((context, _)) => Some((*context, failure)),
            None => None,
        }
    }

    /// The context of the call under way.
    pub fn current(&self) -> Option<C> {
        self.stack.borrow().last().map(|(context, _)| *context)
    }
}

impl<C: Copy, F> Default for CallFrames<C, F> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_failure_of_a_call_wins_and_nested_calls_keep_their_own() {
        let frames = CallFrames::<u8, &str>::new();
        assert_eq!(frames.record("outside"), None);
        let outer = frames.open(1);
        assert_eq!(frames.current(), Some(1));
        assert_eq!(frames.record("first"), None);
        assert_eq!(frames.record("second"), Some((1, "second")));
        let inner = frames.open(2);
        assert_eq!(frames.current(), Some(2));
        assert_eq!(frames.close(inner), None);
        assert_eq!(frames.current(), Some(1));
        assert_eq!(frames.close(outer), Some("first"));
        assert_eq!(frames.current(), None);
    }

    #[test]
    fn closing_a_call_closes_the_frames_a_panic_left_above_it() {
        let frames = CallFrames::<u8, &str>::new();
        let outer = frames.open(1);
        frames.open(2);
        frames.record("inner");
        assert_eq!(frames.close(outer), None);
        assert_eq!(frames.current(), None);
    }
}
