//! The operations of the embedded backends: the manual clock, the in-memory lease and the
//! in-memory store. Each handle shares its backend with its clones, so what these answer is
//! what a driver given the same object sees.

use shardline_core::coordinator::{Record, Snapshot};
use shardline_core::host::{Clock, InMemoryLease, InMemoryStore, Lease, ManualClock, Store};
use shardline_core::protocol::FencingToken;

use serde::de::DeserializeOwned;

use super::{reply, Args, Reply, Tree};
use crate::objects::LeaseHolder;
use crate::Failure;

/// `now_ms`, `set(nowMs)` (never backwards), `advance(ms)`.
pub fn clock(c: &ManualClock, a: Args<'_>) -> Reply {
    match a.op() {
        "now_ms" => reply(&c.now_ms()),
        "set" => reply(&c.set(a.get(0, "nowMs")?)),
        "advance" => reply(&c.advance(a.get(0, "ms")?)),
        _ => Err(a.unknown()),
    }
}

/// Argument `i`, a stored value or its JSON text (the JVM's `Store` hands records over as text).
fn stored<T: DeserializeOwned>(a: &Args<'_>, i: usize, name: &str) -> Result<T, Failure> {
    match a.get::<Tree>(i, name)? {
        Tree::Text(json) => {
            shardline_core::protocol::json::from_str(&json, name).map_err(Failure::from)
        }
        _ => a.get(i, name),
    }
}

fn token(a: &Args<'_>) -> Result<FencingToken, Failure> {
    a.get(0, "token").map(FencingToken)
}

/// `holder(nowMs)` (`{owner, token}` or null), `expire_now`, and [`lease_calls`].
pub fn lease(l: &InMemoryLease, a: Args<'_>) -> Reply {
    match a.op() {
        "holder" => {
            let h = l.holder(a.get(0, "nowMs")?);
            reply(&h.map(|(owner, t)| LeaseHolder { owner, token: t.0 }))
        }
        "expire_now" => reply(&l.expire_now()),
        _ => lease_calls(&mut l.clone(), a),
    }
}

/// A driver's calls of any lease: `acquire(nowMs)` (`{token, validUntilMs}` or null while
/// another holds it), `renew(token, nowMs)` (the new deadline, or null when the grant is
/// gone), `release(token)`.
pub fn lease_calls(l: &mut dyn Lease, a: Args<'_>) -> Reply {
    match a.op() {
        "acquire" => reply(&l.acquire(a.get(0, "nowMs")?)?),
        "renew" => reply(&l.renew(token(&a)?, a.get(1, "nowMs")?)?),
        "release" => reply(&l.release(token(&a)?)?),
        _ => Err(a.unknown()),
    }
}

/// `contents` (what a load would return, fencing nobody), `highest_token`, and
/// [`store_calls`].
pub fn store(s: &InMemoryStore, a: Args<'_>) -> Reply {
    match a.op() {
        "contents" => reply(&s.contents()),
        "highest_token" => reply(&s.highest_token()),
        _ => store_calls(&mut s.clone(), a),
    }
}

