//! `herd trace show|analyze`: timelines and critical-path analysis of trace
//! files, from herd-flow graphs (steps with dependencies) or `HERD_TRACE`.

pub mod analyze;
pub mod model;
#[cfg(test)]
mod robustness;
pub mod show;
