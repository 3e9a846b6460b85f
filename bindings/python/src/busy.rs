//! The per-object lock that turns concurrent and re-entrant use into errors or orderly waits,
//! never into a deadlock.
//!
//! * Re-entry from the thread that holds the object (a callback calling back into the object
//!   that is running it) raises `ReentrantCallError` at once.
//! * Another thread waits, with the GIL released, so the holder can keep calling Python.
//! * A thread that is itself inside a shardline callback never waits (it raises instead): it
//!   holds some object already, and waiting there is how two threads would deadlock.
//!
//! The inner mutex only guards the owner field, never a call into Python.

use std::cell::{Cell, UnsafeCell};
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use pyo3::prelude::*;

use crate::errors::{PanicError, ReentrantCallError};

static NEXT_THREAD: AtomicU64 = AtomicU64::new(1);

thread_local! {
    static THREAD: u64 = NEXT_THREAD.fetch_add(1, Ordering::Relaxed);
    static IN_CALLBACK: Cell<u32> = const { Cell::new(0) };
}

fn this_thread() -> u64 {
    THREAD.with(|t| *t)
}

/// Marks the current thread as running a Python callback for as long as it lives.
pub struct CallbackScope(());

impl CallbackScope {
    pub fn enter() -> CallbackScope {
        IN_CALLBACK.with(|c| c.set(c.get() + 1));
        CallbackScope(())
    }
}

impl Drop for CallbackScope {
    fn drop(&mut self) {
        IN_CALLBACK.with(|c| c.set(c.get() - 1));
    }
}

#[derive(Default)]
struct Gate {
    owner: Option<u64>,
    poisoned: bool,
    /// Threads blocked in `hold`; releasing wakes them only if there are any (a futex wake
    /// per call otherwise costs more than the rest of a typical call).
    waiting: u32,
}

pub struct Busy<T> {
    gate: Mutex<Gate>,
    freed: Condvar,
    value: UnsafeCell<T>,
}

// SAFETY: `value` is only reached through a `Held`, and the gate hands out at most one `Held`
// at a time, so moving `T` between threads (T: Send) is all that sharing `Busy<T>` needs.
unsafe impl<T: Send> Sync for Busy<T> {}

impl<T> Busy<T> {
    pub fn new(value: T) -> Busy<T> {
        Busy {
            gate: Mutex::default(),
            freed: Condvar::new(),
            value: UnsafeCell::new(value),
        }
    }

    fn gate(&self) -> MutexGuard<'_, Gate> {
        self.gate.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes the object for one call. `what` names it in errors ("Coordinator", ...).
    pub fn hold(&self, py: Python<'_>, what: &str) -> PyResult<Held<'_, T>>
    where
        T: Send,
    {
        let me = this_thread();
        {
            let mut g = self.gate();
            match g.owner {
                _ if g.poisoned => return Err(poisoned(what)),
                None => {
                    g.owner = Some(me);
                    return Ok(Held { busy: self });
                }
                Some(o) if o == me => {
                    return Err(ReentrantCallError::new_err(format!(
                        "{what} was called from one of its own callbacks; a callback may not \
                         re-enter the object that is running it (return a value or defer the \
                         call until this one has returned)"
                    )))
                }
                Some(_) if IN_CALLBACK.with(Cell::get) > 0 => {
                    return Err(ReentrantCallError::new_err(format!(
                        "{what} is in use by another thread, and this thread is inside a \
                         shardline callback, where waiting could deadlock"
                    )))
                }
                Some(_) => {}
            }
        }
        let poisoned_now = py.detach(|| {
            let mut g = self.gate();
            g.waiting += 1;
            while g.owner.is_some() && !g.poisoned {
                g = self.freed.wait(g).unwrap_or_else(PoisonError::into_inner);
            }
            g.waiting -= 1;
            if !g.poisoned {
                g.owner = Some(me);
            }
            g.poisoned
        });
        if poisoned_now {
            return Err(poisoned(what));
        }
        Ok(Held { busy: self })
    }
}

fn poisoned(what: &str) -> PyErr {
    PanicError::new_err(format!(
        "{what} panicked in an earlier call and can no longer be used"
    ))
}

pub struct Held<'a, T> {
    busy: &'a Busy<T>,
}

impl<T> Deref for Held<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: this Held is the only one for `busy` (see Busy::hold).
        unsafe { &*self.busy.value.get() }
    }
}

impl<T> DerefMut for Held<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in deref, and `&mut self` makes this borrow unique.
        unsafe { &mut *self.busy.value.get() }
    }
}

impl<T> Drop for Held<'_, T> {
    fn drop(&mut self) {
        let mut g = self.busy.gate();
        g.owner = None;
        if std::thread::panicking() {
            g.poisoned = true;
        }
        let wake = g.waiting > 0;
        drop(g);
        if wake {
            self.busy.freed.notify_all();
        }
    }
}
