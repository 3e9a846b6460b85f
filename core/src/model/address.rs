//! Node addresses with Pekko's `Address` semantics: `toString`, ordering and parsing, plus
//! actor-ts's ordering of the same strings.
//!
//! Pekko hashes and orders the canonical string, so a port written `02552` must become `2552`
//! before it reaches the consistent-hash ring: always go through [`Address::parse`].

use std::cmp::Ordering;
use std::fmt;
use std::sync::{Arc, OnceLock};

use icu_collator::options::CollatorOptions;
use icu_collator::{CollatorBorrowed, CollatorPreferences};

use crate::jvm::compare_utf16;
use crate::{Error, Result};

/// `protocol://system@host:port`; actor-ts addresses (`system@host:port`) parse with an empty
/// protocol and print back without the `://`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Address {
    protocol: String,
    system: String,
    host: Option<String>,
    port: Option<i32>,
    canonical: String,
}

impl Address {
    pub fn new(
        protocol: &str,
        system: &str,
        host: Option<&str>,
        port: Option<i32>,
    ) -> Result<Address> {
        if system.is_empty() {
            return Err(Error::invalid_argument(
                "address: the actor system name is empty",
            ));
        }
        if port.is_some() && host.is_none() {
            return Err(Error::invalid_argument("address: a port needs a host"));
        }
        if let Some(p) = port {
            if p < 0 {
                return Err(Error::invalid_argument(format!(
                    "address: port {p} is negative"
                )));
            }
        }
        let mut canonical = String::new();
        if !protocol.is_empty() {
            canonical.push_str(protocol);
            canonical.push_str("://");
        }
        canonical.push_str(system);
        if let Some(h) = host {
            canonical.push('@');
            canonical.push_str(h);
        }
        if let Some(p) = port {
            canonical.push(':');
            canonical.push_str(&p.to_string());
        }
        Ok(Address {
            protocol: protocol.to_owned(),
            system: system.to_owned(),
            host: host.map(str::to_owned),
            port,
            canonical,
        })
    }

    /// Parses `protocol://system`, `protocol://system@host:port` or `system@host:port`.
    pub fn parse(s: &str) -> Result<Address> {
        let bad = |why: &str| Error::invalid_argument(format!("address {s:?}: {why}"));
        let (protocol, rest) = match s.find("://") {
            Some(i) => (&s[..i], &s[i + 3..]),
            None => ("", s),
        };
        if s.contains("://") && protocol.is_empty() {
            return Err(bad("empty protocol"));
        }
        if protocol
            .chars()
            .any(|c| !(c.is_ascii_alphanumeric() || c == '+' || c == '-' || c == '.'))
        {
            return Err(bad(
                "protocol may hold only letters, digits, '+', '-' and '.'",
            ));
        }
        let (system, hostport) = match rest.find('@') {
            Some(i) => (&rest[..i], Some(&rest[i + 1..])),
            None => (rest, None),
        };
        if system.is_empty() {
            return Err(bad("missing actor system name"));
        }
        if system.contains(['/', '@', ':', '#', '?']) || system.chars().any(char::is_whitespace) {
            return Err(bad(
                "the system name has a character not allowed in an address",
            ));
        }
        let Some(hostport) = hostport else {
            if protocol.is_empty() {
                return Err(bad(
                    "expected system@host:port or protocol://system[@host:port]",
                ));
            }
            return Address::new(protocol, system, None, None);
        };
        let (host, port) = if let Some(after) = hostport.strip_prefix('[') {
            let end = after
                .find(']')
                .ok_or_else(|| bad("unclosed '[' in an IPv6 host"))?;
            let host = &hostport[..end + 2];
            let port = after[end + 1..]
                .strip_prefix(':')
                .ok_or_else(|| bad("missing ':port' after the host"))?;
            (host, port)
        } else {
            let i = hostport
                .rfind(':')
                .ok_or_else(|| bad("missing ':port' after the host"))?;
            (&hostport[..i], &hostport[i + 1..])
        };
        if host.is_empty() {
            return Err(bad("empty host"));
        }
        if host.contains(['/', '@', '#', '?']) || host.chars().any(char::is_whitespace) {
            return Err(bad("the host has a character not allowed in an address"));
        }
        if port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad("the port is not a number"));
        }
        let port: i32 = port
            .parse()
            .map_err(|_| bad("the port does not fit in a 32-bit int"))?;
        Address::new(protocol, system, Some(host), Some(port))
    }

    pub fn protocol(&self) -> &str {
        &self.protocol
    }
    pub fn system(&self) -> &str {
        &self.system
    }
    pub fn host(&self) -> Option<&str> {
        self.host.as_deref()
    }
    pub fn port(&self) -> Option<i32> {
        self.port
    }
    /// Pekko `Address.toString`; the string consistent hashing hashes.
    pub fn as_str(&self) -> &str {
        &self.canonical
    }
    /// A local-scope address (no host): the coordinator's own node.
    pub fn has_local_scope(&self) -> bool {
        self.host.is_none()
    }

    /// Pekko `Address.addressOrdering`: protocol, system, host (`String.compareTo`, none = ""),
    /// then port as a number (none = 0).
    pub fn pekko_cmp(&self, other: &Address) -> Ordering {
        compare_utf16(&self.protocol, &other.protocol)
            .then_with(|| compare_utf16(&self.system, &other.system))
            .then_with(|| {
                compare_utf16(
                    self.host.as_deref().unwrap_or(""),
                    other.host.as_deref().unwrap_or(""),
                )
            })
            .then_with(|| self.port.unwrap_or(0).cmp(&other.port.unwrap_or(0)))
    }

    /// actor-ts `NodeAddress.compareTo`: `localeCompare` of the strings (see [`ActorTsKey`]).
    pub fn actor_ts_key(&self) -> ActorTsKey {
        ActorTsKey::of(&self.canonical)
    }
}

