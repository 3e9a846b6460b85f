//! Java <-> Rust conversions shared by the native methods.
//!
//! Strings cross as `java.lang.String` through the jni crate's conversions (not raw modified
//! UTF-8), so ids outside the BMP survive. Array loops delete each element's local reference
//! as they go.

use jni::objects::{JByteArray, JObject, JObjectArray, JString};
use jni::sys::{jint, jlong, jlongArray, jobjectArray, jstring};
use jni::JNIEnv;

use shardline_bind::objects::MemberInit;
use shardline_core::model::Member;

use crate::boundary::{Failure, Result};

/// Reads a non-null `java.lang.String`. Every `JString` here is typed `String` by its Java
/// signature (a parameter, a `String[]` element, a `String` return value), so the type check of
/// `get_string` is redundant; it would also leave two local references behind per call.
pub fn read(env: &JNIEnv, s: &JString) -> jni::errors::Result<String> {
    // SAFETY: `s` is a java.lang.String (see above).
    Ok(unsafe { env.get_string_unchecked(s) }?.into())
}

/// The longest text read into a [`TextBuf`]'s stack bytes.
pub const SHORT: usize = 64;

/// Where a call keeps text it read from Java: short ASCII (ids, shard names) in `short`, on the
/// caller's stack, anything else in `long`. Reading into the caller's buffer rather than
/// returning the bytes keeps them from being moved again.
pub struct TextBuf {
    short: [u8; SHORT],
    long: String,
}

impl TextBuf {
    pub fn new() -> TextBuf {
        TextBuf {
            short: [0; SHORT],
            long: String::new(),
        }
    }

    fn short(&self, n: usize) -> &str {
        // SAFETY: only ASCII is written short (see `short_ascii` and `text_packed`); ASCII is UTF-8.
        unsafe { std::str::from_utf8_unchecked(&self.short[..n]) }
    }
}

/// Reads a non-null `String` into `buf` when it is short ASCII, with `GetStringLength` and
/// `GetStringRegion` (no `GetStringUTFChars`, which mallocs, and no `String`); its length, or
/// None when it is not short ASCII.
fn short_ascii(env: &JNIEnv, s: &JString, buf: &mut [u8; SHORT]) -> Option<usize> {
    let raw = env.get_raw();
    // SAFETY: `raw` is this thread's JNIEnv and `s` a live String reference (typed by the Java
    // signature); the region asked for lies within the string, so GetStringRegion cannot throw.
    unsafe {
        let fns = &**raw;
        let (get_length, region) = (fns.GetStringLength?, fns.GetStringRegion?);
        let n = usize::try_from(get_length(raw, s.as_raw())).ok()?;
        if n > SHORT {
            return None;
        }
        let mut chars = [0u16; SHORT];
        region(raw, s.as_raw(), 0, n as i32, chars.as_mut_ptr());
        if !chars[..n].iter().all(|&c| c < 0x80) {
            return None;
        }
        for (b, &c) in buf.iter_mut().zip(&chars[..n]) {
            *b = c as u8;
        }
        Some(n)
    }
}

/// Reads a non-null `java.lang.String` into `buf` (see [`TextBuf`]); null is an error naming
/// `what`.
pub fn text<'b>(env: &JNIEnv, s: &JString, what: &str, buf: &'b mut TextBuf) -> Result<&'b str> {
    if s.is_null() {
        return Err(Failure::null(what));
    }
    if let Some(n) = short_ascii(env, s, &mut buf.short) {
        return Ok(buf.short(n));
    }
    buf.long = read(env, s)?;
    Ok(&buf.long)
}

/// [`text`] of a `String` argument that the Java side also packed, when it is at most 16 ASCII
/// characters, into two longs (a byte each, the first lowest in `lo`, the ninth lowest in `hi`)
/// with `packed` its length (-1: not packed): read without a JNI call.
pub fn text_packed<'b>(
    env: &JNIEnv,
    (lo, hi, packed): (jlong, jlong, jint),
    s: &JString,
    what: &str,
    buf: &'b mut TextBuf,
) -> Result<&'b str> {
    if let Ok(n @ 0..=16) = usize::try_from(packed) {
        buf.short[..8].copy_from_slice(&lo.to_le_bytes());
        buf.short[8..16].copy_from_slice(&hi.to_le_bytes());
        if buf.short[..n].is_ascii() {
            return Ok(buf.short(n));
        }
    }
    text(env, s, what, buf)
}

/// [`text`] of a `String` that may be null.
pub fn opt_text<'b>(env: &JNIEnv, s: &JString, buf: &'b mut TextBuf) -> Result<Option<&'b str>> {
    if s.is_null() {
        return Ok(None);
    }
    text(env, s, "string", buf).map(Some)
}

