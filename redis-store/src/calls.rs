//! Each operation on a limit's state as data: the script to run, its keys and arguments, and
//! what its reply means. The crate's own client runs these calls; a host that reaches Redis
//! itself (a JavaScript client over recuo's WebAssembly build, which has no sockets) runs the
//! very same ones, and both read the replies here. Nothing in this module does I/O, and it is
//! built without the `client` feature too.

use recuo::SharedError;

/// One of recuo's Lua scripts: its text, and its SHA-1 for `EVALSHA` (`EVAL` with the text
/// when the server answers `NOSCRIPT`).
#[derive(Debug, PartialEq, Eq)]
pub struct Script {
    /// The Lua text.
    pub body: &'static str,
    /// The SHA-1 of the text, lowercase hex, as Redis names a cached script.
    pub sha1: &'static str,
}

// GCRA, ADAPT, SETTINGS, LEASE_ACQUIRE, LEASE_RENEW, LEASE_RELEASE and BUDGET: the files of
// src/ without their comment lines, and their SHA-1 (build.rs).
include!(concat!(env!("OUT_DIR"), "/scripts.rs"));

/// A script to run on the server: `EVALSHA sha1 len(keys) keys… args…`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptCall {
    /// The script.
    pub script: &'static Script,
    /// Its keys: all of one limit, in one cluster slot (they share the `{key}` hash tag).
    pub keys: Vec<String>,
    /// Its arguments.
    pub args: Vec<String>,
}

/// The Redis key of the limit named `key` that holds `suffix`: `{key}:suffix`, so that every
/// key of one limit lands in one cluster slot.
pub fn tagged(key: &str, suffix: &str) -> String {
    format!("{{{key}}}:{suffix}")
}

/// The integer at `i` of a reply, 0 when missing or negative.
fn at(reply: &[i64], i: usize) -> u64 {
    reply
        .get(i)
        .and_then(|&v| u64::try_from(v).ok())
        .unwrap_or(0)
}

/// A key's settings: the call that records them (or answers the ones in force) and what the
/// reply must be for this user to share the key.
#[derive(Debug, Clone, PartialEq)]
pub struct SettingsCheck {
    /// The call.
    pub call: ScriptCall,
    wanted: Vec<i64>,
    what: Kind,
}

/// Which limit a settings check is for, and the settings this user asked for.
#[derive(Debug, Clone, PartialEq)]
enum Kind {
    Regulator {
        key: String,
        interval_us: u64,
        burst: u32,
        adaptive: bool,
    },
    Limit {
        key: String,
        max: u32,
        lease_ms: u64,
    },
    Budget {
        key: String,
        ratio: f64,
        floor_per_s: f64,
        window_s: u32,
    },
}

impl SettingsCheck {
    fn new(key: &str, settings: &[(&str, String)], what: Kind) -> Self {
        let args = settings
            .iter()
            .flat_map(|(n, v)| [(*n).to_owned(), v.clone()])
            .collect();
        SettingsCheck {
            call: ScriptCall {
                script: &SETTINGS,
                keys: vec![tagged(key, "settings")],
                args,
            },
            wanted: settings
                .iter()
                .map(|(_, v)| v.parse().unwrap_or(-1))
                .collect(),
            what,
        }
    }

