//! Java objects as the drivers' host objects (`Transport`, `Clock`, `Lease`, `Store`,
//! `EntityHost`) and the worker-id holder's `IdClock`. `shardline_bind::driver_host` decides
//! what each role needs and how answers are read; `Callbacks.host` calls the Java method a name
//! stands for, and this module only converts the arguments and the answer (as `crate::ops`
//! converts any value).

use jni::objects::{JObject, JValue};
use jni::JNIEnv;

use shardline_bind::driver_host::{HostObject, Spelling};
use shardline_bind::rows::pack_envelope;
use shardline_bind::tree::Tree;
use shardline_bind::Failure as BindFailure;
use shardline_core::coordinator::{Record, Snapshot};
use shardline_core::protocol::Envelope;

use crate::boundary::Result;
use crate::callback::{attempt, keep, JavaObject, Refusal};
use crate::classes::CALLBACKS_HOST;
use crate::convert::{new_string, to_json};
use crate::ops;

/// A Java host object; every interface method is there (the optional ones have defaults).
pub struct JavaHost(JavaObject);

impl JavaHost {
    pub fn new(env: &mut JNIEnv, obj: &JObject, what: &str) -> Result<Self> {
        Ok(JavaHost(JavaObject::new(env, obj, what)?))
    }
}

/// A host call's arguments as Java's host interfaces take them: an envelope in
/// `Envelope.java`'s packed form, a record or snapshot as JSON text, the rest as they are.
pub fn java_args(method: &str, mut args: Vec<Tree>) -> Result<Vec<Tree>, BindFailure> {
    // The core's own values: one that does not convert is a bug here.
    fn bug(e: impl std::fmt::Display) -> BindFailure {
        BindFailure::internal(format!("a host call's argument: {e}"))
    }
    fn json<T: serde::de::DeserializeOwned + serde::Serialize>(
        t: &Tree,
    ) -> Result<Tree, BindFailure> {
        Ok(Tree::Text(to_json(&t.deserialized::<T>().map_err(bug)?)))
    }
    match method {
        "send" => {
            let e: Envelope = args[0].deserialized().map_err(bug)?;
            args = vec![Tree::Bytes(pack_envelope(&e)?)];
        }
        "append" => args[1] = json::<Record>(&args[1])?,
        "save_snapshot" => args[1] = json::<Snapshot>(&args[1])?,
        _ => {}
    }
    Ok(args)
}

impl HostObject for JavaHost {
    fn call(&self, method: &str, args: Vec<Tree>) -> Result<Tree, BindFailure> {
        let args = java_args(method, args)?;
        attempt(|env| {
            // SAFETY: fresh local references, owned by the callback's frame.
            let name =
                unsafe { JObject::from_raw(new_string(env, &Spelling::Camel.spell(method))?) };
            let array = unsafe { JObject::from_raw(ops::to_java(env, &Tree::Array(args))?) };
            let values = [
                JValue::Object(self.0.obj.as_obj()),
                JValue::Object(&name),
                JValue::Object(&array),
            ];
            let r = CALLBACKS_HOST.object(env, &values)?;
            match ops::tree_of(env, &r, "the answer", 0)? {
                // A stored state crosses as the JSON text the host stored.
                Tree::Text(json) if method == "load" => serde_json::from_str(&json)
                    .map_err(|e| Refusal::Invalid(format!("returned invalid JSON: {e}"))),
                answer => Ok(answer),
            }
        })
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
