//! The first error a host's callback raised during one call on an object.
//!
//! The core only sees a `shardline_core::Error` when a callback fails; the language's own
//! exception waits here and is raised once the core call returns, so the caller gets the very
//! object the callback raised. Later ones are dropped, as the drivers keep only their first
//! error.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

pub struct FirstError<E> {
    /// Whether `kept` holds one: every call asks, and almost always nothing was raised, so
    /// the answer takes no lock.
    any: AtomicBool,
    kept: Mutex<Option<E>>,
}

impl<E> Default for FirstError<E> {
    fn default() -> Self {
        FirstError {
            any: AtomicBool::new(false),
            kept: Mutex::new(None),
        }
    }
}

impl<E> FirstError<E> {
    /// Keeps `err()` unless an error is kept already.
    pub fn keep(&self, err: impl FnOnce() -> E) {
        self.slot().get_or_insert_with(err);
        self.any.store(true, Ordering::Release);
    }

    /// The kept error, leaving none.
    pub fn take(&self) -> Option<E> {
        // A plain load first: the swap is a locked instruction, and almost every call has
        // nothing to take.
        if !self.any.load(Ordering::Acquire) || !self.any.swap(false, Ordering::AcqRel) {
            return None;
        }
        self.slot().take()
    }

    fn slot(&self) -> std::sync::MutexGuard<'_, Option<E>> {
        // Held only to move a value in or out; a poisoned slot is still a valid Option.
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_error_wins_and_is_taken_once() {
        let f = FirstError::default();
        assert_eq!(f.take(), None);
        f.keep(|| "first");
        f.keep(|| "second");
        assert_eq!(f.take(), Some("first"));
        assert_eq!(f.take(), None);
        f.keep(|| "third");
        assert_eq!(f.take(), Some("third"));
    }
}
