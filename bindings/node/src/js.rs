//! A thin layer over raw Node-API calls.
//!
//! The binding needs things napi-rs's typed layer hides: the exact value a callback threw
//! (whatever it is, not only `Error` objects), handle scopes around each callback, and values
//! that stay plain `napi_value`s while the core runs. Every helper here works on the JS thread
//! that owns `env`, inside a native call.

use std::ffi::{c_char, c_void};
use std::ptr;

use napi::sys;

use crate::error::{Code, Fail, R};

pub type V = sys::napi_value;

#[derive(Clone, Copy)]
pub struct Js {
    pub env: sys::napi_env,
}

fn ok(status: sys::napi_status, what: &str) -> R<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(Fail::new(
            Code::Internal,
            format!("Node-API call {what} failed with status {status}"),
        ))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Type {
    Undefined,
    Null,
    Boolean,
    Number,
    String,
    Symbol,
    Object,
    Function,
    External,
    BigInt,
}

impl Type {
    pub fn name(self) -> &'static str {
        match self {
            Type::Undefined => "undefined",
            Type::Null => "null",
            Type::Boolean => "a boolean",
            Type::Number => "a number",
            Type::String => "a string",
            Type::Symbol => "a symbol",
            Type::Object => "an object",
            Type::Function => "a function",
            Type::External => "an external",
            Type::BigInt => "a bigint",
        }
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

    pub fn type_of(&self, v: V) -> R<Type> {
        let mut t = 0;
        ok(unsafe { sys::napi_typeof(self.env, v, &mut t) }, "typeof")?;
        Ok(match t {
            sys::ValueType::napi_undefined => Type::Undefined,
            sys::ValueType::napi_null => Type::Null,
            sys::ValueType::napi_boolean => Type::Boolean,
            sys::ValueType::napi_number => Type::Number,
            sys::ValueType::napi_string => Type::String,
            sys::ValueType::napi_symbol => Type::Symbol,
            sys::ValueType::napi_object => Type::Object,
            sys::ValueType::napi_function => Type::Function,
            sys::ValueType::napi_bigint => Type::BigInt,
            _ => Type::External,
        })
    }

    pub fn is_nullish(&self, v: V) -> R<bool> {
        Ok(matches!(self.type_of(v)?, Type::Undefined | Type::Null))
    }

    pub fn undefined(&self) -> R<V> {
        let mut v = ptr::null_mut();
        ok(
            unsafe { sys::napi_get_undefined(self.env, &mut v) },
            "get_undefined",
        )?;
        Ok(v)
    }

    pub fn null(&self) -> R<V> {
        let mut v = ptr::null_mut();
        ok(unsafe { sys::napi_get_null(self.env, &mut v) }, "get_null")?;
        Ok(v)
    }

    pub fn boolean(&self, b: bool) -> R<V> {
        let mut v = ptr::null_mut();
        ok(
            unsafe { sys::napi_get_boolean(self.env, b, &mut v) },
            "get_boolean",
        )?;
        Ok(v)
    }

    pub fn number(&self, n: f64) -> R<V> {
        let mut v = ptr::null_mut();
        ok(
            unsafe { sys::napi_create_double(self.env, n, &mut v) },
            "create_double",
        )?;
        Ok(v)
    }

    pub fn string(&self, s: &str) -> R<V> {
        let mut v = ptr::null_mut();
        ok(
            unsafe {
                sys::napi_create_string_utf8(
                    self.env,
                    s.as_ptr() as *const c_char,
                    s.len() as isize,
                    &mut v,
                )
            },
            "create_string_utf8",
        )?;
        Ok(v)
    }

    pub fn opt_string(&self, s: Option<&str>) -> R<V> {
        match s {
            Some(s) => self.string(s),
            None => self.null(),
        }
    }

    pub fn bigint_u64(&self, n: u64) -> R<V> {
        let mut v = ptr::null_mut();
        ok(
            unsafe { sys::napi_create_bigint_uint64(self.env, n, &mut v) },
            "create_bigint_uint64",
        )?;
        Ok(v)
    }

    pub fn buffer(&self, bytes: &[u8]) -> R<V> {
        let mut v = ptr::null_mut();
        let mut data = ptr::null_mut();
        ok(
            unsafe {
                sys::napi_create_buffer_copy(
                    self.env,
                    bytes.len(),
                    bytes.as_ptr() as *const c_void,
                    &mut data,
                    &mut v,
                )
            },
            "create_buffer_copy",
        )?;
        Ok(v)
    }

    pub fn object(&self) -> R<V> {
        let mut v = ptr::null_mut();
        ok(
            unsafe { sys::napi_create_object(self.env, &mut v) },
            "create_object",
        )?;
        Ok(v)
    }

