//! A Redis Cluster, reached over the same bounded connections as one server
//! ([`Client`]): recuo routes each call to the master of its key's slot itself, so that the
//! bounds of one server hold on a cluster too — one deadline for the whole call however many
//! redirects, reconnects and slot-map refreshes it takes, replies capped in size, threads that
//! never wait for each other's calls.
//!
//! - The slot map comes from `CLUSTER SLOTS`, asked of the known nodes and the seeds in turn.
//! - `MOVED` patches the map for that slot (and refreshes it); `ASK` sends that one call to
//!   the node named, after `ASKING`; at most [`MAX_REDIRECTS`] of them in a row.
//! - A node out of reach, `CLUSTERDOWN`, `TRYAGAIN`, `MASTERDOWN`, `READONLY` or `LOADING` (a
//!   failover or a resharding under way): the call pauses [`PAUSE`], refreshes the map (one
//!   thread at a time, at most every [`PAUSE`]) and tries again — until its deadline, when it
//!   fails with the last node's error.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};

use recuo::SharedError;
use redis::Value;

use crate::client::{io, is_lost, is_timeout, later, Answer, Client, Target, SHORTEST_CALL};

/// The number of hash slots of a Redis Cluster.
pub(crate) const SLOTS: usize = 16384;
/// The most `MOVED` and `ASK` redirects one call follows.
pub(crate) const MAX_REDIRECTS: usize = 8;
/// How long a call waits before it asks again while the cluster cannot serve its slot, and
/// the least time between two refreshes of the slot map.
pub(crate) const PAUSE: Duration = Duration::from_millis(50);
/// The most seed nodes a URL may name, and the most nodes a slot map may name.
const MAX_NODES: usize = 1000;
const UNSERVED: u16 = u16::MAX;

/// `redis+cluster://` (`rediss+cluster://` for TLS): a URL naming a cluster's seed nodes.
pub(crate) fn is_cluster_url(url: &str) -> bool {
    url.starts_with("redis+cluster://") || url.starts_with("rediss+cluster://")
}

/// The seeds of `redis+cluster://[user:password@]host:port[,host:port…][/[0]]`: not an RFC
/// URL (several hosts), so parsed here. User and password are percent-decoded; a port left
/// out is 6379; a database other than 0 is refused (a cluster has one).
pub(crate) fn parse_seeds(url: &str) -> Result<Vec<Target>, SharedError> {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let tls = match scheme {
        "redis+cluster" => false,
        "rediss+cluster" => true,
        _ => {
            return Err(io(format!(
                "the Redis Cluster URL's scheme {scheme:?} is not redis+cluster:// or \
                 rediss+cluster://"
            )))
        }
    };
    let (login, rest) = match rest.rfind('@') {
        Some(at) => (Some(&rest[..at]), &rest[at + 1..]),
        None => (None, rest),
    };
    let (hosts, path) = rest.split_once('/').unwrap_or((rest, ""));
    match path {
        "" | "0" => {}
        db if db.bytes().all(|b| b.is_ascii_digit()) => {
            return Err(io(format!(
                "a Redis Cluster has one database (0): the URL names database {db}"
            )))
        }
        _ => {
            return Err(io(
                "a Redis Cluster URL ends with its hosts, or with / (no path, no options)",
            ))
        }
    }
    let (user, password) = match login {
        None => (None, None),
        Some(login) => {
            let (user, password) = login.split_once(':').unwrap_or((login, ""));
            let user = Some(decoded(user, "user")?).filter(|u| !u.is_empty());
            let password = Some(decoded(password, "password")?).filter(|p| !p.is_empty());
            (user, password)
        }
    };
    let mut seeds = Vec::new();
    for host_port in hosts.split(',') {
        if seeds.len() == MAX_NODES {
            return Err(io(format!(
                "a Redis Cluster URL names at most {MAX_NODES} seed nodes"
            )));
        }
        let (host, port) = host_and_port(host_port)?;
        seeds.push(Target::seed(
            host,
            port,
            tls,
            user.clone(),
            password.clone(),
        ));
    }
    Ok(seeds)
}

