//! The one adapter between a host's objects (a Python object, a JavaScript object, a Java
//! interface, a C callback table) and the driver's host traits: [`Transport`], [`Clock`],
//! [`Lease`], [`Store`] and [`EntityHost`].
//!
//! A binding implements [`HostObject`]: call a named method with positional arguments and
//! hand back its answer, both as [`Tree`]s (so a payload arrives as the language's bytes).
//! Everything else is decided here once: which methods each role needs, how each answer is
//! read and checked (and the message when it does not fit), what the clock answers when it
//! fails, and what the core sees when a host call fails.
//!
//! Method names are the snake_case ones below; a binding whose idiom differs (camelCase in
//! JavaScript and Java) translates them in its `HostObject`.

use std::sync::atomic::{AtomicU64, Ordering};

use serde::de::DeserializeOwned;
use serde::Deserialize;
use shardline_core::coordinator::LeaseGrant;
use shardline_core::coordinator::StoredState;
use shardline_core::coordinator::{Record, Snapshot};
use shardline_core::host::Lease;
use shardline_core::host::{Clock, EntityHost, Transport};
use shardline_core::host::{Completion, Operation, Pending};
use shardline_core::host::{Store, WriteOutcome};
use shardline_core::protocol::{EntityId, Envelope, FencingToken, Payload};
use shardline_core::Result;

use crate::ids::HostClock;
use crate::tree::{to_tree, Tree};
use crate::Failure;

/// A host object as the adapters see it.
pub trait HostObject: Send {
    /// Calls `method` with `args`; a failure's message is a predicate ("raised: ValueError:
    /// boom") the adapter puts the role and method in front of.
    fn call(&self, method: &str, args: Vec<Tree>) -> std::result::Result<Tree, Failure>;

    /// Whether the object has `method` (optional methods are skipped when it does not).
    fn has(&self, method: &str) -> bool;

    /// Keeps `failure` for the binding's caller (the first failure of a call wins, so an
    /// exception kept earlier is not replaced) and returns what the core sees.
    fn keep(&self, failure: Failure) -> shardline_core::Error;

    /// How the host's language spells method names, so messages name the method the user
    /// wrote (`nowMs` in JavaScript and Java, `now_ms` in Python and C).
    fn spelling(&self) -> Spelling {
        Spelling::Snake
    }
}

/// How a language spells the shared snake_case method names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spelling {
    Snake,
    Camel,
}

impl Spelling {
    pub fn spell(self, method: &str) -> String {
        match self {
            Spelling::Snake => method.to_owned(),
            Spelling::Camel => {
                let mut out = String::with_capacity(method.len());
                let mut upper = false;
                for c in method.chars() {
                    match c {
                        '_' => upper = true,
                        c if upper => {
                            out.push(c.to_ascii_uppercase());
                            upper = false;
                        }
                        c => out.push(c),
                    }
                }
                out
            }
        }
    }
}

/// What a role needs of a host object: its name in messages, the methods it must have and
/// those it may have.
#[derive(Debug, PartialEq, Eq)]
pub struct Role {
    pub name: &'static str,
    pub required: &'static [&'static str],
    pub optional: &'static [&'static str],
}

pub const TRANSPORT: Role = Role {
    name: "transport",
    required: &["send"],
    optional: &[],
};
pub const CLOCK: Role = Role {
    name: "clock",
    required: &["now_ms"],
    optional: &[],
};
pub const ID_CLOCK: Role = Role {
    name: "clock",
    required: &["wall_ms", "monotonic_ms", "sleep_until"],
    optional: &[],
};
pub const LEASE: Role = Role {
    name: "lease",
    required: &["acquire", "renew", "release"],
    optional: &[],
};
pub const STORE: Role = Role {
    name: "store",
    required: &["append", "save_snapshot", "load"],
    optional: &[],
};
pub const ENTITY_HOST: Role = Role {
    name: "entity host",
    required: &["start_shard", "deliver", "stop_shard"],
    optional: &["start_entities", "undeliverable", "stopped"],
};

