//! `recuo trial --plot`: an SVG timeline, written by hand (a few hundred lines of text need
//! no plotting crate). Above: starts over time against the allowance and the target rate,
//! with retries, 429s and 503s marked. Below: requests in flight against the limit.

use std::fmt::Write as _;

use recuo::{Outcome, Rate};

use crate::events::Event;
use crate::table::show_rate;

/// What the timeline shows.
#[derive(Debug)]
pub struct PlotInput<'a> {
    /// The title line.
    pub title: String,
    /// The attempts, in order of their start.
    pub events: &'a [Event],
    /// The trial's rate of starts.
    pub rate: Rate,
    /// The server's allowance and burst, when known.
    pub allowance: Option<(Rate, u32)>,
    /// The concurrency limit.
    pub concurrency: u32,
}

const W: f64 = 960.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 24.0;
const TOP_Y0: f64 = 64.0;
const TOP_Y1: f64 = 404.0;
const LOW_Y0: f64 = 452.0;
const LOW_Y1: f64 = 572.0;
const H: f64 = 620.0;

/// A tick step of 1, 2 or 5 times a power of ten, giving about `ticks` ticks over `range`.
fn nice_step(range: f64, ticks: f64) -> f64 {
    if !(range > 0.0 && range.is_finite()) {
        return 1.0;
    }
    let raw = range / ticks;
    let mag = 10f64.powf(raw.log10().floor());
    let unit = raw / mag;
    let nice = if unit <= 1.0 {
        1.0
    } else if unit <= 2.0 {
        2.0
    } else if unit <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * mag
}

/// Text fit for XML.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Requests in flight over time: `(t_s, count)` after each change.
fn in_flight(events: &[Event], t0: u64) -> Vec<(f64, u32)> {
    let mut changes: Vec<(u64, i32)> = events
        .iter()
        .flat_map(|e| [(e.start_ns, 1), (e.end_ns.max(e.start_ns), -1)])
        .collect();
    // Ends before starts at the same instant: a place given back is taken again.
    changes.sort_by_key(|&(t, d)| (t, d));
    let mut n: i32 = 0;
    changes
        .into_iter()
        .map(|(t, d)| {
            n += d;
            (secs(t, t0), u32::try_from(n.max(0)).unwrap_or(0))
        })
        .collect()
}

fn secs(t: u64, t0: u64) -> f64 {
    t.saturating_sub(t0) as f64 / 1e9
}

