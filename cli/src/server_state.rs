//! What the simulated API decides for each request, and what it saw: per-key allowances
//! (the core's regulator), a daily quota, random 503s, and the counters `GET /stats`
//! answers. No sockets here: the HTTP side is in `serve.rs`.

use std::collections::{BTreeMap, HashMap};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use rand::RngCore;
use recuo::{JitterRng, Rate, Regulator};
use serde::Serialize;

use crate::args::RetryAfterMode;

/// How long a spent daily quota tells clients to wait: a day.
pub const QUOTA_WAIT: Duration = Duration::from_secs(86_400);

/// The simulated API's settings.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Requests allowed per key (API key or client address).
    pub allowance: Rate,
    /// Starts allowed at once after a quiet spell.
    pub burst: u32,
    /// The share of admitted requests answered 503.
    pub fail_rate: f64,
    /// How long a 200 or 503 takes.
    pub latency: Duration,
    /// How 429s and 503s say when to come back.
    pub retry_after: RetryAfterMode,
    /// Requests served per key before the quota is spent.
    pub quota: Option<u64>,
    /// The seed of the random 503s.
    pub seed: Option<u64>,
}

/// What to answer one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// 200, the `n`-th request served to this key.
    Ok(u64),
    /// 429: over the allowance; a start would be allowed after this wait.
    Throttled(Duration),
    /// 429: the daily quota is spent.
    QuotaSpent,
    /// 503: unavailable for a moment.
    Unavailable,
}

/// What the server knows of one request when it decides the answer.
#[derive(Debug, Clone, Copy)]
pub struct Arrival<'a> {
    /// What the allowance is counted by: `key:` and the API key, or the client's address.
    pub client: &'a str,
    /// The `Idempotency-Key` header, if any.
    pub idempotency_key: Option<&'a str>,
    /// The method.
    pub method: &'a str,
    /// The path.
    pub path: &'a str,
    /// The body's length.
    pub body_bytes: u64,
    /// Whether it carried an `Authorization` header (its value is never kept).
    pub authorization: bool,
}

/// The configuration as `/stats` shows it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ConfigJson {
    /// The allowance per key, per minute.
    pub allowance_per_min: f64,
    /// The burst.
    pub burst: u32,
    /// The share of 503s.
    pub fail_rate: f64,
    /// The latency of 200s and 503s, ms.
    pub latency_ms: u64,
    /// `seconds`, `date` or `none`.
    pub retry_after: &'static str,
    /// The daily quota per key, if any.
    pub quota: Option<u64>,
}

/// What the server saw: the body of `GET /stats`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ServerStats {
    /// API requests received (`/stats` itself is not counted).
    pub requests: u64,
    /// 200s sent.
    pub ok: u64,
    /// 429s sent (allowance and quota).
    pub throttled: u64,
    /// 429s sent because the quota was spent (included in `throttled`).
    pub quota_refused: u64,
    /// 503s sent.
    pub unavailable: u64,
    /// Requests being answered now.
    pub in_flight: u64,
    /// The most requests answered at once.
    pub max_in_flight: u64,
    /// Request starts in each second since the server started.
    pub starts_per_second: Vec<u64>,
    /// The most starts in one of those seconds.
    pub max_starts_per_second: u64,
    /// Distinct `Idempotency-Key` values seen (one per operation when clients reuse keys).
    pub idempotency_keys: u64,
    /// Requests received with each `Idempotency-Key` (the first 10 000 keys).
    pub requests_per_idempotency_key: BTreeMap<String, u64>,
    /// Requests whose `Idempotency-Key` had been seen before with another method, path or
    /// body (a real server would refuse them, 422).
    pub idempotency_key_conflicts: u64,
    /// Requests received, by method.
    pub methods: BTreeMap<String, u64>,
    /// Distinct paths requested (the first 100 000).
    pub paths: u64,
    /// Requests that carried an `Authorization` header.
    pub with_authorization: u64,
    /// The bytes of the request bodies received.
    pub body_bytes: u64,
    /// Requests that came back, with the same `Idempotency-Key`, before the wait this
    /// server's own `Retry-After` asked for had passed: a careful client keeps it at 0.
    pub early_retries: u64,
    /// Distinct keys the allowance was counted for (API keys or client addresses).
    pub clients: u64,
    /// Seconds since the server started.
    pub uptime_s: f64,
    /// The settings.
    pub config: ConfigJson,
}