    /// Whether the settings in force (the reply) are this user's.
    ///
    /// # Errors
    /// [`SharedError::Mismatch`] naming both settings when the key was set up otherwise.
    pub fn reply(&self, found: &[i64]) -> Result<(), SharedError> {
        if found == self.wanted.as_slice() {
            return Ok(());
        }
        let f = |i: usize| found.get(i).copied().unwrap_or(0);
        Err(SharedError::Mismatch(match &self.what {
            Kind::Regulator {
                key,
                interval_us,
                burst,
                adaptive,
            } => {
                let words = |adaptive: bool| {
                    if adaptive {
                        "adaptive (a 429 slows every holder)"
                    } else {
                        "not adaptive"
                    }
                };
                let (i, b) = (f(0), f(1));
                if (found.get(2) == Some(&1)) == *adaptive {
                    format!(
                        "the Redis key {key:?} regulates one start every {i} µs with a burst of \
                         {b}; this process asked for one every {interval_us} µs with a burst of \
                         {burst}"
                    )
                } else {
                    format!(
                        "the Redis key {key:?} regulates one start every {i} µs with a burst of \
                         {b}, {}; this process asked for one every {interval_us} µs with a burst \
                         of {burst}, {} (the settings are made when the key is set up, and every \
                         process that uses it must agree)",
                        words(!adaptive),
                        words(*adaptive),
                    )
                }
            }
            Kind::Limit { key, max, lease_ms } => format!(
                "the Redis key {key:?} limits {} requests in flight with leases of {} ms; \
                 this process asked for {max} with leases of {lease_ms} ms",
                f(0),
                f(1)
            ),
            Kind::Budget {
                key,
                ratio,
                floor_per_s,
                window_s,
            } => format!(
                "the Redis key {key:?} holds a retry budget of ratio {} with a floor of {}/s \
                 over {} s; this process asked for ratio {ratio} with a floor of \
                 {floor_per_s}/s over {window_s} s",
                f(0) as f64 / 1e6,
                f(1) as f64 / 1e3,
                f(2)
            ),
        }))
    }
}

/// The regulator named `key`: one start every `interval_ns` (counted in whole microseconds
/// on the server), `burst` at once, adaptive or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GcraCalls {
    key: String,
    tat: String,
    settings: String,
    interval_key: String,
    interval_ns: u64,
    burst: u32,
    adaptive: bool,
}

/// A reservation's answer: whether a start was reserved, the wait before it (or the wait it
/// would need, when not), and the interval in force the server used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reserved {
    /// Reserved.
    pub reserved: bool,
    /// The wait, µs.
    pub wait_us: u64,
    /// The interval in force, ns, as the server answered it (0: none said).
    pub interval_ns: u64,
}

impl GcraCalls {
    /// The calls of the regulator named `key`.
    pub fn new(key: &str, interval_ns: u64, burst: u32, adaptive: bool) -> Self {
        // The server counts whole microseconds: the configured interval too.
        let interval_us = (interval_ns / 1000).max(1);
        GcraCalls {
            key: key.to_owned(),
            tat: tagged(key, "tat"),
            settings: tagged(key, "settings"),
            interval_key: tagged(key, "interval"),
            interval_ns: interval_us * 1000,
            burst,
            adaptive,
        }
    }

    /// The configured interval as the server counts it, ns (whole microseconds).
    pub fn interval_ns(&self) -> u64 {
        self.interval_ns
    }

    /// The check of the key's settings (interval, burst, adaptive).
    pub fn settings(&self) -> SettingsCheck {
        let interval_us = self.interval_ns / 1000;
        SettingsCheck::new(
            &self.key,
            &[
                ("interval_us", interval_us.to_string()),
                ("burst", self.burst.to_string()),
                ("adaptive", u8::from(self.adaptive).to_string()),
            ],
            Kind::Regulator {
                key: self.key.clone(),
                interval_us,
                burst: self.burst,
                adaptive: self.adaptive,
            },
        )
    }

    /// A reservation of `cost` within `max_wait_us`, at `now_us` on a time base every user
    /// shares (`None`: the server's clock).
    pub fn reserve(&self, cost: u32, max_wait_us: u64, now_us: Option<u64>) -> ScriptCall {
        ScriptCall {
            script: &GCRA,
            keys: vec![self.tat.clone(), self.interval_key.clone()],
            args: vec![
                self.interval_ns.to_string(),
                self.burst.to_string(),
                cost.to_string(),
                max_wait_us.min(1 << 52).to_string(),
                now_us.map_or_else(String::new, |n| n.to_string()),
            ],
        }
    }

