//! The one rule for concurrent and re-entrant use of a handle, in every language:
//!
//! * **Re-entry** (a callback calling back into the object whose call is running it, on the
//!   same thread) fails at once with REENTRANT_CALL. Nested reads are the one exception:
//!   a read-only call may run inside another read-only call of the same object.
//! * **Another thread** waits until the call in progress returns, then runs; calls on one
//!   handle are serialised, never interleaved.
//! * **Never a deadlock:** a thread that is already inside a call on some handle (typically a
//!   callback) does not wait for a handle another thread holds; it gets REENTRANT_CALL. Only
//!   threads holding nothing wait, so waits can never form a cycle. A call that takes two
//!   handles (a strategy deciding on a state) takes the strategy first in every language, so
//!   the same race gives the same answer everywhere: a busy strategy is waited for, a state
//!   busy on another thread after that is REENTRANT_CALL.
//! * A call that panicked leaves the object unusable: later calls get PANIC.
//!
//! It replaces a `RefCell` (undefined behaviour when a C host shares a handle across
//! threads), a `try_lock` mutex (a second thread failed instead of waiting) and a per-binding
//! waiting lock. The owner is one atomic word, so an uncontended call costs a compare-and-swap
//! to take the handle and a store to give it back; the mutex and condition variable are used
//! only by threads that wait, never around a host call. A call that takes two handles
//! ([`HandleCell::hold_and_read`]) gives both back with one fence.

use std::cell::{Cell, UnsafeCell};
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;
use std::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};

use crate::{Failure, Status};

static NEXT_THREAD: AtomicU64 = AtomicU64::new(1);

/// What the handles know of a thread: its id in the owner words (0 until its first call) and
/// how many handles it holds right now (a call nested in a callback holds two).
struct ThreadRecord {
    id: Cell<u64>,
    holding: Cell<u32>,
}

thread_local! {
    static THREAD: ThreadRecord = const {
        ThreadRecord {
            id: Cell::new(0),
            holding: Cell::new(0),
        }
    };
}

/// The calling thread's record, looked up once per call and kept by its guards, so giving a
/// handle back needs no thread-local lookup. Not `Send`: it is used only on its own thread,
/// during a call, while the record (which has no destructor) exists.
#[derive(Clone, Copy)]
struct Me(NonNull<ThreadRecord>, PhantomData<*const ()>);

impl Me {
    #[inline]
    fn get() -> Me {
        Me(THREAD.with(|t| NonNull::from(t)), PhantomData)
    }

    fn record(&self) -> &ThreadRecord {
        // SAFETY: the record lives as long as its thread, and `Me` never leaves the thread.
        unsafe { self.0.as_ref() }
    }

    fn id(&self) -> u64 {
        let record = self.record();
        match record.id.get() {
            0 => {
                let id = NEXT_THREAD.fetch_add(1, Ordering::Relaxed);
                record.id.set(id);
                id
            }
            id => id,
        }
    }

    fn holding(&self) -> u32 {
        self.record().holding.get()
    }

    fn add_holding(&self, n: u32) {
        let h = &self.record().holding;
        h.set(h.get() + n);
    }

    fn sub_holding(&self, n: u32) {
        let h = &self.record().holding;
        h.set(h.get() - n);
    }
}

pub struct HandleCell<T> {
    what: &'static str,
    /// The thread holding the object (0: nobody). `depth` and `shared` are written only by
    /// that thread while it holds the object.
    owner: AtomicU64,
    depth: AtomicU32,
    shared: AtomicBool,
    poisoned: AtomicBool,
    /// Threads parked in [`Wait::run`]; a release wakes them only when there are any.
    waiting: AtomicU32,
    parking: Mutex<()>,
    freed: Condvar,
    value: UnsafeCell<T>,
}

// SAFETY: `value` is only reached through a guard; the owner word hands out either one exclusive
// guard or shared guards on a single thread, so moving `T` between threads (T: Send) is all
// that sharing a `HandleCell<T>` needs.
unsafe impl<T: Send> Sync for HandleCell<T> {}

