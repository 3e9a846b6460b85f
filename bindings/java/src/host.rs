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
use crate::convert::{endpoint_id, local_opt_string, local_string_array, to_json};

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
    let (bridged, name, sig, answer, jargs) = match method {
        "send" => {
            let e: Envelope = value(&args[0])?;
            let jargs = vec![
                JValueOwned::from(local_opt_string(env, endpoint_id(&e.from))?),
                JValueOwned::from(local_opt_string(env, endpoint_id(&e.to))?),
                JValueOwned::from(JObject::from(env.byte_array_from_slice(
                    &serde_json::to_vec(&e.message).map_err(|e| Refusal::Invalid(e.to_string()))?,
                )?)),
            ];
            let sig = "(Lorg/shardline/Transport;Ljava/lang/String;Ljava/lang/String;[B)V";
            (true, "send", sig, Nothing, jargs)
        }
        "now_ms" => (false, "nowMs", "()J", Millis, vec![]),
        "wall_ms" => (false, "wallMs", "()J", Millis, vec![]),
        "monotonic_ms" => (false, "monotonicMs", "()J", Millis, vec![]),
        "sleep_until" => (false, "sleepUntil", "(J)V", Nothing, longs(args)?),
        "acquire" => (
            true,
            "leaseAcquire",
            "(Lorg/shardline/Lease;J)[J",
            Grant,
            longs(args)?,
        ),
        "renew" => (
            true,
            "leaseRenew",
            "(Lorg/shardline/Lease;JJ)J",
            Deadline,
            longs(args)?,
        ),
        "release" => (false, "release", "(J)V", Nothing, longs(args)?),
        "append" => {
            let jargs = write(env, &args[0], value::<Record>(&args[1])?)?;
            (true, "storeAppend", WRITE, Written, jargs)
        }
        "save_snapshot" => {
            let jargs = write(env, &args[0], value::<Snapshot>(&args[1])?)?;
            (true, "storeSaveSnapshot", WRITE, Written, jargs)
        }
        "load" => (
            true,
            "storeLoad",
            "(Lorg/shardline/Store;J)Ljava/lang/String;",
            Json,
            longs(args)?,
        ),
        "start_shard" | "start_entities" => {
            let name = if method == "start_shard" {
                "startShard"
            } else {
                "startEntities"
            };
            let jargs = vec![text(env, string(&args[0])?)?, strings(env, &args[1])?];
            (
                true,
                name,
                "(Lorg/shardline/EntityHost;Ljava/lang/String;[Ljava/lang/String;)V",
                Nothing,
                jargs,
            )
        }
        "deliver" => {
            let jargs = vec![
                text(env, string(&args[0])?)?,
                text(env, string(&args[1])?)?,
                bytes(env, &args[2])?,
            ];
            let sig = "(Lorg/shardline/EntityHost;Ljava/lang/String;Ljava/lang/String;[B)V";
            (true, "deliver", sig, Nothing, jargs)
        }
        "stop_shard" => {
            let jargs = vec![text(env, string(&args[0])?)?];
            (false, "stopShard", "(Ljava/lang/String;)Z", Flag, jargs)
        }
        "undeliverable" => {
            let jargs = vec![
                text(env, string(&args[0])?)?,
                text(env, string(&args[1])?)?,
                bytes(env, &args[2])?,
                text(env, string(&args[3])?)?,
            ];
            let sig = "(Ljava/lang/String;Ljava/lang/String;[BLjava/lang/String;)V";
            (false, "undeliverable", sig, Nothing, jargs)
        }
        "stopped" => (false, "stopped", "()V", Nothing, vec![]),
        other => return Err(Refusal::Invalid(format!("has no {other} method"))),
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

fn longs(args: &[Tree]) -> Result<Vec<JValueOwned<'static>>, Refusal> {
    args.iter().map(long).collect()
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
