//! The regions' host: entity deliveries, shard stops that take time, undeliverable
//! messages sent back for another try, death watch, and the traffic itself.

use crate::coordinator::CoordinatorInput;
use crate::host::RegionDriver;
use crate::protocol::ShardId;
use crate::region::{Region, RegionInput, ShardExtractor};
use crate::replay::{CoordinatorStep, MachineKind, RegionStep};
use crate::Result;

use super::super::checker::RegionKey;
use super::super::clock::Proc;
use super::hosts::{self, ProcessClock};
use super::{payload_id, Event, NodeState, RegionSlot, World};

/// For traces only.
#[derive(Debug)]
#[allow(dead_code)]
struct ShardStopping<'a> {
    shard: &'a str,
}

impl World {
    pub(super) fn start_region(&mut self, i: usize) {
        let inc = self.nodes[i].incarnation;
        let id = if inc == 0 {
            format!("r{i}")
        } else {
            format!("r{i}.{inc}")
        };
        let extractor =
            ShardExtractor::pekko(self.cfg.shards as i32).expect("shard count is validated");
        let region = Region::new(
            self.cfg.region.clone(),
            &id,
            &self.nodes[i].address,
            extractor,
        )
        .expect("region config is validated");
        if let Some(r) = self.host.lock().recorder.as_mut() {
            r.create(MachineKind::Region, &id, &self.nodes[i].address);
        }
        let key = self.region_keys.len() as RegionKey;
        self.region_keys.insert(id.clone(), key);
        self.checker.name_region(key, &id);
        let clock = ProcessClock::default();
        let shared = &self.host;
        let mut driver = RegionDriver::new(
            region,
            Box::new(hosts::RegionWire {
                shared: shared.clone(),
                region: id.clone(),
            }),
            Box::new(clock.clone()),
            Box::new(hosts::SimEntities {
                shared: shared.clone(),
                region: id.clone(),
            }),
        );
        driver.observe(Box::new(hosts::RegionWatch {
            shared: shared.clone(),
            name: id.clone(),
        }));
        self.regions.insert(
            id.clone(),
            RegionSlot {
                driver,
                clock,
                node: i,
                key,
                leaving: false,
                done: None,
            },
        );
        self.nodes[i].region = Some(id.clone());
        self.region_do(&id, RegionStep::Start);
    }

    pub(super) fn accepting(&self) -> Vec<String> {
        self.regions
            .iter()
            .filter(|(_, s)| s.done.is_none() && self.nodes[s.node].state == NodeState::Up)
            .map(|(id, _)| id.clone())
            .collect()
    }

    pub(super) fn pick_sender(&mut self) -> Option<String> {
        let senders = self.accepting();
        self.traffic_rng.pick(&senders).cloned()
    }

    pub(super) fn traffic(&mut self) {
        let Some(sender) = self.pick_sender() else {
            return;
        };
        let shard = self.traffic_rng.below(u64::from(self.cfg.shards)) as usize;
        let entity = self.traffic_rng.below(self.entities[shard].len() as u64) as usize;
        self.send_message(&sender, shard, entity);
    }

    /// One message sent to the cold-start storm: every shard, within a second.
    pub fn storm(&mut self) {
        for s in 0..self.cfg.shards {
            let at = self.now + self.traffic_rng.range(1, 1_000);
            self.agenda.push(at, Event::Storm { shard: s });
        }
    }

    pub(super) fn send_message(&mut self, sender: &str, shard: usize, entity: usize) {
        let Some(key) = self.regions.get(sender).map(|s| s.key) else {
            return;
        };
        let entity_index = (shard * 8 + entity) as u32;
        let id = self.checker.accepted(self.now, key, entity_index);
        let name = self.entities[shard][entity].clone();
        let shard_id = ShardId::from(shard.to_string());
        let payload = id.to_le_bytes().to_vec();
        let result = self.region_do(
            sender,
            RegionStep::Route {
                shard: shard_id.clone(),
                entity: name.into(),
                payload,
            },
        );
        match result {
            Some(Ok(())) => {
                self.messages.accepted += 1;
                self.requested.insert(shard_id);
            }
            _ => {
                self.checker.unaccept(id);
                self.messages.rejected += 1;
            }
        }
    }

    /// Makes a call on a live region through its driver and carries out what its hosts
    /// were asked to do; None if it is gone.
    pub(super) fn region_do(&mut self, id: &str, step: RegionStep) -> Option<Result<()>> {
        let slot = self.regions.get_mut(id)?;
        slot.clock
            .set(self.clocks.local(Proc::Node(slot.node), self.now));
        let out = hosts::drive_region(&mut slot.driver, step);
        slot.driver.take_notices();
        self.touched.push(id.to_owned());
        self.carry_out();
        Some(out)
    }

