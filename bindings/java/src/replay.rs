//! `Shardline.replay`: a recorded state-machine trace replayed on fresh machines, judged
//! exactly as `shardline replay` and every other binding judge it.

use jni::objects::{JClass, JString};
use jni::sys::jstring;
use jni::JNIEnv;

use shardline_core::replay::replay_json;

use crate::boundary::entry;
use crate::convert::{new_string, string};

#[no_mangle]
pub extern "system" fn Java_org_shardline_Shardline_nReplay<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    text: JString<'l>,
) -> jstring {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let text = string(env, &text, "text")?;
        new_string(env, &replay_json(&text)?)
    })
}
