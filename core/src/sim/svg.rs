//! A line chart of shards per node over simulated time, as a standalone SVG document.
//! Written by hand: a handful of polylines, axes and labels need no plotting library.

use std::fmt::Write;

use super::metrics::Report;

const W: f64 = 960.0;
const H: f64 = 480.0;
const LEFT: f64 = 60.0;
const RIGHT: f64 = 130.0;
const TOP: f64 = 56.0;
const BOTTOM: f64 = 48.0;

/// Ten colours that stay apart (Tableau 10); later nodes get golden-angle hues.
const PALETTE: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac",
];

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A step that gives about five to ten ticks up to `max`.
fn tick_step(max: f64) -> f64 {
    let raw = (max / 6.0).max(1.0);
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag)
}

/// Renders the report's series (run with `SimConfig::sample_ms` > 0 to have one).
pub fn render(report: &Report) -> String {
    let series = &report.series;
    let t_max = series
        .samples
        .last()
        .map_or(1.0, |(t, _)| (*t as f64).max(1.0));
    let y_max = series
        .samples
        .iter()
        .flat_map(|(_, row)| row.iter().copied())
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let y_top = (y_max / tick_step(y_max)).ceil() * tick_step(y_max);
    let plot_w = W - LEFT - RIGHT;
    let plot_h = H - TOP - BOTTOM;
    let x = |t: f64| LEFT + t / t_max * plot_w;
    let y = |v: f64| TOP + plot_h - v / y_top * plot_h;

    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
    let title = format!(
        "shardline sim {} — {} / {} / seed {}",
        report.scenario,
        report
            .strategy
            .get("kind")
            .and_then(|k| k.as_str())
            .unwrap_or("?"),
        serde_json::to_value(report.policy)
            .ok()
            .and_then(|p| p.as_str().map(str::to_owned))
            .unwrap_or_default(),
        report.seed
    );
    let subtitle = format!(
        "{} violation(s) · {} shard(s) moved (lower bound {}) · max/mean {} · {} lost, {} duplicated",
        report.violation_count,
        report.shards_moved,
        report.moves_lower_bound,
        report.max_over_mean,
        report.lost_messages,
        report.duplicate_deliveries
    );
    let _ = writeln!(
        s,
        r#"<text x="{LEFT}" y="22" font-size="15" font-weight="bold">{}</text>"#,
        escape(&title)
    );
    let _ = writeln!(
        s,
        r##"<text x="{LEFT}" y="40" fill="#555">{}</text>"##,
        escape(&subtitle)
    );

    // Axes and grid.
    let step = tick_step(y_max);
    let mut v = 0.0;
    while v <= y_top + 1e-9 {
        let yy = y(v);
        let _ = writeln!(
            s,
            r##"<line x1="{LEFT}" y1="{yy:.1}" x2="{:.1}" y2="{yy:.1}" stroke="#e5e5e5"/><text x="{:.1}" y="{:.1}" text-anchor="end" fill="#555">{v}</text>"##,
            LEFT + plot_w,
            LEFT - 6.0,
            yy + 4.0
        );
        v += step;
    }
    let t_step = tick_step(t_max / 1_000.0) * 1_000.0;
    let mut t = 0.0;
    while t <= t_max + 1e-9 {
        let xx = x(t);
        let _ = writeln!(
            s,
            r##"<line x1="{xx:.1}" y1="{:.1}" x2="{xx:.1}" y2="{:.1}" stroke="#999"/><text x="{xx:.1}" y="{:.1}" text-anchor="middle" fill="#555">{}</text>"##,
            TOP + plot_h,
            TOP + plot_h + 5.0,
            TOP + plot_h + 18.0,
            t / 1_000.0
        );
        t += t_step;
    }
    let _ = writeln!(
        s,
        r##"<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{:.1}" stroke="#333"/><line x1="{LEFT}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#333"/>"##,
        TOP + plot_h,
        TOP + plot_h,
        LEFT + plot_w,
        TOP + plot_h
    );
    let _ = writeln!(
        s,
        r##"<text x="{:.1}" y="{:.1}" text-anchor="middle" fill="#333">simulated time (s)</text>"##,
        LEFT + plot_w / 2.0,
        H - 10.0
    );
    let _ = writeln!(
        s,
        r##"<text transform="translate(16,{:.1}) rotate(-90)" text-anchor="middle" fill="#333">shards running</text>"##,
        TOP + plot_h / 2.0
    );

    // Disruptions.
    for (i, (t, label)) in series.events.iter().enumerate() {
        let xx = x(*t as f64);
        let ly = TOP + 12.0 + (i % 4) as f64 * 13.0;
        let _ = writeln!(
            s,
            r##"<line x1="{xx:.1}" y1="{TOP}" x2="{xx:.1}" y2="{:.1}" stroke="#c33" stroke-dasharray="4 3"/><text x="{:.1}" y="{ly:.1}" fill="#c33" font-size="11">{}</text>"##,
            TOP + plot_h,
            xx + 3.0,
            escape(label)
        );
    }

    // One line per node, from its first sample on.
    for (n, name) in series.nodes.iter().enumerate() {
        let points: Vec<String> = series
            .samples
            .iter()
            .filter_map(|(t, row)| row.get(n).map(|c| (*t, *c)))
            .map(|(t, c)| format!("{:.1},{:.1}", x(t as f64), y(f64::from(c))))
            .collect();
        if points.is_empty() {
            continue;
        }
        let color = match PALETTE.get(n) {
            Some(c) => (*c).to_owned(),
            None => format!("hsl({:.0},65%,42%)", (n as f64 * 137.508) % 360.0),
        };
        let _ = writeln!(
            s,
            r#"<polyline fill="none" stroke="{color}" stroke-width="1.6" points="{}"/>"#,
            points.join(" ")
        );
        let ly = TOP + 8.0 + n as f64 * 16.0;
        if ly < H - BOTTOM {
            let lx = LEFT + plot_w + 14.0;
            let _ = writeln!(
                s,
                r#"<line x1="{lx:.1}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="{color}" stroke-width="3"/><text x="{:.1}" y="{:.1}">{}</text>"#,
                lx + 18.0,
                lx + 24.0,
                ly + 4.0,
                escape(name)
            );
        }
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{run, Scenario, SimConfig};

    #[test]
    fn chart_has_a_line_per_node_and_markers() {
        let mut c = SimConfig::new(Scenario::ScaleOut, 1);
        c.nodes = Some(2);
        c.shards = Some(6);
        c.sample_ms = 1_000;
        c.steady_rounds = 2;
        let r = run(&c).unwrap();
        let svg = render(&r);
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert_eq!(
            svg.matches("<polyline").count(),
            3,
            "two nodes plus the new one"
        );
        assert!(svg.contains("+1 node"));
        assert_eq!(tick_step(60.0), 10.0);
        assert_eq!(tick_step(7.0), 2.0);
    }
}
