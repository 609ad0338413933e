//! `recuo trial --records`: one redacted record per attempt and per read, built by the core
//! (`recuo::AttemptRecord`, `recuo::FinalRecord`) from what each attempt saw and the delays
//! the core chose.

use std::sync::Mutex;

use recuo::{AttemptRecord, BatchResult, FinalRecord, Outcome, Record, Report};

/// What one attempt saw.
#[derive(Debug, Clone)]
pub struct Seen {
    /// When it started, ms since the Unix epoch.
    pub start_unix_ms: i64,
    /// How long it took.
    pub elapsed_ms: u64,
    /// The status or transport failure.
    pub outcome: Outcome,
    /// The response's headers (the core keeps only the request id and the wait headers).
    pub headers: Vec<(String, String)>,
    /// The verdict's cause.
    pub cause: &'static str,
}

/// The attempts of every read, by read.
#[derive(Debug)]
pub struct SeenLog(Vec<Mutex<Vec<Seen>>>);

impl SeenLog {
    /// A log for `reads` reads.
    pub fn new(reads: usize) -> Self {
        SeenLog((0..reads).map(|_| Mutex::new(Vec::new())).collect())
    }

    /// Read `read`'s next attempt saw `seen`.
    pub fn push(&self, read: usize, seen: Seen) {
        if let Some(m) = self.0.get(read) {
            m.lock().unwrap_or_else(|e| e.into_inner()).push(seen);
        }
    }

    /// The JSON lines: each read's attempts (with the decision that followed each, and the
    /// delay the core chose), then the read's result.
    pub fn json_lines<T, E>(
        self,
        urls: &[String],
        results: &[BatchResult<T, E>],
        reports: &[Option<Report>],
    ) -> String {
        let mut out = String::new();
        for (i, seen) in self.0.into_iter().enumerate() {
            let seen = seen.into_inner().unwrap_or_else(|e| e.into_inner());
            let url = urls.get(i).map_or("", String::as_str);
            let report = reports.get(i).and_then(Option::as_ref);
            let gave_up = match results.get(i) {
                Some(BatchResult::GaveUp(e)) => Some(e.reason.name()),
                Some(BatchResult::NotStarted) | None => {
                    let result = FinalRecord::not_started(0, "GET", url);
                    out.push_str(&Record::Final(result).to_json_line());
                    out.push('\n');
                    continue;
                }
                Some(BatchResult::Succeeded(_)) => None,
            };
            for (k, s) in seen.iter().enumerate() {
                let last = k + 1 == seen.len();
                let (decision, delay, reason) = match (last, gave_up) {
                    (false, _) => (
                        "retry",
                        report.and_then(|r| r.delays_ms.get(k).copied()),
                        s.cause,
                    ),
                    (true, None) => ("done", None, s.cause),
                    // The verdict's own refusal says more than the loop's `permanent`.
                    (true, Some("permanent")) => ("give_up", None, s.cause),
                    (true, Some(why)) => ("give_up", None, why),
                };
                let record = AttemptRecord::new(
                    s.start_unix_ms,
                    s.elapsed_ms,
                    "GET",
                    url,
                    s.outcome,
                    &s.headers,
                    delay,
                    decision,
                    reason,
                );
                out.push_str(&Record::Attempt(record).to_json_line());
                out.push('\n');
            }
            let start = seen.first().map_or(0, |s| s.start_unix_ms);
            let total = seen.last().map_or(0, |s| {
                (s.start_unix_ms - start).max(0) as u64 + s.elapsed_ms
            });
            let result = FinalRecord::new(start, "GET", url, gave_up, seen.len() as u32, total);
            out.push_str(&Record::Final(result).to_json_line());
            out.push('\n');
        }
        out
    }
}
