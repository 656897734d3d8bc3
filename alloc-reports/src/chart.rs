//! `allocs.svg`: cumulative allocations against requests, one panel per scenario.
//!
//! One panel each rather than one shared plot: every line of a healthy run lies on zero, and
//! overlaid they would hide one another. A panel's y axis starts at 0 and reaches at least
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

/// Draws one panel per measurement into an SVG file at `path`.
///
/// # Errors
/// [`ChartError`] when drawing or writing fails.
pub fn draw(path: &Path, measurements: &[Measurement]) -> Result<(), ChartError> {
    let rows = measurements.len().div_ceil(COLUMNS).max(1);
    let size = (PANEL_W * COLUMNS as u32, PANEL_H * rows as u32 + 40);
    let root = SVGBackend::new(path, size).into_drawing_area();
    root.fill(&WHITE)?;
    let (title, grid) = root.split_vertically(40);
    title.titled(
        "server-demo: cumulative heap allocations in the measured window",
        ("sans-serif", 20),
    )?;
    let panels = grid.split_evenly((rows, COLUMNS));
    for (m, panel) in measurements.iter().zip(panels.iter()) {
        panel_chart(panel, m)?;
    }
    root.present()?;
    Ok(())
}

fn panel_chart<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    m: &Measurement,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let x_max = m.requests.max(1);
    let y_max = m.allocations.max(10);
    let unit = if m.connections > 0 {
        "requests (one new connection each)"
    } else {
        "requests"
    };
    let mut chart = ChartBuilder::on(area)
        .caption(
            format!(
                "{}: {} allocations / {} requests",
                m.scenario, m.allocations, m.requests
            ),
            ("sans-serif", 15),
        )
        .margin(10)
        // Room for the last x label, centred on the panel's right edge.
        .margin_right(30)
        .x_label_area_size(30)
        .y_label_area_size(50)
        .build_cartesian_2d(0..x_max, 0..y_max)?;
    chart
        .configure_mesh()
        .x_desc(unit)
        .y_desc("allocations")
        .x_labels(5)
        .x_label_formatter(&|&x| thousands(x))
        .y_labels(5)
        .draw()?;
    let colour = if m.allocations == 0 { &BLUE } else { &RED };
    chart.draw_series(LineSeries::new(
        m.samples.iter().map(|s| (s.requests, s.allocations)),
        colour.stroke_width(2),
    ))?;
    Ok(())
}

/// An axis label: `20k` rather than `20000`, so five of them fit under a panel.
fn thousands(x: u64) -> String {
    if x >= 1000 && x % 1000 == 0 {
        format!("{}k", x / 1000)
    } else {
        x.to_string()
    }
}