/// Handed to [`HandleCell::hold_with`]'s `park` when the caller must wait, so a binding can
/// release its runtime lock (Python's GIL) for the wait. Running it blocks until the handle is
/// free and takes it.
pub struct Wait<'a, T> {
    cell: &'a HandleCell<T>,
    shared: bool,
    me: u64,
}

impl<T> Wait<'_, T> {
    pub fn run(self) -> Result<(), Failure> {
        let cell = self.cell;
        let me = self.me;
        let mut parked = cell.parking.lock().unwrap_or_else(PoisonError::into_inner);
        // Counted before trying, so a release that misses our try sees us and wakes us (both
        // sides are sequentially consistent: the release clears the owner, fences and then
        // reads `waiting`).
        cell.waiting.fetch_add(1, Ordering::SeqCst);
        let taken = loop {
            if cell.poisoned.load(Ordering::SeqCst) {
                break false;
            }
            if cell
                .owner
                .compare_exchange(0, me, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
            {
                break true;
            }
            parked = cell
                .freed
                .wait(parked)
                .unwrap_or_else(PoisonError::into_inner);
        };
        cell.waiting.fetch_sub(1, Ordering::SeqCst);
        drop(parked);
        if !taken {
            return Err(cell.poisoned());
        }
        cell.depth.store(1, Ordering::Relaxed);
        cell.shared.store(self.shared, Ordering::Relaxed);
        Ok(())
    }
}

impl<T> HandleCell<T> {
    pub fn new(what: &'static str, value: T) -> HandleCell<T> {
        HandleCell {
            what,
            owner: AtomicU64::new(0),
            depth: AtomicU32::new(0),
            shared: AtomicBool::new(false),
            poisoned: AtomicBool::new(false),
            waiting: AtomicU32::new(0),
            parking: Mutex::new(()),
            freed: Condvar::new(),
            value: UnsafeCell::new(value),
        }
    }

