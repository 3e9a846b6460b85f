//! The embedded default registry: process-local, linearizable, with server time that the
//! host (or a simulation) advances explicitly, so session expiry is deterministic.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};

use super::record::{Claim, Fence, Listing, Slot, Version};
use super::registry::{Created, Registry, RegistryResult};

#[derive(Debug, Default)]
struct Server {
    now_ms: u64,
    next_session: u64,
    /// Session id -> expiry (server time).
    sessions: HashMap<u64, u64>,
    claims: BTreeMap<u32, (Claim, u64)>,
    fences: BTreeMap<u32, (Fence, Version)>,
    revision: u64,
}

impl Server {
    /// Ends sessions whose time is up, with their claims, as a real backend does on its own.
    fn sweep(&mut self) {
        let now = self.now_ms;
        self.sessions.retain(|_, exp| *exp > now);
        let sessions = &self.sessions;
        self.claims.retain(|_, (_, s)| sessions.contains_key(s));
    }

    fn slot(&self, id: u32) -> Slot {
        Slot {
            id,
            claim: self.claims.get(&id).map(|(c, _)| c.clone()),
            fence: self.fences.get(&id).copied(),
        }
    }

    fn new_session(&mut self, ttl_ms: u64) -> u64 {
        self.next_session += 1;
        self.sessions
            .insert(self.next_session, self.now_ms + ttl_ms);
        self.next_session
    }
}

/// The shared "server". Clone it to hand it around; open one [`InMemorySession`] per
/// contender.
#[derive(Debug, Clone, Default)]
pub struct InMemoryRegistry {
    server: Arc<Mutex<Server>>,
}

impl InMemoryRegistry {
    pub fn new() -> InMemoryRegistry {
        InMemoryRegistry::default()
    }

    /// A new session, live for `ttl_ms` of server time unless kept alive.
    pub fn session(&self, ttl_ms: u64) -> InMemorySession {
        let id = self.lock().new_session(ttl_ms);
        InMemorySession {
            server: self.server.clone(),
            session: id,
            ttl_ms,
        }
    }

    /// Moves server time forward (never back); sessions past their expiry end now.
    pub fn advance_to(&self, now_ms: u64) {
        let mut s = self.lock();
        s.now_ms = s.now_ms.max(now_ms);
        s.sweep();
    }

    pub fn now_ms(&self) -> u64 {
        self.lock().now_ms
    }

    /// Live claims by worker id, as the server sees them now.
    pub fn live_claims(&self) -> Vec<(u32, Claim)> {
        let mut s = self.lock();
        s.sweep();
        s.claims
            .iter()
            .map(|(id, (c, _))| (*id, c.clone()))
            .collect()
    }

    pub fn fence(&self, id: u32) -> Option<Fence> {
        self.lock().fences.get(&id).map(|(f, _)| *f)
    }

    fn lock(&self) -> MutexGuard<'_, Server> {
        // Every mutation below completes before anything can panic, so a poisoned lock still
        // guards consistent data.
        self.server.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// One contender's session on an [`InMemoryRegistry`].
#[derive(Debug)]
pub struct InMemorySession {
    server: Arc<Mutex<Server>>,
    session: u64,
    ttl_ms: u64,
}

/// The server, swept: what any request sees first.
fn swept(server: &Mutex<Server>) -> MutexGuard<'_, Server> {
    let mut s = server.lock().unwrap_or_else(|p| p.into_inner());
    s.sweep();
    s
}

impl InMemorySession {
    fn lock(&self) -> MutexGuard<'_, Server> {
        swept(&self.server)
    }

    /// Ends the session now; its claims go with it.
    pub fn close(&mut self) {
        let session = self.session;
        let mut s = self.lock();
        s.sessions.remove(&session);
        s.sweep();
    }

    pub fn is_live(&self) -> bool {
        self.lock().sessions.contains_key(&self.session)
    }
}

impl Drop for InMemorySession {
    fn drop(&mut self) {
        self.close();
    }
}

impl Registry for InMemorySession {
    fn list(&mut self) -> RegistryResult<Listing> {
        let s = self.lock();
        let mut ids: Vec<u32> = s.claims.keys().chain(s.fences.keys()).copied().collect();
        ids.sort_unstable();
        ids.dedup();
        Ok(Listing {
            slots: ids.into_iter().map(|id| s.slot(id)).collect(),
        })
    }

    fn read(&mut self, id: u32) -> RegistryResult<Slot> {
        Ok(self.lock().slot(id))
    }

    fn create_exclusive(
        &mut self,
        id: u32,
        claim: &Claim,
        fence: &Fence,
        expect: Version,
    ) -> RegistryResult<Created> {
        let ttl = self.ttl_ms;
        let mut s = swept(&self.server);
        let current = s.slot(id);
        if current.claim.is_some() || current.fence_version() != expect {
            return Ok(Created::Lost(current));
        }
        // A session that ended is replaced, as a backend re-grants a lease.
        if !s.sessions.contains_key(&self.session) {
            self.session = s.new_session(ttl);
        }
        s.revision += 1;
        let version = Version(s.revision);
        s.claims.insert(id, (claim.clone(), self.session));
        s.fences.insert(id, (*fence, version));
        Ok(Created::Won(version))
    }

    fn compare_and_set(
        &mut self,
        id: u32,
        claim: &Claim,
        fence: &Fence,
        expect: Version,
    ) -> RegistryResult<Option<Version>> {
        let session = self.session;
        let mut s = self.lock();
        let ours = matches!(s.claims.get(&id), Some((c, sess)) if c == claim && *sess == session);
        if !ours || s.fences.get(&id).map(|(_, v)| *v) != Some(expect) {
            return Ok(None);
        }
        s.revision += 1;
        let version = Version(s.revision);
        s.fences.insert(id, (*fence, version));
        Ok(Some(version))
    }

    fn delete(&mut self, id: u32, claim: &Claim) -> RegistryResult<bool> {
        let mut s = self.lock();
        if matches!(s.claims.get(&id), Some((c, _)) if c == claim) {
            s.claims.remove(&id);
            return Ok(true);
        }
        Ok(false)
    }

    fn keep_alive(&mut self) -> RegistryResult<Option<u64>> {
        let (session, ttl) = (self.session, self.ttl_ms);
        let mut s = self.lock();
        let now = s.now_ms;
        Ok(s.sessions.get_mut(&session).map(|exp| {
            *exp = now + ttl;
            ttl
        }))
    }
}