    pub fn array(&self, len: usize) -> R<V> {
        let mut v = ptr::null_mut();
        ok(
            unsafe { sys::napi_create_array_with_length(self.env, len, &mut v) },
            "create_array",
        )?;
        Ok(v)
    }

    pub fn array_of<T>(&self, items: &[T], mut f: impl FnMut(&T) -> R<V>) -> R<V> {
        let a = self.array(items.len())?;
        for (i, item) in items.iter().enumerate() {
            let v = f(item)?;
            self.set_index(a, i as u32, v)?;
        }
        Ok(a)
    }

    pub fn strings<S: AsRef<str>>(&self, items: &[S]) -> R<V> {
        self.array_of(items, |s| self.string(s.as_ref()))
    }

    pub fn set_index(&self, a: V, i: u32, v: V) -> R<()> {
        ok(
            unsafe { sys::napi_set_element(self.env, a, i, v) },
            "set_element",
        )
    }

    pub fn index(&self, a: V, i: u32) -> R<V> {
        let mut v = ptr::null_mut();
        ok(
            unsafe { sys::napi_get_element(self.env, a, i, &mut v) },
            "get_element",
        )?;
        Ok(v)
    }

    pub fn is_array(&self, v: V) -> R<bool> {
        let mut b = false;
        ok(
            unsafe { sys::napi_is_array(self.env, v, &mut b) },
            "is_array",
        )?;
        Ok(b)
    }

    pub fn array_len(&self, v: V) -> R<u32> {
        let mut n = 0;
        ok(
            unsafe { sys::napi_get_array_length(self.env, v, &mut n) },
            "get_array_length",
        )?;
        Ok(n)
    }

