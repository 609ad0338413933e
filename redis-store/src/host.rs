//! The limits on Redis for a host that reaches Redis itself — a JavaScript client over recuo's
//! WebAssembly build, which has no sockets and cannot wait for a promise. The core's gates use
//! them as any remote store; each call to the server goes through a [`HostChannel`] instead of
//! a connection:
//!
//! - a call whose reply the core needs (a reservation, a place, a retry from the budget) is
//!   left in the channel ([`HostChannel::pending`]) and the core's call fails with an I/O
//!   error of kind `WouldBlock` ([`recuo::SharedError::would_block`]); the host runs the call,
//!   gives the reply ([`HostChannel::answer`]) and asks the core again, which reads it;
//! - a call whose reply nothing waits for (a first attempt counted, a place given back, a 429
//!   or a success told to an adaptive key) is queued ([`HostChannel::take_notice`]) for the
//!   host to run in order.
//!
//! The scripts, keys, arguments and the reading of the replies are [`crate::calls`]', the
//! same as this crate's own client runs.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use recuo::{
    CancelToken, IdempotencyKey, RemoteBudget, RemoteGcra, RemoteLease, RemoteLimit, RemotePlace,
    SharedError,
};

use crate::calls::{BudgetCalls, BudgetOp, GcraCalls, LeaseCalls, ScriptCall, SettingsCheck};

/// The most calls a channel queues for the host: a host that never runs them loses the
/// oldest (each is a count or a place given back, which the store's own expiry settles).
const MOST_NOTICES: usize = 1024;

#[derive(Debug, Default)]
struct Channel {
    pending: Option<ScriptCall>,
    answer: Option<Vec<i64>>,
    notices: VecDeque<ScriptCall>,
    /// The key's settings, while the host has not answered their call.
    settings: Option<SettingsCheck>,
    /// What the settings' reply said: `Err` names both settings of a key set up otherwise.
    settled: Option<Result<(), String>>,
}

/// Where a host-reached store leaves its calls for the host, and finds the host's replies.
/// Clones share one channel.
#[derive(Debug, Clone, Default)]
pub struct HostChannel(Arc<Mutex<Channel>>);