    /// What a reservation's reply says.
    pub fn reserved(reply: &[i64]) -> Reserved {
        Reserved {
            reserved: reply.first() == Some(&1),
            wait_us: at(reply, 1),
            interval_ns: at(reply, 2),
        }
    }

    /// A 429 (`throttled`) or a success told to an adaptive key.
    pub fn adapt(&self, throttled: bool) -> ScriptCall {
        ScriptCall {
            script: &ADAPT,
            keys: vec![self.settings.clone(), self.interval_key.clone()],
            args: vec![
                u8::from(throttled).to_string(),
                self.interval_ns.to_string(),
            ],
        }
    }

    /// The interval in force an adaptation's reply says, ns, kept within the settings (from
    /// the configured interval to 64 times it); a reservation's too.
    pub fn in_force_ns(&self, answered_ns: u64) -> u64 {
        answered_ns.clamp(self.interval_ns, self.interval_ns.saturating_mul(64))
    }

    /// The interval an adaptation's reply says, ns (0: none said).
    pub fn adapted(reply: &[i64]) -> u64 {
        at(reply, 0)
    }
}

/// The concurrency limit named `key`: at most `max` leases of `lease_ms` each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseCalls {
    key: String,
    leases: String,
    max: u32,
    lease_ms: u64,
}

impl LeaseCalls {
    /// The calls of the limit named `key`.
    pub fn new(key: &str, max: u32, lease_ms: u64) -> Self {
        LeaseCalls {
            key: key.to_owned(),
            leases: tagged(key, "leases"),
            max,
            lease_ms,
        }
    }

    /// The most requests in flight.
    pub fn max(&self) -> u32 {
        self.max
    }

    /// How long a lease lasts unless renewed, ms.
    pub fn lease_ms(&self) -> u64 {
        self.lease_ms
    }

    /// The check of the key's settings (max, lease).
    pub fn settings(&self) -> SettingsCheck {
        SettingsCheck::new(
            &self.key,
            &[
                ("max", self.max.to_string()),
                ("lease_ms", self.lease_ms.to_string()),
            ],
            Kind::Limit {
                key: self.key.clone(),
                max: self.max,
                lease_ms: self.lease_ms,
            },
        )
    }

    /// A place taken as the lease `token` (a random name of the holder's).
    pub fn acquire(&self, token: &str) -> ScriptCall {
        self.call(
            &LEASE_ACQUIRE,
            vec![
                self.max.to_string(),
                self.lease_ms.to_string(),
                token.to_owned(),
            ],
        )
    }

    /// An acquisition's reply: `Ok(())` when the place is taken, else the wait until the
    /// earliest lease ends, ms (at least 1).
    pub fn acquired(reply: &[i64]) -> Result<(), u64> {
        if reply.first() == Some(&1) {
            Ok(())
        } else {
            Err(reply
                .get(1)
                .and_then(|&w| u64::try_from(w).ok())
                .unwrap_or(1)
                .max(1))
        }
    }

    /// The lease `token` extended by the limit's lease time from now.
    pub fn renew(&self, token: &str) -> ScriptCall {
        self.call(
            &LEASE_RENEW,
            vec![self.lease_ms.to_string(), token.to_owned()],
        )
    }

    /// The lease `token` given back.
    pub fn release(&self, token: &str) -> ScriptCall {
        self.call(&LEASE_RELEASE, vec![token.to_owned()])
    }

    /// The places held now (a release of no lease).
    pub fn in_flight(&self) -> ScriptCall {
        self.release("-")
    }

    /// Whether a renewal or a release found the lease held (the first integer of its reply).
    pub fn held(reply: &[i64]) -> bool {
        reply.first() == Some(&1)
    }

    /// The places held a release's reply counts.
    pub fn counted(reply: &[i64]) -> u32 {
        u32::try_from(at(reply, 1)).unwrap_or(u32::MAX)
    }

