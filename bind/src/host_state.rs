//! An `AllocationState` as a host object sees it: either owned (and used under the handle
//! rule), or a read-only view of the state a decision is reading, lent to a custom strategy's
//! callback for as long as that callback runs. A binding wraps one of these in its state
//! class, so the same object serves both and the rules below hold in every language:
//!
//! * a view refuses every change (REENTRANT_CALL: a strategy decides, the caller applies);
//! * a view can only be read on the thread running the callback it was lent to, and not at
//!   all once that callback has returned (INVALID_STATE; keep what you need instead).

use std::sync::{Mutex, PoisonError};
use std::thread::ThreadId;

use shardline_core::model::AllocationState;

use crate::handle::{HandleCell, Wait};
use crate::Failure;

/// A view's pointer; see `Source::View` for why it is sound.
struct Lent(*const AllocationState);
// SAFETY: only dereferenced on the thread that lent it, while the borrow it came from lives.
unsafe impl Send for Lent {}

enum Source {
    /// Boxed: views are made per callback and should stay small.
    Owned(Box<HandleCell<AllocationState>>),
    /// Usable only on the lending thread, and only until the lender clears it when the
    /// callback returns. Any read happens nested inside that callback on that thread, so it
    /// always ends before the lender clears the pointer or touches the state again.
    View {
        thread: ThreadId,
        ptr: Mutex<Option<Lent>>,
    },
}

/// How a binding waits for a handle another thread holds (e.g. with Python's GIL released);
/// `|w| w.run()` where there is nothing to release.
pub trait Park: FnOnce(Wait<'_, AllocationState>) -> Result<(), Failure> {}
impl<F: FnOnce(Wait<'_, AllocationState>) -> Result<(), Failure>> Park for F {}

pub struct HostState {
    src: Source,
}

impl HostState {
    pub fn owned(what: &'static str, state: AllocationState) -> HostState {
        HostState {
            src: Source::Owned(Box::new(HandleCell::new(what, state))),
        }
    }

    /// A view of `state` for a callback.
    ///
    /// # Safety
    /// The caller calls [`HostState::end_view`] before the borrow of `state` ends (that is,
    /// when the callback returns), and does not change `state` before then.
    pub unsafe fn lend(state: &AllocationState) -> HostState {
        HostState {
            src: Source::View {
                thread: std::thread::current().id(),
                ptr: Mutex::new(Some(Lent(state))),
            },
        }
    }

    pub fn end_view(&self) {
        if let Source::View { ptr, .. } = &self.src {
            *ptr.lock().unwrap_or_else(PoisonError::into_inner) = None;
        }
    }

    pub fn is_view(&self) -> bool {
        matches!(self.src, Source::View { .. })
    }

    /// Runs `f` on the state. Reads nest, so a strategy deciding on an owned state may run
    /// here and its callbacks may read the same state again.
    pub fn read<R>(
        &self,
        park: impl Park,
        f: impl FnOnce(&AllocationState) -> R,
    ) -> Result<R, Failure> {
        match &self.src {
            Source::Owned(cell) => Ok(f(&*cell.read_with(park)?)),
            Source::View { thread, ptr } => {
                if std::thread::current().id() != *thread {
                    return Err(Failure::invalid_state(
                        "a state view lent to a callback can only be used on the thread running \
                         that callback",
                    ));
                }
                let p = ptr
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .as_ref()
                    .map(|l| l.0)
                    .ok_or_else(|| {
                        Failure::invalid_state(
                            "this state view was lent to a callback that has returned; keep \
                             what you need from it instead of the view",
                        )
                    })?;
                // SAFETY: see Source::View.
                Ok(f(unsafe { &*p }))
            }
        }
    }

    pub fn write<R>(
        &self,
        park: impl Park,
        f: impl FnOnce(&mut AllocationState) -> shardline_core::Result<R>,
    ) -> Result<R, Failure> {
        match &self.src {
            Source::Owned(cell) => Ok(f(&mut *cell.hold_with(park)?)?),
            Source::View { .. } => Err(Failure::reentrant(
                "the state lent to a strategy callback is read-only: a strategy decides, the \
                 caller applies the decision",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Status;
    use shardline_core::model::Address;
    use shardline_core::model::ClusterView;

    fn run(w: Wait<'_, AllocationState>) -> Result<(), Failure> {
        w.run()
    }

    fn state() -> AllocationState {
        let a = Address::parse("pekko://s@h:1").unwrap();
        let mut s = AllocationState::new(ClusterView::new(a.clone()));
        s.add_region("a", a, true).unwrap();
        s
    }

    #[test]
    fn a_view_reads_until_it_ends_and_never_writes() {
        let st = state();
        // SAFETY: the view ends below, before `st` goes away.
        let view = unsafe { HostState::lend(&st) };
        assert_eq!(view.read(run, |s| s.region_count()).unwrap(), 1);
        let w = view.write(run, |s| s.add_shard("a", "1")).unwrap_err();
        assert_eq!(w.status, Status::ReentrantCall);
        let other = std::thread::scope(|t| {
            t.spawn(|| view.read(run, |s| s.region_count()).unwrap_err())
                .join()
                .unwrap()
        });
        assert_eq!(other.status, Status::InvalidState);
        view.end_view();
        let gone = view.read(run, |s| s.region_count()).unwrap_err();
        assert!(gone.message.contains("has returned"), "{}", gone.message);
    }

    #[test]
    fn an_owned_state_reads_nested_but_not_written_inside_a_read() {
        let owned = HostState::owned("AllocationState", state());
        let nested = owned
            .read(run, |_| owned.read(run, |s| s.region_count()))
            .unwrap();
        assert_eq!(nested.unwrap(), 1);
        let inner = owned
            .read(run, |_| owned.write(run, |s| s.add_shard("a", "1")))
            .unwrap();
        assert_eq!(inner.unwrap_err().status, Status::ReentrantCall);
        owned.write(run, |s| s.add_shard("a", "1")).unwrap();
        assert_eq!(owned.read(run, |s| s.shard_count()).unwrap(), 1);
    }
}
