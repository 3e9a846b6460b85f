//! The region ids a strategy answers, kept as Java `String`s (`shardline_bind::answers`) so a
//! repeated answer costs no JNI call at all instead of a new `String` (`NewStringUTF` decodes
//! and allocates on every call). The cache belongs to one strategy handle and is used only
//! while that handle is held, so it needs no lock.
//!
//! A hit returns the cached global reference itself as the native method's result (the JVM
//! reads the object behind whatever reference a native method returns, as it does for the
//! local ones). That is sound because no entry is deleted before the handle is freed, and Java
//! frees a handle only once every call on it has returned (NativeHandle counts them), by which
//! time each caller has its `String`; handing the strategy to a coordinator leaves the cache
//! in the handle. So the cache never sweeps.

use jni::objects::{GlobalRef, JObject};
use jni::sys::jstring;
use jni::JNIEnv;
use shardline_bind::answers::AnswerCache;
use std::sync::Arc;

use crate::boundary::Result;
use crate::convert::new_string;

pub struct RegionStrings {
    ids: AnswerCache<GlobalRef>,
    /// The last id answered from the cache and its global reference (an allocation often
    /// answers what it answered before), checked before the map.
    last: (usize, jni::sys::jobject),
}

impl Default for RegionStrings {
    fn default() -> RegionStrings {
        RegionStrings {
            ids: AnswerCache::default(),
            last: (0, std::ptr::null_mut()),
        }
    }
}

impl RegionStrings {
    /// `id` as a `java.lang.String` reference to return from a native method: the cached one
    /// when it has answered `id` before (see the module's notes), else a new local one.
    pub fn get(&mut self, env: &mut JNIEnv, id: &Arc<str>) -> Result<jstring> {
        let key = AnswerCache::<GlobalRef>::key(id);
        if self.last.0 == key {
            return Ok(self.last.1);
        }
        if let Some(s) = self.ids.get(key) {
            self.last = (key, s.as_obj().as_raw());
            return Ok(self.last.1);
        }
        let s = new_string(env, id)?;
        if self.ids.worth_keeping(id) {
            // SAFETY: a fresh local reference, still owned by this call's frame.
            let global = env.new_global_ref(unsafe { JObject::from_raw(s) })?;
            self.ids.keep(id, global);
        }
        Ok(s)
    }
}
