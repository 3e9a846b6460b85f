//! Java <-> Rust conversions shared by the native methods.
//!
//! Strings cross as `java.lang.String` through the jni crate's conversions (not raw modified
//! UTF-8), so ids outside the BMP survive. Array loops delete each element's local reference
//! as they go.

use jni::objects::{JByteArray, JObject, JObjectArray, JString};
use jni::sys::{jlong, jobjectArray, jstring};
use jni::JNIEnv;

use shardline_core::address::Address;
use shardline_core::cluster::{Member, MemberStatus};
use shardline_core::protocol::{Endpoint, Envelope, Message};
use shardline_core::version::Version;

use crate::boundary::{Failure, Result};

/// Reads a non-null `java.lang.String`. Every `JString` here is typed `String` by its Java
/// signature (a parameter, a `String[]` element, a `String` return value), so the type check of
/// `get_string` is redundant; it would also leave two local references behind per call.
pub fn read(env: &JNIEnv, s: &JString) -> jni::errors::Result<String> {
    // SAFETY: `s` is a java.lang.String (see above).
    Ok(unsafe { env.get_string_unchecked(s) }?.into())
}

pub fn string(env: &mut JNIEnv, s: &JString, what: &str) -> Result<String> {
    if s.is_null() {
        return Err(Failure::null(what));
    }
    Ok(read(env, s)?)
}

pub fn opt_string(env: &mut JNIEnv, s: &JString) -> Result<Option<String>> {
    if s.is_null() {
        return Ok(None);
    }
    Ok(Some(read(env, s)?))
}

pub fn new_string(env: &mut JNIEnv, s: &str) -> Result<jstring> {
    Ok(env.new_string(s)?.into_raw())
}

pub fn opt_new_string(env: &mut JNIEnv, s: Option<&str>) -> Result<jstring> {
    match s {
        Some(s) => new_string(env, s),
        None => Ok(std::ptr::null_mut()),
    }
}

pub fn string_array<S: AsRef<str>>(
    env: &mut JNIEnv,
    items: impl ExactSizeIterator<Item = S>,
) -> Result<jobjectArray> {
    let len = i32::try_from(items.len())
        .map_err(|_| Failure::invalid_state("more than 2^31 strings to return"))?;
    let array = env.new_object_array(len, "java/lang/String", JObject::null())?;
    for (i, s) in (0..len).zip(items) {
        let js = env.new_string(s.as_ref())?;
        env.set_object_array_element(&array, i, &js)?;
        env.delete_local_ref(js)?;
    }
    Ok(array.into_raw())
}

/// A `String[]` (null means empty); null elements are an error naming `what`.
pub fn read_strings(env: &mut JNIEnv, array: &JObjectArray, what: &str) -> Result<Vec<String>> {
    if array.is_null() {
        return Ok(Vec::new());
    }
    let len = env.get_array_length(array)?;
    let mut out = Vec::with_capacity(len as usize);
    for i in 0..len {
        let item = JString::from(env.get_object_array_element(array, i)?);
        let s = string(env, &item, &format!("{what}[{i}]"));
        env.delete_local_ref(item)?;
        out.push(s?);
    }
    Ok(out)
}

pub fn bytes(env: &mut JNIEnv, array: &JByteArray, what: &str) -> Result<Vec<u8>> {
    if array.is_null() {
        return Err(Failure::null(what));
    }
    Ok(env.convert_byte_array(array)?)
}

/// Java passes times and tokens as `long`; the core uses u64 and rejects nothing, so a
/// negative value is a caller mistake worth naming.
pub fn unsigned(value: jlong, what: &str) -> Result<u64> {
    u64::try_from(value)
        .map_err(|_| Failure::invalid_argument(format!("{what} is negative: {value}")))
}

/// Optional u64 results cross as `long`, with -1 for "none" (every real value fits in 63 bits).
pub fn opt_long(value: Option<u64>) -> jlong {
    value.map_or(-1, |v| v.min(i64::MAX as u64) as jlong)
}

/// `Member` fields as Java passes them: {address, status name, appVersion, dataCenter}.
pub fn member(env: &mut JNIEnv, fields: &JObjectArray, up_number: i32) -> Result<Member> {
    let f = read_strings(env, fields, "member")?;
    let [address, status, version, dc] = <[String; 4]>::try_from(f)
        .map_err(|_| Failure::invalid_argument("member: expected 4 fields"))?;
    let mut m = Member::new(Address::parse(&address)?);
    m.status = status.parse::<MemberStatus>()?;
    m.app_version = Version::parse(&version)?;
    m.data_center = dc;
    m.up_number = up_number;
    Ok(m)
}

fn endpoint(region: Option<String>) -> Endpoint {
    region.map_or(Endpoint::Coordinator, Endpoint::Region)
}

pub fn endpoint_id(e: &Endpoint) -> Option<&str> {
    match e {
        Endpoint::Coordinator => None,
        Endpoint::Region(r) => Some(r),
    }
}

/// An envelope as Java holds it: sender and receiver region ids (null for the coordinator)
/// and the message as JSON.
pub fn envelope(
    env: &mut JNIEnv,
    from: &JString,
    to: &JString,
    message: &JString,
) -> Result<Envelope> {
    let from = endpoint(opt_string(env, from)?);
    let to = endpoint(opt_string(env, to)?);
    let text = string(env, message, "message")?;
    let message: Message = serde_json::from_str(&text)
        .map_err(|e| Failure::invalid_argument(format!("message: {e}")))?;
    Ok(Envelope { from, to, message })
}

pub fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("protocol types serialize")
}
