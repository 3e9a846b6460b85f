//! The JVM's side of the operations called by name (`shardline_bind::ops`): a Java class's one
//! `nOp(handle, op, args)` native method converts its arguments and its answer here, and the
//! Java class gives each operation its name and type over `NativeHandle.op`.
//!
//! Values cross as plain Java objects, so the Java side needs no JSON parser: null, `String`,
//! `Boolean`, `Long` (also `Integer`, `Short`, `Byte` going in), `Double` (and `Float` going in),
//! `byte[]`, `java.util.List` and `java.util.Map` with `String` keys. Answers are `ArrayList`s
//! and `LinkedHashMap`s (the core's order); an unsigned 64-bit value above `Long.MAX_VALUE`
//! keeps its bits, as `Long.parseUnsignedLong` reads it.
//!
//! A Java class whose operations `shardline_bind::ops::<group>::<kind>` decides declares
//! `private static native Object nOp(long h, String op, Object[] args);`, gives each operation
//! its name and type over `NativeHandle.op` (`String id() { return op(Kind::nOp, "id"); }`), and
//! its native side is one line: `ops_native!(Java_org_shardline_Kind_nOp, "Kind", Kind,
//! group::kind);`.

use jni::objects::{JByteArray, JObject, JObjectArray, JString, JValue, JValueOwned};
use jni::signature::{Primitive, ReturnType};
use jni::sys::jobject;
use jni::JNIEnv;
use shardline_bind::ops::{Args, Tree};
use shardline_bind::tree::key_text;

use crate::boundary::{Failure, Result};
use crate::classes::{
    Class, ARRAY_LIST_ADD, ARRAY_LIST_NEW, BOOLEAN, BOOLEAN_VALUE_OF, BYTE, BYTES, CALLBACKS_ITEMS,
    DOUBLE, DOUBLE_VALUE_OF, FLOAT, INTEGER, LINKED_HASH_MAP_NEW, LINKED_HASH_MAP_PUT, LIST, LONG,
    LONG_VALUE_OF, MAP, SHORT,
};
use crate::convert::{new_string, string};

/// Exports `static native Object nOp(long h, String op, Object[] args)` of Java class `$kind`,
/// whose handles are `$t`s and whose operations `$ops(&mut $t, Args)` decides.
macro_rules! ops_native {
    ($name:ident, $kind:literal, $t:ty, $ops:expr) => {
        $crate::native::native! { fn $name(
            env, h: jni::sys::jlong, op: jni::objects::JString<'l>,
            args: jni::objects::JObjectArray<'l>,
        ) -> jni::sys::jobject {
            $crate::ops::call(env, $kind, &op, &args, |a| unsafe {
                $crate::handle::with::<$t, _>(h, |x| Ok($ops(x, a)?))
            })
        }}
    };
}
pub(crate) use ops_native;

