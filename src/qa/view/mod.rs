//! What the QA checks read, shared by the per-unit and the book-level checks:
//! one parse of a Markdown text ([`doc`]) with its block outline ([`outline`]), the book's units parsed once ([`units`]), word
//! boundaries of unspaced scripts ([`words`]), the scanner of glosses and review markers in
//! clean prose ([`term_text`]), and the key of the memos the checks keep ([`key_of`]).

pub mod doc;
pub mod outline;
pub mod term_text;
pub mod units;
pub mod words;

/// The SipHash of `value` (std's `DefaultHasher`): the key under which the QA cache keeps a
/// memo of what depends on `value` ([`crate::qa::QaCache`]).
pub(crate) fn key_of(value: impl std::hash::Hash) -> u64 {
    use std::hash::Hasher;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    value.hash(&mut h);
    h.finish()
}