    /// A region left the simulation: its trace ends.
    pub(super) fn end_recording(&mut self, id: &str) {
        if let Some(r) = self.host.lock().recorder.as_mut() {
            r.end(id);
        }
    }

    pub(super) fn delivered(&mut self, id: &str, payload: &[u8]) {
        let Some(key) = self.regions.get(id).map(|s| s.key) else {
            return;
        };
        match payload_id(payload) {
            Some(m) => self.checker.delivered(self.now, m, key),
            None => {
                self.checker
                    .violate(self.now, "bad-payload", "a delivery without a message id")
            }
        }
    }

    /// Stopping a shard's entities takes a while, sometimes longer than the hand-off timeout.
    pub(super) fn stop_shard(&mut self, region: String, shard: ShardId) {
        self.trace(&region, &ShardStopping { shard: &shard });
        let slow = self.rng.chance(self.slow_stop_fraction);
        let delay = if slow {
            self.injected.slow_stops += 1;
            2 * self.cfg.coordinator.handoff_timeout_ms
        } else {
            self.rng.range(0, 50)
        };
        self.agenda
            .push(self.now + delay, Event::StopDone { region, shard });
    }

    pub(super) fn region_stopped(&mut self, id: &str) {
        self.trace(id, &"stopped");
        let watchers = self.now + self.rng.range(1, 20);
        self.agenda.push(
            watchers,
            Event::Terminated {
                region: id.to_owned(),
            },
        );
        let Some(slot) = self.regions.get_mut(id) else {
            return;
        };
        slot.done = Some(self.now);
        let node = slot.node;
        let incarnation = self.nodes[node].incarnation;
        // Coordinated shutdown goes on: the member exits and is removed a bit later,
        // once the transport has flushed what the region sent.
        self.agenda
            .push(self.now + 1_000, Event::Removed { node, incarnation });
    }

    /// The host's answer to an undeliverable message: send it back to the region that
    /// forwarded it (or, if that one cannot take messages any more, to any region that can),
    /// which routes it again with what it knows by then.
    pub(super) fn bounce(
        &mut self,
        at: &str,
        shard: ShardId,
        entity: crate::protocol::EntityId,
        payload: Vec<u8>,
        why: &str,
    ) {
        let Some(m) = payload_id(&payload) else {
            return;
        };
        let accepting = self.accepting();
        let origin = self.bounce_origin.clone().filter(|o| accepting.contains(o));
        let Some(target) = origin.or_else(|| accepting.first().cloned()) else {
            self.checker.lost_undeliverable(
                self.now,
                m,
                &format!("{at}: {why}; no region to take it"),
            );
            return;
        };
        let key = self.regions[&target].key;
        if !self.checker.bounced(self.now, m, key) {
            return;
        }
        self.messages.bounced += 1;
        let (from_node, to_node) = (self.region_node(at), self.region_node(&target));
        let arrive = self.net.data(self.now, (at, &target), from_node, to_node);
        self.agenda.push(
            arrive,
            Event::Bounce {
                to: target,
                shard,
                entity,
                payload,
            },
        );
    }

    pub(super) fn bounce_arrived(
        &mut self,
        to: &str,
        shard: ShardId,
        entity: crate::protocol::EntityId,
        payload: Vec<u8>,
    ) {
        let Some(m) = payload_id(&payload) else {
            return;
        };
        let Some(key) = self.regions.get(to).map(|s| s.key) else {
            let crashed = self.gone.get(to).copied().unwrap_or(true);
            self.checker.dropped(self.now, m, crashed);
            return;
        };
        self.checker.arrived(self.now, m, key);
        let result = self.region_do(
            to,
            RegionStep::Route {
                shard,
                entity,
                payload,
            },
        );
        if !matches!(result, Some(Ok(()))) {
            self.checker.lost_undeliverable(
                self.now,
                m,
                &format!("{to} refused it after a bounce"),
            );
        }
    }

    /// Death watch fired for `region`: other regions forget it, coordinators terminate it.
    pub(super) fn terminated(&mut self, region: &str) {
        let ids: Vec<String> = self
            .regions
            .keys()
            .filter(|r| *r != region)
            .cloned()
            .collect();
        for r in ids {
            let region = region.to_owned();
            self.region_do(
                &r,
                RegionStep::Input(RegionInput::RegionTerminated { region }),
            );
        }
        for k in 0..self.coords.len() {
            let region = region.to_owned();
            self.coordinator_do(
                k,
                CoordinatorStep::Input(CoordinatorInput::RegionTerminated { region }),
            );
        }
    }
}
