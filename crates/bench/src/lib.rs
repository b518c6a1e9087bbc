//! The benchmark harness: workload generators, dlc run in-process through its
//! library crates, the Rust peers, child-process measurement and the BENCHMARKS.md report.

pub mod binary;
pub mod dlc;
pub mod measure;
pub mod oracle;
pub mod peers;
pub mod project;
pub mod report;
pub mod rng;
pub mod suite;
pub mod workload;