    pub fn what(&self) -> &'static str {
        self.what
    }

    /// Takes the object for one call, waiting (on this thread) if another thread has it.
    pub fn hold(&self) -> Result<Held<'_, T>, Failure> {
        self.hold_with(|w| w.run())
    }

    /// As [`HandleCell::hold`], with `park` running the wait (e.g. with the GIL released).
    pub fn hold_with(
        &self,
        park: impl FnOnce(Wait<'_, T>) -> Result<(), Failure>,
    ) -> Result<Held<'_, T>, Failure> {
        let me = Me::get();
        self.acquire(me, false, park)?;
        Ok(Held::new(self, me))
    }

    /// Takes the object for a read-only call; such calls may nest on one thread.
    pub fn read(&self) -> Result<Read<'_, T>, Failure> {
        self.read_with(|w| w.run())
    }

    pub fn read_with(
        &self,
        park: impl FnOnce(Wait<'_, T>) -> Result<(), Failure>,
    ) -> Result<Read<'_, T>, Failure> {
        let me = Me::get();
        self.acquire(me, true, park)?;
        Ok(Read(Held::new(self, me)))
    }

    /// Takes this object for one call and then `other` for reading, exactly as [`hold`]
    /// followed by [`read`] (the same waits and refusals, in the same order: once this object
    /// is held, `other` busy on another thread is REENTRANT_CALL), for a call on two objects
    /// such as a strategy deciding on a state. Both are given back together, with one fence
    /// where two guards would need one each.
    ///
    /// [`hold`]: HandleCell::hold
    /// [`read`]: HandleCell::read
    #[inline]
    pub fn hold_and_read<'a, U>(
        &'a self,
        other: &'a HandleCell<U>,
    ) -> Result<HeldAndRead<'a, T, U>, Failure> {
        let me = Me::get();
        self.acquire(me, false, |w| w.run())?;
        // Dropped (giving this object back) if `other` cannot be taken.
        let first = Held::new(self, me);
        other.acquire(me, true, |w| w.run())?;
        let first = ManuallyDrop::new(first);
        me.add_holding(1);
        Ok(HeldAndRead {
            first: first.cell,
            second: other,
            me,
        })
    }

    fn acquire(
        &self,
        me: Me,
        shared: bool,
        park: impl FnOnce(Wait<'_, T>) -> Result<(), Failure>,
    ) -> Result<(), Failure> {
        let id = me.id();
        if self.poisoned.load(Ordering::Acquire) {
            return Err(self.poisoned());
        }
        match self
            .owner
            .compare_exchange(0, id, Ordering::Acquire, Ordering::Relaxed)
        {
            Ok(_) => {
                self.depth.store(1, Ordering::Relaxed);
                self.shared.store(shared, Ordering::Relaxed);
                return Ok(());
            }
            Err(o) if o == id && shared && self.shared.load(Ordering::Relaxed) => {
                // Only the owner writes `depth`, so a load and a store suffice (no locked
                // read-modify-write), here and in `let_go`.
                let depth = self.depth.load(Ordering::Relaxed);
                self.depth.store(depth + 1, Ordering::Relaxed);
                return Ok(());
            }
            Err(o) if o == id => {
                return Err(Failure::reentrant(format!(
                    "the {} was called from one of its own callbacks while a call on it is \
                     under way; a callback may not re-enter the object running it (return \
                     a value, or make the call after this one returns)",
                    self.what
                )))
            }
            Err(_) if me.holding() > 0 => {
                return Err(Failure::reentrant(format!(
                    "the {} is in use by another thread, and this thread is inside a call \
                     on another shardline object (a callback), where waiting could deadlock",
                    self.what
                )))
            }
            Err(_) => {}
        }
        park(Wait {
            cell: self,
            shared,
            me: id,
        })
    }

    /// Ends one hold by this thread: poisons the object when the call is panicking, and clears
    /// the owner word when this was the outermost hold (answering true). The store is only a
    /// release; the caller fences before [`HandleCell::wake_waiters`].
    fn let_go(&self) -> bool {
        if std::thread::panicking() {
            self.poisoned.store(true, Ordering::SeqCst);
        }
        let depth = self.depth.load(Ordering::Relaxed);
        if depth > 1 {
            self.depth.store(depth - 1, Ordering::Relaxed);
            return false;
        }
        self.owner.store(0, Ordering::Release);
        true
    }

    /// After the owner word was cleared and a fence: wakes the threads waiting for the object,
    /// if any. The fence pairs with a waiter counting itself before it tries the owner word
    /// (both are sequentially consistent), so either the waiter sees the object free or this
    /// sees the waiter.
    #[inline]
    fn wake_waiters(&self) {
        if self.waiting.load(Ordering::SeqCst) > 0 {
            self.wake();
        }
    }

    #[cold]
    fn wake(&self) {
        // Taking the mutex orders the wake after a waiter's failed try and before its wait,
        // so the wake cannot be lost.
        let _parked = self.parking.lock().unwrap_or_else(PoisonError::into_inner);
        self.freed.notify_all();
    }

    /// Whether a call holds the object now (a handle in use cannot be freed or handed over).
    pub fn in_use(&self) -> bool {
        self.owner.load(Ordering::SeqCst) != 0
    }

    /// The value, for a caller that owns the cell outright (no call can be under way).
    pub fn get_mut(&mut self) -> &mut T {
        self.value.get_mut()
    }

    pub fn into_inner(self) -> T {
        self.value.into_inner()
    }

    fn poisoned(&self) -> Failure {
        Failure::new(
            Status::Panic,
            format!(
                "an earlier call on this {} panicked; it can no longer be used",
                self.what
            ),
        )
    }
}

/// Exclusive use of the object for one call. Not `Send`: the hold belongs to its thread.
pub struct Held<'a, T> {
    cell: &'a HandleCell<T>,
    me: Me,
}