pub fn string(env: &mut JNIEnv, s: &JString, what: &str) -> Result<String> {
    if s.is_null() {
        return Err(Failure::null(what));
    }
    let mut buf = [0u8; SHORT];
    match short_ascii(env, s, &mut buf) {
        // SAFETY: ASCII (see short_ascii).
        Some(n) => Ok(unsafe { std::str::from_utf8_unchecked(&buf[..n]) }.to_owned()),
        None => Ok(read(env, s)?),
    }
}

pub fn opt_string(env: &mut JNIEnv, s: &JString) -> Result<Option<String>> {
    if s.is_null() {
        return Ok(None);
    }
    string(env, s, "string").map(Some)
}

pub fn new_string(env: &mut JNIEnv, s: &str) -> Result<jstring> {
    const STACK: usize = 128;
    let bytes = s.as_bytes();
    // Short text without NUL or characters outside the BMP is the same in UTF-8 and in the
    // JVM's modified UTF-8: hand it to NewStringUTF from a stack buffer (the jni crate's
    // new_string re-encodes it into a heap CString first).
    if bytes.len() < STACK && !bytes.iter().any(|&b| b == 0 || b >= 0xF0) {
        let mut buf = [0u8; STACK];
        buf[..bytes.len()].copy_from_slice(bytes);
        let raw = env.get_raw();
        // SAFETY: `raw` is this thread's JNIEnv; `buf` is NUL-terminated modified UTF-8.
        unsafe {
            if let Some(new_string_utf) = (**raw).NewStringUTF {
                let js = new_string_utf(raw, buf.as_ptr().cast());
                if js.is_null() {
                    return Err(Failure::Java); // OutOfMemoryError is pending
                }
                return Ok(js);
            }
        }
    }
    Ok(env.new_string(s)?.into_raw())
}

/// A local `String` (null for `None`), for an argument of a call into Java.
pub fn local_opt_string<'a>(env: &mut JNIEnv, s: Option<&str>) -> Result<JObject<'a>> {
    let s = s.map_or(Ok(std::ptr::null_mut()), |s| new_string(env, s))?;
    // SAFETY: a fresh local reference (or null), owned by the caller's frame.
    Ok(unsafe { JObject::from_raw(s) })
}

/// A local `String[]`, for an argument of a call into Java.
pub fn local_string_array<'a, S: AsRef<str>>(
    env: &mut JNIEnv,
    items: impl ExactSizeIterator<Item = S>,
) -> Result<JObject<'a>> {
    // SAFETY: a fresh local reference, owned by the caller's frame.
    Ok(unsafe { JObject::from_raw(string_array(env, items)?) })
}

pub fn string_array<S: AsRef<str>>(
    env: &mut JNIEnv,
    items: impl ExactSizeIterator<Item = S>,
) -> Result<jobjectArray> {
    let len = i32::try_from(items.len())
        .map_err(|_| Failure::invalid_state("more than 2^31 strings to return"))?;
    let class = crate::classes::STRING.get(env)?;
    let array = env.new_object_array(len, class, JObject::null())?;
    let raw = env.get_raw();
    for (i, s) in (0..len).zip(items) {
        let js = new_string(env, s.as_ref())?;
        // SAFETY: `raw` is this thread's JNIEnv, `array` a String[] of `len` elements and `js`
        // a fresh String: the store cannot throw, so the crate's exception checks are skipped.
        unsafe {
            match ((**raw).SetObjectArrayElement, (**raw).DeleteLocalRef) {
                (Some(set), Some(delete)) => {
                    set(raw, array.as_raw(), i, js);
                    delete(raw, js);
                }
                _ => {
                    let js = JObject::from_raw(js);
                    env.set_object_array_element(&array, i, &js)?;
                    env.delete_local_ref(js)?;
                }
            }
        }
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
        // The name is formatted only for the error: this loop carries whole shard lists.
        let s = if item.is_null() {
            Err(Failure::null(&format!("{what}[{i}]")))
        } else {
            string(env, &item, what)
        };
        env.delete_local_ref(item)?;
        out.push(s?);
    }
    Ok(out)
}

pub fn bytes(env: &mut JNIEnv, array: &JByteArray, what: &str) -> Result<Vec<u8>> {
    with_bytes(env, array, 0, what, |b| Ok(b.to_vec()))
}

/// Java passes times and tokens as `long`; the core uses u64 and rejects nothing, so a
/// negative value is a caller mistake worth naming.
pub fn unsigned(value: jlong, what: &str) -> Result<u64> {
    u64::try_from(value)
        .map_err(|_| Failure::invalid_argument(format!("{what} is negative: {value}")))
}

pub fn long_array(env: &mut JNIEnv, values: &[jlong]) -> Result<jlongArray> {
    let a = env.new_long_array(values.len() as i32)?;
    env.set_long_array_region(&a, 0, values)?;
    Ok(a.into_raw())
}

/// A session or lease TTL, which must be positive.
pub fn ttl_ms(value: jlong) -> Result<u64> {
    match unsigned(value, "ttlMs")? {
        0 => Err(Failure::invalid_argument("ttlMs must be > 0")),
        ttl => Ok(ttl),
    }
}

