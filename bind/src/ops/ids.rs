//! The operations of Snowflake layouts and generators, the in-memory worker-id registry and
//! worker-id holders. Issuing the next id is not among them: it stays a typed native method in
//! every binding, the one call made per id.

use shardline_core::workerid::snowflake::Layout;
use shardline_core::workerid::{InMemoryRegistry, Registry};

use super::{reply, Args, Reply};
use crate::ids::{Generator, Held, HostClock};
use crate::objects::{LayoutSpec, SnowflakeParts, WorkerClaim};

/// `spec` (`{timestampBits, workerBits, sequenceBits, epochMs}`), `worker_count`,
/// `decompose(id)` (`{unixMs, worker, sequence}`).
pub fn layout(l: &Layout, a: Args<'_>) -> Reply {
    match a.op() {
        "spec" => reply(&LayoutSpec::from(l)),
        "worker_count" => reply(&l.worker_count()),
        "decompose" => reply(&SnowflakeParts::from(l.decompose(a.get(0, "id")?))),
        _ => Err(a.unknown()),
    }
}

/// `worker`, `layout` (its spec), `wait_until_ms`, `budget_ms`, `floor_ms`,
/// `last_timestamp_ms` (each null when unset), `extend_budget(ceilingMs)`, `revoke`,
/// `rollback_tolerance(ms)`, `max_fence_wait(ms)`.
pub fn snowflake(g: &mut Generator, a: Args<'_>) -> Reply {
    let s = &mut g.snowflake;
    match a.op() {
        "worker" => reply(&s.worker()),
        "layout" => reply(&LayoutSpec::from(s.layout())),
        "wait_until_ms" => reply(&g.wait_until_ms),
        "budget_ms" => reply(&s.budget_ms()),
        "floor_ms" => reply(&s.floor_ms()),
        "last_timestamp_ms" => reply(&s.last_timestamp_ms()),
        "extend_budget" => reply(&s.extend_budget(a.get(0, "ceilingMs")?)),
        "revoke" => reply(&s.revoke()),
        "rollback_tolerance" => {
            *s = s.clone().with_rollback_tolerance(a.get(0, "toleranceMs")?);
            reply(&())
        }
        "max_fence_wait" => {
            *s = s.clone().with_max_fence_wait(a.get(0, "maxFenceWaitMs")?);
            reply(&())
        }
        _ => Err(a.unknown()),
    }
}

/// `now_ms`, `advance_to(nowMs)` (answers the registry's time after it), `live_claims`
/// (`[{workerId, owner, incarnation, epoch}]` by worker id), `fence(workerId)` (`{epoch,
/// floorMs, hwmMs}` or null).
pub fn registry(r: &InMemoryRegistry, a: Args<'_>) -> Reply {
    match a.op() {
        "now_ms" => reply(&r.now_ms()),
        "advance_to" => {
            r.advance_to(a.get(0, "nowMs")?);
            reply(&r.now_ms())
        }
        "live_claims" => reply(&WorkerClaim::all(r.live_claims())),
        "fence" => reply(&r.fence(a.get(0, "workerId")?)),
        _ => Err(a.unknown()),
    }
}

