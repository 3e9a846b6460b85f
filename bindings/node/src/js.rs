//! A thin layer over raw Node-API calls.
//!
//! The binding needs things napi-rs's typed layer hides: the exact value a callback threw
//! (whatever it is, not only `Error` objects), handle scopes around each callback, and values
//! that stay plain `napi_value`s while the core runs. Values are made by napi-rs's own
//! conversions ([`Js::to`]); the rest are single Node-API calls. Every helper here works on
//! the JS thread that owns `env`, inside a native call.

use std::ffi::{c_char, c_void};
use std::ptr;

use napi::bindgen_prelude::{Null, ToNapiValue};
use napi::sys;

use crate::error::{Code, Fail, R};

pub type V = sys::napi_value;

/// What `typeof` tells apart (napi-rs's enumeration).
pub type Type = napi::ValueType;

#[derive(Clone, Copy)]
pub struct Js {
    pub env: sys::napi_env,
}

fn ok(status: sys::napi_status, what: &str) -> R<()> {
    if status == sys::Status::napi_ok {
        return Ok(());
    }
    let message = format!("Node-API call {what} failed with status {status}");
    Err(Fail::new(Code::Internal, message))
}

/// `sys::f(env, args...)`, checked.
macro_rules! check {
    ($js:expr, $f:ident($($a:expr),*)) => {
        // SAFETY: a Node-API call on the env of the native call under way, with its values.
        ok(unsafe { sys::$f($js.env, $($a),*) }, stringify!($f))
    };
}

/// `sys::f(env, args..., &mut out)`, checked; `out`.
macro_rules! out {
    ($js:expr, $f:ident($($a:expr),*)) => {{
        // SAFETY: a Node-API call on the env of the native call under way, with values made
        // in it; every out-parameter type here (pointers, numbers, bools) is valid zeroed.
        let mut out = unsafe { std::mem::zeroed() };
        ok(unsafe { sys::$f($js.env, $($a,)* &mut out) }, stringify!($f)).map(|()| out)
    }};
}

/// How errors name a value's type.
pub fn type_name(t: Type) -> &'static str {
    match t {
        Type::Undefined => "undefined",
        Type::Null => "null",
        Type::Boolean => "a boolean",
        Type::Number => "a number",
        Type::String => "a string",
        Type::Symbol => "a symbol",
        Type::Object => "an object",
        Type::Function => "a function",
        Type::BigInt => "a bigint",
        Type::External | Type::Unknown => "an external",
    }
}

/// What calling into JavaScript can end in besides a value.
pub enum CallError {
    /// The function threw; the value is kept alive by a reference until it is rethrown.
    Threw(sys::napi_ref),
    Fail(Fail),
}

impl From<Fail> for CallError {
    fn from(f: Fail) -> Self {
        CallError::Fail(f)
    }
}

impl Js {
    pub fn new(env: sys::napi_env) -> Js {
        Js { env }
    }

    /// A Rust value as JavaScript, by napi-rs's conversion (`()` is undefined, `Null` null,
    /// `None` null, `BigInt` a bigint).
    pub fn to<T: ToNapiValue>(&self, value: T) -> R<V> {
        // SAFETY: this env is the one of the call under way.
        Ok(unsafe { T::to_napi_value(self.env, value) }?)
    }

    pub fn type_of(&self, v: V) -> R<Type> {
        out!(self, napi_typeof(v)).map(Type::from)
    }

    pub fn is_nullish(&self, v: V) -> R<bool> {
        Ok(matches!(self.type_of(v)?, Type::Undefined | Type::Null))
    }

    pub fn undefined(&self) -> R<V> {
        self.to(())
    }

    pub fn null(&self) -> R<V> {
        self.to(Null)
    }

    pub fn number(&self, n: f64) -> R<V> {
        self.to(n)
    }

    pub fn string(&self, s: &str) -> R<V> {
        self.to(s)
    }

    pub fn buffer(&self, bytes: &[u8]) -> R<V> {
        let (len, data) = (bytes.len(), bytes.as_ptr() as *const c_void);
        let mut copy = ptr::null_mut();
        out!(self, napi_create_buffer_copy(len, data, &mut copy))
    }

    pub fn global(&self) -> R<V> {
        out!(self, napi_get_global())
    }

    pub fn object(&self) -> R<V> {
        out!(self, napi_create_object())
    }

