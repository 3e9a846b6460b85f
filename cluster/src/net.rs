//! A network for the campaign made of Linux network namespaces: every etcd member and every
//! node gets a namespace of its own, joined to a bridge in the root namespace by a veth pair,
//! so faults act on real links: a link taken down partitions its host from everyone,
//! blackhole routes cut chosen pairs, an htb rate limit makes a slow, lossy link. Needs root
//! (`ip`, `tc`).
//!
//! Host `k` has address `10.213.<id>.(10+k)`; the bridge (and so the campaign itself) is
//! `10.213.<id>.1`.

use std::process::Command;

fn run(args: &[&str]) -> Result<(), String> {
    let out = Command::new(args[0])
        .args(&args[1..])
        .output()
        .map_err(|e| format!("{}: {e}", args[0]))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "`{}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// One campaign's network; `id` tells concurrent campaigns' networks apart (names and
/// subnet `10.213.<id>.0/24`).
pub struct Net {
    id: u8,
    hosts: usize,
}

impl Net {
    pub fn ns(&self, k: usize) -> String {
        format!("sl{}ns{k}", self.id)
    }

    fn outer(&self, k: usize) -> String {
        format!("sl{}h{k}", self.id)
    }

    fn inner(&self, k: usize) -> String {
        format!("sl{}c{k}", self.id)
    }

    fn bridge(&self) -> String {
        format!("sl{}br", self.id)
    }
}

impl Net {
    /// Builds the bridge and `hosts` namespaces, clearing what an interrupted campaign left.
    pub fn setup(id: u8, hosts: usize) -> Result<Net, String> {
        Net {
            id,
            hosts: hosts + 8,
        }
        .teardown();
        let net = Net { id, hosts };
        let bridge = net.bridge();
        let bridge = bridge.as_str();
        run(&["ip", "link", "add", bridge, "type", "bridge"])?;
        run(&[
            "ip",
            "addr",
            "add",
            &format!("10.213.{id}.1/24"),
            "dev",
            bridge,
        ])?;
        run(&["ip", "link", "set", bridge, "up"])?;
        for k in 0..hosts {
            let (n, o, i) = (net.ns(k), net.outer(k), net.inner(k));
            run(&["ip", "netns", "add", &n])?;
            run(&["ip", "link", "add", &o, "type", "veth", "peer", "name", &i])?;
            run(&["ip", "link", "set", &i, "netns", &n])?;
            run(&["ip", "link", "set", &o, "master", bridge, "up"])?;
            let cidr = format!("{}/24", net.ip(k));
            run(&[
                "ip", "netns", "exec", &n, "ip", "addr", "add", &cidr, "dev", &i,
            ])?;
            run(&["ip", "netns", "exec", &n, "ip", "link", "set", &i, "up"])?;
            run(&["ip", "netns", "exec", &n, "ip", "link", "set", "lo", "up"])?;
        }
        Ok(net)
    }

    fn teardown(&self) {
        for k in 0..self.hosts {
            let _ = run(&["ip", "netns", "del", &self.ns(k)]);
            let _ = run(&["ip", "link", "del", &self.outer(k)]);
        }
        let _ = run(&["ip", "link", "del", &self.bridge()]);
    }

    pub fn ip(&self, k: usize) -> String {
        format!("10.213.{}.{}", self.id, 10 + k)
    }

    /// Host `k` can reach no one, and no one it.
    pub fn isolate(&self, k: usize) -> Result<(), String> {
        run(&["ip", "link", "set", &self.outer(k), "down"])
    }

    pub fn rejoin(&self, k: usize) -> Result<(), String> {
        run(&["ip", "link", "set", &self.outer(k), "up"])
    }

    /// Host `k` and `peers` can no longer reach each other while both still reach everyone
    /// else: blackhole routes on both sides (routing rather than `tc` filters, which need
    /// classifier and action modules a container kernel may lack).
    pub fn cut(&self, k: usize, peers: &[usize]) -> Result<(), String> {
        for &p in peers {
            self.blackhole(k, p)?;
            self.blackhole(p, k)?;
        }
        Ok(())
    }

    fn blackhole(&self, from: usize, to: usize) -> Result<(), String> {
        let dst = format!("{}/32", self.ip(to));
        run(&[
            "ip",
            "netns",
            "exec",
            &self.ns(from),
            "ip",
            "route",
            "add",
            "blackhole",
            &dst,
        ])
    }

    /// A slow link for host `k`, both ways: an htb rate limit of `kbit`, so traffic queues
    /// (delay) and the queue overflows (loss). `netem` would be the natural tool, but it is a
    /// kernel module a container kernel may lack; htb is in every kernel with `tc`.
    pub fn slow(&self, k: usize, kbit: u64) -> Result<(), String> {
        let rate = format!("{kbit}kbit");
        let (n, o, i) = (self.ns(k), self.outer(k), self.inner(k));
        for prefix in [vec![], vec!["ip", "netns", "exec", n.as_str()]] {
            let dev = if prefix.is_empty() {
                o.as_str()
            } else {
                i.as_str()
            };
            let mut q = prefix.clone();
            q.extend([
                "tc", "qdisc", "replace", "dev", dev, "root", "handle", "1:", "htb", "default",
                "10",
            ]);
            run(&q)?;
            let mut c = prefix.clone();
            c.extend([
                "tc",
                "class",
                "replace",
                "dev",
                dev,
                "parent",
                "1:",
                "classid",
                "1:10",
                "htb",
                "rate",
                rate.as_str(),
            ]);
            run(&c)?;
        }
        Ok(())
    }

    /// Takes every rate limit and blackhole off host `k` and brings its link up.
    pub fn heal(&self, k: usize) -> Result<(), String> {
        let o = self.outer(k);
        let _ = run(&["tc", "qdisc", "del", "dev", &o, "root"]);
        let (n, i) = (self.ns(k), self.inner(k));
        let _ = run(&[
            "ip", "netns", "exec", &n, "tc", "qdisc", "del", "dev", &i, "root",
        ]);
        let _ = run(&[
            "ip",
            "netns",
            "exec",
            &n,
            "ip",
            "route",
            "flush",
            "type",
            "blackhole",
        ]);
        self.rejoin(k)
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        self.teardown();
    }
}
