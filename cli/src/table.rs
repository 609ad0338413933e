//! Text output: a two-column table with aligned values, human durations, and JSON printing.

use std::fmt;

use serde::Serialize;

/// Rows of a label and a value, printed with the values aligned.
#[derive(Debug, Default)]
pub struct Table {
    rows: Vec<(String, String)>,
}

impl Table {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a row.
    pub fn row(&mut self, label: impl Into<String>, value: impl Into<String>) {
        self.rows.push((label.into(), value.into()));
    }
}

impl fmt::Display for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let width = self
            .rows
            .iter()
            .map(|(l, _)| l.chars().count())
            .max()
            .unwrap_or(0);
        for (label, value) in &self.rows {
            writeln!(f, "  {label:<width$}  {value}")?;
        }
        Ok(())
    }
}

/// Seconds for people: `250 ms`, `12.5 s`, `400 s (6 min 40 s)`, `86400 s (24 h)`.
pub fn human_seconds(s: f64) -> String {
    if !s.is_finite() {
        return "forever".to_string();
    }
    if s < 1.0 {
        return format!("{:.0} ms", s * 1000.0);
    }
    if s < 60.0 {
        let text = format!("{s:.1}");
        return format!("{} s", text.trim_end_matches(".0"));
    }
    let whole = s.round() as u64;
    let (h, m, sec) = (whole / 3600, whole / 60 % 60, whole % 60);
    let long = match (h, m, sec) {
        (0, m, 0) => format!("{m} min"),
        (0, m, sec) => format!("{m} min {sec} s"),
        (h, 0, 0) => format!("{h} h"),
        (h, m, _) => format!("{h} h {m} min"),
    };
    format!("{whole} s ({long})")
}

/// Milliseconds for people, from nanoseconds: `667 ms`, `1.2 ms`, `-` when unknown.
pub fn human_ms(ns: Option<f64>) -> String {
    match ns {
        None => "-".to_string(),
        Some(ns) if ns < 10e6 => format!("{:.1} ms", ns / 1e6),
        Some(ns) => format!("{:.0} ms", ns / 1e6),
    }
}

/// A rate as people write it: `90/min`, `600/min`, `100/s`, else the core's form.
pub fn show_rate(rate: recuo::Rate) -> String {
    let (per_min, per_s) = (rate.as_per_minute(), rate.as_per_second());
    let whole = |x: f64| (x - x.round()).abs() < 1e-9;
    if whole(per_min) && per_min <= 600.0 {
        format!("{}/min", per_min.round())
    } else if whole(per_s) {
        format!("{}/s", per_s.round())
    } else {
        rate.to_string()
    }
}

/// Prints `value` as one line of JSON on stdout.
pub fn print_json<T: Serialize>(value: &T) {
    match serde_json::to_string(value) {
        Ok(text) => println!("{text}"),
        // Plain structs of numbers and strings always serialize; say so if one did not.
        Err(e) => eprintln!("recuo: could not write JSON: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_align() {
        let mut t = Table::new();
        t.row("a", "1");
        t.row("longer", "2");
        assert_eq!(t.to_string(), "  a       1\n  longer  2\n");
    }

    #[test]
    fn durations_for_people() {
        assert_eq!(human_seconds(0.25), "250 ms");
        assert_eq!(human_seconds(12.0), "12 s");
        assert_eq!(human_seconds(12.46), "12.5 s");
        assert_eq!(human_seconds(400.0), "400 s (6 min 40 s)");
        assert_eq!(human_seconds(120.0), "120 s (2 min)");
        assert_eq!(human_seconds(86_400.0), "86400 s (24 h)");
        assert_eq!(human_seconds(f64::INFINITY), "forever");
        assert_eq!(human_ms(Some(666_666_667.0)), "667 ms");
        assert_eq!(human_ms(Some(1_234_000.0)), "1.2 ms");
        assert_eq!(human_ms(None), "-");
        let r = |s: &str| show_rate(s.parse().unwrap());
        assert_eq!(r("90/min"), "90/min");
        assert_eq!(r("10/s"), "600/min");
        assert_eq!(r("100/s"), "100/s");
        assert_eq!(r("1.5/s"), "90/min");
    }
}
