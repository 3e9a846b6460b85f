//! What the coordinator and region handles (and their drivers) share: the cell that detects
//! re-entrant use, the JSON step form (`shardline_core::protocol::json`) at the boundary, and the
//! plumbing of the typed form (versioned input structs, outputs lent out as views).

use std::ffi::c_char;
use std::mem::size_of;
use std::ptr;

use serde::de::DeserializeOwned;
use serde::Serialize;
use shardline_bind::HandleCell;
use shardline_core::protocol::json;

use crate::args::{self, Out};
use crate::boundary::{Failure, Result};
use crate::envelope::{array, Lists};
use crate::string::to_c;

/// A state machine behind a handle, under the shared handle rule
/// ([`shardline_bind::handle`]): a callback that calls back into the machine running it (even
/// a query) gets REENTRANT_CALL; another thread waits for the call in progress.
pub struct Machine<T>(HandleCell<T>);

impl<T> Machine<T> {
    pub fn new(what: &'static str, value: T) -> Machine<T> {
        Machine(HandleCell::new(what, value))
    }

    pub fn with<R>(&self, f: impl FnOnce(&mut T) -> Result<R>) -> Result<R> {
        f(&mut *self.0.hold()?)
    }

    pub fn in_use(&self) -> bool {
        self.0.in_use()
    }

    pub fn into_inner(self) -> T {
        self.0.into_inner()
    }
}

/// A host struct that starts with `uint32_t struct_size` (the struct's size as the host was
/// compiled with), borrowed for the call. Fields are only ever appended, so a struct shorter
/// than this library's lacks fields it would read, and is refused.
///
/// # Safety
/// `T` is `repr(C)` with a leading `u32` size; `p` is NULL or points to a readable struct of
/// at least its `struct_size` bytes that outlives `'a`.
pub unsafe fn versioned<'a, T>(p: *const T, param: &str, c_name: &str) -> Result<&'a T> {
    if p.is_null() {
        return Err(Failure::null(param));
    }
    // SAFETY: only the leading size is read until it proves the struct is complete.
    let struct_size = unsafe { p.cast::<u32>().read() };
    let known = size_of::<T>();
    if (struct_size as usize) < known {
        return Err(Failure::invalid_argument(format!(
            "{param}->struct_size is {struct_size}, expected at least {known} \
             (set it to sizeof(struct {c_name}))"
        )));
    }
    // SAFETY: checked above: the struct is complete.
    Ok(unsafe { &*p })
}

/// The output a host reads through a typed view, with everything the view points into. It
/// lives in the handle until the next poll replaces it, which is how long the view is valid.
pub struct Lent<O, V> {
    output: Option<O>,
    view: Option<V>,
    lists: Lists,
    document: String,
}

impl<O, V> Default for Lent<O, V> {
    fn default() -> Self {
        Lent {
            output: None,
            view: None,
            lists: Lists::default(),
            document: String::new(),
        }
    }
}

impl<O, V> Lent<O, V> {
    /// Replaces the output lent out (dropping the previous one) and returns the view of the
    /// new one, or NULL when there is none. `view` may write a JSON document into the string
    /// it is given and point at it.
    pub fn lend(
        &mut self,
        output: Option<O>,
        view: impl FnOnce(&O, &mut Lists, &mut String) -> Result<V>,
    ) -> Result<*const V> {
        self.view = None;
        self.output = output;
        match &self.output {
            None => Ok(ptr::null()),
            Some(o) => {
                let v = view(o, &mut self.lists, &mut self.document)?;
                Ok(self.view.insert(v))
            }
        }
    }
}

/// A JSON document parameter read into `T`; errors name the parameter and the field path.
///
/// # Safety
/// As for [`args::str`].
pub unsafe fn json_arg<T: DeserializeOwned>(p: *const c_char, param: &str) -> Result<T> {
    // SAFETY: forwarded contract.
    let text = unsafe { args::str(p, param) }?;
    Ok(json::from_str(text, param)?)
}

/// Writes `value` as JSON text the caller frees with shardline_string_free.
///
/// # Safety
/// As for [`Out::write`].
pub unsafe fn write_json<T: Serialize + ?Sized>(out: Out<*mut c_char>, value: &T) -> Result<()> {
    let text = to_c(&json::to_string(value)?)?;
    // SAFETY: forwarded contract.
    unsafe { out.write(text.into_raw()) };
    Ok(())
}

/// Writes an optional string the caller frees with shardline_string_free, or NULL.
///
/// # Safety
/// As for [`Out::write`].
pub unsafe fn write_opt_string(out: Out<*mut c_char>, v: Option<&str>) -> Result<()> {
    let s = v.map(to_c).transpose()?;
    // SAFETY: forwarded contract.
    unsafe { out.write(s.map_or(ptr::null_mut(), |s| s.into_raw())) };
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
    // SAFETY: forwarded contract.
    Ok(unsafe { array(p, len, || param.to_owned()) }?.to_vec())
}