impl Role {
    /// INVALID_ARGUMENT naming (as `spelling` writes it) the first required method `has` says
    /// is missing.
    pub fn check(
        &self,
        spelling: Spelling,
        has: impl Fn(&str) -> bool,
    ) -> std::result::Result<(), Failure> {
        match self.required.iter().find(|m| !has(m)) {
            Some(m) => Err(Failure::invalid_argument(format!(
                "the {} has no {} method",
                self.name,
                spelling.spell(m)
            ))),
            None => Ok(()),
        }
    }
}

/// A host object in one role; made by the functions below.
pub struct Adapter<H> {
    role: &'static Role,
    host: H,
}

impl<H: HostObject> Adapter<H> {
    fn call(&self, method: &str, args: Vec<Tree>) -> Result<Tree> {
        self.host
            .call(method, args)
            .map_err(|f| self.blame(method, f))
    }

    /// Calls and reads the answer as `T` (the answer forms `expected` describes).
    fn ask<T: DeserializeOwned>(&self, method: &str, args: Vec<Tree>, expected: &str) -> Result<T> {
        self.answer(method, args, expected)
            .map_err(|f| self.host.keep(f))
    }

    /// As `ask`, handing the failure (blamed on the method) back instead of keeping it.
    fn answer<T: DeserializeOwned>(
        &self,
        method: &str,
        args: Vec<Tree>,
        expected: &str,
    ) -> std::result::Result<T, Failure> {
        let answer = self
            .host
            .call(method, args)
            .map_err(|f| self.blamed(method, f))?;
        read_answer(self.role, method, self.host.spelling(), &answer, expected)
    }

    fn blamed(&self, method: &str, f: Failure) -> Failure {
        blamed(self.role, method, self.host.spelling(), f)
    }

    fn blame(&self, method: &str, f: Failure) -> shardline_core::Error {
        self.host.keep(self.blamed(method, f))
    }

    fn optional(&self, method: &str, args: impl FnOnce() -> Result<Vec<Tree>>) -> Result<()> {
        if self.host.has(method) {
            self.call(method, args()?)?;
        }
        Ok(())
    }
}

/// `f` as the failure of `role`'s `method` ("the store's append returned 7; ...").
fn blamed(role: &Role, method: &str, spelling: Spelling, f: Failure) -> Failure {
    Failure::new(
        f.status,
        format!(
            "the {}'s {} {}",
            role.name,
            spelling.spell(method),
            f.message
        ),
    )
}

/// A host's answer read as `T`, or CALLBACK_FAILED saying what came and what was expected.
fn read_answer<T: DeserializeOwned>(
    role: &Role,
    method: &str,
    spelling: Spelling,
    answer: &Tree,
    expected: &str,
) -> std::result::Result<T, Failure> {
    answer.deserialized().map_err(|_| {
        let got = format!("returned {}; expected {expected}", shown(answer));
        blamed(role, method, spelling, Failure::callback_failed(got))
    })
}

/// An answer as a message shows it: scalars as JSON writes them, containers by kind.
fn shown(answer: &Tree) -> String {
    match answer {
        Tree::Null => "null".into(),
        Tree::Bool(b) => b.to_string(),
        Tree::Integer(i) => i128::from(*i).to_string(),
        Tree::Float(f) => f.to_string(),
        Tree::Text(s) => format!("{s:?}"),
        Tree::Bytes(_) => "bytes".into(),
        Tree::Array(_) => "a list".into(),
        Tree::Map(_) => "an object".into(),
        _ => format!("{answer:?}"),
    }
}

const MILLISECONDS: &str = "milliseconds (an integer >= 0)";

fn tree<T: serde::Serialize + ?Sized>(v: &T) -> Result<Tree> {
    to_tree(v)
}

fn token(t: FencingToken) -> Tree {
    Tree::Integer(t.0.into())
}

fn text(s: &str) -> Tree {
    Tree::Text(s.to_owned())
}