/// `host:port`, `[v6]:port`, or a host alone (port 6379).
fn host_and_port(text: &str) -> Result<(&str, u16), SharedError> {
    let bad = || {
        io(format!(
            "the Redis Cluster URL names a node that is not host:port ({:?})",
            text.chars().take(64).collect::<String>()
        ))
    };
    let (host, port) = if let Some(v6) = text.strip_prefix('[') {
        let (host, after) = v6.split_once(']').ok_or_else(bad)?;
        match after {
            "" => (host, None),
            p => (host, Some(p.strip_prefix(':').ok_or_else(bad)?)),
        }
    } else {
        match text.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (text, None),
        }
    };
    let valid_host = !host.is_empty()
        && host.len() <= 255
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b':'));
    if !valid_host {
        return Err(bad());
    }
    let port = match port {
        None => 6379,
        Some(p) => p.parse().ok().filter(|p| *p != 0).ok_or_else(bad)?,
    };
    Ok((host, port))
}

/// `text` percent-decoded, as UTF-8.
fn decoded(text: &str, what: &str) -> Result<String, SharedError> {
    let bad = || {
        io(format!(
            "the Redis Cluster URL's {what} is not valid percent-encoding"
        ))
    };
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3).ok_or_else(bad)?;
            out.push(u8::from_str_radix(hex, 16).map_err(|_| bad())?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| bad())
}

/// The hash slot of `key`: CRC16 (XMODEM) of its `{hash tag}` — what stands between its
/// first `{` and the next `}` when that is not empty — or of the whole key.
pub(crate) fn slot_of(key: &[u8]) -> u16 {
    let tagged = key.iter().position(|b| *b == b'{').and_then(|open| {
        let after = &key[open + 1..];
        let close = after.iter().position(|b| *b == b'}')?;
        (close > 0).then(|| &after[..close])
    });
    crc16(tagged.unwrap_or(key)) % SLOTS as u16
}

fn crc16(data: &[u8]) -> u16 {
    let mut crc: u16 = 0;
    for byte in data {
        crc ^= u16::from(*byte) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 == 0 {
                crc << 1
            } else {
                (crc << 1) ^ 0x1021
            };
        }
    }
    crc
}

/// Which node serves each slot as master.
struct SlotMap {
    /// Per slot, an index into `nodes`, or [`UNSERVED`].
    owner: Vec<u16>,
    /// `host:port` of each master.
    nodes: Vec<String>,
}

impl SlotMap {
    fn empty() -> Self {
        SlotMap {
            owner: vec![UNSERVED; SLOTS],
            nodes: Vec::new(),
        }
    }

    fn master(&self, slot: u16) -> Option<&str> {
        let i = *self.owner.get(usize::from(slot))?;
        self.nodes.get(usize::from(i)).map(String::as_str)
    }

    /// The map with `slot` served by `addr` (a `MOVED`).
    fn moved(&self, slot: u16, addr: &str) -> Option<Self> {
        let i = match self.nodes.iter().position(|n| n == addr) {
            Some(i) => i,
            None if self.nodes.len() < MAX_NODES => self.nodes.len(),
            None => return None,
        };
        let mut nodes = self.nodes.clone();
        if i == nodes.len() {
            nodes.push(addr.to_owned());
        }
        let mut owner = self.owner.clone();
        owner[usize::from(slot)] = u16::try_from(i).ok()?;
        Some(SlotMap { owner, nodes })
    }

