//! What scenarios and chaos do to the cluster: nodes join, leave, crash and flap;
//! coordinators crash; the lease expires; clocks jump.

use crate::coordinator::CoordinatorInput;
use crate::model::Address;
use crate::model::Version;
use crate::model::{Member, MemberStatus};
use crate::protocol::{Endpoint, Message};
use crate::region::RegionInput;
use crate::replay::{CoordinatorStep, RegionStep};

use super::super::clock::Proc;
use super::{node_address, Event, NodeSlot, NodeState, World};

/// How long a leaving node waits for its outbound entity messages to be delivered.
const FLUSH_TIMEOUT_MS: u64 = 10_000;

impl World {
    pub(super) fn add_node_quietly(&mut self, version: Version) -> usize {
        let i = self.nodes.len();
        self.nodes.push(NodeSlot {
            address: node_address(i),
            zone: i % self.cfg.zones.max(1),
            version,
            incarnation: 0,
            state: NodeState::Gone,
            member: None,
            unreachable: false,
            region: None,
            dead_region: None,
        });
        self.series.nodes.push(format!("n{i}"));
        self.join(i);
        i
    }

    /// The node joins the cluster (Joining, then Up a moment later, when its region starts).
    pub(super) fn join(&mut self, i: usize) {
        let address = Address::parse(&self.nodes[i].address).expect("sim addresses parse");
        let mut m = Member::new(address);
        m.status = MemberStatus::Joining;
        m.app_version = self.nodes[i].version.clone();
        m.up_number = self.next_up_number;
        self.next_up_number += 1;
        let n = &mut self.nodes[i];
        n.state = NodeState::Joining;
        n.unreachable = false;
        n.member = Some(m.clone());
        let inc = n.incarnation;
        self.clocks.reset(Proc::Node(i));
        self.member_event(CoordinatorInput::Member(Box::new(m)));
        let at = self.now + self.rng.range(200, 800);
        self.agenda.push(
            at,
            Event::MemberUp {
                node: i,
                incarnation: inc,
            },
        );
    }

    pub(super) fn member_event(&mut self, input: CoordinatorInput) {
        self.membership_gen += 1;
        for k in 0..self.coords.len() {
            if self.coords[k].driver.is_some() {
                self.coordinator_do(k, CoordinatorStep::Input(input.clone()));
            }
        }
    }

    pub(super) fn set_member_status(&mut self, i: usize, status: MemberStatus) {
        let Some(m) = self.nodes[i].member.as_mut() else {
            return;
        };
        m.status = status;
        let m = m.clone();
        self.member_event(CoordinatorInput::Member(Box::new(m)));
    }

    /// Marks a disruption: convergence is measured from the last one.
    pub fn mark(&mut self, label: &str) {
        self.last_action = self.now;
        self.rounds_since_action = 0;
        self.series.events.push((self.now, label.to_owned()));
    }

    pub fn set_faults(&mut self, on: bool) {
        self.net.set_active(on);
        let chaos = on && self.cfg.chaos;
        if chaos && !self.chaos_on {
            let at = self.now + self.chaos_rng.range(1_000, 10_000);
            self.agenda.push(at, Event::Chaos);
        }
        self.chaos_on = chaos;
        if !on {
            let mut host = self.host.lock();
            host.store_fail_armed = None;
            host.renew_fail_armed = false;
        }
    }

    pub fn set_traffic(&mut self, on: bool) {
        if on && !self.traffic_on {
            self.agenda.push(self.now + 1, Event::Traffic);
        }
        self.traffic_on = on;
    }

    pub fn add_nodes(&mut self, count: usize, version: &Version) -> Vec<usize> {
        (0..count)
            .map(|_| self.add_node_quietly(version.clone()))
            .collect()
    }

    /// A node that left comes back as a new incarnation (new region id), possibly upgraded.
    pub fn rejoin(&mut self, node: usize, version: Version) {
        self.trace(
            "action",
            &format!("n{node} rejoins, version {}", version.as_str()),
        );
        if self.nodes[node].state != NodeState::Gone {
            return;
        }
        self.nodes[node].incarnation += 1;
        self.nodes[node].version = version;
        self.join(node);
    }