/// A transport: `send(envelope)`.
pub fn transport<H: HostObject + 'static>(host: H) -> Box<dyn Transport> {
    Box::new(Adapter {
        role: &TRANSPORT,
        host,
    })
}

impl<H: HostObject> Transport for Adapter<H> {
    fn send(&mut self, envelope: Envelope) -> Result<()> {
        self.call("send", vec![tree(&envelope)?]).map(drop)
    }
}

/// A clock: `now_ms()` answers milliseconds. When it fails (or answers something else) the
/// failure goes to the caller and the driver sees the last good reading: the machines never
/// let time go backwards anyway, and a clock has no way to report an error to the core.
pub fn clock<H: HostObject + 'static>(host: H) -> Box<dyn Clock> {
    Box::new(DriverClock {
        adapter: Adapter { role: &CLOCK, host },
        last: AtomicU64::new(0),
    })
}

struct DriverClock<H> {
    adapter: Adapter<H>,
    last: AtomicU64,
}

impl<H: HostObject> Clock for DriverClock<H> {
    fn now_ms(&self) -> u64 {
        match self.adapter.ask::<u64>("now_ms", vec![], MILLISECONDS) {
            Ok(t) => {
                self.last.fetch_max(t, Ordering::Relaxed);
                t
            }
            Err(_) => self.last.load(Ordering::Relaxed),
        }
    }
}

/// A lease: `acquire(now_ms)` answers nothing (held elsewhere), `[token, valid_until_ms]` or
/// a grant object; `renew(token, now_ms)` nothing (lost) or the new deadline;
/// `release(token)`.
pub fn lease<H: HostObject + 'static>(host: H) -> Box<dyn Lease> {
    Box::new(Adapter { role: &LEASE, host })
}

#[derive(Deserialize)]
#[serde(untagged)]
enum GrantAnswer {
    Pair(u64, u64),
    Grant(LeaseGrant),
}

const GRANT_ANSWER: &str = "None or null (not granted), [token, valid_until_ms] or a grant object";
const RENEW_ANSWER: &str = "None or null (lost), or the new valid_until_ms";
const WRITE_ANSWER: &str =
    "True (written), False (fenced), None or null (written) or a write-outcome object";
const LOAD_ANSWER: &str = "None or null (nothing stored) or {snapshot, events}";

impl GrantAnswer {
    fn grant(self) -> LeaseGrant {
        match self {
            GrantAnswer::Pair(token, valid_until_ms) => LeaseGrant {
                token: FencingToken(token),
                valid_until_ms,
            },
            GrantAnswer::Grant(g) => g,
        }
    }
}

impl<H: HostObject> Lease for Adapter<H> {
    fn acquire(&mut self, now_ms: u64) -> Result<Option<LeaseGrant>> {
        let answer: Option<GrantAnswer> =
            self.ask("acquire", vec![Tree::Integer(now_ms.into())], GRANT_ANSWER)?;
        Ok(answer.map(GrantAnswer::grant))
    }

    fn renew(&mut self, t: FencingToken, now_ms: u64) -> Result<Option<u64>> {
        self.ask(
            "renew",
            vec![token(t), Tree::Integer(now_ms.into())],
            RENEW_ANSWER,
        )
    }

    fn release(&mut self, t: FencingToken) -> Result<()> {
        self.call("release", vec![token(t)]).map(drop)
    }
}

/// A store: `append(token, record)` and `save_snapshot(token, snapshot)` answer nothing or
/// true (written), false (fenced) or a write-outcome object; `load(token)` nothing or the
/// stored state.
pub fn store<H: HostObject + 'static>(host: H) -> Box<dyn Store> {
    Box::new(Adapter { role: &STORE, host })
}

#[derive(Deserialize)]
#[serde(untagged)]
enum WriteAnswer {
    Written(bool),
    Outcome(WriteOutcome),
}