    /// `CLUSTER SLOTS`' reply, asked of `asked` (which stands for a node whose reply names no
    /// host), checked: ranges within the slots, ports, host names, at most [`MAX_NODES`].
    fn parse(reply: &Value, asked: &Target) -> Result<Self, SharedError> {
        let bad = |what: &str| {
            io(format!(
                "bad CLUSTER SLOTS reply from {}: {what}",
                asked.addr()
            ))
        };
        let Value::Array(ranges) = reply else {
            return Err(bad("not an array"));
        };
        let mut map = SlotMap::empty();
        for range in ranges {
            let Value::Array(parts) = range else {
                return Err(bad("a range that is not an array"));
            };
            let (Some(first), Some(last), Some(Value::Array(master))) =
                (parts.first(), parts.get(1), parts.get(2))
            else {
                return Err(bad("a range without its master"));
            };
            let (first, last) = (small(first), small(last));
            let (Some(first), Some(last)) = (first, last) else {
                return Err(bad("a range's slots are not numbers"));
            };
            if first > last || last >= SLOTS as i64 {
                return Err(bad("a range out of the 16384 slots"));
            }
            let host = match master.first() {
                Some(Value::BulkString(h)) => std::str::from_utf8(h).ok(),
                Some(Value::SimpleString(h)) => Some(h.as_str()),
                _ => None,
            }
            .ok_or_else(|| bad("a master without a host"))?;
            let port = master
                .get(1)
                .and_then(small)
                .and_then(|p| u16::try_from(p).ok())
                .filter(|p| *p != 0)
                .ok_or_else(|| bad("a master without a port"))?;
            let host = if host.is_empty() || host == "?" {
                asked.host()
            } else {
                host
            };
            let node = asked.node(host, port).addr();
            let (_, checked) = host_and_port(&node).map_err(|_| bad("a host name"))?;
            debug_assert_eq!(checked, port);
            let i = match map.nodes.iter().position(|n| *n == node) {
                Some(i) => i,
                None if map.nodes.len() < MAX_NODES => {
                    map.nodes.push(node);
                    map.nodes.len() - 1
                }
                None => return Err(bad("too many nodes")),
            };
            let i = u16::try_from(i).map_err(|_| bad("too many nodes"))?;
            // Both ends were checked to lie within the slots; a slot named twice ends the
            // parse (so a hostile reply costs at most one write per slot).
            for slot in first as usize..=last as usize {
                if map.owner[slot] != UNSERVED {
                    return Err(bad("a slot served twice"));
                }
                map.owner[slot] = i;
            }
        }
        Ok(map)
    }
}

fn small(v: &Value) -> Option<i64> {
    match v {
        Value::Int(i) => Some(*i),
        Value::BulkString(b) => std::str::from_utf8(b).ok()?.parse().ok(),
        _ => None,
    }
}

/// A Redis Cluster: its seeds, the slot map, and one [`Client`] per node.
pub(crate) struct Cluster {
    seeds: Vec<Target>,
    deadline: Duration,
    map: RwLock<Arc<SlotMap>>,
    clients: Mutex<HashMap<String, Arc<Client>>>,
    /// Held by the one thread refreshing the map; the time of the last refresh.
    refreshed: Mutex<Option<Instant>>,
    /// A node's time ran out: it may be gone without a word (a machine lost, a network cut),
    /// so the next call reads the slot map before it asks.
    stale: AtomicBool,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("seeds", &self.seeds)
            .finish_non_exhaustive()
    }
}

impl Cluster {
    /// The cluster `url` names, its slot map read from a seed by `deadline` (each call's
    /// own deadline afterwards).
    pub(crate) fn open(url: &str, deadline: Duration) -> Result<Self, SharedError> {
        let cluster = Cluster {
            seeds: parse_seeds(url)?,
            deadline,
            map: RwLock::new(Arc::new(SlotMap::empty())),
            clients: Mutex::new(HashMap::new()),
            refreshed: Mutex::new(None),
            stale: AtomicBool::new(false),
        };
        cluster.refresh(later(Instant::now(), deadline))?;
        Ok(cluster)
    }

    /// The cluster's client calls' own deadline.
    pub(crate) fn own_deadline(&self) -> Duration {
        self.deadline
    }

