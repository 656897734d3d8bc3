//! `allocs.svg`: cumulative allocations against requests, one panel per scenario.
//!
//! One panel per scenario, one line per server in it: server-demo's flat line on zero beside
//! the line of a server that allocates per request. Scenarios are not overlaid, since their
//! lines on zero would hide one another. A panel's y axis starts at 0 and reaches at least
//! 10, so a flat line reads as flat rather than as noise blown up to fill the panel.

use std::fmt;
use std::io;
use std::path::Path;

use plotters::prelude::*;

use crate::measure::Measurement;

/// Width of one panel in pixels.
const PANEL_W: u32 = 480;
/// Height of one panel in pixels.
const PANEL_H: u32 = 260;
/// Panels per row.
const COLUMNS: usize = 2;

/// Why the chart could not be drawn or written.
#[derive(Debug)]
pub enum ChartError {
    /// Drawing, laying out or writing the SVG failed.
    Draw(DrawingAreaErrorKind<io::Error>),
}

impl fmt::Display for ChartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChartError::Draw(e) => write!(f, "cannot draw the chart: {e}"),
        }
    }
}

impl std::error::Error for ChartError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ChartError::Draw(e) => Some(e),
        }
    }
}

impl From<DrawingAreaErrorKind<io::Error>> for ChartError {
    fn from(e: DrawingAreaErrorKind<io::Error>) -> Self {
        ChartError::Draw(e)
    }
}

/// Line colours, one per subject in report order (server-demo first: blue).
const COLOURS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(140, 86, 75),
];

/// Draws one panel per scenario, one line per subject that ran it, into an SVG file at
/// `path`; `subjects` gives the colours' order.
///
/// # Errors
/// [`ChartError`] when drawing or writing fails.
pub fn draw(
    path: &Path,
    subjects: &[String],
    measurements: &[Measurement],
) -> Result<(), ChartError> {
    let mut scenarios: Vec<&str> = Vec::new();
    for m in measurements {
        if !scenarios.contains(&m.scenario) {
            scenarios.push(m.scenario);
        }
    }
    let rows = scenarios.len().div_ceil(COLUMNS).max(1);
    let size = (PANEL_W * COLUMNS as u32, PANEL_H * rows as u32 + 60);
    let root = SVGBackend::new(path, size).into_drawing_area();
    root.fill(&WHITE)?;
    let (title, grid) = root.split_vertically(60);
    title.titled(
        "cumulative heap allocations in the measured window",
        ("sans-serif", 20),
    )?;
    // The key: each subject's name in its colour.
    let mut x = 20;
    for (i, name) in subjects.iter().enumerate() {
        let c = colour(i);
        let style = TextStyle::from(("sans-serif", 15)).color(&c);
        title.draw(&Text::new(format!("\u{2014} {name}"), (x, 38), style))?;
        x += 40 + 9 * name.len() as i32;
    }
    let panels = grid.split_evenly((rows, COLUMNS));
    for (scenario, panel) in scenarios.iter().zip(panels.iter()) {
        let lines: Vec<(usize, &Measurement)> = measurements
            .iter()
            .filter(|m| m.scenario == *scenario)
            .map(|m| {
                (
                    subjects.iter().position(|s| *s == m.subject).unwrap_or(0),
                    m,
                )
            })
            .collect();
        panel_chart(panel, scenario, subjects, &lines)?;
    }
    root.present()?;
    Ok(())
}

fn colour(subject: usize) -> RGBColor {
    COLOURS[subject % COLOURS.len()]
}

/// One scenario's panel: a line per `(subject index, measurement)`; the caption names every
/// subject, with `–` for one that did not run the scenario.
fn panel_chart<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    scenario: &str,
    subjects: &[String],
    lines: &[(usize, &Measurement)],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let x_max = lines
        .iter()
        .map(|(_, m)| m.requests)
        .max()
        .unwrap_or(0)
        .max(1);
    let y_max = lines
        .iter()
        .map(|(_, m)| m.allocations)
        .max()
        .unwrap_or(0)
        .max(10);
    let unit = if lines.iter().any(|(_, m)| m.connections > 0) {
        "requests (one new connection each)"
    } else {
        "requests"
    };
    let per_request: Vec<String> = subjects
        .iter()
        .map(|subject| {
            lines
                .iter()
                .find(|(_, m)| m.subject == *subject)
                .map_or_else(
                    || format!("{subject} –"),
                    |(_, m)| format!("{subject} {}", per(m.allocations_per_request())),
                )
        })
        .collect();
    let mut chart = ChartBuilder::on(area)
        .caption(
            format!("{scenario}: allocs/request {}", per_request.join(", ")),
            ("sans-serif", 15),
        )
        .margin(10)
        // Room for the last x label, centred on the panel's right edge.
        .margin_right(30)
        .x_label_area_size(30)
        .y_label_area_size(60)
        .build_cartesian_2d(0..x_max, 0..y_max)?;
    chart
        .configure_mesh()
        .x_desc(unit)
        .y_desc("allocations")
        .x_labels(5)
        .x_label_formatter(&|&x| thousands(x))
        .y_labels(5)
        .y_label_formatter(&|&y| thousands(y))
        .draw()?;
    for &(subject, m) in lines {
        chart.draw_series(LineSeries::new(
            m.samples.iter().map(|s| (s.requests, s.allocations)),
            colour(subject).stroke_width(2),
        ))?;
    }
    Ok(())
}

/// Allocations per request in a caption: `0` when none, else two decimals.
fn per(x: f64) -> String {
    if x == 0.0 {
        "0".to_owned()
    } else {
        format!("{x:.2}")
    }
}

/// An axis label: `20k` rather than `20000`, so five of them fit under a panel.
fn thousands(x: u64) -> String {
    if x >= 1000 && x % 1000 == 0 {
        format!("{}k", x / 1000)
    } else {
        x.to_string()
    }
}