/// The SVG document.
pub fn svg(p: &PlotInput<'_>) -> String {
    let t0 = p.events.first().map_or(0, |e| e.start_ns);
    let t_end = p
        .events
        .iter()
        .map(|e| secs(e.end_ns, t0))
        .fold(0.0, f64::max)
        .max(1.0);
    let x_step = nice_step(t_end, 10.0);
    let x_max = (t_end / x_step).ceil() * x_step;
    let starts = p.events.len() as f64;
    let y_step = nice_step(starts.max(1.0), 6.0);
    let y_max = ((starts.max(1.0) * 1.05) / y_step).ceil() * y_step;
    let flight = in_flight(p.events, t0);
    let peak = flight.iter().map(|&(_, n)| n).max().unwrap_or(0);
    let f_max = f64::from(peak.max(p.concurrency).max(1)) + 1.0;

    let x = |t: f64| LEFT + (t / x_max) * (W - LEFT - RIGHT);
    let y = |n: f64| TOP_Y1 - (n / y_max).min(1.0) * (TOP_Y1 - TOP_Y0);
    let fy = |n: f64| LOW_Y1 - (n / f_max) * (LOW_Y1 - LOW_Y0);

    let mut s = String::with_capacity(16_384 + 200 * p.events.len());
    let _ = writeln!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">"##
    );
    let _ = writeln!(s, r##"<rect width="{W}" height="{H}" fill="white"/>"##);
    let _ = writeln!(
        s,
        r##"<text x="{LEFT}" y="24" font-size="15" font-weight="bold">{}</text>"##,
        escape(&p.title)
    );
    let _ = writeln!(
        s,
        r##"<text x="{LEFT}" y="44" fill="#555">starts over time (first attempts and retries) against the allowance; requests in flight below</text>"##
    );

    // Grid and axes.
    let mut t = 0.0;
    while t <= x_max + 1e-9 {
        let xt = x(t);
        let _ = writeln!(
            s,
            r##"<line x1="{xt:.1}" y1="{TOP_Y0}" x2="{xt:.1}" y2="{LOW_Y1}" stroke="#eee"/><text x="{xt:.1}" y="{:.1}" text-anchor="middle" fill="#555">{}</text>"##,
            LOW_Y1 + 16.0,
            trim(t)
        );
        t += x_step;
    }
    let _ = writeln!(
        s,
        r##"<text x="{:.1}" y="{:.1}" text-anchor="end" fill="#555">time (s)</text>"##,
        W - RIGHT,
        LOW_Y1 + 32.0
    );
    let mut n = 0.0;
    while n <= y_max + 1e-9 {
        let yn = y(n);
        let _ = writeln!(
            s,
            r##"<line x1="{LEFT}" y1="{yn:.1}" x2="{:.1}" y2="{yn:.1}" stroke="#eee"/><text x="{:.1}" y="{:.1}" text-anchor="end" fill="#555">{}</text>"##,
            W - RIGHT,
            LEFT - 6.0,
            yn + 4.0,
            trim(n)
        );
        n += y_step;
    }
    for (y0, y1) in [(TOP_Y0, TOP_Y1), (LOW_Y0, LOW_Y1)] {
        let _ = writeln!(
            s,
            r##"<rect x="{LEFT}" y="{y0}" width="{:.1}" height="{:.1}" fill="none" stroke="#999"/>"##,
            W - LEFT - RIGHT,
            y1 - y0
        );
    }
    let _ = writeln!(
        s,
        r##"<text x="16" y="{:.1}" transform="rotate(-90 16 {:.1})" text-anchor="middle" fill="#555">starts</text>"##,
        (TOP_Y0 + TOP_Y1) / 2.0,
        (TOP_Y0 + TOP_Y1) / 2.0
    );
    let _ = writeln!(
        s,
        r##"<text x="16" y="{:.1}" transform="rotate(-90 16 {:.1})" text-anchor="middle" fill="#555">in flight</text>"##,
        (LOW_Y0 + LOW_Y1) / 2.0,
        (LOW_Y0 + LOW_Y1) / 2.0
    );

    // The lines starts may not cross: the allowance (burst + rate · t) and the target rate.
    let mut line = |label: &str, burst: f64, rate: Rate, color: &str, dash: &str| {
        let per_s = rate.as_per_second();
        let t_hit = ((y_max - burst) / per_s).clamp(0.0, x_max);
        let _ = writeln!(
            s,
            r##"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{color}" stroke-width="1.5" stroke-dasharray="{dash}"><title>{}</title></line>"##,
            x(0.0),
            y(burst),
            x(t_hit),
            y(burst + per_s * t_hit),
            escape(label)
        );
    };
    if let Some((allowance, burst)) = p.allowance {
        line(
            &format!("allowance {}, burst {burst}", show_rate(allowance)),
            f64::from(burst),
            allowance,
            "#d62728",
            "8 4",
        );
    }
    line(
        &format!("target {}", show_rate(p.rate)),
        1.0,
        p.rate,
        "#7f7f7f",
        "3 3",
    );

    // Cumulative starts, as steps.
    let mut path = format!("M{:.1},{:.1}", x(0.0), y(0.0));
    for (k, e) in p.events.iter().enumerate() {
        let xt = x(secs(e.start_ns, t0));
        let _ = write!(path, " H{xt:.1} V{:.1}", y(k as f64 + 1.0));
    }
    let _ = write!(path, " H{:.1}", x(t_end));
    let _ = writeln!(
        s,
        r##"<path d="{path}" fill="none" stroke="#1f77b4" stroke-width="1.5"/>"##
    );

    // Each start: a dot for a first attempt, a diamond for a retry; a ring for a 429 or 503.
    for (k, e) in p.events.iter().enumerate() {
        let (cx, cy) = (x(secs(e.start_ns, t0)), y(k as f64 + 1.0));
        let tip = format!(
            "t={:.3} s, attempt {}, {}",
            secs(e.start_ns, t0),
            e.attempt,
            e.label()
        );
        if e.attempt == 0 {
            let _ = writeln!(
                s,
                r##"<circle cx="{cx:.1}" cy="{cy:.1}" r="3" fill="#1f77b4"><title>{tip}</title></circle>"##
            );
        } else {
            let _ = writeln!(
                s,
                r##"<path d="M{cx:.1},{:.1} l4,4 l-4,4 l-4,-4 z" fill="#ff7f0e"><title>{tip}</title></path>"##,
                cy - 4.0
            );
        }
        let ring = match e.outcome {
            Outcome::Status(429) => Some("#d62728"),
            Outcome::Status(503) => Some("#9467bd"),
            Outcome::Status(c) if c >= 400 => Some("#8c564b"),
            Outcome::Transport(_) => Some("#8c564b"),
            _ => None,
        };
        if let Some(color) = ring {
            let _ = writeln!(
                s,
                r##"<circle cx="{cx:.1}" cy="{cy:.1}" r="7" fill="none" stroke="{color}" stroke-width="1.5"/>"##
            );
        }
    }

    // Requests in flight, and the limit.
    let mut path = format!("M{:.1},{:.1}", x(0.0), fy(0.0));
    for &(t, n) in &flight {
        let _ = write!(path, " H{:.1} V{:.1}", x(t), fy(f64::from(n)));
    }
    let _ = writeln!(
        s,
        r##"<path d="{path}" fill="none" stroke="#2ca02c" stroke-width="1.5"/>"##
    );
    let _ = writeln!(
        s,
        r##"<line x1="{LEFT}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#2ca02c" stroke-dasharray="6 3"/><text x="{:.1}" y="{:.1}" fill="#2ca02c">limit {}</text>"##,
        fy(f64::from(p.concurrency)),
        W - RIGHT,
        fy(f64::from(p.concurrency)),
        LEFT + 6.0,
        fy(f64::from(p.concurrency)) - 4.0,
        p.concurrency
    );
    for k in 0..=(f_max as u32) {
        let _ = writeln!(
            s,
            r##"<text x="{:.1}" y="{:.1}" text-anchor="end" fill="#555">{k}</text>"##,
            LEFT - 6.0,
            fy(f64::from(k)) + 4.0
        );
    }

    // Legend.
    let legend: [(&str, String); 7] = [
        ("#1f77b4", "first attempt".to_string()),
        ("#ff7f0e", "retry".to_string()),
        ("#d62728", "429 answer (ring)".to_string()),
        ("#9467bd", "503 answer (ring)".to_string()),
        (
            "#d62728",
            p.allowance
                .map_or("allowance unknown".to_string(), |(a, b)| {
                    format!("allowance {}, burst {b} (dashed)", show_rate(a))
                }),
        ),
        ("#7f7f7f", format!("target {} (dotted)", show_rate(p.rate))),
        ("#2ca02c", "in flight".to_string()),
    ];
    let _ = writeln!(
        s,
        r##"<rect x="{:.1}" y="{:.1}" width="250" height="{:.1}" fill="white" fill-opacity="0.85" stroke="#ddd"/>"##,
        LEFT + 6.0,
        TOP_Y0 + 4.0,
        16.0 * legend.len() as f64 + 6.0
    );
    for (i, (color, text)) in legend.iter().enumerate() {
        let ly = TOP_Y0 + 16.0 + 16.0 * i as f64;
        let lx = LEFT + 12.0;
        let _ = writeln!(
            s,
            r##"<rect x="{lx}" y="{:.1}" width="10" height="10" fill="{color}"/><text x="{:.1}" y="{ly:.1}">{}</text>"##,
            ly - 9.0,
            lx + 16.0,
            escape(text)
        );
    }
    s.push_str("</svg>\n");
    s
}

