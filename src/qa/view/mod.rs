//! What the QA checks read and remember, shared by the per-unit and the book-level checks:
//! one parse of a Markdown text ([`doc`]), the book's units parsed once ([`units`]), word
//! boundaries of unspaced scripts ([`words`]), the scanner of glosses and review markers in
//! clean prose ([`term_text`]) and the cache a campaign's QA contexts share ([`cache`]).

pub mod cache;
pub mod doc;
pub mod term_text;
pub mod units;
pub mod words;