impl WriteAnswer {
    /// `None`: written; `Some(highest)`: fenced, by `highest` when the answer says.
    fn fenced(answer: Option<WriteAnswer>) -> Option<Option<FencingToken>> {
        match answer {
            None | Some(WriteAnswer::Written(true)) => None,
            Some(WriteAnswer::Outcome(WriteOutcome::Written)) => None,
            Some(WriteAnswer::Written(false)) => Some(None),
            Some(WriteAnswer::Outcome(WriteOutcome::Fenced { highest })) => Some(Some(highest)),
        }
    }
}

impl<H: HostObject> Adapter<H> {
    fn write(&self, method: &str, t: FencingToken, value: Tree) -> Result<WriteOutcome> {
        let answer: Option<WriteAnswer> = self.ask(method, vec![token(t), value], WRITE_ANSWER)?;
        Ok(match WriteAnswer::fenced(answer) {
            None => WriteOutcome::Written,
            // The driver only needs to know it was fenced, not by whom.
            Some(highest) => WriteOutcome::Fenced {
                highest: highest.unwrap_or(t),
            },
        })
    }
}

impl<H: HostObject> Store for Adapter<H> {
    fn append(&mut self, t: FencingToken, record: &Record) -> Result<WriteOutcome> {
        self.write("append", t, tree(record)?)
    }

    fn save_snapshot(&mut self, t: FencingToken, snapshot: &Snapshot) -> Result<WriteOutcome> {
        self.write("save_snapshot", t, tree(snapshot)?)
    }

    fn load(&mut self, t: FencingToken) -> Result<Option<StoredState>> {
        self.ask("load", vec![token(t)], LOAD_ANSWER)
    }
}

/// An entity host: `start_shard(shard, entities)`, `deliver(shard, entity, payload)`,
/// `stop_shard(shard)` (nothing or true: stopped; false: not yet); optionally
/// `start_entities(shard, entities)` (else `start_shard` gets them),
/// `undeliverable(shard, entity, payload, reason)` and `stopped()`.
pub fn entity_host<H: HostObject + 'static>(host: H) -> Box<dyn EntityHost> {
    Box::new(Adapter {
        role: &ENTITY_HOST,
        host,
    })
}

fn shard_entities(shard: &str, entities: &[EntityId]) -> Vec<Tree> {
    vec![
        text(shard),
        Tree::Array(entities.iter().map(|e| text(e)).collect()),
    ]
}

impl<H: HostObject> EntityHost for Adapter<H> {
    fn start_shard(&mut self, shard: &str, entities: &[EntityId]) -> Result<()> {
        self.call("start_shard", shard_entities(shard, entities))
            .map(drop)
    }

    fn start_entities(&mut self, shard: &str, entities: &[EntityId]) -> Result<()> {
        let method = if self.host.has("start_entities") {
            "start_entities"
        } else {
            "start_shard"
        };
        self.call(method, shard_entities(shard, entities)).map(drop)
    }

    fn deliver(&mut self, shard: &str, entity: &str, payload: Payload) -> Result<()> {
        let args = vec![text(shard), text(entity), Tree::Bytes(payload)];
        self.call("deliver", args).map(drop)
    }

    fn stop_shard(&mut self, shard: &str) -> Result<bool> {
        let answer: Option<bool> = self.ask(
            "stop_shard",
            vec![text(shard)],
            "True (stopped), False (not yet) or None or null (stopped)",
        )?;
        Ok(answer.unwrap_or(true))
    }

    fn undeliverable(
        &mut self,
        shard: &str,
        entity: &str,
        payload: Payload,
        reason: &str,
    ) -> Result<()> {
        self.optional("undeliverable", || {
            Ok(vec![
                text(shard),
                text(entity),
                Tree::Bytes(payload),
                text(reason),
            ])
        })
    }

    fn stopped(&mut self) -> Result<()> {
        self.optional("stopped", || Ok(vec![]))
    }
}

/// A host call an asynchronous driver makes for a pipeline operation: the same method, with
/// the same arguments, the synchronous adapters call.
#[derive(Debug, Clone, PartialEq)]
pub struct HostCall {
    pub role: &'static Role,
    pub method: &'static str,
    pub args: Vec<Tree>,
}