    /// Graceful leave: the member starts leaving and its region hands every shard off.
    pub fn leave(&mut self, node: usize) {
        self.trace("action", &format!("n{node} leaves"));
        if self.nodes[node].state != NodeState::Up {
            return;
        }
        self.nodes[node].state = NodeState::Leaving;
        self.set_member_status(node, MemberStatus::Leaving);
        if let Some(id) = self.nodes[node].region.clone() {
            if let Some(s) = self.regions.get_mut(&id) {
                s.leaving = true;
            }
            self.region_do(&id, RegionStep::Input(RegionInput::GracefulShutdown));
        }
    }

    /// The nodes die at once; the failure detector notices a second later and the downing
    /// provider removes them a few seconds after that.
    pub fn crash(&mut self, nodes: &[usize]) {
        self.trace("action", &format!("crash {nodes:?}"));
        let nodes: Vec<usize> = nodes
            .iter()
            .copied()
            .filter(|n| matches!(self.nodes[*n].state, NodeState::Up | NodeState::Leaving))
            .collect();
        for &node in &nodes {
            self.injected.region_crashes += 1;
            self.nodes[node].state = NodeState::Crashed;
            if let Some(id) = self.nodes[node].region.take() {
                if let Some(slot) = self.regions.remove(&id) {
                    self.checker.region_gone(self.now, slot.key);
                    self.checker.region_crashed(slot.key);
                    self.end_recording(&id);
                }
                self.gone.insert(id.clone(), true);
                self.nodes[node].dead_region = Some(id);
            }
            let incarnation = self.nodes[node].incarnation;
            let detect = self.now + self.rng.range(500, 1_500);
            self.agenda.push(
                detect,
                Event::Reachability {
                    node,
                    reachable: false,
                },
            );
            let removed = detect + self.rng.range(2_000, 4_000);
            self.agenda
                .push(removed, Event::Removed { node, incarnation });
        }
    }

    pub(super) fn removed(&mut self, node: usize, incarnation: u32) {
        self.trace(
            "action",
            &format!("n{node} (incarnation {incarnation}) removed"),
        );
        if self.nodes[node].incarnation != incarnation
            || matches!(self.nodes[node].state, NodeState::Gone)
        {
            return;
        }
        // A node that left gracefully flushes its outbound entity messages first, for up to
        // FLUSH_TIMEOUT_MS (Pekko Artery's shutdown flush), as a cut-off peer may hold them.
        let leaving = self.nodes[node].region.as_ref().and_then(|id| {
            let done = self.regions.get(id)?.done?;
            Some((id.clone(), done))
        });
        if let Some((id, done)) = leaving {
            let unflushed = self.agenda.iter().any(|e| {
                matches!(e, Event::Deliver { env, .. }
                    if matches!(&env.from, Endpoint::Region(r) if **r == *id)
                        && matches!(env.message, Message::Forward(_)))
            });
            if unflushed && self.now < done + FLUSH_TIMEOUT_MS {
                self.agenda
                    .push(self.now + 200, Event::Removed { node, incarnation });
                return;
            }
        }
        self.nodes[node].state = NodeState::Gone;
        self.nodes[node].member = None;
        self.nodes[node].unreachable = false;
        let address = self.nodes[node].address.clone();
        self.member_event(CoordinatorInput::MemberRemoved { address });
        let old = self.nodes[node].region.take();
        let terminated: Option<String> = match old {
            Some(id) => {
                if let Some(slot) = self.regions.remove(&id) {
                    self.checker.region_gone(self.now, slot.key);
                    if slot.region().buffered() > 0 || !slot.region().local_shards().is_empty() {
                        self.checker.violate(
                            self.now,
                            "left-with-work",
                            format!("{id} left the cluster still holding shards or messages"),
                        );
                    }
                    self.checker.region_left(self.now, slot.key);
                    self.end_recording(&id);
                }
                self.gone.insert(id.clone(), false);
                Some(id)
            }
            None => self.nodes[node].dead_region.take(),
        };
        if let Some(id) = terminated {
            self.quarantined.insert(id.clone());
            self.terminated(&id);
        }
    }

    /// The node cannot talk to anyone for `ms`; the failure detector flags it meanwhile.
    pub fn flap(&mut self, node: usize, ms: u64) {
        self.trace("action", &format!("n{node} cut off for {ms} ms"));
        if self.nodes[node].state != NodeState::Up {
            return;
        }
        self.injected.flaps += 1;
        self.net.cut(node, self.now + ms);
        self.agenda.push(
            self.now + ms.min(300),
            Event::Reachability {
                node,
                reachable: false,
            },
        );
        self.agenda.push(
            self.now + ms,
            Event::Reachability {
                node,
                reachable: true,
            },
        );
    }

