//! Classes the native side uses on hot paths, looked up once.
//!
//! `FindClass` costs more than the rest of a short call (the jni crate looks a class up again
//! for every `new_object_array("java/lang/String", ..)`), so each is resolved on first use and
//! kept as a global reference. The library is loaded once per class loader (NativeLibrary extracts a fresh copy
//! for each), so these statics never mix classes of two loaders.

use std::sync::OnceLock;

use jni::objects::GlobalRef;
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

pub static STRING: Class = Class::new("java/lang/String");
pub static BOOLEAN: Class = Class::new("java/lang/Boolean");
pub static LONG: Class = Class::new("java/lang/Long");
pub static DOUBLE: Class = Class::new("java/lang/Double");
pub static FLOAT: Class = Class::new("java/lang/Float");
pub static INTEGER: Class = Class::new("java/lang/Integer");
pub static SHORT: Class = Class::new("java/lang/Short");
pub static BYTE: Class = Class::new("java/lang/Byte");
pub static BYTES: Class = Class::new("[B");
pub static LIST: Class = Class::new("java/util/List");
pub static MAP: Class = Class::new("java/util/Map");
pub static ARRAY_LIST: Class = Class::new("java/util/ArrayList");
pub static LINKED_HASH_MAP: Class = Class::new("java/util/LinkedHashMap");
