//! Pekko `ExternalShardAllocationStrategy`: the host says where each shard should live;
//! unknown or unavailable locations fall back to the requesting region.

use std::collections::BTreeMap;

use super::{note, Allocation, AllocationStrategy, Explanation, InProgress, Skip};
use crate::model::Address;
use crate::model::{AllocationState, ShardId};
use crate::Result;

/// What a location source answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup<T> {
    Found(T),
    /// The source did not answer in time (Pekko's ask timeout).
    Unavailable,
}

/// A host-provided source of desired shard locations (node addresses).
pub trait ShardLocations: Send {
    fn location(&mut self, shard: &str) -> Lookup<Option<Address>>;
    fn locations(&mut self) -> Lookup<Vec<(String, Address)>>;
}

enum Source {
    Map(BTreeMap<String, Address>),
    Unavailable,
    Host(Box<dyn ShardLocations>),
}

pub struct External {
    source: Source,
}

impl std::fmt::Debug for External {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("External")
    }
}

impl External {
    /// Locations kept in memory, set with [`External::set_location`].
    pub fn in_memory() -> External {
        External {
            source: Source::Map(BTreeMap::new()),
        }
    }
    /// A source that never answers: every allocation falls back to the requester.
    pub fn unavailable() -> External {
        External {
            source: Source::Unavailable,
        }
    }
    pub fn with_source(source: Box<dyn ShardLocations>) -> External {
        External {
            source: Source::Host(source),
        }
    }
    /// Sets where a shard should live (in-memory source only; returns false otherwise).
    pub fn set_location(&mut self, shard: &str, node: Address) -> bool {
        match &mut self.source {
            Source::Map(m) => {
                m.insert(shard.to_owned(), node);
                true
            }
            _ => false,
        }
    }

    fn location(&mut self, shard: &str) -> Lookup<Option<Address>> {
        match &mut self.source {
            Source::Map(m) => Lookup::Found(m.get(shard).cloned()),
            Source::Unavailable => Lookup::Unavailable,
            Source::Host(h) => h.location(shard),
        }
    }

    fn locations(&mut self) -> Lookup<Vec<(String, Address)>> {
        match &mut self.source {
            Source::Map(m) => {
                Lookup::Found(m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            }
            Source::Unavailable => Lookup::Unavailable,
            Source::Host(h) => h.locations(),
        }
    }
}

impl AllocationStrategy for External {
    fn name(&self) -> &str {
        "external"
    }

    fn allocate(
        &mut self,
        state: &AllocationState,
        requester: Option<&str>,
        shard: &str,
        mut explain: Option<&mut Explanation>,
    ) -> Result<Allocation> {
        note(&mut explain, |e| {
            *e = Explanation::new("external", "allocate")
        });
        let fallback = |why: &str, explain: &mut Option<&mut Explanation>| {
            note(explain, |e| {
                e.summary = format!("{why}; falling back to the requester")
            });
            Ok(requester.map_or(Allocation::Pending, |r| Allocation::Region(r.into())))
        };
        let location = match self.location(shard) {
            Lookup::Unavailable => {
                return fallback("the location source did not answer", &mut explain)
            }
            Lookup::Found(None) => {
                return fallback("no location is stored for the shard", &mut explain)
            }
            Lookup::Found(Some(a)) => a,
        };
        let chosen = if location == *state.cluster().self_address() {
            state.regions().find(|r| r.is_eligible() && r.is_local())
        } else {
            state
                .regions()
                .find(|r| r.is_eligible() && *r.address() == location)
        };
        match chosen {
            Some(r) => {
                note(&mut explain, |e| {
                    e.summary = format!("stored location {location} is region {}", r.id())
                });
                Ok(Allocation::Region(r.id().clone()))
            }
            None => fallback(
                &format!("stored location {location} has no eligible region"),
                &mut explain,
            ),
        }
    }

    fn rebalance(
        &mut self,
        state: &AllocationState,
        _in_progress: &InProgress,
        mut explain: Option<&mut Explanation>,
    ) -> Result<Vec<ShardId>> {
        note(&mut explain, |e| {
            *e = Explanation::new("external", "rebalance")
        });
        let locations = match self.locations() {
            Lookup::Unavailable => {
                note(&mut explain, |e| {
                    e.skipped = Some(Skip::LookupUnavailable);
                    e.summary = "the location source did not answer".into();
                });
                return Ok(Vec::new());
            }
            Lookup::Found(l) => l,
        };
        let mut picked = Vec::new();
        for (shard, desired) in locations {
            let Some(home) = state.home_of(&shard) else {
                continue;
            };
            if state.regions_on(desired.as_str()).next().is_none() {
                continue; // not part of the cluster: Pekko does not rebalance toward it
            }
            if state.node_of(home) != &desired {
                picked.push(ShardId::from(shard.as_str()));
            }
        }
        note(&mut explain, |e| {
            e.summary = format!(
                "{} shard(s) are away from their stored location",
                picked.len()
            )
        });
        Ok(picked)
    }
}