    pub fn array_of<T>(&self, items: &[T], mut f: impl FnMut(&T) -> R<V>) -> R<V> {
        let a = out!(self, napi_create_array_with_length(items.len()))?;
        for (i, item) in items.iter().enumerate() {
            self.set_index(a, i as u32, f(item)?)?;
        }
        Ok(a)
    }

    pub fn strings<S: AsRef<str>>(&self, items: &[S]) -> R<V> {
        self.array_of(items, |s| self.string(s.as_ref()))
    }

    pub fn set_index(&self, a: V, i: u32, v: V) -> R<()> {
        check!(self, napi_set_element(a, i, v))
    }

    pub fn index(&self, a: V, i: u32) -> R<V> {
        out!(self, napi_get_element(a, i))
    }

    pub fn is_array(&self, v: V) -> R<bool> {
        out!(self, napi_is_array(v))
    }

    pub fn array_len(&self, v: V) -> R<u32> {
        out!(self, napi_get_array_length(v))
    }

    /// The bytes of a Buffer or any TypedArray (viewed as bytes).
    pub fn bytes_of(&self, v: V) -> R<Option<Vec<u8>>> {
        if !out!(self, napi_is_typedarray(v))? {
            return Ok(None);
        }
        let (mut ty, mut len, mut data, mut ab) = (0, 0usize, ptr::null_mut(), ptr::null_mut());
        let _offset: usize = out!(
            self,
            napi_get_typedarray_info(v, &mut ty, &mut len, &mut data, &mut ab)
        )?;
        let width = match ty {
            sys::TypedarrayType::int8_array
            | sys::TypedarrayType::uint8_array
            | sys::TypedarrayType::uint8_clamped_array => 1,
            sys::TypedarrayType::int16_array | sys::TypedarrayType::uint16_array => 2,
            sys::TypedarrayType::int32_array
            | sys::TypedarrayType::uint32_array
            | sys::TypedarrayType::float32_array => 4,
            _ => 8,
        };
        if len == 0 || data.is_null() {
            return Ok(Some(Vec::new()));
        }
        // SAFETY: Node-API reports `data` as the start of `len` elements of this array.
        let bytes = unsafe { std::slice::from_raw_parts(data as *const u8, len * width) };
        Ok(Some(bytes.to_vec()))
    }

    // Keys go in as string values rather than C strings: no allocation per property.
    pub fn get(&self, obj: V, key: &str) -> R<V> {
        self.get_value(obj, self.string(key)?)
    }

    pub fn get_value(&self, obj: V, key: V) -> R<V> {
        out!(self, napi_get_property(obj, key))
    }

    pub fn set(&self, obj: V, key: &str, v: V) -> R<()> {
        let key = self.string(key)?;
        check!(self, napi_set_property(obj, key, v))
    }

    /// A property that neither shows up in `Object.keys` nor can be overwritten by accident.
    pub fn define_hidden(&self, obj: V, key: &'static std::ffi::CStr, v: V) -> R<()> {
        let desc = sys::napi_property_descriptor {
            utf8name: key.as_ptr(),
            name: ptr::null_mut(),
            method: None,
            getter: None,
            setter: None,
            value: v,
            attributes: sys::PropertyAttributes::configurable,
            data: ptr::null_mut(),
        };
        check!(self, napi_define_properties(obj, 1, &desc))
    }

    pub fn delete(&self, obj: V, key: &str) -> R<()> {
        let key = self.string(key)?;
        out!(self, napi_delete_property(obj, key)).map(|_: bool| ())
    }

    /// Own enumerable string keys, as `Object.keys` lists them.
    pub fn keys(&self, obj: V) -> R<Vec<(String, V)>> {
        let names = out!(
            self,
            napi_get_all_property_names(
                obj,
                sys::KeyCollectionMode::own_only,
                sys::KeyFilter::enumerable | sys::KeyFilter::skip_symbols,
                sys::KeyConversion::numbers_to_strings
            )
        )?;
        (0..self.array_len(names)?)
            .map(|i| {
                let k = self.index(names, i)?;
                Ok((self.str_of(k)?, k))
            })
            .collect()
    }

    /// The UTF-8 contents of a string value (the caller has checked the type).
    pub fn str_of(&self, v: V) -> R<String> {
        self.with_str(v, |s| Ok(s.to_owned()))
    }

