//! JNI binding of shardline: the native half of the `org.shardline` Java package.
//!
//! Built on the `jni` crate 0.21 (its `JNIEnv<'local>` API with `with_local_frame`). Every
//! `Java_org_shardline_*` export is declared with [`native::native`], so its body runs inside
//! [`boundary::entry`], which turns errors
//! into `ShardlineException`, panics into `ShardlineException(PANIC)`, and re-throws the
//! original exception of any Java callback that failed during the call.
//!
//! Callbacks into Java (custom strategies, transports, stores, leases, entity hosts) run
//! synchronously on the calling thread during a native call, so they use the thread's own
//! `JNIEnv` ([`callback`]); no Rust thread ever calls Java.

// JNI export names are fixed by the Java class and method names.
#![allow(non_snake_case)]

mod answers;
mod backends;
// Benchmark entry points (module shardline-bench), kept next to the benchmarks and out of the
// published library: only builds with the `bench` feature have them.
#[cfg(feature = "bench")]
#[path = "../shardline-bench/native/inprocess.rs"]
mod bench;
mod boundary;
mod callback;
mod classes;
mod convert;
mod coordinator;
mod driver;
mod envelope;
mod etcd;
mod handle;
mod host;
mod native;
mod ops;
mod outputs;
mod pipeline;
mod region;
mod shardline;
mod state;
mod strategy;
mod workerid;

use std::ffi::c_void;
use std::sync::OnceLock;

use jni::sys::{jint, JNI_ERR, JNI_VERSION_1_8};
use jni::JavaVM;

static VM: OnceLock<JavaVM> = OnceLock::new();

/// The JVM that loaded this library; set before any Java code can call a native method.
pub(crate) fn vm() -> &'static JavaVM {
    VM.get().expect("JNI_OnLoad ran before any native call")
}

/// # Safety
/// Called by the JVM once, with a valid `JavaVM` pointer, when the library is loaded.
#[no_mangle]
pub unsafe extern "system" fn JNI_OnLoad(
    vm: *mut jni::sys::JavaVM,
    _reserved: *mut c_void,
) -> jint {
    // SAFETY: the JVM passes its own, valid, process-wide VM pointer.
    match unsafe { JavaVM::from_raw(vm) } {
        Ok(vm) => {
            let _ = VM.set(vm);
            JNI_VERSION_1_8
        }
        Err(_) => JNI_ERR,
    }
}
