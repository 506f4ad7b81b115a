//! The per-unit checks: pure functions of one unit's source and translation (and the
//! campaign's settings), one file per family of checks, run together by
//! [`crate::qa::check_unit`]. Each reads the two texts' [`crate::qa::Doc`]s.

pub mod alignment;
pub mod code;
pub mod code_comments;
pub mod context_echo;
pub mod emphasis;
pub mod front_matter;
pub mod garbled;
pub mod glossary;
pub mod headings;
pub mod injected;
pub mod links;
pub mod math_html;
pub mod numbers;
pub mod prompt_usage;
pub mod sentences;
pub mod site_syntax;
pub mod structure;
pub mod style;
pub mod tables;
pub mod untranslated;
pub mod xref;