/// A driver's calls of any store: `append(token, record)` and `save_snapshot(token,
/// snapshot)` (each a value or its JSON text; answering `{outcome: "written"}` or
/// `{outcome: "fenced", highest}`), `load(token)` (the stored state, fencing every token below
/// `token`, or null when `token` is fenced).
pub fn store_calls(s: &mut dyn Store, a: Args<'_>) -> Reply {
    match a.op() {
        "append" => {
            let r: Record = stored(&a, 1, "record")?;
            reply(&s.append(token(&a)?, &r)?)
        }
        "save_snapshot" => {
            let snapshot: Snapshot = stored(&a, 1, "snapshot")?;
            reply(&s.save_snapshot(token(&a)?, &snapshot)?)
        }
        "load" => reply(&s.load(token(&a)?)?),
        _ => Err(a.unknown()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::ids::tests::{field, int};
    use crate::ops::Tree;
    use crate::Status;

    fn text(s: &str) -> Tree {
        Tree::Text(s.into())
    }

    #[test]
    fn a_manual_clock_moves_only_forward() {
        let c = ManualClock::new(5);
        let call = |op: &str, args: &[Tree]| clock(&c, Args::new("ManualClock", op, args));
        call("advance", &[int(10)]).unwrap();
        call("set", &[int(3)]).unwrap();
        assert_eq!(call("now_ms", &[]).unwrap(), int(15));
        let e = call("set", &[]).unwrap_err();
        assert_eq!(e.message, "ManualClock.set: nowMs is required");
    }

    #[test]
    fn contenders_share_one_lease() {
        let a = InMemoryLease::new("a", 10_000);
        let b = a.contender("b");
        let on = |l: &InMemoryLease, op: &str, args: &[Tree]| {
            lease(l, Args::new("InMemoryLease", op, args))
        };
        let grant = on(&a, "acquire", &[int(0)]).unwrap();
        assert_eq!(field(&grant, "token"), int(1));
        assert!(field(&grant, "validUntilMs").is_integer());
        assert_eq!(on(&b, "acquire", &[int(1)]).unwrap(), Tree::Null);
        let holder = on(&b, "holder", &[int(1)]).unwrap();
        assert_eq!(field(&holder, "owner"), text("a"));
        assert_eq!(field(&holder, "token"), int(1));
        assert!(on(&a, "renew", &[int(1), int(5)]).unwrap().is_integer());
        on(&a, "release", &[int(1)]).unwrap();
        assert_eq!(on(&b, "holder", &[int(6)]).unwrap(), Tree::Null);
        let e = on(&a, "renew", &[int(1)]).unwrap_err();
        assert_eq!(e.status, Status::NullPointer);
        assert_eq!(e.message, "InMemoryLease.renew: nowMs is required");
    }

    #[test]
    fn a_store_fences_smaller_tokens() {
        let s = InMemoryStore::new();
        let call = |op: &str, args: &[Tree]| store(&s, Args::new("InMemoryStore", op, args));
        let record = crate::tree::to_tree(&Record {
            seq: 1,
            event: shardline_core::coordinator::Event::ShardRegionRegistered {
                region: "r1".into(),
                node: "n1".into(),
            },
        })
        .unwrap();
        assert_eq!(
            call("load", &[int(2)]).unwrap().as_map().map(|m| m.len()),
            Some(2)
        );
        let written = call("append", &[int(2), record.clone()]).unwrap();
        assert_eq!(field(&written, "outcome"), text("written"));
        let fenced = call("append", &[int(1), record]).unwrap();
        assert_eq!(field(&fenced, "outcome"), text("fenced"));
        assert_eq!(field(&fenced, "highest"), int(2));
        assert_eq!(call("load", &[int(1)]).unwrap(), Tree::Null);
        assert_eq!(call("highest_token", &[]).unwrap(), int(2));
        let events = field(&call("contents", &[]).unwrap(), "events");
        assert_eq!(events.as_array().map(Vec::len), Some(1));
        let e = call("append", &[int(3), int(7)]).unwrap_err();
        assert!(
            e.message.starts_with("InMemoryStore.append: record "),
            "{}",
            e.message
        );
        let e = call("append", &[int(3), text("{\"seq\": 2}")]).unwrap_err();
        assert_eq!(e.status, Status::InvalidArgument);
        assert!(e.message.contains("record"), "{}", e.message);
        let json = serde_json::to_string(&Record {
            seq: 2,
            event: shardline_core::coordinator::Event::ShardRegionTerminated {
                region: "r1".into(),
            },
        })
        .unwrap();
        let written = call("append", &[int(3), text(&json)]).unwrap();
        assert_eq!(field(&written, "outcome"), text("written"));
    }
}