impl HostChannel {
    fn with<R>(&self, f: impl FnOnce(&mut Channel) -> R) -> R {
        f(&mut self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// The call the store waits on: run it, then [`answer`](Self::answer) its reply.
    pub fn pending(&self) -> Option<ScriptCall> {
        self.with(|c| c.pending.clone())
    }

    /// The reply (its integers) to the [`pending`](Self::pending) call: the store reads it
    /// when it is asked again (a key's settings are checked at once: see
    /// [`settled`](Self::settled)).
    pub fn answer(&self, reply: Vec<i64>) {
        self.with(|c| {
            c.pending = None;
            match c.settings.take() {
                Some(check) => {
                    c.settled = Some(check.reply(&reply).map_err(|e| match e {
                        SharedError::Mismatch(m) => m,
                        other => other.to_string(),
                    }));
                }
                None => c.answer = Some(reply),
            }
        });
    }

    /// The key's settings to record or compare, first of all: their call is left pending.
    pub fn check_settings(&self, check: SettingsCheck) {
        self.with(|c| {
            c.pending = Some(check.call.clone());
            c.settings = Some(check);
            c.settled = None;
        });
    }

    /// Whether the key's settings are this user's: `None` until the host answered their call,
    /// then `Ok`, or `Err` with both settings named (a key set up otherwise: every user of a
    /// key must agree).
    pub fn settled(&self) -> Option<Result<(), String>> {
        self.with(|c| c.settled.clone())
    }

    /// The next call whose reply nothing waits for, left in the queue.
    pub fn peek_notice(&self) -> Option<ScriptCall> {
        self.with(|c| c.notices.front().cloned())
    }

    /// The next call whose reply nothing waits for, in the order the store made them.
    pub fn take_notice(&self) -> Option<ScriptCall> {
        self.with(|c| c.notices.pop_front())
    }

    /// The reply to `call` when the host gave it, else `call` left for the host. The key's
    /// settings come first: until their call is answered the store waits on it, and a key
    /// set up otherwise is not used.
    fn ask(&self, call: ScriptCall) -> Result<Vec<i64>, SharedError> {
        self.with(|c| {
            if let Some(Err(m)) = &c.settled {
                return Err(SharedError::Mismatch(m.clone()));
            }
            if c.settings.is_some() {
                return Err(would_block());
            }
            match c.answer.take() {
                Some(reply) => Ok(reply),
                None => {
                    c.pending = Some(call);
                    Err(would_block())
                }
            }
        })
    }

    /// `call` queued for the host.
    fn tell(&self, call: ScriptCall) {
        self.with(|c| {
            if c.notices.len() == MOST_NOTICES {
                c.notices.pop_front();
            }
            c.notices.push_back(call);
        });
    }
}

/// The error of a call the host has not run yet.
fn would_block() -> SharedError {
    SharedError::Io(std::io::Error::new(
        std::io::ErrorKind::WouldBlock,
        "the host has not run this Redis call yet",
    ))
}

/// The regulator's state on a Redis server the host reaches (a [`RemoteGcra`]).
#[derive(Debug)]
pub struct HostGcra {
    calls: GcraCalls,
    channel: HostChannel,
    in_force_ns: AtomicU64,
}

impl HostGcra {
    /// The regulator named `key` (its settings checked by the host first: see
    /// [`GcraCalls::settings`]), its calls going through `channel`.
    pub fn new(calls: GcraCalls, channel: HostChannel) -> Self {
        HostGcra {
            calls,
            channel,
            in_force_ns: AtomicU64::new(0),
        }
    }
}

impl RemoteGcra for HostGcra {
    fn reserve(
        &self,
        now_ns: Option<u64>,
        cost: u32,
        max_wait_ns: u64,
        _until: Option<Instant>,
    ) -> Result<Result<u64, u64>, SharedError> {
        let call = self
            .calls
            .reserve(cost, max_wait_ns / 1000, now_ns.map(|n| n / 1000));
        let r = GcraCalls::reserved(&self.channel.ask(call)?);
        self.in_force_ns
            .store(self.calls.in_force_ns(r.interval_ns), Ordering::Release);
        let wait_ns = r.wait_us.saturating_mul(1000);
        Ok(if r.reserved {
            Ok(wait_ns)
        } else {
            Err(wait_ns)
        })
    }

    /// Queued for the host; the interval in force it will leave is the core's rule applied
    /// to the one last heard (the server's own answer comes with the next reservation), so
    /// that a success is told while the rate is cut, as with the crate's own client.
    fn adapt(&self, throttled: bool) -> Result<u64, SharedError> {
        self.channel.tell(self.calls.adapt(throttled));
        let base = self.calls.interval_ns();
        let heard = self.in_force_ns.load(Ordering::Acquire).max(base);
        let next = recuo::adapted_interval_ns(heard, base, throttled).unwrap_or(heard);
        self.in_force_ns.store(next, Ordering::Release);
        Ok(next)
    }

    fn adapt_by(&self, throttled: bool, _until: Option<Instant>) -> Result<u64, SharedError> {
        self.adapt(throttled)
    }

    fn interval_in_force_ns(&self) -> u64 {
        self.in_force_ns.load(Ordering::Acquire)
    }
}

/// A concurrency limit on a Redis server the host reaches (a [`RemoteLimit`]): it only looks
/// (a zero timeout); the host waits between looks.
pub struct HostLimit {
    calls: LeaseCalls,
    channel: HostChannel,
    /// The token of the place being asked for: the same one until the host answers.
    asking: Mutex<Option<String>>,
}

// Kept short: the core's limits print their remote store, and the WebAssembly build carries
// every formatting it may reach.
impl std::fmt::Debug for HostLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostLimit")
            .field("max", &self.calls.max())
            .finish_non_exhaustive()
    }
}

