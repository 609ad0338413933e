//! The trial's log of attempts: when each started and ended and what came back. The counts
//! of the report are the core's (`recuo::Stats`); this log feeds the progress bar, the
//! responses seen and the plot.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use recuo::Outcome;

/// One attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// The start, ns on the monotonic clock.
    pub start_ns: u64,
    /// The end, ns on the monotonic clock.
    pub end_ns: u64,
    /// The attempt's number within its read (0 is the first).
    pub attempt: u32,
    /// What came back.
    pub outcome: Outcome,
}

impl Event {
    /// The outcome's label: the status code, or the transport kind.
    pub fn label(&self) -> String {
        match self.outcome {
            Outcome::Status(code) => code.to_string(),
            Outcome::Transport(t) => t.name().to_string(),
            Outcome::Success => "success".to_string(),
        }
    }
}

/// The attempts of a trial, from any number of threads.
#[derive(Debug, Default)]
pub struct EventLog(Mutex<Vec<Event>>);

impl EventLog {
    /// An empty log.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an attempt.
    pub fn push(&self, e: Event) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(e);
    }

    /// The attempts, in order of their start.
    pub fn sorted(&self) -> Vec<Event> {
        let mut v = self
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        v.sort_by_key(|e| (e.start_ns, e.end_ns));
        v
    }
}

/// How many answers of each kind: `{"200": 20, "429": 3, "timeout": 1}`.
pub fn responses(events: &[Event]) -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    for e in events {
        *m.entry(e.label()).or_insert(0) += 1;
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use recuo::Transport;

    #[test]
    fn responses_are_counted_by_label() {
        let log = EventLog::new();
        let e = |start_ns, outcome| Event {
            start_ns,
            end_ns: start_ns + 1,
            attempt: 0,
            outcome,
        };
        log.push(e(3, Outcome::Status(200)));
        log.push(e(1, Outcome::Status(429)));
        log.push(e(2, Outcome::Status(200)));
        log.push(e(4, Outcome::Transport(Transport::Timeout)));
        let v = log.sorted();
        assert_eq!(
            v.iter().map(|e| e.start_ns).collect::<Vec<_>>(),
            [1, 2, 3, 4]
        );
        let r = responses(&v);
        assert_eq!(r["200"], 2);
        assert_eq!(r["429"], 1);
        assert_eq!(r["timeout"], 1);
    }
}