    fn call(&self, script: &'static Script, args: Vec<String>) -> ScriptCall {
        ScriptCall {
            script,
            keys: vec![self.leases.clone()],
            args,
        }
    }
}

/// What the budget's script is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BudgetOp {
    /// A first attempt counted.
    Request,
    /// One retry taken if the budget allows it.
    Withdraw,
    /// The counts of the window.
    Counts,
}

impl BudgetOp {
    fn word(self) -> &'static str {
        match self {
            BudgetOp::Request => "request",
            BudgetOp::Withdraw => "withdraw",
            BudgetOp::Counts => "counts",
        }
    }
}

/// A budget's answer: whether the request was counted or the retry taken, and the requests
/// and retries of the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BudgetAnswer {
    /// Counted, or withdrawn.
    pub done: bool,
    /// First attempts in the window.
    pub requests: u64,
    /// Retries in the window.
    pub retries: u64,
}

/// The retry budget named `key` (the settings already checked by the core's rule).
#[derive(Debug, Clone, PartialEq)]
pub struct BudgetCalls {
    key: String,
    counts: String,
    ratio_ppm: u64,
    floor_milli: u64,
    window_s: u32,
}

impl BudgetCalls {
    /// The calls of the budget named `key`: retries may be `ratio` of the requests of the
    /// last `window_s` seconds, plus `floor_per_s` a second.
    pub fn new(key: &str, ratio: f64, floor_per_s: f64, window_s: u32) -> Self {
        BudgetCalls {
            key: key.to_owned(),
            counts: tagged(key, "budget"),
            ratio_ppm: (ratio * 1e6).round() as u64,
            floor_milli: (floor_per_s * 1e3).round() as u64,
            window_s,
        }
    }

    /// The settings as the server counts them: ratio, floor per second, window in seconds.
    pub fn settings_in_force(&self) -> (f64, f64, u32) {
        (
            self.ratio_ppm as f64 / 1e6,
            self.floor_milli as f64 / 1e3,
            self.window_s,
        )
    }

    /// The check of the key's settings (ratio, floor, window).
    pub fn settings(&self) -> SettingsCheck {
        let (ratio, floor_per_s, window_s) = self.settings_in_force();
        SettingsCheck::new(
            &self.key,
            &[
                ("ratio_ppm", self.ratio_ppm.to_string()),
                ("floor_milli_per_s", self.floor_milli.to_string()),
                ("window_s", self.window_s.to_string()),
            ],
            Kind::Budget {
                key: self.key.clone(),
                ratio,
                floor_per_s,
                window_s,
            },
        )
    }

    /// `op`, at `now_s` seconds on a time base every user shares (`None`: the server's clock).
    pub fn op(&self, op: BudgetOp, now_s: Option<u64>) -> ScriptCall {
        ScriptCall {
            script: &BUDGET,
            keys: vec![self.counts.clone()],
            args: vec![
                op.word().to_owned(),
                self.ratio_ppm.to_string(),
                self.floor_milli.to_string(),
                self.window_s.to_string(),
                now_s.map_or_else(String::new, |n| n.to_string()),
            ],
        }
    }