impl ServerStats {
    /// What the server saw, in the Prometheus text format (version 0.0.4): the body of
    /// `GET /metrics` (neither it nor `/stats` is counted).
    pub fn to_prometheus(&self) -> String {
        let mut out = String::new();
        let mut metric = |name: &str, kind: &str, help: &str, series: &[(&str, f64)]| {
            out.push_str(&format!("# HELP {name} {help}\n# TYPE {name} {kind}\n"));
            for (labels, value) in series {
                out.push_str(&format!("{name}{labels} {value}\n"));
            }
        };
        let n = |v: u64| v as f64;
        metric(
            "recuo_serve_requests_total",
            "counter",
            "API requests received.",
            &[("", n(self.requests))],
        );
        metric(
            "recuo_serve_responses_total",
            "counter",
            "Answers sent, by status.",
            &[
                ("{status=\"200\"}", n(self.ok)),
                ("{status=\"429\"}", n(self.throttled)),
                ("{status=\"503\"}", n(self.unavailable)),
            ],
        );
        metric(
            "recuo_serve_quota_refusals_total",
            "counter",
            "429s sent because the daily quota was spent (counted in the 429s too).",
            &[("", n(self.quota_refused))],
        );
        metric(
            "recuo_serve_early_retries_total",
            "counter",
            "Requests that came back with the same Idempotency-Key before the Retry-After asked had passed.",
            &[("", n(self.early_retries))],
        );
        metric(
            "recuo_serve_idempotency_key_conflicts_total",
            "counter",
            "Requests whose Idempotency-Key came before with another method, path or body.",
            &[("", n(self.idempotency_key_conflicts))],
        );
        metric(
            "recuo_serve_in_flight",
            "gauge",
            "Requests being answered now.",
            &[("", n(self.in_flight))],
        );
        metric(
            "recuo_serve_max_in_flight",
            "gauge",
            "The most requests answered at once.",
            &[("", n(self.max_in_flight))],
        );
        metric(
            "recuo_serve_uptime_seconds",
            "gauge",
            "Seconds since the server started.",
            &[("", self.uptime_s)],
        );
        out
    }
}

#[derive(Debug)]
struct KeyState {
    regulator: Regulator,
    served: u64,
}

#[derive(Debug)]
struct Inner {
    keys: HashMap<String, KeyState>,
    rng: JitterRng,
    requests: u64,
    ok: u64,
    throttled: u64,
    quota_refused: u64,
    unavailable: u64,
    in_flight: u64,
    max_in_flight: u64,
    starts_per_second: Vec<u64>,
    /// Per key: the requests, and a digest of the method, path and body first seen with it.
    idempotency_keys: HashMap<String, (u64, u64)>,
    idempotency_key_conflicts: u64,
    methods: BTreeMap<String, u64>,
    paths: std::collections::HashSet<String>,
    with_authorization: u64,
    body_bytes: u64,
    /// Per idempotency key: the monotonic instant (ns) before which the server asked it not
    /// to come back.
    not_before: HashMap<String, u64>,
    early_retries: u64,
}

/// The most keys `/stats` counts requests for, and the most paths it tells apart.
const MAX_KEYS: usize = 10_000;
const MAX_PATHS: usize = 100_000;

/// The server's state, shared by every connection.
#[derive(Debug)]
pub struct ServerState {
    config: ServerConfig,
    started_ns: u64,
    inner: Mutex<Inner>,
}

/// The most seconds `/stats` keeps a per-second count for (a day): the list stops growing.
const MAX_SECONDS: usize = 86_400;