/// The role and method that carry out an operation of kind `pending`.
fn role_method(pending: Pending) -> (&'static Role, &'static str) {
    match pending {
        Pending::Send => (&TRANSPORT, "send"),
        Pending::Append => (&STORE, "append"),
        Pending::SaveSnapshot => (&STORE, "save_snapshot"),
        Pending::Load => (&STORE, "load"),
        Pending::Acquire => (&LEASE, "acquire"),
        Pending::Renew(_) => (&LEASE, "renew"),
        Pending::Release => (&LEASE, "release"),
    }
}

impl HostCall {
    /// The call carrying out `op` at `now_ms`.
    pub fn of(op: &Operation, now_ms: u64) -> Result<HostCall> {
        let now = || Tree::Integer(now_ms.into());
        let args = match op {
            Operation::Send { envelope } => vec![tree(envelope)?],
            Operation::Append { token: t, record } => vec![token(*t), tree(record)?],
            Operation::SaveSnapshot { token: t, snapshot } => vec![token(*t), tree(snapshot)?],
            Operation::Load { token: t } | Operation::Release { token: t } => vec![token(*t)],
            Operation::Acquire => vec![now()],
            Operation::Renew { token: t } => vec![token(*t), now()],
        };
        let (role, method) = role_method(Pending::of(op));
        Ok(HostCall { role, method, args })
    }
}

/// The host's answer to the call of an operation of kind `pending`, as its completion, read
/// by the rules of the synchronous adapters; CALLBACK_FAILED (naming role, method and what
/// came) when it does not fit.
pub fn completion(
    pending: Pending,
    answer: &Tree,
    spelling: Spelling,
) -> std::result::Result<Completion, Failure> {
    fn read<T: DeserializeOwned>(
        pending: Pending,
        answer: &Tree,
        spelling: Spelling,
        expected: &str,
    ) -> std::result::Result<T, Failure> {
        let (role, method) = role_method(pending);
        read_answer(role, method, spelling, answer, expected)
    }
    Ok(match pending {
        Pending::Send => Completion::Sent,
        Pending::Release => Completion::Released,
        Pending::Append | Pending::SaveSnapshot => {
            match WriteAnswer::fenced(read(pending, answer, spelling, WRITE_ANSWER)?) {
                None => Completion::Written,
                Some(highest) => Completion::Fenced { highest },
            }
        }
        Pending::Load => Completion::loaded(read(pending, answer, spelling, LOAD_ANSWER)?),
        Pending::Acquire => {
            let grant: Option<GrantAnswer> = read(pending, answer, spelling, GRANT_ANSWER)?;
            Completion::acquired(grant.map(GrantAnswer::grant))
        }
        Pending::Renew(_) => Completion::renewed(read(pending, answer, spelling, RENEW_ANSWER)?),
    })
}

/// The worker-id holder's clocks: `wall_ms()` and `monotonic_ms()` answer milliseconds,
/// `sleep_until(monotonic_ms)` waits. What a failure means is `ids::IdClock`'s rule.
pub fn id_clock<H: HostObject>(host: H) -> Adapter<H> {
    Adapter {
        role: &ID_CLOCK,
        host,
    }
}

impl<H: HostObject> HostClock for Adapter<H> {
    fn wall_ms(&mut self) -> std::result::Result<u64, Failure> {
        self.answer("wall_ms", vec![], MILLISECONDS)
    }

    fn monotonic_ms(&mut self) -> std::result::Result<u64, Failure> {
        self.answer("monotonic_ms", vec![], MILLISECONDS)
    }

    fn sleep_until(&mut self, monotonic_ms: u64) -> std::result::Result<(), Failure> {
        let args = vec![Tree::Integer(monotonic_ms.into())];
        self.host
            .call("sleep_until", args)
            .map(drop)
            .map_err(|f| self.blamed("sleep_until", f))
    }

