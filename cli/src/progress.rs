//! The trial's progress bar (indicatif), shown only when a person is watching: stdout and
//! stderr are terminals and the output is not JSON.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Reads done so far, and what the answers were.
#[derive(Debug)]
pub struct Progress {
    bar: ProgressBar,
    throttled: AtomicU64,
    unavailable: AtomicU64,
    retries: AtomicU64,
}

impl Progress {
    /// A bar for `count` reads; hidden unless `show` and both stdout and stderr are
    /// terminals.
    pub fn new(count: usize, show: bool) -> Self {
        let visible = show && std::io::stdout().is_terminal() && std::io::stderr().is_terminal();
        let bar = if visible {
            let bar =
                ProgressBar::with_draw_target(Some(count as u64), ProgressDrawTarget::stderr());
            if let Ok(style) = ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] [{bar:30}] {pos}/{len} reads  {msg}",
            ) {
                bar.set_style(style.progress_chars("=> "));
            }
            bar.enable_steady_tick(Duration::from_millis(120));
            bar
        } else {
            ProgressBar::hidden()
        };
        Progress {
            bar,
            throttled: AtomicU64::new(0),
            unavailable: AtomicU64::new(0),
            retries: AtomicU64::new(0),
        }
    }

    /// An attempt ended with `status` (0 for a transport failure); `done` when its read will
    /// make no more attempts, as far as the attempt can tell.
    pub fn attempt(&self, attempt: u32, status: u16, done: bool) {
        if attempt > 0 {
            self.retries.fetch_add(1, Ordering::Relaxed);
        }
        match status {
            429 => {
                self.throttled.fetch_add(1, Ordering::Relaxed);
            }
            503 => {
                self.unavailable.fetch_add(1, Ordering::Relaxed);
            }
            _ => {}
        }
        if done {
            self.bar.inc(1);
        }
        self.bar.set_message(format!(
            "retries {}  429s {}  503s {}",
            self.retries.load(Ordering::Relaxed),
            self.throttled.load(Ordering::Relaxed),
            self.unavailable.load(Ordering::Relaxed)
        ));
    }

    /// Removes the bar before the table is printed.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
