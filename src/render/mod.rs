//! Rendering: human output settings and escaping, the whose-turn report, the SVG timeline.

pub mod output;
pub mod report;
pub mod svg;