impl<'a, T> Held<'a, T> {
    fn new(cell: &'a HandleCell<T>, me: Me) -> Held<'a, T> {
        me.add_holding(1);
        Held { cell, me }
    }
}

impl<T> Deref for Held<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: a guard exists only while the owner word names this thread as owner; exclusive
        // guards are never nested, and shared ones only hand out `&T` (see `Read`).
        unsafe { &*self.cell.value.get() }
    }
}

impl<T> DerefMut for Held<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in deref; a `Held` (not wrapped in `Read`) is the only guard.
        unsafe { &mut *self.cell.value.get() }
    }
}

impl<T> Drop for Held<'_, T> {
    fn drop(&mut self) {
        self.me.sub_holding(1);
        if self.cell.let_go() {
            fence(Ordering::SeqCst);
            self.cell.wake_waiters();
        }
    }
}

/// Exclusive use of one object and read-only use of another for one call, from
/// [`HandleCell::hold_and_read`]. Not `Send`: the holds belong to their thread.
pub struct HeldAndRead<'a, T, U> {
    first: &'a HandleCell<T>,
    second: &'a HandleCell<U>,
    me: Me,
}

impl<T, U> HeldAndRead<'_, T, U> {
    /// The first object, for changes, and the second, for reading.
    pub fn parts(&mut self) -> (&mut T, &U) {
        // SAFETY: as for `Held` and `Read`: this thread owns the first object exclusively (a
        // `&mut self` borrow hands it out once) and the second for reading.
        unsafe { (&mut *self.first.value.get(), &*self.second.value.get()) }
    }
}

impl<T, U> Drop for HeldAndRead<'_, T, U> {
    fn drop(&mut self) {
        self.me.sub_holding(2);
        // Given back in the reverse order of taking, as two guards would be.
        let second = self.second.let_go();
        let first = self.first.let_go();
        if second || first {
            fence(Ordering::SeqCst);
        }
        if second {
            self.second.wake_waiters();
        }
        if first {
            self.first.wake_waiters();
        }
    }
}

/// Read-only use of the object; may nest with other reads on the same thread.
pub struct Read<'a, T>(Held<'a, T>);

