//! The shares of the input budget: how much of a campaign's `max_context_tokens` (the most
//! prompt tokens one request may carry, `o200k_base`) each kind of request may fill, derived
//! here once. The Manager (glossary and proofreading batches, the brief's outline), the call
//! preparation (the hard limit), the estimate behind `booktr plan` and the translator's
//! neighbour context all take their figures from [`ContextShares`].
//!
//! | request | share | why |
//! |---|---|---|
//! | any request | all of `max_context_tokens` | the hard limit: over it nothing is sent |
//! | glossary batch | 1/2 | candidates with snippets; the other half for instructions, house style and the answer's room |
//! | proofreading batch | 3/4 | units with their translations and the glossary lines; a quarter for the instructions |
//! | brief outline | 3/4, at most [`BRIEF_OUTLINE_MAX`] | a quarter for the instructions |
//! | neighbour context | at most 1/4 of the unit's characters (and `context_chars`) | so the context costs at most about 15 % extra prompt tokens |
//!
//! The fractions are design choices of this code, not measured; the integer
//! arithmetic (`max / 2`, `max * 3 / 4`, `chars / 4`) is part of the call keys' inputs and so
//! of the state format: it must not change.

use serde::Serialize;

/// Most tokens of book outline the brief request carries, whatever the budget.
pub const BRIEF_OUTLINE_MAX: usize = 6000;

/// The token budgets of one campaign's requests, all in `o200k_base` tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ContextShares {
    /// The whole input budget (`max_context_tokens`): no request may carry more.
    pub request: usize,
    /// Budget of one Glossary batch request (half).
    pub glossary_batch: usize,
    /// Budget of one Proofreading batch request (three quarters).
    pub proofread_batch: usize,
    /// Tokens of book outline in the brief request (three quarters, at most
    /// [`BRIEF_OUTLINE_MAX`]).
    pub brief_outline: usize,
}

impl ContextShares {
    /// The shares of `max_context_tokens` (tokens).
    pub fn of(max_context_tokens: usize) -> ContextShares {
        ContextShares {
            request: max_context_tokens,
            glossary_batch: max_context_tokens / 2,
            proofread_batch: max_context_tokens * 3 / 4,
            brief_outline: BRIEF_OUTLINE_MAX.min(max_context_tokens * 3 / 4),
        }
    }

    /// Characters of neighbour context a unit of `unit_chars` characters gets: the campaign's
    /// `context_chars`, at most a quarter of the unit.
    pub fn neighbour_chars(context_chars: usize, unit_chars: usize) -> usize {
        context_chars.min(unit_chars / 4)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_of_the_default_budget() {
        let s = ContextShares::of(32_000);
        assert_eq!(
            s,
            ContextShares {
                request: 32_000,
                glossary_batch: 16_000,
                proofread_batch: 24_000,
                brief_outline: 6000,
            }
        );
    }

    #[test]
    fn small_budgets_round_down_and_cap_the_outline() {
        let s = ContextShares::of(4001);
        assert_eq!(s.glossary_batch, 2000);
        assert_eq!(s.proofread_batch, 3000);
        assert_eq!(s.brief_outline, 3000);
        assert_eq!(ContextShares::neighbour_chars(400, 1000), 250);
        assert_eq!(ContextShares::neighbour_chars(200, 1000), 200);
        assert_eq!(ContextShares::neighbour_chars(400, 3), 0);
    }
}