/// `worker_id`, `epoch`, `floor_ms`, `budget_ms`, `valid_until_ms` (null when none),
/// `layout` (its spec), `maintain` (answers when the next upkeep is due), `hold_until(untilMs)`,
/// `release` (idempotent; the registry session ends with it).
pub fn holder<R: Registry, H: HostClock>(h: &mut Held<R, H>, a: Args<'_>) -> Reply {
    match a.op() {
        "maintain" => reply(&h.maintain()?),
        "hold_until" => reply(&h.hold_until(a.get(0, "untilMs")?)?),
        "release" => reply(&drop(h.release())),
        op => {
            let w = h.holder()?;
            let t = w.tenure();
            match op {
                "worker_id" => reply(&w.worker_id()),
                "epoch" => reply(&w.epoch()),
                "floor_ms" => reply(&t.floor_ms()),
                "budget_ms" => reply(&t.budget_ms()),
                "valid_until_ms" => reply(&t.valid_until_ms()),
                "layout" => reply(&LayoutSpec::from(w.generator().layout())),
                _ => Err(a.unknown()),
            }
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::ids::HolderInit;
    use crate::ops::Tree;
    use crate::Status;
    use shardline_core::workerid::InMemorySession;

    const T0: u64 = 1_767_225_600_000;

    pub(in crate::ops) fn int(v: u64) -> Tree {
        Tree::Integer(v.into())
    }

    /// The value of `name` in a map reply.
    pub(in crate::ops) fn field(t: &Tree, name: &str) -> Tree {
        let map = t.as_map().unwrap();
        map.iter()
            .find(|(k, _)| k.as_text() == Some(name))
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| panic!("no {name} in {t:?}"))
    }

    #[test]
    fn ids_above_two_to_the_53_stay_exact() {
        let l = LayoutSpec {
            worker_bits: 10,
            ..LayoutSpec::default()
        }
        .build()
        .unwrap();
        let mut g = Generator::new(l, 1023, false, None).unwrap();
        // Far enough past the epoch that the id needs all 63 bits.
        let wall = l.epoch_ms() + (1 << 40);
        let id = g.next(wall).unwrap().unwrap();
        assert!(id > 1 << 53, "{id}");
        let parts = layout(&l, Args::new("SnowflakeLayout", "decompose", &[int(id)])).unwrap();
        assert_eq!(field(&parts, "unixMs"), int(wall));
        assert_eq!(field(&parts, "worker"), int(1023));
        let last = snowflake(&mut g, Args::new("Snowflake", "last_timestamp_ms", &[])).unwrap();
        assert_eq!(last, int(wall));
    }

    #[test]
    fn a_generator_answers_its_state_and_takes_settings() {
        let mut g = Generator::new(Layout::default(), 3, true, Some(T0)).unwrap();
        let mut call =
            |op: &str, args: &[Tree]| snowflake(&mut g, Args::new("Snowflake", op, args));
        assert_eq!(call("budget_ms", &[]).unwrap(), Tree::Null);
        assert_eq!(call("floor_ms", &[]).unwrap(), int(T0));
        call("extend_budget", &[int(T0 + 100)]).unwrap();
        assert_eq!(call("budget_ms", &[]).unwrap(), int(T0 + 100));
        let spec = call("layout", &[]).unwrap();
        assert_eq!(field(&spec, "workerBits"), int(10));
        call("rollback_tolerance", &[int(5)]).unwrap();
        let e = call("extend_budget", &[Tree::Text("soon".into())]).unwrap_err();
        assert_eq!(e.status, Status::InvalidArgument);
        assert!(
            e.message.starts_with("Snowflake.extend_budget: ceilingMs "),
            "{}",
            e.message
        );
        call("revoke", &[]).unwrap();
        assert!(g.next(T0 + 10).is_err(), "revoked");
        g.wait_until_ms = Some(7);
        let wait = snowflake(&mut g, Args::new("Snowflake", "wait_until_ms", &[]));
        assert_eq!(wait.unwrap(), int(7));
    }

    #[test]
    fn a_generator_remembers_when_to_ask_again() {
        let l = LayoutSpec {
            sequence_bits: 1,
            ..LayoutSpec::default()
        }
        .build()
        .unwrap();
        let mut g = Generator::new(l, 1, false, None).unwrap();
        assert!(g.next(T0).unwrap().is_some());
        assert!(g.next(T0).unwrap().is_some());
        assert_eq!(g.next(T0).unwrap(), None);
        assert_eq!(g.wait_until_ms, Some(T0 + 1));
        assert!(g.next(T0 + 1).unwrap().is_some());
        assert_eq!(g.wait_until_ms, None);
    }

    /// Time as the test sets it; sleeping moves it.
    struct Fixed(u64);

    impl HostClock for Fixed {
        fn wall_ms(&mut self) -> Result<u64, crate::Failure> {
            Ok(T0 + self.0)
        }
        fn monotonic_ms(&mut self) -> Result<u64, crate::Failure> {
            Ok(self.0)
        }
        fn sleep_until(&mut self, ms: u64) -> Result<(), crate::Failure> {
            self.0 = self.0.max(ms);
            Ok(())
        }
        fn keep(&mut self, _: crate::Failure) {}
    }

    fn init(owner: &str) -> HolderInit {
        let doc = serde_json::json!({"owner": owner, "incarnation": 1, "workerBits": 2});
        serde_json::from_value(doc).unwrap()
    }

    #[test]
    fn holders_and_the_registry_answer_by_name() {
        let r = InMemoryRegistry::new();
        let (options, ttl) = init("a").options().unwrap();
        assert_eq!(ttl, 10_000);
        let mut h: Held<InMemorySession, Fixed> =
            Held::acquire(r.session(ttl), options, Fixed(0)).unwrap();
        let mut call =
            |op: &str, args: &[Tree]| holder(&mut h, Args::new("WorkerIdHolder", op, args));
        assert_eq!(call("worker_id", &[]).unwrap(), int(0));
        assert_eq!(call("epoch", &[]).unwrap(), int(1));
        assert!(call("valid_until_ms", &[]).unwrap().is_integer());
        call("hold_until", &[int(50)]).unwrap();
        assert!(call("maintain", &[]).unwrap().is_integer());

        let reg = |op: &str, args: &[Tree]| registry(&r, Args::new("WorkerIdRegistry", op, args));
        let claims = reg("live_claims", &[]).unwrap();
        let claim = &claims.as_array().unwrap()[0];
        assert_eq!(field(claim, "workerId"), int(0));
        assert_eq!(field(claim, "owner"), Tree::Text("a".into()));
        assert_eq!(field(&reg("fence", &[int(0)]).unwrap(), "epoch"), int(1));
        assert_eq!(reg("fence", &[int(3)]).unwrap(), Tree::Null);
        assert_eq!(reg("advance_to", &[int(20)]).unwrap(), int(20));
        let e = reg("fence", &[int(1 << 40)]).unwrap_err();
        assert!(
            e.message.starts_with("WorkerIdRegistry.fence: workerId "),
            "{}",
            e.message
        );

        let mut call = |op: &str| holder(&mut h, Args::new("WorkerIdHolder", op, &[]));
        call("release").unwrap();
        call("release").unwrap();
        let e = call("epoch").unwrap_err();
        assert_eq!(e.status, Status::InvalidState);
        assert!(e.message.contains("released"), "{}", e.message);
        assert_eq!(
            registry(&r, Args::new("WorkerIdRegistry", "live_claims", &[])).unwrap(),
            Tree::Array(vec![])
        );
    }

    #[test]
    fn holder_options_are_checked_and_named() {
        let bad: Result<HolderInit, _> =
            serde_json::from_value(serde_json::json!({"owner": "a", "incarnation": -1}));
        assert!(bad.unwrap_err().to_string().contains("-1"));
        let mut i = init("a");
        i.policy = Some("random".into());
        let e = i.options().err().unwrap();
        assert_eq!(e.status, Status::InvalidArgument);
        assert!(e.message.contains("policy"), "{}", e.message);
        let mut i = init("a");
        i.policy = Some("spread:4".into());
        assert!(i.options().is_ok());
        let mut i = init("a");
        i.layout = Some(LayoutSpec {
            worker_bits: 60,
            ..LayoutSpec::default()
        });
        assert!(i.options().is_err());
    }
}
