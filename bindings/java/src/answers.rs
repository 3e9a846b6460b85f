//! The region ids a strategy answers, kept as Java `String`s so a repeated answer costs no JNI
//! call at all instead of a new `String` (`NewStringUTF` decodes and allocates on every call).
//!
//! A region id is one `Arc<str>` in the core's `AllocationState`, and an allocation answers a
//! clone of it, so the cache is keyed by the `Arc`'s address and keeps a clone: while the entry
//! lives the address cannot be reused for another id, so an address match is an id match.
//! Answers nobody else holds (a custom strategy's fresh id) are not cached. The cache belongs to
//! one strategy handle and is used only while that handle is held, so it needs no lock.
//!
//! A hit returns the cached global reference itself as the native method's result (the JVM
//! reads the object behind whatever reference a native method returns, as it does for the
//! local ones). That is sound because no entry is deleted before the handle is freed, and Java
//! frees a handle only once every call on it has returned (NativeHandle counts them), by which
//! time each caller has its `String`; handing the strategy to a coordinator leaves the cache
//! in the handle. So the cache never sweeps: at most [`CAP`] ids (ids of regions since removed
//! included), and answers beyond them are made as before, a new `String` per call.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use jni::objects::{GlobalRef, JObject};
use jni::sys::jstring;
use jni::JNIEnv;

use crate::boundary::Result;
use crate::convert::new_string;

/// At most this many ids are kept (a JVM `String` and an `Arc` each, for the handle's life).
pub const CAP: usize = 1024;

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
    /// The last id answered from the cache and its global reference (an allocation often
    /// answers what it answered before), checked before the map.
    last: (usize, jni::sys::jobject),
}

impl Default for RegionStrings {
    fn default() -> RegionStrings {
        RegionStrings {
            ids: HashMap::default(),
            last: (0, std::ptr::null_mut()),
        }
    }
}

impl RegionStrings {
    /// `id` as a `java.lang.String` reference to return from a native method: the cached one
    /// when it has answered `id` before (see the module's notes), else a new local one.
    pub fn get(&mut self, env: &mut JNIEnv, id: &Arc<str>) -> Result<jstring> {
        let key = Arc::as_ptr(id) as *const u8 as usize;
        if self.last.0 == key {
            return Ok(self.last.1);
        }
        if let Some((_, s)) = self.ids.get(&key) {
            self.last = (key, s.as_obj().as_raw());
            return Ok(self.last.1);
        }
        let s = new_string(env, id)?;
        // Held elsewhere too (by the state that answered it): worth keeping.
        if Arc::strong_count(id) > 1 && self.ids.len() < CAP {
            // SAFETY: a fresh local reference, still owned by this call's frame.
            let global = env.new_global_ref(unsafe { JObject::from_raw(s) })?;
            self.ids.insert(key, (Arc::clone(id), global));
        }
        Ok(s)
    }
}