/// Runs `f` on the arguments of `kind.op(args...)` and answers with a Java object.
pub fn call(
    env: &mut JNIEnv,
    kind: &'static str,
    op: &JString,
    args: &JObjectArray,
    f: impl FnOnce(Args<'_>) -> Result<Tree>,
) -> Result<jobject> {
    let op = string(env, op, &format!("{kind}.op: name"))?;
    let at = format!("{kind}.{op}");
    let values = arguments(env, args, &at)?;
    let answer = f(Args::new(kind, &op, &values))?;
    to_java(env, &answer)
}

/// An `Object[]` of arguments (null: none) as trees; errors name the argument.
pub fn arguments(env: &mut JNIEnv, args: &JObjectArray, at: &str) -> Result<Vec<Tree>> {
    if args.is_null() {
        return Ok(Vec::new());
    }
    let n = env.get_array_length(args)?;
    let mut out = Vec::with_capacity(n as usize);
    for i in 0..n {
        let item = env.get_object_array_element(args, i)?;
        let tree = tree_of(env, &item, &format!("{at}: argument {}", i + 1), 0);
        env.delete_local_ref(item)?;
        out.push(tree?);
    }
    Ok(out)
}

fn is(env: &mut JNIEnv, o: &JObject, class: &'static Class) -> Result<bool> {
    let c = class.get(env)?;
    Ok(env.is_instance_of(o, c)?)
}

/// A Java value as a tree; `at` names it in errors.
pub fn tree_of(env: &mut JNIEnv, o: &JObject, at: &str, depth: usize) -> Result<Tree> {
    if depth > 64 {
        return Err(Failure::invalid_argument(format!(
            "{at}: nested too deeply (a cycle?)"
        )));
    }
    if o.is_null() {
        return Ok(Tree::Null);
    }
    if is(env, o, &crate::classes::STRING)? {
        // SAFETY: checked to be a String just above.
        let s = unsafe { JString::from_raw(o.as_raw()) };
        return Ok(Tree::Text(string(env, &s, at)?));
    }
    if is(env, o, &BOOLEAN)? {
        return Ok(Tree::Bool(unbox(env, o, "booleanValue", "()Z")?.z()?));
    }
    if is(env, o, &DOUBLE)? || is(env, o, &FLOAT)? {
        return Ok(Tree::Float(unbox(env, o, "doubleValue", "()D")?.d()?));
    }
    if is(env, o, &LONG)? || is(env, o, &INTEGER)? || is(env, o, &SHORT)? || is(env, o, &BYTE)? {
        return Ok(Tree::Integer(
            unbox(env, o, "longValue", "()J")?.j()?.into(),
        ));
    }
    if is(env, o, &BYTES)? {
        // SAFETY: checked to be a byte[] just above.
        let a = unsafe { JByteArray::from_raw(o.as_raw()) };
        return Ok(Tree::Bytes(env.convert_byte_array(&a)?));
    }
    let list = is(env, o, &LIST)?;
    let map = !list && is(env, o, &MAP)?;
    if list || map {
        // One array of the items (a map's flattened: key, value, ...) rather than a JNI call
        // per item.
        let items = CALLBACKS_ITEMS.object(env, &[JValue::Object(o)])?;
        let items = JObjectArray::from(items);
        let n = env.get_array_length(&items)?;
        let mut out = Vec::with_capacity(n as usize);
        for i in 0..n {
            let item = env.get_object_array_element(&items, i)?;
            let label = match out.last() {
                _ if list => format!("{at}[{i}]"),
                _ if i % 2 == 0 => format!("{at} key"),
                Some(Tree::Text(key)) => format!("{at}.{key}"),
                _ => at.to_owned(),
            };
            let t = tree_of(env, &item, &label, depth + 1);
            env.delete_local_ref(item)?;
            let t = t?;
            if map && i % 2 == 0 && !matches!(t, Tree::Text(_)) {
                let e = format!("{at}: map keys must be strings");
                return Err(Failure::invalid_argument(e));
            }
            out.push(t);
        }
        env.delete_local_ref(items)?;
        if list {
            return Ok(Tree::Array(out));
        }
        let mut it = out.into_iter();
        return Ok(Tree::Map(
            std::iter::from_fn(|| Some((it.next()?, it.next()?))).collect(),
        ));
    }
    let class = env.get_object_class(o)?;
    let name = env
        .call_method(&class, "getName", "()Ljava/lang/String;", &[])?
        .l()?;
    let name = string(env, &JString::from(name), "class name")?;
    Err(Failure::invalid_argument(format!(
        "{at}: a {name} cannot be passed (expected null, String, Boolean, a number, byte[], List or Map)"
    )))
}

fn unbox<'a>(env: &mut JNIEnv<'a>, o: &JObject, name: &str, sig: &str) -> Result<JValueOwned<'a>> {
    Ok(env.call_method(o, name, sig, &[])?)
}

/// A tree as a Java object (a local reference, null for null).
pub fn to_java(env: &mut JNIEnv, t: &Tree) -> Result<jobject> {
    Ok(match t {
        Tree::Null => std::ptr::null_mut(),
        Tree::Bool(b) => BOOLEAN_VALUE_OF
            .object(env, &[JValue::Bool(*b as u8)])?
            .into_raw(),
        Tree::Integer(i) => {
            let i = i128::from(*i);
            let bits = i64::try_from(i)
                .or_else(|_| u64::try_from(i).map(|u| u as i64))
                .map_err(|_| Failure::invalid_state(format!("{i} does not fit a Java long")))?;
            LONG_VALUE_OF.object(env, &[JValue::Long(bits)])?.into_raw()
        }
        Tree::Float(f) => DOUBLE_VALUE_OF
            .object(env, &[JValue::Double(*f)])?
            .into_raw(),
        Tree::Text(s) => new_string(env, s)?,
        Tree::Bytes(b) => env.byte_array_from_slice(b)?.into_raw(),
        Tree::Array(items) => {
            let list = ARRAY_LIST_NEW.object(env, &[JValue::Int(items.len() as i32)])?;
            for item in items {
                // SAFETY: a fresh local reference (or null) made just now.
                let v = unsafe { JObject::from_raw(to_java(env, item)?) };
                let ret = ReturnType::Primitive(Primitive::Boolean);
                ARRAY_LIST_ADD.call(env, &list, ret, &[JValue::Object(&v)])?;
                env.delete_local_ref(v)?;
            }
            list.into_raw()
        }
        Tree::Map(entries) => {
            let map = LINKED_HASH_MAP_NEW.object(env, &[])?;
            for (k, item) in entries {
                let k = env.new_string(key_text(k)?)?;
                // SAFETY: a fresh local reference (or null) made just now.
                let v = unsafe { JObject::from_raw(to_java(env, item)?) };
                let args = [JValue::Object(&k), JValue::Object(&v)];
                let old = LINKED_HASH_MAP_PUT
                    .call(env, &map, ReturnType::Object, &args)?
                    .l()?;
                for r in [JObject::from(k), v, old] {
                    env.delete_local_ref(r)?;
                }
            }
            map.into_raw()
        }
        Tree::Tag(_, inner) => to_java(env, inner)?,
        other => {
            return Err(Failure::invalid_state(format!(
                "no Java form for {other:?}"
            )))
        }
    })
}