/// Optional u64 results cross as `long`, with -1 for "none" (every real value fits in 63 bits).
pub fn opt_long(value: Option<u64>) -> jlong {
    value.map_or(-1, |v| v.min(i64::MAX as u64) as jlong)
}

/// `Member` fields as Java passes them: {address, status name, appVersion, dataCenter}; the
/// shared reader checks them, and errors name the field (`member.status: ...`).
pub fn member(env: &mut JNIEnv, fields: &JObjectArray, up_number: i32) -> Result<Member> {
    let f = read_strings(env, fields, "member")?;
    let [address, status, version, dc] = <[String; 4]>::try_from(f)
        .map_err(|_| Failure::invalid_argument("member: expected 4 fields"))?;
    let init = MemberInit {
        address,
        status: Some(status),
        app_version: Some(version),
        data_center: Some(dc),
        up_number: Some(up_number),
    };
    Ok(init.build("member")?)
}

/// Runs `f` on a byte argument: the bytes Java copied into its thread's scratch memory
/// (`Rows.Scratch`, an i32 length and the bytes at address `at`) when they fit, else the
/// `byte[]` itself (`at` 0), from a stack copy when it is short. `GetByteArrayRegion` of a range
/// inside the array cannot throw, so the jni crate's exception checks after each call are
/// skipped.
pub fn with_bytes<R>(
    env: &JNIEnv,
    array: &JByteArray,
    at: jlong,
    what: &str,
    f: impl FnOnce(&[u8]) -> Result<R>,
) -> Result<R> {
    const STACK: usize = 256;
    if at != 0 {
        // SAFETY: Java passes the address of its thread's live direct buffer, which it wrote
        // a length and that many bytes into just before the call (Rows.Scratch.put).
        return f(unsafe { scratch(at) });
    }
    if array.is_null() {
        return Err(Failure::null(what));
    }
    let raw = env.get_raw();
    // SAFETY: `raw` is this thread's JNIEnv and `array` a live byte[] (typed by the Java
    // signature); the region asked for lies within it.
    unsafe {
        let fns = &**raw;
        if let (Some(length), Some(region)) = (fns.GetArrayLength, fns.GetByteArrayRegion) {
            let n = length(raw, array.as_raw());
            if n >= 0 && (n as usize) <= STACK {
                let mut buf = std::mem::MaybeUninit::<[u8; STACK]>::uninit();
                region(raw, array.as_raw(), 0, n, buf.as_mut_ptr().cast());
                // SAFETY: the JVM wrote the first `n` bytes just above.
                return f(std::slice::from_raw_parts(buf.as_ptr().cast(), n as usize));
            }
        }
    }
    f(&env.convert_byte_array(array)?)
}

/// The bytes behind an i32 length at `at` in a thread's scratch memory.
///
/// # Safety
/// `at` is the address of live memory holding a big-endian i32 length and that many bytes.
unsafe fn scratch<'a>(at: jlong) -> &'a [u8] {
    let p = at as *const u8;
    // SAFETY: per the contract.
    unsafe {
        let n = i32::from_be_bytes(*p.cast::<[u8; 4]>()).max(0) as usize;
        std::slice::from_raw_parts(p.add(4), n)
    }
}

/// Copies `bytes` into the scratch memory at `at` (`cap` bytes) if it is there and they fit;
/// says whether it did.
pub fn fill(at: jlong, cap: jint, bytes: &[u8]) -> bool {
    if at == 0 || bytes.len() > cap.max(0) as usize {
        return false;
    }
    // SAFETY: Java passes its thread's live direct buffer of `cap` bytes, unused during the call.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), at as *mut u8, bytes.len()) };
    true
}

/// A document Java hands over as UTF-8 JSON bytes (no `String` is decoded); errors name `what`.
pub fn utf8_json<T: serde::de::DeserializeOwned>(
    env: &mut JNIEnv,
    bytes: &JByteArray,
    at: jlong,
    what: &str,
) -> Result<T> {
    with_bytes(env, bytes, at, what, |b| {
        serde_json::from_slice(b).map_err(|e| Failure::invalid_argument(format!("{what}: {e}")))
    })
}

/// A JSON `String` argument read as `T`; `what` names it in errors.
pub fn from_json<T: serde::de::DeserializeOwned>(
    env: &mut JNIEnv,
    s: &JString,
    what: &str,
) -> Result<T> {
    let text = string(env, s, what)?;
    serde_json::from_str(&text).map_err(|e| Failure::invalid_argument(format!("{what}: {e}")))
}

/// A JSON `String` argument that may be null.
pub fn opt_from_json<T: serde::de::DeserializeOwned>(
    env: &mut JNIEnv,
    s: &JString,
    what: &str,
) -> Result<Option<T>> {
    if s.is_null() {
        return Ok(None);
    }
    from_json(env, s, what).map(Some)
}

pub fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("protocol types serialize")
}