impl ServerState {
    /// A fresh server started at `now_ns` (monotonic).
    pub fn new(config: ServerConfig, now_ns: u64) -> Self {
        let rng = JitterRng::from_seed_option(config.seed);
        ServerState {
            config,
            started_ns: now_ns,
            inner: Mutex::new(Inner {
                keys: HashMap::new(),
                rng,
                requests: 0,
                ok: 0,
                throttled: 0,
                quota_refused: 0,
                unavailable: 0,
                in_flight: 0,
                max_in_flight: 0,
                starts_per_second: Vec::new(),
                idempotency_keys: HashMap::new(),
                idempotency_key_conflicts: 0,
                methods: BTreeMap::new(),
                paths: std::collections::HashSet::new(),
                with_authorization: 0,
                body_bytes: 0,
                not_before: HashMap::new(),
                early_retries: 0,
            }),
        }
    }

    /// The settings.
    pub fn config(&self) -> &ServerConfig {
        &self.config
    }

    fn with<R>(&self, f: impl FnOnce(&mut Inner) -> R) -> R {
        f(&mut self.inner.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Decides the answer to the request `arrival`, arriving at `now_ns`; counts it as in
    /// flight until [`finish`](Self::finish).
    ///
    /// Every request draws one random number, so with a seed the n-th request's draw is
    /// always the same. The quota is looked at first, then the allowance, then the draw.
    pub fn admit(&self, arrival: &Arrival<'_>, now_ns: u64) -> Answer {
        let key = arrival.client;
        let second = usize::try_from(now_ns.saturating_sub(self.started_ns) / 1_000_000_000)
            .unwrap_or(usize::MAX);
        self.with(|i| {
            i.requests += 1;
            i.in_flight += 1;
            i.max_in_flight = i.max_in_flight.max(i.in_flight);
            if second < MAX_SECONDS {
                if i.starts_per_second.len() <= second {
                    i.starts_per_second.resize(second + 1, 0);
                }
                i.starts_per_second[second] += 1;
            }
            if let Some(k) = arrival.idempotency_key {
                if i.not_before.remove(k).is_some_and(|at| now_ns < at) {
                    i.early_retries += 1;
                }
                let mut h = DefaultHasher::new();
                (arrival.method, arrival.path, arrival.body_bytes).hash(&mut h);
                let digest = h.finish();
                let room = i.idempotency_keys.len() < 1_000_000;
                match i.idempotency_keys.get_mut(k) {
                    Some((n, first)) => {
                        *n += 1;
                        if *first != digest {
                            i.idempotency_key_conflicts += 1;
                        }
                    }
                    None if room => {
                        i.idempotency_keys.insert(k.to_string(), (1, digest));
                    }
                    None => {}
                }
            }
            if i.methods.len() < 100 || i.methods.contains_key(arrival.method) {
                *i.methods.entry(arrival.method.to_string()).or_insert(0) += 1;
            }
            if i.paths.len() < MAX_PATHS && !i.paths.contains(arrival.path) {
                i.paths.insert(arrival.path.to_string());
            }
            i.with_authorization += u64::from(arrival.authorization);
            i.body_bytes = i.body_bytes.saturating_add(arrival.body_bytes);
            // The top 53 bits as a fraction in [0, 1).
            let draw = (i.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            if !i.keys.contains_key(key) {
                let regulator = Regulator::new(self.config.allowance, self.config.burst.max(1))
                    .or_else(|_| Regulator::new(self.config.allowance, 1));
                let Ok(regulator) = regulator else {
                    return Answer::Unavailable;
                };
                i.keys.insert(
                    key.to_string(),
                    KeyState {
                        regulator,
                        served: 0,
                    },
                );
            }
            let Some(state) = i.keys.get_mut(key) else {
                return Answer::Unavailable;
            };
            let answer = if self.config.quota.is_some_and(|q| state.served >= q) {
                Answer::QuotaSpent
            } else {
                match state.regulator.try_acquire_at(now_ns, 1) {
                    Err(Ok(wait)) => Answer::Throttled(wait),
                    Err(Err(_)) => Answer::Throttled(Duration::from_secs(1)),
                    Ok(()) if draw < self.config.fail_rate => Answer::Unavailable,
                    Ok(()) => {
                        state.served += 1;
                        Answer::Ok(state.served)
                    }
                }
            };
            match answer {
                Answer::Ok(_) => i.ok += 1,
                Answer::Throttled(_) => i.throttled += 1,
                Answer::QuotaSpent => {
                    i.throttled += 1;
                    i.quota_refused += 1;
                }
                Answer::Unavailable => i.unavailable += 1,
            }
            answer
        })
    }

    /// The answer to the request with `idempotency_key`, sent at `now_ns`, asked the client
    /// to wait `told` before it comes back (its `Retry-After`).
    pub fn told(&self, idempotency_key: Option<&str>, told: Duration, now_ns: u64) {
        let Some(k) = idempotency_key else {
            return;
        };
        let at = now_ns.saturating_add(u64::try_from(told.as_nanos()).unwrap_or(u64::MAX));
        self.with(|i| {
            if i.not_before.len() < MAX_KEYS || i.not_before.contains_key(k) {
                i.not_before.insert(k.to_string(), at);
            }
        });
    }

    /// A request admitted by [`admit`](Self::admit) has been answered (or dropped).
    pub fn finish(&self) {
        self.with(|i| i.in_flight = i.in_flight.saturating_sub(1));
    }

    /// What the server saw, as of `now_ns`.
    pub fn stats(&self, now_ns: u64) -> ServerStats {
        let c = &self.config;
        self.with(|i| ServerStats {
            requests: i.requests,
            ok: i.ok,
            throttled: i.throttled,
            quota_refused: i.quota_refused,
            unavailable: i.unavailable,
            in_flight: i.in_flight,
            max_in_flight: i.max_in_flight,
            max_starts_per_second: i.starts_per_second.iter().copied().max().unwrap_or(0),
            starts_per_second: i.starts_per_second.clone(),
            idempotency_keys: i.idempotency_keys.len() as u64,
            requests_per_idempotency_key: {
                let mut keys: Vec<_> = i.idempotency_keys.iter().collect();
                keys.sort();
                keys.into_iter()
                    .take(MAX_KEYS)
                    .map(|(k, (n, _))| (k.clone(), *n))
                    .collect()
            },
            idempotency_key_conflicts: i.idempotency_key_conflicts,
            methods: i.methods.clone(),
            paths: i.paths.len() as u64,
            with_authorization: i.with_authorization,
            body_bytes: i.body_bytes,
            early_retries: i.early_retries,
            clients: i.keys.len() as u64,
            uptime_s: now_ns.saturating_sub(self.started_ns) as f64 / 1e9,
            config: ConfigJson {
                allowance_per_min: c.allowance.as_per_minute(),
                burst: c.burst,
                fail_rate: c.fail_rate,
                latency_ms: u64::try_from(c.latency.as_millis()).unwrap_or(u64::MAX),
                retry_after: c.retry_after.name(),
                quota: c.quota,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    fn config() -> ServerConfig {
        ServerConfig {
            allowance: "60/min".parse().unwrap(),
            burst: 2,
            fail_rate: 0.0,
            latency: Duration::ZERO,
            retry_after: RetryAfterMode::Seconds,
            quota: None,
            seed: Some(1),
        }
    }

    fn get<'a>(client: &'a str, key: Option<&'a str>) -> Arrival<'a> {
        Arrival {
            client,
            idempotency_key: key,
            method: "GET",
            path: "/items/1",
            body_bytes: 0,
            authorization: false,
        }
    }

    #[test]
    fn keys_methods_and_paths_are_counted() {
        let s = ServerState::new(
            ServerConfig {
                burst: 100,
                ..config()
            },
            0,
        );
        let post = |key, path, body_bytes| Arrival {
            method: "POST",
            path,
            body_bytes,
            authorization: true,
            ..get("a", Some(key))
        };
        let _ = s.admit(&post("k1", "/a", 3), S);
        let _ = s.admit(&post("k1", "/a", 3), S);
        let _ = s.admit(&post("k1", "/b", 3), S);
        let _ = s.admit(&post("k2", "/b", 5), S);
        let _ = s.admit(&get("a", None), S);
        let st = s.stats(S);
        assert_eq!(st.requests_per_idempotency_key["k1"], 3);
        assert_eq!(st.requests_per_idempotency_key["k2"], 1);
        assert_eq!(st.idempotency_key_conflicts, 1);
        assert_eq!((st.methods["POST"], st.methods["GET"]), (4, 1));
        assert_eq!((st.paths, st.with_authorization, st.body_bytes), (3, 4, 14));
    }

    #[test]
    fn a_retry_before_the_told_wait_is_early() {
        let s = ServerState::new(
            ServerConfig {
                burst: 100,
                ..config()
            },
            0,
        );
        let _ = s.admit(&get("a", Some("k1")), S);
        s.told(Some("k1"), Duration::from_secs(2), S);
        let _ = s.admit(&get("a", Some("k1")), 2 * S); // 1 s early
        s.told(Some("k1"), Duration::from_secs(2), 2 * S);
        let _ = s.admit(&get("a", Some("k1")), 4 * S); // on time
        let _ = s.admit(&get("a", Some("k2")), 4 * S); // a new operation
        s.told(None, Duration::from_secs(2), 4 * S); // no key: nothing to follow
        assert_eq!(s.stats(4 * S).early_retries, 1);
    }

    #[test]
    fn the_allowance_is_counted_per_key() {
        let s = ServerState::new(config(), 10 * S);
        let t = 10 * S;
        assert_eq!(s.admit(&get("a", Some("k1")), t), Answer::Ok(1));
        assert_eq!(s.admit(&get("a", Some("k2")), t), Answer::Ok(2));
        assert_eq!(
            s.admit(&get("a", Some("k3")), t),
            Answer::Throttled(Duration::from_secs(1))
        );
        assert_eq!(s.admit(&get("b", Some("k3")), t), Answer::Ok(1));
        assert_eq!(s.admit(&get("a", None), t + S), Answer::Ok(3));
        for _ in 0..5 {
            s.finish();
        }
        let st = s.stats(t + 2 * S);
        assert_eq!((st.requests, st.ok, st.throttled), (5, 4, 1));
        assert_eq!((st.idempotency_keys, st.clients), (3, 2));
        assert_eq!(st.starts_per_second, vec![4, 1]);
        assert_eq!((st.max_starts_per_second, st.max_in_flight), (4, 5));
        assert_eq!(st.in_flight, 0);
        assert_eq!(st.uptime_s, 2.0);
    }

    #[test]
    fn a_spent_quota_refuses_before_the_allowance() {
        let s = ServerState::new(
            ServerConfig {
                quota: Some(1),
                burst: 10,
                ..config()
            },
            0,
        );
        assert_eq!(s.admit(&get("a", None), S), Answer::Ok(1));
        assert_eq!(s.admit(&get("a", None), S), Answer::QuotaSpent);
        let st = s.stats(S);
        assert_eq!((st.throttled, st.quota_refused, st.ok), (1, 1, 1));
    }

    #[test]
    fn failures_follow_the_seeded_draws() {
        let run = || {
            let s = ServerState::new(
                ServerConfig {
                    fail_rate: 0.5,
                    burst: 1000,
                    allowance: "1000/s".parse().unwrap(),
                    ..config()
                },
                0,
            );
            (0..100)
                .map(|_| s.admit(&get("a", None), S) == Answer::Unavailable)
                .collect::<Vec<_>>()
        };
        let a = run();
        assert_eq!(a, run());
        let failed = a.iter().filter(|&&f| f).count();
        assert!((30..=70).contains(&failed), "{failed}");
        let all = ServerState::new(
            ServerConfig {
                fail_rate: 1.0,
                ..config()
            },
            0,
        );
        assert_eq!(all.admit(&get("a", None), S), Answer::Unavailable);
    }
}