    /// Runs `f` on a string value's UTF-8 contents (the caller has checked the type), with no
    /// heap copy when it is short: most strings here (keys, ids, type tags) are, and a hot
    /// call such as allocate need not allocate for its shard id.
    pub fn with_str<T>(&self, v: V, f: impl FnOnce(&str) -> R<T>) -> R<T> {
        let mut small = [0u8; 64];
        let written = self.utf8_into(v, &mut small)?;
        // A character that did not fit is left out whole (up to 4 bytes), so only a buffer
        // with more room than that to spare held the entire string.
        if written + 4 < small.len() {
            return f(utf8(&small[..written])?);
        }
        let len: usize = out!(self, napi_get_value_string_utf8(v, ptr::null_mut(), 0))?;
        let mut buf = vec![0u8; len + 1];
        let written = self.utf8_into(v, &mut buf)?;
        f(utf8(&buf[..written])?)
    }

    /// Copies the string's UTF-8 into `buf` (NUL-terminated); returns the bytes written.
    fn utf8_into(&self, v: V, buf: &mut [u8]) -> R<usize> {
        let (at, len) = (buf.as_mut_ptr() as *mut c_char, buf.len());
        out!(self, napi_get_value_string_utf8(v, at, len))
    }

    pub fn f64_of(&self, v: V) -> R<f64> {
        out!(self, napi_get_value_double(v))
    }

    pub fn bool_of(&self, v: V) -> R<bool> {
        out!(self, napi_get_value_bool(v))
    }

    /// A bigint's value as u64, if it is one and fits.
    pub fn bigint_u64_of(&self, v: V) -> R<Option<u64>> {
        let mut n = 0u64;
        let lossless: bool = out!(self, napi_get_value_bigint_uint64(v, &mut n))?;
        Ok(lossless.then_some(n))
    }

    pub fn error(&self, code: Code, message: &str) -> R<V> {
        let (c, m) = (self.string(code.name())?, self.string(message)?);
        out!(self, napi_create_error(c, m))
    }

    /// Calls `f` with `this` = `recv`. An exception is caught, cleared and kept.
    pub fn call(&self, recv: V, f: V, args: &[V]) -> Result<V, CallError> {
        let mut result = ptr::null_mut();
        let status = unsafe {
            sys::napi_call_function(self.env, recv, f, args.len(), args.as_ptr(), &mut result)
        };
        if status == sys::Status::napi_pending_exception {
            let e = out!(self, napi_get_and_clear_last_exception())?;
            return Err(CallError::Threw(self.keep(e)?));
        }
        ok(status, "call_function")?;
        Ok(result)
    }

    /// Runs `f` in its own handle scope, so values made for one callback do not pile up
    /// while the core carries out thousands of outputs in one call.
    pub fn scoped<T>(&self, f: impl FnOnce() -> T) -> T {
        let scope = out!(self, napi_open_handle_scope()).ok();
        let r = f();
        if let Some(scope) = scope {
            unsafe { sys::napi_close_handle_scope(self.env, scope) };
        }
        r
    }

    /// A strong reference to any value. Node 20 references only objects, so the value sits
    /// in a holder object (a thrown `42` must come back as `42`).
    pub fn keep(&self, v: V) -> R<sys::napi_ref> {
        let holder = self.object()?;
        self.set(holder, "value", v)?;
        self.keep_object(holder)
    }

    /// A strong reference to an object (or function), kept until the process ends.
    pub fn keep_object(&self, v: V) -> R<sys::napi_ref> {
        out!(self, napi_create_reference(v, 1))
    }

    pub fn deref_object(&self, r: sys::napi_ref) -> R<V> {
        out!(self, napi_get_reference_value(r))
    }

    /// The value kept by [`Js::keep`].
    pub fn deref(&self, r: sys::napi_ref) -> R<V> {
        self.get(self.deref_object(r)?, "value")
    }

    pub fn delete_ref(&self, r: sys::napi_ref) {
        unsafe { sys::napi_delete_reference(self.env, r) };
    }

    pub fn throw(&self, v: V) {
        unsafe { sys::napi_throw(self.env, v) };
    }
}

fn utf8(bytes: &[u8]) -> R<&str> {
    std::str::from_utf8(bytes)
        .map_err(|_| Fail::invalid("a string is not valid UTF-16 (lone surrogate)"))
}
