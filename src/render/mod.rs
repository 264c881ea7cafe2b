//! Rendering: human output settings and escaping, the whose-turn report, the SVG timeline, `pair top`'s screen.

pub mod output;
pub mod report;
pub mod svg;
pub mod top;
