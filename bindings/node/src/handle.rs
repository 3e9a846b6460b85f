//! The cell every stateful native object keeps its core value in.
//!
//! It is the shared handle cell (`shardline_bind::handle`): a call takes the value for its whole
//! duration, so a callback that calls back into the same object (even a query) gets
//! REENTRANT_CALL instead of aliasing it; `close()` drops the value and the object's callbacks,
//! after which every call is INVALID_STATE.

use napi::bindgen_prelude::*;
use shardline_bind::HandleCell;

use crate::conv;
use crate::error::{boundary, Fail, R};
use crate::js::{Js, V};
use crate::strategy::{holder_of, HOLDER};

/// The JavaScript objects a native object's callbacks live on, by their key in the holder.
pub type Holder = Vec<(&'static str, V)>;

/// Keeps the JavaScript objects a native object's callbacks live on, out of sight on `this`;
/// whether there were any.
pub fn install(js: Js, this: V, entries: &[(&str, V)]) -> R<bool> {
    if entries.is_empty() {
        return Ok(false);
    }
    let h = js.object()?;
    for (k, v) in entries {
        js.set(h, k, *v)?;
    }
    js.define_hidden(this, HOLDER, h)?;
    Ok(true)
}

/// The native object `make` builds from the object `options` (the constructor's argument),
/// with the JavaScript objects its callbacks live on, which `make` adds to the holder, kept on
/// `this`.
pub fn construct<T>(
    env: &Env,
    this: This,
    options: Unknown,
    what: &'static str,
    make: impl FnOnce(Js, V, &mut Holder) -> R<T>,
) -> Result<Handle<T>> {
    let this = this.object.raw();
    boundary(env, None, |js| {
        let o = conv::object(js, options.raw(), "options")?;
        let mut holder = Holder::new();
        let value = make(js, o, &mut holder)?;
        let callbacks = install(js, this, &holder)?;
        Ok(Handle::new(what, value).calling_back(callbacks))
    })
}

pub struct Handle<T> {
    what: &'static str,
    cell: HandleCell<Option<T>>,
    /// Whether `this` holds callbacks; finding out costs a property lookup per call.
    callbacks: bool,
}

impl<T> Handle<T> {
    pub fn new(what: &'static str, value: T) -> Handle<T> {
        Handle {
            what,
            cell: HandleCell::new(what, Some(value)),
            callbacks: false,
        }
    }

    /// Marks the object as one with callbacks (see [`install`]).
    pub fn calling_back(self, callbacks: bool) -> Handle<T> {
        Handle { callbacks, ..self }
    }

    /// False once closed (a call in progress counts as open).
    pub fn is_open(&self) -> bool {
        self.cell.in_use() || self.cell.hold().is_ok_and(|c| c.is_some())
    }

    /// Runs `f` with the object's callbacks reachable (for calls that may call back).
    pub fn call<U>(&self, env: &Env, this: &This, f: impl FnOnce(Js, &mut T) -> R<U>) -> Result<U> {
        self.call_on(env, this.object.raw(), f)
    }

    /// [`Handle::call`] with `this` as a plain value.
    pub fn call_on<U>(&self, env: &Env, this: V, f: impl FnOnce(Js, &mut T) -> R<U>) -> Result<U> {
        let js = Js::new(env.raw());
        let holder = match self.callbacks {
            true => holder_of(js, this).ok().flatten(),
            false => None,
        };
        self.run(env, holder, f)
    }

    /// Runs `f` for a call that never calls back.
    pub fn query<U>(&self, env: &Env, f: impl FnOnce(Js, &mut T) -> R<U>) -> Result<U> {
        self.run(env, None, f)
    }

    fn run<U>(
        &self,
        env: &Env,
        holder: Option<V>,
        f: impl FnOnce(Js, &mut T) -> R<U>,
    ) -> Result<U> {
        boundary(env, holder, |js| {
            let mut g = self.cell.hold()?;
            let v = g
                .as_mut()
                .ok_or_else(|| Fail::closed(&format!("this {}", self.what)))?;
            f(js, v)
        })
    }

    /// Drops the core value and forgets the callbacks; idempotent.
    pub fn close(&self, env: &Env, this: V) -> Result<()> {
        boundary(env, None, |js| {
            let mut g = self.cell.hold()?;
            let old = g.take();
            drop(g);
            drop(old);
            if holder_of(js, this)?.is_some() {
                js.delete(this, "__shardline")?;
            }
            Ok(())
        })
    }
}