    /// What the budget's reply says.
    pub fn answered(reply: &[i64]) -> BudgetAnswer {
        BudgetAnswer {
            done: at(reply, 0) == 1,
            requests: at(reply, 1),
            retries: at(reply, 2),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_share_one_hash_tag_and_calls_say_what_the_scripts_read() {
        let g = GcraCalls::new("api", 500_000_400, 3, true);
        assert_eq!(g.interval_ns(), 500_000_000, "whole microseconds");
        let r = g.reserve(1, 2_000_000, Some(7));
        assert_eq!(r.script, &GCRA);
        assert_eq!(r.keys, ["{api}:tat", "{api}:interval"]);
        assert_eq!(r.args, ["500000000", "3", "1", "2000000", "7"]);
        assert_eq!(
            g.reserve(2, u64::MAX, None).args[3..],
            ["4503599627370496", ""]
        );
        assert_eq!(g.adapt(true).keys, ["{api}:settings", "{api}:interval"]);
        assert_eq!(g.adapt(true).args, ["1", "500000000"]);
        let l = LeaseCalls::new("api", 4, 30_000);
        assert_eq!(l.acquire("t1").keys, ["{api}:leases"]);
        assert_eq!(l.acquire("t1").args, ["4", "30000", "t1"]);
        assert_eq!(l.renew("t1").args, ["30000", "t1"]);
        assert_eq!(l.in_flight().args, ["-"]);
        let b = BudgetCalls::new("api", 0.1, 1.0, 10);
        assert_eq!(b.op(BudgetOp::Withdraw, None).keys, ["{api}:budget"]);
        assert_eq!(
            b.op(BudgetOp::Withdraw, Some(9)).args,
            ["withdraw", "100000", "1000", "10", "9"]
        );
    }

    #[test]
    fn replies_are_read_as_the_scripts_write_them() {
        assert_eq!(
            GcraCalls::reserved(&[1, 250, 500_000]),
            Reserved {
                reserved: true,
                wait_us: 250,
                interval_ns: 500_000
            }
        );
        assert!(!GcraCalls::reserved(&[0, 9]).reserved);
        assert_eq!(LeaseCalls::acquired(&[1, 3]), Ok(()));
        assert_eq!(LeaseCalls::acquired(&[0, 0]), Err(1), "at least 1 ms");
        assert_eq!(LeaseCalls::acquired(&[0, 40]), Err(40));
        assert_eq!(LeaseCalls::counted(&[0, 2]), 2);
        assert!(LeaseCalls::held(&[1, 0]));
        assert_eq!(
            BudgetCalls::answered(&[1, 20, 3]),
            BudgetAnswer {
                done: true,
                requests: 20,
                retries: 3
            }
        );
        let g = GcraCalls::new("k", 1_000_000, 1, true);
        assert_eq!(
            g.in_force_ns(0),
            1_000_000,
            "never below the configured interval"
        );
        assert_eq!(
            g.in_force_ns(u64::MAX),
            64_000_000,
            "never above 64 times it"
        );
    }

    #[test]
    fn a_key_set_up_otherwise_is_refused_naming_both_settings() {
        let check = GcraCalls::new("api", 1_000_000, 5, false).settings();
        assert_eq!(
            check.call.args,
            ["interval_us", "1000", "burst", "5", "adaptive", "0"]
        );
        assert!(check.reply(&[1000, 5, 0]).is_ok());
        let Err(SharedError::Mismatch(m)) = check.reply(&[2000, 5, 0]) else {
            panic!("a mismatch")
        };
        assert!(
            m.contains("one start every 2000 µs") && m.contains("every 1000 µs"),
            "{m}"
        );
        let Err(SharedError::Mismatch(m)) = check.reply(&[1000, 5, 1]) else {
            panic!("a mismatch")
        };
        assert!(m.contains("adaptive (a 429 slows every holder)"), "{m}");
        let check = LeaseCalls::new("api", 2, 100).settings();
        assert!(check.reply(&[3, 100]).is_err());
        let check = BudgetCalls::new("api", 0.2, 2.0, 5).settings();
        assert!(check.reply(&[200_000, 2000, 5]).is_ok());
    }

    #[cfg(feature = "client")]
    #[test]
    fn each_scripts_sha1_is_its_texts() {
        for s in [
            &GCRA,
            &ADAPT,
            &SETTINGS,
            &LEASE_ACQUIRE,
            &LEASE_RENEW,
            &LEASE_RELEASE,
            &BUDGET,
        ] {
            assert_eq!(redis::Script::new(s.body).get_hash(), s.sha1);
        }
    }
}
