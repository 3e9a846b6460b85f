//! `native!`: how every `Java_org_shardline_*` export is declared.
//!
//! ```ignore
//! native! { fn Java_org_shardline_Coordinator_nStart(env, h: jlong, now: jlong) {
//!     ...  // returns Result<()>
//! }}
//! ```
//!
//! The body runs inside [`crate::boundary::entry`] with `env` bound to the thread's `JNIEnv`
//! and returns `Result` of the declared type; on failure the export throws and hands the JVM
//! the type's zero value, which the JVM ignores.

/// The value an export returns while an exception is pending.
pub trait Zero {
    fn zero() -> Self;
}

impl Zero for () {
    fn zero() {}
}

macro_rules! zero {
    ($($t:ty => $v:expr),*) => {$(
        impl Zero for $t {
            fn zero() -> $t {
                $v
            }
        }
    )*};
}
zero!(i32 => 0, i64 => 0, u8 => 0, jni::sys::jobject => std::ptr::null_mut());

macro_rules! native {
    ($(
        $(#[$meta:meta])*
        fn $name:ident($env:pat $(, $arg:ident: $ty:ty)* $(,)?) $(-> $ret:ty)? $body:block
    )*) => {$(
        $(#[$meta])*
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub extern "system" fn $name<'l>(
            mut env: jni::JNIEnv<'l>,
            _: jni::objects::JClass<'l>,
            $($arg: $ty),*
        ) $(-> $ret)? {
            $crate::boundary::entry(&mut env, $crate::native::Zero::zero(), |$env| $body)
        }
    )*};
}
pub(crate) use native;