    fn keep(&mut self, failure: Failure) {
        self.host.keep(failure);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    type Calls = Arc<Mutex<Vec<(String, Vec<Tree>)>>>;

    /// A host answering from a script, recording calls and kept failures.
    #[derive(Clone, Default)]
    struct Scripted {
        answers: Arc<Mutex<Vec<std::result::Result<Tree, Failure>>>>,
        calls: Calls,
        kept: Arc<Mutex<Vec<Failure>>>,
        methods: Vec<&'static str>,
    }

    impl HostObject for Scripted {
        fn call(&self, method: &str, args: Vec<Tree>) -> std::result::Result<Tree, Failure> {
            self.calls.lock().unwrap().push((method.to_owned(), args));
            self.answers.lock().unwrap().remove(0)
        }
        fn has(&self, method: &str) -> bool {
            self.methods.contains(&method)
        }
        fn keep(&self, failure: Failure) -> shardline_core::Error {
            let core = failure.to_core();
            self.kept.lock().unwrap().push(failure);
            core
        }
    }

    fn answering(answers: Vec<std::result::Result<Tree, Failure>>) -> Scripted {
        Scripted {
            answers: Arc::new(Mutex::new(answers)),
            ..Scripted::default()
        }
    }

    fn int(i: u64) -> Tree {
        Tree::Integer(i.into())
    }

    #[test]
    fn a_failing_clock_answers_its_last_good_reading_and_keeps_the_failure() {
        let host = answering(vec![
            Ok(int(50)),
            Err(Failure::callback_failed("raised: boom")),
            Ok(text("soon")),
        ]);
        let c = clock(host.clone());
        assert_eq!(c.now_ms(), 50);
        assert_eq!(c.now_ms(), 50);
        assert_eq!(c.now_ms(), 50);
        let kept = host.kept.lock().unwrap();
        assert_eq!(kept[0].message, "the clock's now_ms raised: boom");
        assert!(
            kept[1].message.contains("returned \"soon\""),
            "{}",
            kept[1].message
        );
    }

    #[test]
    fn lease_answers_are_read_in_every_form_and_a_bad_one_is_callback_failed() {
        let grant = Tree::Map(vec![
            (text("token"), int(7)),
            (text("validUntilMs"), int(900)),
        ]);
        let host = answering(vec![
            Ok(Tree::Null),
            Ok(Tree::Array(vec![int(5), int(100)])),
            Ok(grant),
            Ok(text("yes")),
        ]);
        let mut l = lease(host.clone());
        assert_eq!(l.acquire(1).unwrap(), None);
        assert_eq!(l.acquire(1).unwrap().unwrap().token, FencingToken(5));
        assert_eq!(l.acquire(1).unwrap().unwrap().valid_until_ms, 900);
        assert!(l.acquire(1).is_err());
        let kept = host.kept.lock().unwrap();
        assert_eq!(kept[0].status, crate::Status::CallbackFailed);
        assert!(kept[0]
            .message
            .starts_with("the lease's acquire returned \"yes\""));
    }

    #[test]
    fn store_writes_read_booleans_as_written_or_fenced() {
        let host = answering(vec![Ok(Tree::Bool(false)), Ok(Tree::Null)]);
        let mut s = store(host);
        let snapshot = Snapshot::default();
        assert_eq!(
            s.save_snapshot(FencingToken(3), &snapshot).unwrap(),
            WriteOutcome::Fenced {
                highest: FencingToken(3)
            }
        );
        assert_eq!(
            s.save_snapshot(FencingToken(3), &snapshot).unwrap(),
            WriteOutcome::Written
        );
    }

    #[test]
    fn entity_host_optional_methods_and_payload_bytes() {
        let mut host = answering(vec![Ok(Tree::Null), Ok(Tree::Null), Ok(Tree::Bool(false))]);
        host.methods = vec!["start_shard", "deliver", "stop_shard"];
        let mut h = entity_host(host.clone());
        h.start_entities("s", &["e".into()]).unwrap();
        h.deliver("s", "e", b"hi".to_vec()).unwrap();
        h.undeliverable("s", "e", vec![], "gone").unwrap();
        h.stopped().unwrap();
        assert!(!h.stop_shard("s").unwrap());
        let calls = host.calls.lock().unwrap();
        let names: Vec<_> = calls.iter().map(|(m, _)| m.as_str()).collect();
        assert_eq!(names, ["start_shard", "deliver", "stop_shard"]);
        assert_eq!(calls[1].1[2], Tree::Bytes(b"hi".to_vec()));
    }

    #[test]
    fn id_clock_failures_are_blamed_and_left_to_the_id_clock_rule() {
        let host = answering(vec![Ok(int(5)), Err(Failure::callback_failed("raised: x"))]);
        let mut c = id_clock(host.clone());
        assert_eq!(c.wall_ms().unwrap(), 5);
        let f = c.monotonic_ms().unwrap_err();
        assert_eq!(f.message, "the clock's monotonic_ms raised: x");
        assert!(host.kept.lock().unwrap().is_empty());
    }

    #[test]
    fn a_missing_required_method_is_named() {
        let err = ENTITY_HOST
            .check(Spelling::Snake, |m| m != "deliver")
            .unwrap_err();
        assert_eq!(err.status, crate::Status::InvalidArgument);
        assert_eq!(err.message, "the entity host has no deliver method");
        assert!(TRANSPORT.check(Spelling::Snake, |m| m == "send").is_ok());
        let err = ENTITY_HOST
            .check(Spelling::Camel, |m| m != "stop_shard")
            .unwrap_err();
        assert_eq!(err.message, "the entity host has no stopShard method");
    }

    #[test]
    fn camel_spelling_joins_words() {
        assert_eq!(Spelling::Camel.spell("save_snapshot"), "saveSnapshot");
        assert_eq!(Spelling::Camel.spell("now_ms"), "nowMs");
        assert_eq!(Spelling::Camel.spell("send"), "send");
        assert_eq!(Spelling::Snake.spell("now_ms"), "now_ms");
    }

    #[test]
    fn async_calls_are_the_synchronous_calls_and_answers_read_the_same() {
        let t = FencingToken(3);
        let call = HostCall::of(&Operation::Renew { token: t }, 40).unwrap();
        assert_eq!((call.role.name, call.method), ("lease", "renew"));
        assert_eq!(
            call.args,
            vec![Tree::Integer(3.into()), Tree::Integer(40.into())]
        );
        let renew = Pending::Renew(t);
        let renewed = completion(renew, &Tree::Integer(90.into()), Spelling::Snake).unwrap();
        assert_eq!(renewed, Completion::renewed(Some(90)));
        assert_eq!(
            completion(renew, &Tree::Null, Spelling::Snake),
            Ok(Completion::Lost)
        );
        let pair = Tree::Array(vec![Tree::Integer(5.into()), Tree::Integer(100.into())]);
        assert_eq!(
            completion(Pending::Acquire, &pair, Spelling::Snake),
            Ok(Completion::Granted(LeaseGrant {
                token: FencingToken(5),
                valid_until_ms: 100
            }))
        );
        let load = HostCall::of(&Operation::Load { token: t }, 0).unwrap();
        assert_eq!((load.role.name, load.method), ("store", "load"));
        assert_eq!(
            completion(Pending::Load, &Tree::Null, Spelling::Snake),
            Ok(Completion::Fenced { highest: None })
        );
        assert_eq!(
            completion(Pending::SaveSnapshot, &Tree::Bool(false), Spelling::Snake),
            Ok(Completion::Fenced { highest: None })
        );
        let bad = completion(
            Pending::SaveSnapshot,
            &Tree::Text("yes".into()),
            Spelling::Camel,
        )
        .unwrap_err();
        assert_eq!(bad.status, crate::Status::CallbackFailed);
        assert!(
            bad.message
                .starts_with("the store's saveSnapshot returned \"yes\"; expected True"),
            "{}",
            bad.message
        );
    }
}
