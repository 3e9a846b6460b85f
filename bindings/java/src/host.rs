//! Java objects as the drivers' host objects (`Transport`, `Clock`, `Lease`, `Store`,
//! `EntityHost`) and the worker-id holder's `IdClock`. `shardline_bind::driver_host` decides
//! what each role needs and how answers are read; this module only calls the Java method a
//! snake_case name stands for, converting the arguments and the answer.

use jni::objects::{JObject, JString, JValue, JValueOwned};
use jni::sys::jlong;
use jni::JNIEnv;
use serde::de::DeserializeOwned;
use serde::Serialize;

use shardline_bind::driver_host::{HostObject, Spelling};
use shardline_bind::tree::{to_tree, Tree};
use shardline_bind::Failure as BindFailure;
use shardline_core::coordinator::{Record, Snapshot};
use shardline_core::host::WriteOutcome;
use shardline_core::protocol::{Envelope, FencingToken};

use crate::callback::{attempt, keep, JavaObject, Refusal, BRIDGE};
use crate::convert::{local_string_array, to_json};
use crate::envelope;

/// A Java host object; every interface method is there (the optional ones have defaults).
pub struct JavaHost(JavaObject);

impl JavaHost {
    pub fn new(env: &mut JNIEnv, obj: &JObject, what: &str) -> crate::boundary::Result<Self> {
        Ok(JavaHost(JavaObject::new(env, obj, what)?))
    }
}

impl HostObject for JavaHost {
    fn call(&self, method: &str, args: Vec<Tree>) -> Result<Tree, BindFailure> {
        attempt(|env| dispatch(env, self.0.obj.as_obj(), method, &args))
    }

    fn has(&self, _: &str) -> bool {
        true
    }

    fn keep(&self, failure: BindFailure) -> shardline_core::Error {
        keep(failure)
    }

    fn spelling(&self) -> Spelling {
        Spelling::Camel
    }
}

/// How a Java method is reached and what it answers.
enum Answer {
    Nothing,
    Millis,
    Flag,
    /// `long[] {token, validUntilMs}` or null.
    Grant,
    /// -1: the grant is gone.
    Deadline,
    /// -1: written; else the highest token.
    Written,
    /// JSON text or null.
    Json,
}

fn dispatch<'a>(
    env: &mut JNIEnv<'a>,
    target: &JObject,
    method: &str,
    args: &[Tree],
) -> Result<Tree, Refusal> {
    use Answer::*;
    // Bridged methods go through `Callbacks`, which turns Java's types (Optional, records,
    // WriteOutcome) into plain values; the rest are called on the object itself.
    let (bridged, name, sig, answer) = match method {
        "send" => (true, "send", "(Lorg/shardline/Transport;[B)V", Nothing),
        "now_ms" => (false, "nowMs", "()J", Millis),
        "wall_ms" => (false, "wallMs", "()J", Millis),
        "monotonic_ms" => (false, "monotonicMs", "()J", Millis),
        "sleep_until" => (false, "sleepUntil", "(J)V", Nothing),
        "acquire" => (true, "leaseAcquire", "(Lorg/shardline/Lease;J)[J", Grant),
        "renew" => (true, "leaseRenew", "(Lorg/shardline/Lease;JJ)J", Deadline),
        "release" => (false, "release", "(J)V", Nothing),
        "append" => (true, "storeAppend", WRITE, Written),
        "save_snapshot" => (true, "storeSaveSnapshot", WRITE, Written),
        "load" => (true, "storeLoad", LOAD, Json),
        "start_shard" => (true, "startShard", START, Nothing),
        "start_entities" => (true, "startEntities", START, Nothing),
        "deliver" => (true, "deliver", DELIVER, Nothing),
        "stop_shard" => (false, "stopShard", "(Ljava/lang/String;)Z", Flag),
        "undeliverable" => (false, "undeliverable", UNDELIVERABLE, Nothing),
        "stopped" => (false, "stopped", "()V", Nothing),
        other => return Err(Refusal::Invalid(format!("has no {other} method"))),
    };
    let jargs = match method {
        "send" => {
            let e = envelope::to_java(env, &value::<Envelope>(&args[0])?)?;
            // SAFETY: a fresh local reference, owned by the callback's frame.
            vec![JValueOwned::from(unsafe { JObject::from_raw(e) })]
        }
        "append" => write(env, &args[0], value::<Record>(&args[1])?)?,
        "save_snapshot" => write(env, &args[0], value::<Snapshot>(&args[1])?)?,
        _ => args
            .iter()
            .map(|a| java(env, a))
            .collect::<Result<_, _>>()?,
    };
    let mut values: Vec<JValue> = jargs.iter().map(JValueOwned::borrow).collect();
    let r = if bridged {
        values.insert(0, JValue::Object(target));
        env.call_static_method(BRIDGE, name, sig, &values)?
    } else {
        env.call_method(target, name, sig, &values)?
    };
    Ok(match answer {
        Nothing => Tree::Null,
        Millis => Tree::Integer(r.j()?.into()),
        Flag => Tree::Bool(r.z()?),
        Grant => {
            let r = r.l()?;
            if r.is_null() {
                return Ok(Tree::Null);
            }
            let mut g = [0i64; 2];
            env.get_long_array_region(jni::objects::JLongArray::from(r), 0, &mut g)?;
            Tree::Array(g.iter().map(|x| Tree::Integer((*x).into())).collect())
        }
        Deadline => match r.j()? {
            -1 => Tree::Null,
            t => Tree::Integer(t.into()),
        },
        Written => match u64::try_from(r.j()?) {
            Err(_) => Tree::Null,
            Ok(highest) => tree(&WriteOutcome::Fenced {
                highest: FencingToken(highest),
            })?,
        },
        Json => {
            let r = r.l()?;
            if r.is_null() {
                return Ok(Tree::Null);
            }
            let text = crate::convert::read(env, &JString::from(r))?;
            serde_json::from_str(&text)
                .map_err(|e| Refusal::Invalid(format!("returned invalid JSON: {e}")))?
        }
    })
}

