//! `Shardline.replay`: a recorded state-machine trace replayed on fresh machines, judged
//! exactly as `shardline replay` and every other binding judge it.

use jni::objects::JString;
use jni::sys::jstring;

use shardline_core::replay::replay_json;

use crate::convert::{new_string, string};
use crate::native::native;

native! { fn Java_org_shardline_Shardline_nReplay(env, text: JString<'l>) -> jstring {
    let text = string(env, &text, "text")?;
    new_string(env, &replay_json(&text)?)
}}