impl<T> Deref for Read<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::sync::Arc;
    use std::thread;

    #[test]
    fn re_entry_on_the_same_thread_is_refused() {
        let cell = HandleCell::new("coordinator", 1);
        let held = cell.hold().unwrap();
        let err = cell.hold().err().unwrap();
        assert_eq!(err.status, Status::ReentrantCall);
        assert!(err.message.contains("coordinator"), "{}", err.message);
        assert_eq!(cell.read().err().unwrap().status, Status::ReentrantCall);
        drop(held);
        assert_eq!(*cell.hold().unwrap(), 1);
    }

    #[test]
    fn reads_nest_but_a_write_inside_a_read_is_refused() {
        let cell = HandleCell::new("state", 5);
        let outer = cell.read().unwrap();
        let inner = cell.read().unwrap();
        assert_eq!(*outer + *inner, 10);
        assert_eq!(cell.hold().err().unwrap().status, Status::ReentrantCall);
        drop(inner);
        drop(outer);
        assert!(!cell.in_use());
        *cell.hold().unwrap() += 1;
        assert_eq!(*cell.read().unwrap(), 6);
    }

    #[test]
    fn another_thread_waits_for_the_call_in_progress() {
        let cell = Arc::new(HandleCell::new("region", Vec::new()));
        let mut held = cell.hold().unwrap();
        let (started, wait_started) = mpsc::channel();
        let other = {
            let cell = Arc::clone(&cell);
            thread::spawn(move || {
                started.send(()).unwrap();
                cell.hold().unwrap().push("second");
            })
        };
        wait_started.recv().unwrap();
        // The other thread cannot get in until this hold ends, whenever it gets to try.
        held.push("first");
        drop(held);
        other.join().unwrap();
        assert_eq!(*cell.read().unwrap(), ["first", "second"]);
    }

    #[test]
    fn a_thread_inside_another_call_does_not_wait() {
        let a = Arc::new(HandleCell::new("coordinator", ()));
        let b = Arc::new(HandleCell::new("driver", ()));
        let held_b = b.hold().unwrap();
        let (tx, rx) = mpsc::channel();
        let t = {
            let (a, b) = (Arc::clone(&a), Arc::clone(&b));
            thread::spawn(move || {
                let _a = a.hold().unwrap();
                tx.send(b.hold().err().map(|e| e.status)).unwrap();
            })
        };
        assert_eq!(rx.recv().unwrap(), Some(Status::ReentrantCall));
        t.join().unwrap();
        drop(held_b);
    }

    #[test]
    fn hold_and_read_takes_both_and_gives_both_back() {
        let strategy = HandleCell::new("strategy", 1);
        let state = HandleCell::new("state", 2);
        {
            let mut both = strategy.hold_and_read(&state).unwrap();
            let (s, st) = both.parts();
            *s += *st;
            // As after hold then read: the state may be read again, the strategy is busy.
            assert_eq!(*state.read().unwrap(), 2);
            assert_eq!(state.hold().err().unwrap().status, Status::ReentrantCall);
            assert_eq!(strategy.hold().err().unwrap().status, Status::ReentrantCall);
            assert!(strategy.in_use() && state.in_use());
        }
        assert!(!strategy.in_use() && !state.in_use());
        assert_eq!(*strategy.hold().unwrap(), 3);
        // The state taken for a change: refused, and the strategy is given back.
        let held = state.hold().unwrap();
        let err = strategy.hold_and_read(&state).err().unwrap();
        assert_eq!(err.status, Status::ReentrantCall);
        assert!(err.message.contains("state"), "{}", err.message);
        drop(held);
        assert!(!strategy.in_use() && !state.in_use());
    }

    #[test]
    fn threads_waiting_for_a_pair_are_woken_when_it_is_given_back() {
        let strategy = Arc::new(HandleCell::new("strategy", 0));
        let state = Arc::new(HandleCell::new("state", 0));
        let both = strategy.hold_and_read(&state).unwrap();
        let (started, wait_started) = mpsc::channel();
        let waiters: Vec<_> = [true, false]
            .into_iter()
            .map(|first| {
                let (a, b) = (Arc::clone(&strategy), Arc::clone(&state));
                let started = started.clone();
                thread::spawn(move || {
                    started.send(()).unwrap();
                    if first {
                        *a.hold().unwrap() += 1;
                    } else {
                        *b.hold().unwrap() += 1;
                    }
                })
            })
            .collect();
        wait_started.recv().unwrap();
        wait_started.recv().unwrap();
        drop(both);
        for w in waiters {
            w.join().unwrap();
        }
        assert_eq!(*strategy.read().unwrap() + *state.read().unwrap(), 2);
    }

    #[test]
    fn a_panic_while_holding_a_pair_poisons_both() {
        let strategy = Arc::new(HandleCell::new("strategy", 0));
        let state = Arc::new(HandleCell::new("state", 0));
        let (a, b) = (Arc::clone(&strategy), Arc::clone(&state));
        let r = thread::spawn(move || {
            let _both = a.hold_and_read(&b).unwrap();
            panic!("boom");
        })
        .join();
        assert!(r.is_err());
        assert_eq!(strategy.hold().err().unwrap().status, Status::Panic);
        assert_eq!(state.read().err().unwrap().status, Status::Panic);
        assert!(!strategy.in_use() && !state.in_use());
    }

    #[test]
    fn a_panic_during_a_call_poisons_the_handle() {
        let cell = Arc::new(HandleCell::new("strategy", 0));
        let c = Arc::clone(&cell);
        let r = thread::spawn(move || {
            let _h = c.hold().unwrap();
            panic!("boom");
        })
        .join();
        assert!(r.is_err());
        assert_eq!(cell.hold().err().unwrap().status, Status::Panic);
        assert!(!cell.in_use());
    }
}
