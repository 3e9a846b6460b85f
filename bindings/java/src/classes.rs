//! Classes the native side uses on hot paths, looked up once.
//!
//! `FindClass` costs more than the rest of a short call (the jni crate looks a class up again
//! for every `new_object_array("java/lang/String", ..)`), so each is resolved on first use and
//! kept as a global reference. The library is loaded once per class loader (NativeLibrary extracts a fresh copy
//! for each), so these statics never mix classes of two loaders.

use std::sync::OnceLock;

use jni::objects::{GlobalRef, JClass, JMethodID, JStaticMethodID};
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

/// A method of one of these classes, looked up once: the jni crate's `call_method` by name
/// looks the method up again on every call, which cost more than the call itself (a rebalance
/// answer of 100 shard ids took ~30 us to cross, one `List.add` lookup per id).
pub struct Method {
    class: &'static Class,
    name: &'static str,
    sig: &'static str,
    is_static: bool,
    cell: OnceLock<jni::sys::jmethodID>,
}

// SAFETY: a method id is valid on any thread while its class stays loaded, which the class's
// global reference (`Class`) ensures; it is written once and only read afterwards.
unsafe impl Sync for Method {}
unsafe impl Send for Method {}

impl Method {
    pub const fn new(class: &'static Class, name: &'static str, sig: &'static str) -> Method {
        Method {
            class,
            name,
            sig,
            is_static: false,
            cell: OnceLock::new(),
        }
    }

    pub const fn new_static(
        class: &'static Class,
        name: &'static str,
        sig: &'static str,
    ) -> Method {
        Method {
            class,
            name,
            sig,
            is_static: true,
            cell: OnceLock::new(),
        }
    }

    fn raw(&'static self, env: &mut JNIEnv) -> jni::errors::Result<jni::sys::jmethodID> {
        if let Some(m) = self.cell.get() {
            return Ok(*m);
        }
        let c = self.class.get(env)?;
        // SAFETY: the global reference holds a class object.
        let c = unsafe { JClass::from_raw(c.as_obj().as_raw()) };
        let id = if self.is_static {
            env.get_static_method_id(&c, self.name, self.sig)?
                .into_raw()
        } else {
            env.get_method_id(&c, self.name, self.sig)?.into_raw()
        };
        Ok(*self.cell.get_or_init(|| id))
    }

    /// An instance method (or constructor, `<init>`).
    pub fn id(&'static self, env: &mut JNIEnv) -> jni::errors::Result<JMethodID> {
        debug_assert!(!self.is_static);
        // SAFETY: looked up by GetMethodID for this class.
        self.raw(env).map(|m| unsafe { JMethodID::from_raw(m) })
    }

    pub fn static_id(&'static self, env: &mut JNIEnv) -> jni::errors::Result<JStaticMethodID> {
        debug_assert!(self.is_static);
        // SAFETY: looked up by GetStaticMethodID for this class.
        self.raw(env)
            .map(|m| unsafe { JStaticMethodID::from_raw(m) })
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

pub static ARRAY_LIST_NEW: Method = Method::new(&ARRAY_LIST, "<init>", "(I)V");
pub static ARRAY_LIST_ADD: Method = Method::new(&ARRAY_LIST, "add", "(Ljava/lang/Object;)Z");
pub static LINKED_HASH_MAP_NEW: Method = Method::new(&LINKED_HASH_MAP, "<init>", "()V");
pub static LINKED_HASH_MAP_PUT: Method = Method::new(
    &LINKED_HASH_MAP,
    "put",
    "(Ljava/lang/Object;Ljava/lang/Object;)Ljava/lang/Object;",
);
pub static BOOLEAN_VALUE_OF: Method =
    Method::new_static(&BOOLEAN, "valueOf", "(Z)Ljava/lang/Boolean;");
pub static LONG_VALUE_OF: Method = Method::new_static(&LONG, "valueOf", "(J)Ljava/lang/Long;");
pub static DOUBLE_VALUE_OF: Method =
    Method::new_static(&DOUBLE, "valueOf", "(D)Ljava/lang/Double;");

/// The bridge the native side calls back through (`org.shardline.Callbacks`).
pub static CALLBACKS: Class = Class::new("org/shardline/Callbacks");
pub static CALLBACKS_HOST: Method = Method::new_static(
    &CALLBACKS,
    "host",
    "(Ljava/lang/Object;Ljava/lang/String;Ljava/util/List;)Ljava/lang/Object;",
);
pub static CALLBACKS_ITEMS: Method = Method::new_static(
    &CALLBACKS,
    "items",
    "(Ljava/lang/Object;)[Ljava/lang/Object;",
);

/// Calls a static method of `class` looked up once; `args` must match its signature.
pub fn call_static<'l>(
    env: &mut JNIEnv<'l>,
    class: &'static Class,
    method: &'static Method,
    args: &[jni::objects::JValue],
) -> jni::errors::Result<jni::objects::JObject<'l>> {
    let c = class.get(env)?;
    // SAFETY: the global reference holds a class object.
    let c = unsafe { JClass::from_raw(c.as_obj().as_raw()) };
    let id = method.static_id(env)?;
    let args: Vec<jni::sys::jvalue> = args.iter().map(|a| a.as_jni()).collect();
    // SAFETY: `method` was looked up on `class`; the caller passes arguments of its signature,
    // and every such method here returns an object.
    unsafe { env.call_static_method_unchecked(&c, id, jni::signature::ReturnType::Object, &args) }?
        .l()
}
