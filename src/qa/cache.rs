//! What the QA checks remember between calls ([`QaCache`]), owned by a [`crate::qa::QaContext`]
//! and shared by its clones: a campaign builds its contexts with its own cache (so the
//! Manager's rounds, the verdict and the report reuse one another's work), a `validate` run or
//! a test gets a fresh one with [`crate::qa::QaContext::new`]. Nothing here is process-wide: two
//! campaigns in one process never see each other's entries.
//!
//! Every entry is keyed by a hash of everything its value depends on (SipHash, std's
//! `DefaultHasher`), so a context whose termbase or settings were changed after it was built,
//! or a cache shared by contexts of different termbases, never returns a stale value. Each
//! memo keeps the last value (or a few), which is what a campaign asks for again: the same book
//! after every round.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::qa::book::CampaignQa;
use crate::qa::unit::glossary::Searchers;
use crate::termbase::candidates::Candidate;

/// Most glossary automata sets a cache keeps (one per termbase and target language; emptied
/// when full). A campaign has a handful: the default termbase before the glossary, then one
/// effective termbase per reconciliation.
pub const MAX_GLOSSARY_SEARCHERS: usize = 16;

/// The memos of the QA checks: the campaign-level translation checks' last result, the drift
/// check's last term candidates, and the glossary check's automata. Cloning shares the memos
/// (an `Arc`); [`Default`] is an empty cache.
#[derive(Clone, Default)]
pub struct QaCache(Arc<Memos>);

#[derive(Default)]
struct Memos {
    translations: Mutex<Option<(u64, Arc<CampaignQa>)>>,
    candidates: Mutex<Option<(u64, Arc<Vec<Candidate>>)>>,
    searchers: Mutex<HashMap<u64, Arc<Searchers>>>,
}

impl std::fmt::Debug for QaCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("QaCache")
    }
}

/// The value kept in a one-entry memo under `key`, or `make()`, then kept.
fn last<T>(slot: &Mutex<Option<(u64, Arc<T>)>>, key: u64, make: impl FnOnce() -> T) -> Arc<T> {
    // A lock poisoned by a panic elsewhere is taken over: every entry is written in one
    // assignment, so what the lock holds is whole.
    if let Some((k, v)) = slot
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .as_ref()
        && *k == key
    {
        return v.clone();
    }
    let v = Arc::new(make());
    *slot
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some((key, v.clone()));
    v
}

impl QaCache {
    /// Whether two caches are the same one (clones of each other).
    pub fn same(&self, other: &QaCache) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// The campaign-level translation checks' result under `key`, computed by `make` when the
    /// last one kept has another key.
    pub(crate) fn translations(
        &self,
        key: u64,
        make: impl FnOnce() -> CampaignQa,
    ) -> Arc<CampaignQa> {
        last(&self.0.translations, key, make)
    }

    /// The drift check's term candidates under `key` (a hash of the sources), computed by
    /// `make` when the last ones kept have another key.
    pub(crate) fn candidates(
        &self,
        key: u64,
        make: impl FnOnce() -> Vec<Candidate>,
    ) -> Arc<Vec<Candidate>> {
        last(&self.0.candidates, key, make)
    }

    /// The glossary check's automata under `key` (a hash of the target language and the
    /// termbase), built by `make` when absent; at most [`MAX_GLOSSARY_SEARCHERS`] are kept.
    pub(crate) fn searchers(&self, key: u64, make: impl FnOnce() -> Searchers) -> Arc<Searchers> {
        if let Some(s) = self
            .0
            .searchers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(&key)
        {
            return s.clone();
        }
        let s = Arc::new(make());
        let mut c = self
            .0
            .searchers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if c.len() >= MAX_GLOSSARY_SEARCHERS {
            c.clear();
        }
        c.insert(key, s.clone());
        s
    }
}
