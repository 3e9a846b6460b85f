//! `org.shardline.Shardline`: the library's functions (conformance decisions, trace replay,
//! entity -> shard), by name.

use jni::objects::{JByteBuffer, JObjectArray, JString};
use jni::sys::{jlong, jobject, jstring};

use shardline_bind::ops::functions;

use crate::convert::new_string;
use crate::native::native;
use crate::ops;

native! { fn Java_org_shardline_NativeLibrary_nVersion(env) -> jstring {
    new_string(env, shardline_core::VERSION)
}}

native! {
/// The library's functions by name (`shardline_bind::ops::functions`).
fn Java_org_shardline_Shardline_nOp(env, op: JString<'l>, args: JObjectArray<'l>) -> jobject {
    ops::call(env, "Shardline", &op, &args, |a| Ok(functions::call(a)?))
}}

native! {
/// Test hook for the panic boundary: a panic must come out as ShardlineException(PANIC).
fn Java_org_shardline_Shardline_nPanicForTest(_) {
    panic!("deliberate panic (test hook)")
}}

native! {
/// The address of a thread's scratch memory (`Rows.Scratch`), a direct buffer Java keeps for the
/// thread's life: steps pass their byte arguments and take their rows through it.
fn Java_org_shardline_Shardline_nAddress(env, buffer: JByteBuffer<'l>) -> jlong {
    Ok(env.get_direct_buffer_address(&buffer)? as jlong)
}}