impl HostLimit {
    /// The limit named `key` (its settings checked by the host first: see
    /// [`LeaseCalls::settings`]), its calls going through `channel`.
    pub fn new(calls: LeaseCalls, channel: HostChannel) -> Self {
        HostLimit {
            calls,
            channel,
            asking: Mutex::new(None),
        }
    }
}

impl RemoteLimit for HostLimit {
    fn limit(&self) -> u32 {
        self.calls.max()
    }

    fn acquire(
        &self,
        timeout: Option<Duration>,
        _calls_until: Option<Instant>,
        _cancel: &CancelToken,
    ) -> Result<Option<RemotePlace>, SharedError> {
        if timeout != Some(Duration::ZERO) {
            return Err(SharedError::Io(std::io::Error::other(
                "a limit the host reaches only looks: the host waits between looks",
            )));
        }
        let mut asking = self.asking.lock().unwrap_or_else(PoisonError::into_inner);
        let token = asking
            .get_or_insert_with(|| IdempotencyKey::random().as_str().to_owned())
            .clone();
        let reply = self.channel.ask(self.calls.acquire(&token))?;
        *asking = None;
        Ok(LeaseCalls::acquired(&reply).ok().map(|()| {
            Box::new(HostLease {
                token,
                calls: self.calls.clone(),
                channel: self.channel.clone(),
            }) as RemotePlace
        }))
    }
}

/// A place held on a Redis server the host reaches: given back (a call queued for the host)
/// when dropped.
#[derive(Debug)]
pub struct HostLease {
    token: String,
    calls: LeaseCalls,
    channel: HostChannel,
}

impl RemoteLease for HostLease {
    fn renew(&self) -> Result<bool, SharedError> {
        Ok(LeaseCalls::held(
            &self.channel.ask(self.calls.renew(&self.token))?,
        ))
    }
}

impl Drop for HostLease {
    fn drop(&mut self) {
        self.channel.tell(self.calls.release(&self.token));
    }
}

/// The retry budget on a Redis server the host reaches (a [`RemoteBudget`]). A retry is
/// taken only on the host's answer: before an operation decides, the host asks whether it
/// would draw on the budget (`Operation::would_draw_on_budget`), asks the budget for the retry
/// (its call then waits on the channel), runs the call and
/// answers it; without an answer, no retry (the budget fails closed).
#[derive(Debug)]
pub struct HostBudget {
    calls: BudgetCalls,
    channel: HostChannel,
}

impl HostBudget {
    /// The budget named `key` (its settings checked by the host first: see
    /// [`BudgetCalls::settings`]), its calls going through `channel`.
    pub fn new(calls: BudgetCalls, channel: HostChannel) -> Self {
        HostBudget { calls, channel }
    }
}

impl RemoteBudget for HostBudget {
    fn settings(&self) -> (f64, f64, u32) {
        self.calls.settings_in_force()
    }

    fn record_request(&self, now_ns: Option<u64>) -> Result<(), SharedError> {
        self.channel
            .tell(self.calls.op(BudgetOp::Request, now_ns.map(seconds)));
        Ok(())
    }

    fn withdraw(&self, now_ns: Option<u64>) -> Result<bool, SharedError> {
        let call = self.calls.op(BudgetOp::Withdraw, now_ns.map(seconds));
        Ok(BudgetCalls::answered(&self.channel.ask(call)?).done)
    }

    fn counts(&self, now_ns: Option<u64>) -> Result<(u64, u64), SharedError> {
        let call = self.calls.op(BudgetOp::Counts, now_ns.map(seconds));
        let a = BudgetCalls::answered(&self.channel.ask(call)?);
        Ok((a.requests, a.retries))
    }
}

/// The server counts whole seconds.
fn seconds(now_ns: u64) -> u64 {
    now_ns / 1_000_000_000
}
