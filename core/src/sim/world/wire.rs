//! Sending and delivering: coordinator-addressed messages reach every live candidate,
//! entity messages ride their per-pair channel, and traces show what touched a shard.

use crate::coordinator::CoordinatorInput;
use crate::protocol::{Endpoint, Envelope, Message};
use crate::region::RegionInput;
use crate::replay::{CoordinatorStep, RegionStep};

use super::{payload_id, Dest, Event, World};

impl World {
    /// Whatever names the traced shard, and whatever names no shard at all (registrations,
    /// coordinator changes, lease events): the context a shard's story needs.
    pub(super) fn traced(&self, text: &str) -> bool {
        self.cfg.trace.as_ref().is_some_and(|shard| {
            !text.contains("shard: ")
                || text.contains(&format!("shard: \"{shard}\""))
                || text.contains(&format!("shard: Some(\"{shard}\")"))
        })
    }

    pub(super) fn trace(&self, what: &str, detail: &dyn std::fmt::Debug) {
        if self.cfg.trace.is_none() {
            return;
        }
        let text = format!("{detail:?}");
        if self.traced(&text) {
            eprintln!("[{:>8}] {what} {text}", self.now);
        }
    }

    pub(super) fn region_node(&self, id: &str) -> Option<usize> {
        self.regions.get(id).map(|s| s.node)
    }

    pub(super) fn send_from_coordinator(&mut self, env: Envelope) {
        self.trace("coordinator sends", &(&env.to, &env.message));
        let Endpoint::Region(to) = &env.to else {
            return;
        };
        let to = String::from(&**to);
        let to_node = self.region_node(&to);
        for at in self.net.control(self.now, None, to_node) {
            self.agenda.push(
                at,
                Event::Deliver {
                    to: Dest::Region(to.clone()),
                    env: env.clone(),
                },
            );
        }
    }

    pub(super) fn send_from_region(&mut self, from: &str, env: Envelope) {
        let from_node = self.region_node(from);
        match (&env.to, &env.message) {
            (Endpoint::Coordinator, _) => {
                for k in 0..self.coords.len() {
                    if self.coords[k].driver.is_none() {
                        continue;
                    }
                    let incarnation = self.coords[k].incarnation;
                    for at in self.net.control(self.now, from_node, None) {
                        self.agenda.push(
                            at,
                            Event::Deliver {
                                to: Dest::Coordinator { k, incarnation },
                                env: env.clone(),
                            },
                        );
                    }
                }
            }
            (Endpoint::Region(to), Message::Forward(f)) => {
                let to = String::from(&**to);
                if let (Some(id), Some(&from_key), Some(&to_key)) = (
                    payload_id(&f.payload),
                    self.region_keys.get(from),
                    self.region_keys.get(&to),
                ) {
                    self.checker.forwarded(self.now, id, from_key, to_key);
                } else {
                    self.checker.violate(
                        self.now,
                        "bad-forward",
                        format!("{from} forwarded to unknown region {to}"),
                    );
                }
                let to_node = self.region_node(&to);
                let at = self.net.data(self.now, (from, &to), from_node, to_node);
                self.agenda.push(
                    at,
                    Event::Deliver {
                        to: Dest::Region(to),
                        env,
                    },
                );
            }
            (Endpoint::Region(to), _) => {
                let to_node = self.region_node(to);
                for at in self.net.control(self.now, from_node, to_node) {
                    self.agenda.push(
                        at,
                        Event::Deliver {
                            to: Dest::Region(String::from(&**to)),
                            env: env.clone(),
                        },
                    );
                }
            }
        }
    }

    pub(super) fn deliver(&mut self, to: Dest, env: Envelope) {
        if let Endpoint::Region(from) = &env.from {
            if self.quarantined.contains(&**from) {
                self.trace("quarantined", &(&to, &env.from, &env.message));
                if let Message::Forward(f) = &env.message {
                    if let Some(m) = payload_id(&f.payload) {
                        let crashed = self.gone.get(&**from).copied().unwrap_or(true);
                        self.checker.dropped(self.now, m, crashed);
                    }
                }
                return;
            }
        }
        self.trace("deliver", &(&to, &env.from, &env.message));
        match to {
            Dest::Coordinator { k, incarnation } => {
                if self.coords[k].incarnation == incarnation && self.coords[k].driver.is_some() {
                    self.coordinator_do(k, CoordinatorStep::Input(CoordinatorInput::Receive(env)));
                }
            }
            Dest::Region(id) => {
                let forward_id = match &env.message {
                    Message::Forward(f) => payload_id(&f.payload),
                    _ => None,
                };
                let Some(key) = self.regions.get(&id).map(|s| s.key) else {
                    if let Some(m) = forward_id {
                        let crashed = self.gone.get(&id).copied().unwrap_or(true);
                        self.checker.dropped(self.now, m, crashed);
                    }
                    return;
                };
                if let Some(m) = forward_id {
                    self.checker.arrived(self.now, m, key);
                }
                self.bounce_origin = match &env.from {
                    Endpoint::Region(r) => Some(String::from(&**r)),
                    Endpoint::Coordinator => None,
                };
                self.region_do(&id, RegionStep::Input(RegionInput::Receive(env)));
                self.bounce_origin = None;
            }
        }
    }
}
