//! The comparison section of a report (`booktr experiment`: the orchestration arm against one
//! agent in one conversation), as a neutral model: the table rows and gate lines as text, ready
//! to render. The experiment fills it from its evidence; the report only shows it, so the
//! report depends on no type of the experiment.

use serde::Serialize;

/// The comparison section of `report.json`, `report.md` and `report.html`.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// The evidence file, relative to the report directory.
    pub evidence: String,
    pub generated_at: String,
    pub rehearsal: bool,
    pub provider: String,
    pub model: String,
    pub judge_model: String,
    /// `[metric, orchestration, single agent, stateless loop]`.
    pub rows: Vec<[String; 4]>,
    pub gates: Vec<ComparisonGate>,
    pub all_gates_pass: bool,
}

/// One acceptance gate of the comparison, as shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ComparisonGate {
    pub name: String,
    pub pass: bool,
    /// Why it passed or failed (the measured values against the threshold).
    pub reason: String,
}