    /// The bytes of a Buffer or any TypedArray (viewed as bytes).
    pub fn bytes_of(&self, v: V) -> R<Option<Vec<u8>>> {
        let mut is = false;
        ok(
            unsafe { sys::napi_is_typedarray(self.env, v, &mut is) },
            "is_typedarray",
        )?;
        if !is {
            return Ok(None);
        }
        let (mut ty, mut len, mut data, mut ab, mut off) =
            (0, 0usize, ptr::null_mut(), ptr::null_mut(), 0usize);
        ok(
            unsafe {
                sys::napi_get_typedarray_info(
                    self.env, v, &mut ty, &mut len, &mut data, &mut ab, &mut off,
                )
            },
            "get_typedarray_info",
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
        let n = len * width;
        if n == 0 || data.is_null() {
            return Ok(Some(Vec::new()));
        }
        // SAFETY: Node-API reports `data` as the start of `len` elements of this array.
        Ok(Some(
            unsafe { std::slice::from_raw_parts(data as *const u8, n) }.to_vec(),
        ))
    }

    // Keys go in as string values rather than C strings: no allocation per property.
    pub fn get(&self, obj: V, key: &str) -> R<V> {
        self.get_value(obj, self.string(key)?)
    }

    pub fn get_value(&self, obj: V, key: V) -> R<V> {
        let mut v = ptr::null_mut();
        ok(
            unsafe { sys::napi_get_property(self.env, obj, key, &mut v) },
            "get_property",
        )?;
        Ok(v)
    }

    pub fn set(&self, obj: V, key: &str, v: V) -> R<()> {
        let key = self.string(key)?;
        ok(
            unsafe { sys::napi_set_property(self.env, obj, key, v) },
            "set_property",
        )
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
        ok(
            unsafe { sys::napi_define_properties(self.env, obj, 1, &desc) },
            "define_properties",
        )
    }

    pub fn delete(&self, obj: V, key: &str) -> R<()> {
        let k = self.string(key)?;
        let mut done = false;
        ok(
            unsafe { sys::napi_delete_property(self.env, obj, k, &mut done) },
            "delete_property",
        )
    }

    /// Own enumerable string keys, as `Object.keys` lists them.
    pub fn keys(&self, obj: V) -> R<Vec<(String, V)>> {
        let mut names = ptr::null_mut();
        ok(
            unsafe {
                sys::napi_get_all_property_names(
                    self.env,
                    obj,
                    sys::KeyCollectionMode::own_only,
                    sys::KeyFilter::enumerable | sys::KeyFilter::skip_symbols,
                    sys::KeyConversion::numbers_to_strings,
                    &mut names,
                )
            },
            "get_all_property_names",
        )?;
        let n = self.array_len(names)?;
        let mut out = Vec::with_capacity(n as usize);
        for i in 0..n {
            let k = self.index(names, i)?;
            out.push((self.str_of(k)?, k));
        }
        Ok(out)
    }

    /// The UTF-8 contents of a string value (the caller has checked the type).
    pub fn str_of(&self, v: V) -> R<String> {
        // Most strings here (keys, ids, type tags) are short: one call into a stack buffer
        // first, and a measured one only when it was filled.
        let mut small = [0u8; 64];
        let written = self.utf8_into(v, &mut small)?;
        // A character that did not fit is left out whole (up to 4 bytes), so only a buffer
        // with more room than that to spare held the entire string.
        if written + 4 < small.len() {
            return utf8(small[..written].to_vec());
        }
        let mut len = 0usize;
        ok(
            unsafe { sys::napi_get_value_string_utf8(self.env, v, ptr::null_mut(), 0, &mut len) },
            "get_value_string_utf8",
        )?;
        let mut buf = vec![0u8; len + 1];
        let written = self.utf8_into(v, &mut buf)?;
        buf.truncate(written);
        utf8(buf)
    }

    /// Copies the string's UTF-8 into `buf` (NUL-terminated); returns the bytes written.
    fn utf8_into(&self, v: V, buf: &mut [u8]) -> R<usize> {
        let mut written = 0usize;
        ok(
            unsafe {
                sys::napi_get_value_string_utf8(
                    self.env,
                    v,
                    buf.as_mut_ptr() as *mut c_char,
                    buf.len(),
                    &mut written,
                )
            },
            "get_value_string_utf8",
        )?;
        Ok(written)
    }

    pub fn f64_of(&self, v: V) -> R<f64> {
        let mut n = 0.0;
        ok(
            unsafe { sys::napi_get_value_double(self.env, v, &mut n) },
            "get_value_double",
        )?;
        Ok(n)
    }

    pub fn bool_of(&self, v: V) -> R<bool> {
        let mut b = false;
        ok(
            unsafe { sys::napi_get_value_bool(self.env, v, &mut b) },
            "get_value_bool",
        )?;
        Ok(b)
    }

    /// A bigint's value as u64, if it is one and fits.
    pub fn bigint_u64_of(&self, v: V) -> R<Option<u64>> {
        let (mut n, mut lossless) = (0u64, false);
        ok(
            unsafe { sys::napi_get_value_bigint_uint64(self.env, v, &mut n, &mut lossless) },
            "get_value_bigint_uint64",
        )?;
        Ok(lossless.then_some(n))
    }

    pub fn error(&self, code: Code, message: &str) -> R<V> {
        let c = self.string(code.name())?;
        let m = self.string(message)?;
        let mut e = ptr::null_mut();
        ok(
            unsafe { sys::napi_create_error(self.env, c, m, &mut e) },
            "create_error",
        )?;
        Ok(e)
    }

    /// Calls `f` with `this` = `recv`. An exception is caught, cleared and kept.
    pub fn call(&self, recv: V, f: V, args: &[V]) -> Result<V, CallError> {
        let mut result = ptr::null_mut();
        let status = unsafe {
            sys::napi_call_function(self.env, recv, f, args.len(), args.as_ptr(), &mut result)
        };
        if status == sys::Status::napi_pending_exception {
            let mut e = ptr::null_mut();
            ok(
                unsafe { sys::napi_get_and_clear_last_exception(self.env, &mut e) },
                "get_and_clear_last_exception",
            )?;
            return Err(CallError::Threw(self.keep(e)?));
        }
        ok(status, "call_function")?;
        Ok(result)
    }

    /// Runs `f` in its own handle scope, so values made for one callback do not pile up
    /// while the core carries out thousands of outputs in one call.
    pub fn scoped<T>(&self, f: impl FnOnce() -> T) -> T {
        let mut scope = ptr::null_mut();
        let opened =
            unsafe { sys::napi_open_handle_scope(self.env, &mut scope) } == sys::Status::napi_ok;
        let r = f();
        if opened {
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
        let mut r = ptr::null_mut();
        ok(
            unsafe { sys::napi_create_reference(self.env, v, 1, &mut r) },
            "create_reference",
        )?;
        Ok(r)
    }

    pub fn deref_object(&self, r: sys::napi_ref) -> R<V> {
        let mut v = ptr::null_mut();
        ok(
            unsafe { sys::napi_get_reference_value(self.env, r, &mut v) },
            "get_reference_value",
        )?;
        Ok(v)
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

fn utf8(bytes: Vec<u8>) -> R<String> {
    String::from_utf8(bytes).map_err(|_| {
        Fail::new(
            Code::InvalidArgument,
            "a string is not valid UTF-16 (lone surrogate)",
        )
    })
}