const WRITE: &str = "(Lorg/shardline/Store;JLjava/lang/String;)J";
const LOAD: &str = "(Lorg/shardline/Store;J)Ljava/lang/String;";
const START: &str = "(Lorg/shardline/EntityHost;Ljava/lang/String;[Ljava/lang/String;)V";
const DELIVER: &str = "(Lorg/shardline/EntityHost;Ljava/lang/String;Ljava/lang/String;[B)V";
const UNDELIVERABLE: &str = "(Ljava/lang/String;Ljava/lang/String;[BLjava/lang/String;)V";

/// The core's arguments are the core's own values: one that does not read back is a bug here.
fn malformed(what: &str) -> Refusal {
    Refusal::Invalid(format!("was handed a malformed {what}"))
}

fn value<T: DeserializeOwned>(t: &Tree) -> Result<T, Refusal> {
    t.deserialized()
        .map_err(|_| malformed(std::any::type_name::<T>()))
}

fn tree<T: Serialize>(v: &T) -> Result<Tree, Refusal> {
    to_tree(v).map_err(|e| Refusal::Invalid(e.to_string()))
}

fn string(t: &Tree) -> Result<&str, Refusal> {
    t.as_text().ok_or_else(|| malformed("text"))
}

fn long(t: &Tree) -> Result<JValueOwned<'static>, Refusal> {
    let v = t.as_integer().and_then(|i| jlong::try_from(i).ok());
    Ok(JValueOwned::Long(v.ok_or_else(|| malformed("number"))?))
}

/// An argument as the Java type its method takes: text as `String`, bytes as `byte[]`, a list
/// (of texts) as `String[]`, a number as `long`.
fn java<'a>(env: &mut JNIEnv<'a>, t: &Tree) -> Result<JValueOwned<'a>, Refusal> {
    match t {
        Tree::Text(s) => text(env, s),
        Tree::Bytes(_) => bytes(env, t),
        Tree::Array(_) => strings(env, t),
        _ => long(t),
    }
}

fn text<'a>(env: &mut JNIEnv<'a>, s: &str) -> Result<JValueOwned<'a>, Refusal> {
    Ok(JValueOwned::from(JObject::from(env.new_string(s)?)))
}

fn bytes<'a>(env: &mut JNIEnv<'a>, t: &Tree) -> Result<JValueOwned<'a>, Refusal> {
    let b = t.as_bytes().ok_or_else(|| malformed("payload"))?;
    Ok(JValueOwned::from(JObject::from(
        env.byte_array_from_slice(b)?,
    )))
}

fn strings<'a>(env: &mut JNIEnv<'a>, t: &Tree) -> Result<JValueOwned<'a>, Refusal> {
    let items = t.as_array().ok_or_else(|| malformed("list"))?;
    let items: Vec<&str> = items.iter().map(string).collect::<Result<_, _>>()?;
    Ok(JValueOwned::from(local_string_array(env, items.iter())?))
}

fn write<'a, T: Serialize>(
    env: &mut JNIEnv<'a>,
    token: &Tree,
    v: T,
) -> Result<Vec<JValueOwned<'a>>, Refusal> {
    Ok(vec![long(token)?, text(env, &to_json(&v))?])
}
