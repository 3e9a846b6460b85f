//! `shardline_shard_list`: an owned, ordered list of shard ids handed to the caller.

use std::ffi::{c_char, CString};
use std::ptr;

use crate::args;
use crate::boundary::{infallible, Result};
use crate::string::to_c;

/// An ordered list of shard ids (e.g. the shards a rebalance picked, in decision order).
/// Made by shardline, released with shardline_shard_list_free.
pub struct shardline_shard_list {
    items: Vec<CString>,
}

impl shardline_shard_list {
    pub fn new<'a>(shards: impl IntoIterator<Item = &'a str>) -> Result<shardline_shard_list> {
        Ok(shardline_shard_list {
            items: shards.into_iter().map(to_c).collect::<Result<_>>()?,
        })
    }
}

/// Number of shard ids in a list.
///
/// @param list the list; NULL counts as empty.
/// @return the number of shard ids.
///
/// Ownership: the list stays the caller's.
/// Thread safety: one thread at a time per list. Leaves the last error untouched.
///
/// # Safety
/// `list` is NULL or a live list.
#[no_mangle]
pub unsafe extern "C" fn shardline_shard_list_len(list: *const shardline_shard_list) -> usize {
    // SAFETY: NULL or live per the contract.
    infallible(0, || unsafe { list.as_ref() }.map_or(0, |l| l.items.len()))
}

/// The shard id at `index`.
///
/// @param list the list.
/// @param index position, from 0.
/// @return a borrowed NUL-terminated string, valid until the list is freed; NULL when `list`
///         is NULL or `index` is out of range.
///
/// Ownership: the string belongs to the list; do not free it.
/// Thread safety: one thread at a time per list. Leaves the last error untouched.
///
/// # Safety
/// `list` is NULL or a live list.
#[no_mangle]
pub unsafe extern "C" fn shardline_shard_list_get(
    list: *const shardline_shard_list,
    index: usize,
) -> *const c_char {
    infallible(ptr::null(), || {
        // SAFETY: NULL or live per the contract.
        unsafe { list.as_ref() }
            .and_then(|l| l.items.get(index))
            .map_or(ptr::null(), |s| s.as_ptr())
    })
}

/// Releases a list and the strings in it.
///
/// @param list the list, or NULL (nothing happens).
/// @return nothing; it cannot fail.
///
/// Ownership: takes back ownership; `list` and every string borrowed from it become invalid.
/// Thread safety: must not race with any other use of `list`. Leaves the last error untouched.
///
/// # Safety
/// `list` is NULL or a live list not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn shardline_shard_list_free(list: *mut shardline_shard_list) {
    // SAFETY: ownership returns once, per the contract.
    infallible((), || drop(unsafe { args::free(list) }))
}
