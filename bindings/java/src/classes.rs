//! Classes the native side uses on hot paths, looked up once.
//!
//! `FindClass` costs more than the rest of a short call (the jni crate looks a class up again
//! for every `new_object_array("java/lang/String", ..)`), so each is resolved on first use and
//! kept as a global reference. The library is loaded once per class loader (NativeLibrary extracts a fresh copy
//! for each), so these statics never mix classes of two loaders.

use std::sync::OnceLock;

use jni::objects::{GlobalRef, JClass, JMethodID, JObject, JStaticMethodID, JValue, JValueOwned};
use jni::signature::ReturnType;
use jni::sys::{jmethodID, jvalue};
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
/// answer of 100 shard ids took ~15 us to cross, one `List.add` lookup per id). The id is kept
/// as an integer: valid on any thread while the class stays loaded, which `Class` ensures.
pub struct Method(
    &'static Class,
    &'static str,
    &'static str,
    bool,
    OnceLock<usize>,
);

impl Method {
    /// `is_static`: a static method; otherwise an instance method or a constructor (`<init>`).
    pub const fn new(
        class: &'static Class,
        name: &'static str,
        sig: &'static str,
        is_static: bool,
    ) -> Method {
        Method(class, name, sig, is_static, OnceLock::new())
    }

    fn class<'l>(&'static self, env: &mut JNIEnv<'l>) -> jni::errors::Result<JClass<'l>> {
        // SAFETY: the global reference holds a class object.
        Ok(unsafe { JClass::from_raw(self.0.get(env)?.as_obj().as_raw()) })
    }

    fn raw(&'static self, env: &mut JNIEnv) -> jni::errors::Result<jmethodID> {
        if let Some(m) = self.4.get() {
            return Ok(*m as jmethodID);
        }
        let c = self.class(env)?;
        let id = match self.3 {
            true => env.get_static_method_id(&c, self.1, self.2)?.into_raw(),
            false => env.get_method_id(&c, self.1, self.2)?.into_raw(),
        };
        Ok(*self.4.get_or_init(|| id as usize) as jmethodID)
    }

    /// Calls this instance method on `obj`; `args` and `ret` must match its signature.
    pub fn call<'l>(
        &'static self,
        env: &mut JNIEnv<'l>,
        obj: &JObject,
        ret: ReturnType,
        args: &[JValue],
    ) -> jni::errors::Result<JValueOwned<'l>> {
        let id = self.raw(env)?;
        let args: Vec<jvalue> = args.iter().map(JValue::as_jni).collect();
        // SAFETY: looked up on the class of `obj` (the caller's side of the contract).
        unsafe { env.call_method_unchecked(obj, JMethodID::from_raw(id), ret, &args) }
    }

    /// Calls this constructor (`<init>`) or static method returning an object.
    pub fn object<'l>(
        &'static self,
        env: &mut JNIEnv<'l>,
        args: &[JValue],
    ) -> jni::errors::Result<JObject<'l>> {
        let (c, id) = (self.class(env)?, self.raw(env)?);
        let args: Vec<jvalue> = args.iter().map(JValue::as_jni).collect();
        // SAFETY: looked up on this class; the caller passes arguments of its signature.
        unsafe {
            match self.3 {
                true => env
                    .call_static_method_unchecked(
                        &c,
                        JStaticMethodID::from_raw(id),
                        ReturnType::Object,
                        &args,
                    )?
                    .l(),
                false => env.new_object_unchecked(&c, JMethodID::from_raw(id), &args),
            }
        }
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

pub static ARRAY_LIST_NEW: Method = Method::new(&ARRAY_LIST, "<init>", "(I)V", false);
pub static ARRAY_LIST_ADD: Method = Method::new(&ARRAY_LIST, "add", "(Ljava/lang/Object;)Z", false);
pub static LINKED_HASH_MAP_NEW: Method = Method::new(&LINKED_HASH_MAP, "<init>", "()V", false);
pub static LINKED_HASH_MAP_PUT: Method = Method::new(
    &LINKED_HASH_MAP,
    "put",
    "(Ljava/lang/Object;Ljava/lang/Object;)Ljava/lang/Object;",
    false,
);
pub static BOOLEAN_VALUE_OF: Method =
    Method::new(&BOOLEAN, "valueOf", "(Z)Ljava/lang/Boolean;", true);
pub static LONG_VALUE_OF: Method = Method::new(&LONG, "valueOf", "(J)Ljava/lang/Long;", true);
pub static DOUBLE_VALUE_OF: Method = Method::new(&DOUBLE, "valueOf", "(D)Ljava/lang/Double;", true);

/// The bridge the native side calls back through (`org.shardline.Callbacks`).
pub static CALLBACKS: Class = Class::new("org/shardline/Callbacks");
pub static CALLBACKS_HOST: Method = Method::new(
    &CALLBACKS,
    "host",
    "(Ljava/lang/Object;Ljava/lang/String;Ljava/util/List;)Ljava/lang/Object;",
    true,
);
pub static CALLBACKS_ITEMS: Method = Method::new(
    &CALLBACKS,
    "items",
    "(Ljava/lang/Object;)[Ljava/lang/Object;",
    true,
);