/// Where an address sorts among actor-ts nodes: the ICU root-collation sort key of its string.
///
/// actor-ts's `NodeAddress.compareTo` is `toString().localeCompare(...)`, which under Node's
/// ICU is root collation at tertiary strength with canonical normalization (letters case-blind
/// first, lower case before upper on a tie; punctuation before digits before letters, so
/// `s@10.0.0.1:2552` < `s@10.0.0.10:2552`). Comparing keys bytewise gives the same answer as
/// `localeCompare`, including 0 for strings that differ only in ignorable characters (controls,
/// soft hyphens) or in canonically equivalent spellings; callers then keep candidate order, as
/// actor-ts's stable `Array.prototype.sort` does. The key is computed once per region, so a
/// comparison during allocation is a `memcmp`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ActorTsKey(Arc<[u8]>);

impl ActorTsKey {
    pub fn of(address: &str) -> ActorTsKey {
        // ICU4X's root collator with its compiled data (CLDR root, the table Node's ICU uses
        // for `localeCompare` in the default and "en" locales) rather than a hand-made table:
        // the order of punctuation, case and non-ASCII text is the collation standard's, and
        // stays in step with it through the crate.
        static ROOT: OnceLock<CollatorBorrowed<'static>> = OnceLock::new();
        let collator = ROOT.get_or_init(|| {
            CollatorBorrowed::try_new(CollatorPreferences::default(), CollatorOptions::default())
                .expect("the root collation is in the compiled data")
        });
        let mut key = Vec::with_capacity(3 * address.len() + 4);
        let Ok(()) = collator.write_sort_key_to(address, &mut key);
        ActorTsKey(key.into())
    }
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.canonical)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_canonically() {
        let a = Address::parse("pekko://myapp@127.0.0.1:0252525").unwrap();
        assert_eq!(a.as_str(), "pekko://myapp@127.0.0.1:252525");
        assert_eq!(a.port(), Some(252525));
        let b = Address::parse("sys@host:9").unwrap();
        assert_eq!((b.protocol(), b.as_str()), ("", "sys@host:9"));
        let c = Address::parse("pekko://local").unwrap();
        assert!(c.has_local_scope());
        let d = Address::parse("pekko://s@[::1]:2552").unwrap();
        assert_eq!(d.host(), Some("[::1]"));
    }

    #[test]
    fn rejects_malformed_addresses_with_reasons() {
        for s in [
            "",
            "://x@h:1",
            "pekko://@h:1",
            "pekko://s@h",
            "pekko://s@h:x",
            "pekko://s@:1",
            "sys",
            "s@h:99999999999",
            "pekko://s@h:-1",
        ] {
            let e = Address::parse(s).unwrap_err();
            assert!(e.message().contains("address"), "{s}: {e}");
        }
    }

    #[test]
    fn actor_ts_order_is_locale_compare() {
        // Each list is in `localeCompare` order under Node 20 (ICU 78), lowest first.
        for sorted in [
            &["s@10.0.0.1:2552", "s@10.0.0.10:2552", "s@10.0.0.2:2552"][..],
            &["s@h:10", "s@h:2", "s@h:9"],
            &["a@h:1", "B@h:1", "S@h:1"],
            &[
                "s@node_b:1",
                "s@node-a:1",
                "s@Node-A:1",
                "s@node.c:1",
                "s@nodea:1",
            ],
        ] {
            for w in sorted.windows(2) {
                assert!(
                    ActorTsKey::of(w[0]) < ActorTsKey::of(w[1]),
                    "{} < {}",
                    w[0],
                    w[1]
                );
            }
        }
        // localeCompare says 0 for these; callers keep candidate order, as actor-ts's stable sort.
        assert_eq!(ActorTsKey::of("s@h\u{1}:1"), ActorTsKey::of("s@h:1"));
        assert_eq!(
            ActorTsKey::of("s@caf\u{e9}:1"),
            ActorTsKey::of("s@cafe\u{301}:1")
        );
    }

    #[test]
    fn orders_ports_numerically_and_protocol_first() {
        let p = |s| Address::parse(s).unwrap();
        assert_eq!(
            p("pekko://s@h:10").pekko_cmp(&p("pekko://s@h:9")),
            Ordering::Greater
        );
        assert_eq!(
            p("akka://z@h:1").pekko_cmp(&p("pekko://a@h:1")),
            Ordering::Less
        );
        assert_eq!(
            p("pekko://s").pekko_cmp(&p("pekko://s@a:1")),
            Ordering::Less
        );
    }
}