    fn client(&self, addr: &str) -> Arc<Client> {
        let mut clients = self.clients.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(c) = clients.get(addr) {
            return Arc::clone(c);
        }
        let (host, port) = host_and_port(addr).unwrap_or(("", 0));
        let client = Arc::new(Client::to_node(
            self.seeds[0].node(host, port),
            self.deadline,
        ));
        if clients.len() >= MAX_NODES {
            clients.clear();
        }
        clients.insert(addr.to_owned(), Arc::clone(&client));
        client
    }

    fn current(&self) -> Arc<SlotMap> {
        Arc::clone(&self.map.read().unwrap_or_else(PoisonError::into_inner))
    }

    fn install(&self, map: SlotMap) {
        let known: std::collections::HashSet<&String> = map.nodes.iter().collect();
        self.clients
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|addr, _| known.contains(addr));
        *self.map.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(map);
    }

    /// Reads the slot map from the known masters, then the seeds, each given a share of the
    /// time left; the first good answer wins.
    fn refresh(&self, deadline: Instant) -> Result<(), SharedError> {
        let map = self.current();
        let mut asked: Vec<Target> = map
            .nodes
            .iter()
            .filter_map(|n| host_and_port(n).ok())
            .map(|(h, p)| self.seeds[0].node(h, p))
            .collect();
        for seed in &self.seeds {
            if !asked.iter().any(|t| t.addr() == seed.addr()) {
                asked.push(seed.clone());
            }
        }
        let mut last = None;
        for (i, target) in asked.iter().enumerate() {
            let now = Instant::now();
            let left = deadline.saturating_duration_since(now);
            if left.is_zero() {
                break;
            }
            let share = (left / u32::try_from(asked.len() - i).unwrap_or(u32::MAX))
                .max(SHORTEST_CALL)
                .min(left);
            let client = self.client(&target.addr());
            let answer = client
                .call_by(redis::cmd("CLUSTER").arg("SLOTS"), now + share)
                .and_then(|a| client.value(a))
                .and_then(|v| SlotMap::parse(&v, target));
            match answer {
                Ok(map) if map.nodes.is_empty() => {
                    last = Some(io(format!(
                        "Redis Cluster node {} serves no slots",
                        target.addr()
                    )));
                }
                Ok(map) => {
                    self.install(map);
                    return Ok(());
                }
                Err(e) => last = Some(e),
            }
        }
        Err(last
            .unwrap_or_else(|| io("no time left to read the Redis Cluster's slot map".to_owned())))
    }

    /// Refreshes the map unless another thread is, or did within [`PAUSE`].
    fn refresh_if_due(&self, deadline: Instant) {
        let Ok(mut refreshed) = self.refreshed.try_lock() else {
            return;
        };
        if refreshed.is_some_and(|at| at.elapsed() < PAUSE) {
            return;
        }
        if self.refresh(deadline).is_err() {
            self.stale.store(true, Ordering::Relaxed);
        }
        *refreshed = Some(Instant::now());
    }

    /// `addr` of a redirect from the node at `from`, as `host:port`: a redirect that names no
    /// host (`:6380`: the node does not know its own) means `from`'s host.
    fn redirected(from: &str, addr: &str) -> Result<String, SharedError> {
        let bad = || {
            io(format!(
                "Redis at {from}: a redirect to an address that is not host:port"
            ))
        };
        let (from_host, _) = host_and_port(from).map_err(|_| bad())?;
        let no_host = addr
            .strip_prefix(':')
            .filter(|port| port.bytes().all(|b| b.is_ascii_digit()));
        let (host, port) = match no_host {
            Some(port) => (
                from_host,
                port.parse().ok().filter(|p| *p != 0).ok_or_else(bad)?,
            ),
            None => host_and_port(addr).map_err(|_| bad())?,
        };
        Ok(Target::seed(host, port, false, None, None).addr())
    }

    /// Runs `cmd`, whose keys all lie in `slot`, on the slot's master: following redirects,
    /// waiting out a failover — all by `deadline`.
    pub(crate) fn call_by(
        &self,
        cmd: &redis::Cmd,
        slot: u16,
        deadline: Instant,
    ) -> Result<Answer, SharedError> {
        let mut ask: Option<String> = None;
        let mut redirects = 0;
        let mut last: Option<SharedError> = None;
        if self.stale.swap(false, Ordering::Relaxed) {
            self.refresh_if_due(deadline);
        }
        loop {
            let asking = ask.is_some();
            let addr = match ask.take() {
                Some(addr) => addr,
                None => match self.current().master(slot) {
                    Some(addr) => addr.to_owned(),
                    None => {
                        last.get_or_insert_with(|| {
                            io(format!("no node of the Redis Cluster serves slot {slot}"))
                        });
                        if !self.pause(deadline) {
                            break;
                        }
                        self.refresh_if_due(deadline);
                        continue;
                    }
                },
            };
            let answer = match self.client(&addr).call_asking(cmd, deadline, asking) {
                Ok(Answer::Moved { slot, addr: to }) => Ok(Answer::Moved {
                    slot,
                    addr: Self::redirected(&addr, &to)?,
                }),
                Ok(Answer::Ask { addr: to }) => Ok(Answer::Ask {
                    addr: Self::redirected(&addr, &to)?,
                }),
                other => other,
            };
            match answer {
                Ok(Answer::Moved { slot: moved, addr }) if redirects < MAX_REDIRECTS => {
                    redirects += 1;
                    // Nodes that send the call back and forth are between two steps of a
                    // migration: give them a moment.
                    if redirects > MAX_REDIRECTS / 2 && !self.pause(deadline) {
                        break;
                    }
                    if let Some(map) = self.current().moved(moved, &addr) {
                        *self.map.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(map);
                    }
                    self.refresh_if_due(deadline);
                }
                Ok(Answer::Ask { addr }) if redirects < MAX_REDIRECTS => {
                    redirects += 1;
                    ask = Some(addr);
                }
                Ok(Answer::Moved { slot, addr }) => {
                    return Err(io(format!(
                        "the Redis Cluster redirected the call more than {MAX_REDIRECTS} times \
                         (the last: MOVED {slot} {addr})"
                    )))
                }
                Ok(Answer::Ask { addr }) => {
                    return Err(io(format!(
                        "the Redis Cluster redirected the call more than {MAX_REDIRECTS} times \
                         (the last: ASK {addr})"
                    )))
                }
                // A redirect after a pause starts a new count: `ASK` then `TRYAGAIN` is how a
                // node importing a slot answers a script of several keys until the migration
                // ends.
                Ok(Answer::Busy(e)) => {
                    last = Some(e);
                    redirects = 0;
                    if !self.pause(deadline) {
                        break;
                    }
                    self.refresh_if_due(deadline);
                }
                Err(e) if is_lost(&e) || is_timeout(&e) => {
                    let cut = is_timeout(&e);
                    if cut {
                        self.stale.store(true, Ordering::Relaxed);
                    }
                    // A try the deadline cut says less than what an earlier try was answered
                    // (CLUSTERDOWN, TRYAGAIN, a lost connection): that is the one to name.
                    if !(cut && last.as_ref().is_some_and(|l| !is_timeout(l))) {
                        last = Some(e);
                    }
                    redirects = 0;
                    if !self.pause(deadline) {
                        break;
                    }
                    self.refresh_if_due(deadline);
                }
                other => return other,
            }
        }
        Err(last.map_or_else(
            || io("no answer within the call's deadline"),
            |e| match e {
                SharedError::Io(e) => io(format!(
                    "{e} (Redis Cluster, slot {slot}: no master answered within the call's \
                     deadline)"
                )),
                e => e,
            },
        ))
    }

    /// Sleeps [`PAUSE`], cut short by `deadline`; false when no time is left for another try.
    fn pause(&self, deadline: Instant) -> bool {
        let left = deadline.saturating_duration_since(Instant::now());
        if left <= PAUSE {
            return false;
        }
        std::thread::sleep(PAUSE);
        true
    }

    /// Pings every master, all by one deadline.
    pub(crate) fn ping(&self) -> Result<(), SharedError> {
        let deadline = later(Instant::now(), self.deadline);
        let map = self.current();
        for node in &map.nodes {
            let client = self.client(node);
            match client.value(client.call_by(&redis::cmd("PING"), deadline)?)? {
                Value::SimpleString(s) if s == "PONG" => {}
                v => return Err(io(format!("unexpected reply {v:?} from {node}"))),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_redis_own() {
        // CRC16/XMODEM's check value, and keys whose slots Redis documents.
        assert_eq!(crc16(b"123456789"), 0x31C3);
        assert_eq!(slot_of(b"foo"), 12182);
        assert_eq!(slot_of(b"{user1000}.following"), slot_of(b"user1000"));
        assert_eq!(slot_of(b"{user1000}.followers"), slot_of(b"user1000"));
        assert_eq!(slot_of(b"foo{}{bar}"), slot_of(b"foo{}{bar}".as_slice()));
        assert_ne!(slot_of(b"foo{}{bar}"), slot_of(b"bar"));
        assert_eq!(slot_of(b"foo{{bar}}zap"), slot_of(b"{bar"));
        assert_eq!(slot_of(b"foo{bar}{zap}"), slot_of(b"bar"));
        assert_eq!(slot_of(b"{fleet}:tat"), slot_of(b"{fleet}:settings"));
    }

    fn seeds(url: &str) -> Result<Vec<String>, String> {
        parse_seeds(url)
            .map(|s| s.iter().map(|t| format!("{t:?}")).collect())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn the_cluster_url_names_seeds_and_one_login() {
        assert_eq!(
            seeds("redis+cluster://127.0.0.1:7000,127.0.0.1:7001/").unwrap(),
            [
                "Target { addr: \"127.0.0.1:7000\", tls: false, user: None, password: None, db: 0 }",
                "Target { addr: \"127.0.0.1:7001\", tls: false, user: None, password: None, db: 0 }",
            ]
        );
        assert_eq!(
            seeds("rediss+cluster://app:p%40ss@[::1]:7000,redis.local/0").unwrap(),
            [
                "Target { addr: \"[::1]:7000\", tls: true, user: Some(\"app\"), password: Some(\"[redacted]\"), db: 0 }",
                "Target { addr: \"redis.local:6379\", tls: true, user: Some(\"app\"), password: Some(\"[redacted]\"), db: 0 }",
            ]
        );
        let t = &parse_seeds("redis+cluster://:p%40ss@h:1").unwrap()[0];
        assert!(format!("{t:?}").contains("user: None"));
    }

    #[test]
    fn a_bad_cluster_url_is_a_clear_error() {
        let cases = [
            (
                "redis+cluster://h:1/2",
                "a Redis Cluster has one database (0): the URL names database 2",
            ),
            (
                "redis+cluster://h:1/x?y",
                "a Redis Cluster URL ends with its hosts, or with / (no path, no options)",
            ),
            (
                "redis+cluster://h:1,,h:2/",
                "the Redis Cluster URL names a node that is not host:port (\"\")",
            ),
            (
                "redis+cluster://h:0/",
                "the Redis Cluster URL names a node that is not host:port (\"h:0\")",
            ),
            (
                "redis+cluster://h:99999/",
                "the Redis Cluster URL names a node that is not host:port (\"h:99999\")",
            ),
            (
                "redis+cluster://u:%zz@h:1/",
                "the Redis Cluster URL's password is not valid percent-encoding",
            ),
            (
                "redis+cluster:///",
                "the Redis Cluster URL names a node that is not host:port (\"\")",
            ),
            (
                "cluster://h:1/",
                "the Redis Cluster URL's scheme \"cluster\" is not redis+cluster:// or rediss+cluster://",
            ),
        ];
        for (url, want) in cases {
            assert_eq!(
                seeds(url).unwrap_err(),
                format!("shared state: {want}"),
                "{url}"
            );
        }
        let many = format!("redis+cluster://{}/", vec!["h:1"; 1001].join(","));
        assert!(seeds(&many)
            .unwrap_err()
            .contains("at most 1000 seed nodes"));
    }

    #[test]
    fn a_redirect_names_its_node_or_the_one_that_sent_it() {
        let to =
            |addr: &str| Cluster::redirected("127.0.0.1:7000", addr).map_err(|e| e.to_string());
        assert_eq!(to("127.0.0.1:7001").unwrap(), "127.0.0.1:7001");
        assert_eq!(to(":7002").unwrap(), "127.0.0.1:7002");
        assert_eq!(to("::1:7003").unwrap(), "[::1]:7003");
        assert_eq!(
            Cluster::redirected("[::1]:7000", ":7004").unwrap(),
            "[::1]:7004"
        );
        for bad in [":0", ":x", "h/x:1", ""] {
            assert_eq!(
                to(bad).unwrap_err(),
                "shared state: Redis at 127.0.0.1:7000: a redirect to an address that is not \
                 host:port",
                "{bad}"
            );
        }
    }

    fn node(host: &str, port: i64) -> Value {
        Value::Array(vec![
            Value::BulkString(host.as_bytes().to_vec()),
            Value::Int(port),
            Value::BulkString(b"id".to_vec()),
        ])
    }

    fn range(first: i64, last: i64, master: Value) -> Value {
        Value::Array(vec![Value::Int(first), Value::Int(last), master])
    }

    #[test]
    fn the_slot_map_is_read_and_checked() {
        let asked = Target::seed("10.0.0.9", 7000, false, None, None);
        let reply = Value::Array(vec![
            range(0, 5460, node("127.0.0.1", 7000)),
            range(5461, 10922, node("", 7001)),
            range(10923, 16383, node("127.0.0.1", 7000)),
        ]);
        let map = SlotMap::parse(&reply, &asked).unwrap();
        assert_eq!(map.nodes, ["127.0.0.1:7000", "10.0.0.9:7001"]);
        assert_eq!(map.master(0), Some("127.0.0.1:7000"));
        assert_eq!(map.master(5461), Some("10.0.0.9:7001"));
        assert_eq!(map.master(16383), Some("127.0.0.1:7000"));
        let moved = map.moved(3, "127.0.0.1:7002").unwrap();
        assert_eq!(moved.master(3), Some("127.0.0.1:7002"));
        assert_eq!(moved.master(4), Some("127.0.0.1:7000"));

        let partial = Value::Array(vec![range(0, 9, node("h", 1))]);
        assert_eq!(SlotMap::parse(&partial, &asked).unwrap().master(10), None);
        for (bad, why) in [
            (Value::Int(1), "not an array"),
            (
                Value::Array(vec![range(5, 4, node("h", 1))]),
                "a range out of the 16384 slots",
            ),
            (
                Value::Array(vec![range(0, 16384, node("h", 1))]),
                "a range out of the 16384 slots",
            ),
            (
                Value::Array(vec![range(0, 1, node("h", 0))]),
                "a master without a port",
            ),
            (
                Value::Array(vec![range(0, 1, node("h", 70000))]),
                "a master without a port",
            ),
            (
                Value::Array(vec![range(0, 1, node("h/x", 1))]),
                "a host name",
            ),
            (
                Value::Array(vec![range(0, 9, node("h", 1)), range(5, 20, node("h", 2))]),
                "a slot served twice",
            ),
            (
                Value::Array(vec![Value::Array(vec![Value::Int(0)])]),
                "a range without its master",
            ),
        ] {
            let e = SlotMap::parse(&bad, &asked).err().unwrap().to_string();
            assert_eq!(
                e,
                format!("shared state: bad CLUSTER SLOTS reply from 10.0.0.9:7000: {why}")
            );
        }
        let crowded = Value::Array(
            (0..1001)
                .map(|i| range(i, i, node("h", 1000 + i)))
                .collect(),
        );
        assert_eq!(
            SlotMap::parse(&crowded, &asked).err().unwrap().to_string(),
            "shared state: bad CLUSTER SLOTS reply from 10.0.0.9:7000: too many nodes"
        );
    }
}