    /// The coordinator's process dies without releasing the lease; it restarts later as a
    /// fresh process that has to win the lease and read the store like any other.
    pub fn crash_coordinator(&mut self, k: usize, restart_after_ms: u64) {
        self.trace(
            "action",
            &format!("c{k} crashes, restarts in {restart_after_ms} ms"),
        );
        let Some(c) = self.coords[k].c() else {
            return;
        };
        self.injected.coordinator_crashes += 1;
        if c.is_active() {
            self.failover_pending = true;
            self.failover_probe = if c.state().seq() == self.reference.seq() {
                self.decisions(c.allocation(), c.state().seq())
            } else {
                None
            };
        }
        if self.coords[k].driver.take().is_some() {
            if let Some(r) = self.host.lock().recorder.as_mut() {
                r.end(&self.coords[k].name);
            }
        }
        self.coords[k].check_restore = false;
        self.agenda
            .push(self.now + restart_after_ms, Event::CoordinatorRestart { k });
    }

    /// The lease backend forgets its holder before the holder notices (a session expiring
    /// server-side): until its next renewal the old holder still believes it holds the lease.
    pub fn expire_lease(&mut self) {
        self.trace("action", &"the lease backend forgets its holder");
        self.injected.lease_expiries += 1;
        self.model_broken = true;
        self.lease.expire_now();
    }

    pub fn jump_clock(&mut self, p: Proc, delta_ms: i64) {
        self.trace("action", &format!("{p:?} clock jumps {delta_ms} ms"));
        self.injected.clock_jumps += 1;
        if delta_ms < 0 && matches!(p, Proc::Coordinator(_)) {
            self.model_broken = true;
        }
        self.clocks.jump(p, delta_ms);
    }

    pub(super) fn chaos(&mut self) {
        let up: Vec<usize> = (0..self.nodes.len())
            .filter(|n| self.nodes[*n].state == NodeState::Up)
            .collect();
        match self.chaos_rng.below(7) {
            0 => {
                let k = self.chaos_rng.below(self.coords.len() as u64) as usize;
                let delta = self.chaos_rng.range(1_000, 20_000) as i64;
                let delta = if self.chaos_rng.chance(0.5) {
                    -delta
                } else {
                    delta
                };
                self.jump_clock(Proc::Coordinator(k), delta);
            }
            1 => {
                if let Some(&n) = self.chaos_rng.pick(&up) {
                    let delta = self.chaos_rng.range(1_000, 20_000) as i64;
                    let delta = if self.chaos_rng.chance(0.5) {
                        -delta
                    } else {
                        delta
                    };
                    self.jump_clock(Proc::Node(n), delta);
                }
            }
            2 => self.expire_lease(),
            3 => {
                if let Some(k) = self.active_coordinator() {
                    let restart = self.chaos_rng.range(1_000, 15_000);
                    self.crash_coordinator(k, restart);
                }
            }
            4 => {
                // Keep most of the cluster: crash only when more than two nodes are up.
                if up.len() > 2 {
                    let n = *self.chaos_rng.pick(&up).expect("non-empty");
                    self.crash(&[n]);
                    let back = self.now + self.chaos_rng.range(8_000, 20_000);
                    self.agenda.push(back, Event::Rejoin { node: n });
                }
            }
            5 => {
                let after_write = self.chaos_rng.chance(0.5);
                let mut host = self.host.lock();
                host.store_fail_armed = Some(after_write);
                host.renew_fail_armed = true;
            }
            _ => {
                if let Some(&n) = self.chaos_rng.pick(&up) {
                    let ms = self.chaos_rng.range(1_000, 4_000);
                    self.flap(n, ms);
                }
            }
        }
    }

    pub fn node_up(&self, node: usize) -> bool {
        self.nodes[node].state == NodeState::Up
            && self.nodes[node]
                .region
                .as_ref()
                .and_then(|id| self.regions.get(id))
                .is_some_and(|s| s.region().is_registered())
    }

    pub fn node_gone(&self, node: usize) -> bool {
        self.nodes[node].state == NodeState::Gone
    }

    pub fn random_up_node(&mut self) -> Option<usize> {
        let up = self.up_nodes();
        self.rng.pick(&up).copied()
    }

    pub fn restores_checked(&self) -> u64 {
        self.coordinator_stats.restores_checked
    }

    pub fn up_nodes(&self) -> Vec<usize> {
        (0..self.nodes.len())
            .filter(|n| self.nodes[*n].state == NodeState::Up)
            .collect()
    }
}
