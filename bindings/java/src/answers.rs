//! The region ids a strategy answers, kept as Java `String`s so a repeated answer costs a local
//! reference instead of a new `String` (`NewStringUTF` decodes and allocates on every call).
//!
//! A region id is one `Arc<str>` in the core's `AllocationState`, and an allocation answers a
//! clone of it, so the cache is keyed by the `Arc`'s address and keeps a clone: while the entry
//! lives the address cannot be reused for another id, so an address match is an id match.
//! Answers nobody else holds (a custom strategy's fresh id) are not cached. The cache belongs to
//! one strategy handle and is used only while that handle is held, so it needs no lock; its
//! global references are deleted when the handle is freed (or its strategy handed to a
//! coordinator), which happens on a Java thread.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use jni::objects::{GlobalRef, JObject};
use jni::sys::jstring;
use jni::JNIEnv;

use crate::boundary::{Failure, Result};
use crate::convert::new_string;

/// At most this many ids are kept; beyond it, ids no state holds any more are dropped, and
/// answers that still do not fit are made as before.
const CAP: usize = 1024;

/// An address hashes to itself, spread: the keys are distinct heap addresses.
#[derive(Default)]
pub struct AddressHasher(u64);

impl Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = (n as u64 >> 3).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

pub struct RegionStrings {
    /// The `Arc`'s address -> (the `Arc`, its id as a `java.lang.String`).
    ids: HashMap<usize, (Arc<str>, GlobalRef), BuildHasherDefault<AddressHasher>>,
    /// Answers not cached since the last sweep because the cache was full.
    overflow: usize,
    /// The last id answered from the cache and its global reference (an allocation often
    /// answers what it answered before), checked before the map.
    last: (usize, jni::sys::jobject),
}

impl Default for RegionStrings {
    fn default() -> RegionStrings {
        RegionStrings {
            ids: HashMap::default(),
            overflow: 0,
            last: (0, std::ptr::null_mut()),
        }
    }
}

impl RegionStrings {
    /// `id` as a local `java.lang.String` reference, from the cache when it has answered `id`
    /// before.
    pub fn get(&mut self, env: &mut JNIEnv, id: &Arc<str>) -> Result<jstring> {
        let key = Arc::as_ptr(id) as *const u8 as usize;
        let global = if self.last.0 == key {
            self.last.1
        } else if let Some((_, s)) = self.ids.get(&key) {
            self.last = (key, s.as_obj().as_raw());
            self.last.1
        } else {
            std::ptr::null_mut()
        };
        if !global.is_null() {
            let raw = env.get_raw();
            // SAFETY: `raw` is this thread's JNIEnv and `global` a live global reference (the
            // map keeps it until the entry goes, and the entry goes before `last` can name
            // it: see `room`).
            let local = unsafe {
                match (**raw).NewLocalRef {
                    Some(new_local_ref) => new_local_ref(raw, global),
                    None => std::ptr::null_mut(),
                }
            };
            if !local.is_null() {
                return Ok(local);
            }
            return Err(Failure::Java); // OutOfMemoryError is pending
        }
        let s = new_string(env, id)?;
        // Held elsewhere too (by the state that answered it): worth keeping.
        if Arc::strong_count(id) > 1 && self.room() {
            // SAFETY: a fresh local reference, still owned by this call's frame.
            let global = env.new_global_ref(unsafe { JObject::from_raw(s) })?;
            self.ids.insert(key, (Arc::clone(id), global));
        }
        Ok(s)
    }

    /// Whether another id fits, after dropping the ids only this cache holds (regions removed
    /// since) once every `CAP` answers that found the cache full.
    fn room(&mut self) -> bool {
        if self.ids.len() < CAP {
            return true;
        }
        self.overflow += 1;
        if self.overflow < CAP {
            return false;
        }
        self.overflow = 0;
        self.last = (0, std::ptr::null_mut());
        self.ids.retain(|_, (id, _)| Arc::strong_count(id) > 1);
        self.ids.len() < CAP
    }
}
