//! What happens to findings after the checks found them: the stable id editors mark a finding
//! by and what a mark does to it ([`editor_marks`]; the marks as journal records live in the
//! campaign, `src/campaign/ops/mark_journal.rs`), and the per-chapter MQM scorecard ([`mqm`]).

pub mod editor_marks;
pub mod mqm;
