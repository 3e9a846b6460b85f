//! What the coordinator and region handles share: the cell that detects re-entrant use, and
//! the JSON step form (`shardline_core::step_json`) at the boundary.

use std::cell::RefCell;
use std::ffi::c_char;

use serde::de::DeserializeOwned;
use serde::Serialize;
use shardline_core::step_json;

use crate::args::{self, Out};
use crate::boundary::{Failure, Result};
use crate::string::to_c;

/// A state machine behind a handle. Every call takes it mutably for the whole call, so a
/// strategy callback that calls back into the machine running it (even a query) gets
/// REENTRANT_CALL instead of aliasing it.
pub struct Machine<T> {
    what: &'static str,
    cell: RefCell<T>,
}

impl<T> Machine<T> {
    pub fn new(what: &'static str, value: T) -> Machine<T> {
        Machine {
            what,
            cell: RefCell::new(value),
        }
    }

    pub fn with<R>(&self, f: impl FnOnce(&mut T) -> Result<R>) -> Result<R> {
        let mut m = self.cell.try_borrow_mut().map_err(|_| {
            Failure::reentrant(format!(
                "the {} is in use by a call in progress (a strategy callback called back into \
                 the {} running it)",
                self.what, self.what
            ))
        })?;
        f(&mut m)
    }

    pub fn in_use(&self) -> bool {
        self.cell.try_borrow_mut().is_err()
    }
}

/// A JSON document parameter read into `T`; errors name the parameter and the field path.
///
/// # Safety
/// As for [`args::str`].
pub unsafe fn json_arg<T: DeserializeOwned>(p: *const c_char, param: &str) -> Result<T> {
    // SAFETY: forwarded contract.
    let text = unsafe { args::str(p, param) }?;
    Ok(step_json::from_str(text, param)?)
}

/// Writes `value` as JSON text the caller frees with shardline_string_free.
///
/// # Safety
/// As for [`Out::write`].
pub unsafe fn write_json<T: Serialize + ?Sized>(out: Out<*mut c_char>, value: &T) -> Result<()> {
    let text = to_c(&step_json::to_string(value)?)?;
    // SAFETY: forwarded contract.
    unsafe { out.write(text.into_raw()) };
    Ok(())
}

/// Writes an optional number as a has-flag plus value; the value is 0 when absent.
///
/// # Safety
/// As for [`Out::write`], for both.
pub unsafe fn write_opt_u64(has: Out<bool>, value: Out<u64>, v: Option<u64>) {
    // SAFETY: forwarded contract.
    unsafe {
        has.write(v.is_some());
        value.write(v.unwrap_or(0));
    }
}

/// A byte buffer parameter; NULL is accepted for an empty one.
///
/// # Safety
/// `p` is NULL or valid for reads of `len` bytes.
pub unsafe fn bytes(p: *const u8, len: usize, param: &str) -> Result<Vec<u8>> {
    if len == 0 {
        return Ok(Vec::new());
    }
    if p.is_null() {
        return Err(Failure::null(param));
    }
    // SAFETY: `len` readable bytes per the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, len) }.to_vec())
}
