//! Classes and static methods the native side uses on hot paths, looked up once.
//!
//! `FindClass` and `GetStaticMethodID` cost more than the rest of a short call (the jni crate
//! looks a class up again for every `new_object_array("java/lang/String", ..)`), so each is
//! resolved on first use and kept: a global reference pins the class, which keeps its method
//! ids valid. The library is loaded once per class loader (NativeLibrary extracts a fresh copy
//! for each), so these statics never mix classes of two loaders.

use std::sync::OnceLock;

use jni::objects::{GlobalRef, JStaticMethodID};
use jni::JNIEnv;

pub struct Class {
    name: &'static str,
    cell: OnceLock<GlobalRef>,
}

impl Class {
    pub const fn new(name: &'static str) -> Class {
        Class {
            name,
            cell: OnceLock::new(),
        }
    }

    pub fn get(&'static self, env: &mut JNIEnv) -> jni::errors::Result<&'static GlobalRef> {
        if let Some(c) = self.cell.get() {
            return Ok(c);
        }
        let local = env.find_class(self.name)?;
        let global = env.new_global_ref(&local)?;
        env.delete_local_ref(local)?;
        Ok(self.cell.get_or_init(|| global))
    }
}

pub struct StaticMethod {
    class: &'static Class,
    name: &'static str,
    sig: &'static str,
    cell: OnceLock<JStaticMethodID>,
}

impl StaticMethod {
    pub const fn new(class: &'static Class, name: &'static str, sig: &'static str) -> StaticMethod {
        StaticMethod {
            class,
            name,
            sig,
            cell: OnceLock::new(),
        }
    }

    /// The class (pinned) and the method id.
    pub fn get(
        &'static self,
        env: &mut JNIEnv,
    ) -> jni::errors::Result<(&'static GlobalRef, JStaticMethodID)> {
        let class = self.class.get(env)?;
        if let Some(id) = self.cell.get() {
            return Ok((class, *id));
        }
        let id = env.get_static_method_id(class, self.name, self.sig)?;
        Ok((class, *self.cell.get_or_init(|| id)))
    }
}

pub static STRING: Class = Class::new("java/lang/String");
pub static OBJECT: Class = Class::new("java/lang/Object");