/// A tick label: `2`, `0.5`, `2.5`.
fn trim(x: f64) -> String {
    let t = format!("{x:.2}");
    t.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use recuo::Transport;

    fn ev(start_ms: u64, end_ms: u64, attempt: u32, outcome: Outcome) -> Event {
        Event {
            start_ns: start_ms * 1_000_000,
            end_ns: end_ms * 1_000_000,
            attempt,
            outcome,
        }
    }

    #[test]
    fn steps_and_ticks() {
        assert_eq!(nice_step(10.0, 10.0), 1.0);
        assert_eq!(nice_step(13.3, 10.0), 2.0);
        assert_eq!(nice_step(40.0, 10.0), 5.0);
        assert_eq!(nice_step(0.0, 10.0), 1.0);
        assert_eq!(trim(2.5), "2.5");
        assert_eq!(trim(10.0), "10");
        assert_eq!(escape("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
    }

    #[test]
    fn in_flight_counts_overlaps() {
        let events = [
            ev(0, 100, 0, Outcome::Status(200)),
            ev(50, 150, 0, Outcome::Status(200)),
            ev(100, 200, 1, Outcome::Status(200)),
        ];
        let f = in_flight(&events, 0);
        let peak = f.iter().map(|&(_, n)| n).max();
        assert_eq!(peak, Some(2));
        assert_eq!(f.last().map(|&(_, n)| n), Some(0));
    }

    #[test]
    fn the_svg_marks_retries_and_429s() {
        let events = [
            ev(0, 100, 0, Outcome::Status(429)),
            ev(700, 800, 0, Outcome::Status(503)),
            ev(1400, 1500, 1, Outcome::Status(200)),
            ev(2100, 2200, 1, Outcome::Transport(Transport::Timeout)),
        ];
        let out = svg(&PlotInput {
            title: "t <&>".to_string(),
            events: &events,
            rate: "90/min".parse().unwrap(),
            allowance: Some(("60/min".parse().unwrap(), 5)),
            concurrency: 3,
        });
        assert!(out.starts_with("<svg") && out.ends_with("</svg>\n"));
        assert!(out.contains("t &lt;&amp;&gt;"));
        assert!(out.contains("allowance 60/min, burst 5"));
        assert_eq!(
            out.matches("stroke=\"#d62728\" stroke-width=\"1.5\"/>")
                .count(),
            1
        );
        assert_eq!(out.matches("fill=\"#ff7f0e\"><title>").count(), 2);
        assert!(out.contains("attempt 1, timeout"));
        let empty = svg(&PlotInput {
            title: String::new(),
            events: &[],
            rate: "1/s".parse().unwrap(),
            allowance: None,
            concurrency: 1,
        });
        assert!(empty.contains("allowance unknown"));
    }
}
