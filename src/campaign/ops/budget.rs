//! The budget cap: `[pricing] max_cost` in the campaign file, or `booktr run
//! --max-cost X` (the flag wins). Before the runner sends a request it asks [`Budget::admits`]
//! whether
//!
//! > spent + in flight + next ≤ cap
//!
//! where *spent* is the cost of the usage recorded in the state (every run of this campaign,
//! failed and split calls included: they were billed), *in flight* the estimates of the
//! requests sent and not yet answered, and *next* the estimate of the request about to go.
//! Estimates come from the plan's estimator ([`super::estimate::job_estimate`]: exact prompt
//! tokens, completion by the plan's ratios, no cache hit), priced at `[pricing]`. When the
//! sum would exceed the cap, that request is not sent and neither is any later one; the calls
//! in flight finish and are recorded, then the run journals [`BudgetStop`]
//! ([`crate::campaign::core::store::Event::BudgetReached`]), says what was spent and what remains, and ends
//! with status `budget_reached` (exit code 4, [`crate::exit::ExitCode::BudgetReached`]). A
//! later `run` with a higher cap resumes from the recorded results, paying only for the rest.
//!
//! An estimate is not a bound: an answer longer than estimated can take the spending past the
//! cap by the difference. The cap is checked on every request, so the overshoot is at most the
//! estimation error of the requests in flight.
//!
//! **Batch mode** (`run --batch`): the cap applies to the submitted batch as a whole. Before
//! a batch is submitted, spent + the estimates of all its requests (at the normal, not the
//! discounted batch price: the discount is the provider's and not configured) must stay within
//! the cap; otherwise nothing is submitted and the run stops as above. A batch submitted by an
//! earlier run is already committed and is still polled and recorded.
//!
//! The single-agent baseline (`run --mode single-agent`) has no cap: `--max-cost` is refused
//! there.
//!
//! What this module does not own: the usage (the state's, from the journal), prices
//! ([`crate::config::Pricing`]), the estimator ([`super::estimate`]).

use super::estimate::AgentEstimate;
use crate::campaign::core::Campaign;
use crate::campaign::core::state::State;
use crate::campaign::core::summary::Cost;
// The journal record of a stop lives with the other records; its name stays here too.
pub use crate::campaign::core::store::{BudgetStop, RESUME_MARGIN};
use crate::config::Pricing;

/// The cap of a run and the prices to apply it with.
#[derive(Debug, Clone, PartialEq)]
pub struct Budget {
    /// The most the campaign may cost, in `pricing.currency`.
    pub cap: f64,
    pricing: Pricing,
}

impl Budget {
    /// The campaign's cap, when `[pricing]` sets `max_cost` (after `run --max-cost`).
    pub fn of(c: &Campaign) -> Option<Budget> {
        let p = c.plan.pricing.as_ref()?;
        p.max_cost.map(|cap| Budget {
            cap,
            pricing: p.clone(),
        })
    }

    /// Cost of the usage recorded in `s` (all runs, every agent), in the pricing currency:
    /// the same sum as the summary's `cost.total`.
    pub fn spent(&self, s: &State) -> f64 {
        // (a fold from +0.0: an empty float `sum` is -0.0, printed "-0.0000")
        Cost::of(s.usage(), &self.pricing)
            .by_agent
            .values()
            .fold(0.0, |a, b| a + b)
    }

    /// Cost of an estimate at the uncached input price.
    pub fn cost(&self, e: &AgentEstimate) -> f64 {
        self.pricing.cost(e.prompt_tokens, 0, e.completion_tokens)
    }

    /// Whether a request estimated at `next` may be sent with `spent` recorded and
    /// `in_flight` estimated for the requests still out (all in the pricing currency).
    pub fn admits(&self, spent: f64, in_flight: f64, next: f64) -> bool {
        spent + in_flight + next <= self.cap
    }

    /// The `[pricing]` currency code the cap and every amount are in.
    pub fn currency(&self) -> &str {
        &self.pricing.currency
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget(cap: f64) -> Budget {
        Budget {
            cap,
            pricing: Pricing {
                input_per_million: 2.0,
                cached_input_per_million: Some(0.5),
                output_per_million: 8.0,
                currency: "USD".into(),
                max_cost: Some(cap),
            },
        }
    }

    #[test]
    fn admits_up_to_the_cap_and_not_a_cent_over() {
        let b = budget(1.0);
        assert!(b.admits(0.5, 0.25, 0.25));
        assert!(!b.admits(0.5, 0.25, 0.2501));
        assert!(!b.admits(1.0001, 0.0, 0.0));
    }

    /// Regression: with nothing recorded yet, `spent` was the empty float sum, -0.0, and
    /// the stop message said "spent -0.0000".
    #[test]
    fn spent_of_an_empty_state_printed_minus_zero() {
        let spent = budget(1.0).spent(&State::default());
        assert!(spent == 0.0 && spent.is_sign_positive(), "{spent}");
        assert_eq!(format!("{spent:.4}"), "0.0000");
    }

    #[test]
    fn estimates_are_priced_uncached() {
        let b = budget(1.0);
        let e = AgentEstimate {
            calls: 1,
            prompt_tokens: 1_000_000,
            completion_tokens: 500_000,
        };
        assert_eq!(b.cost(&e), 2.0 + 4.0);
    }

    #[test]
    fn suggested_cap_covers_spent_and_the_rest_rounded_up_to_the_cent() {
        let stop = BudgetStop {
            cap: 0.01,
            spent: 0.0093,
            next_call: "translate/x/r0".into(),
            next_estimate: 0.002,
            in_flight_estimate: 0.0,
            remaining_estimate: Some(0.0301),
            currency: "USD".into(),
        };
        // 0.0093 + 2 × 0.0301 = 0.0695, rounded up to the cent.
        assert_eq!(stop.suggested_cap(), 0.07);
        let none = BudgetStop {
            remaining_estimate: None,
            ..stop
        };
        // 0.0093 + 2 × 0.002 = 0.0133.
        assert_eq!(none.suggested_cap(), 0.02);
    }
}
