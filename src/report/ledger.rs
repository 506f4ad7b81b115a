//! The cost ledger of a campaign: the actual cost per chapter and per agent, and
//! what the provider's prefix cache saved, from the usage of every billed call in the state
//! ([`crate::campaign::core::state::State::paid_calls`]) at the campaign's `[pricing]`. Shown in
//! report.json (`ledger`), report.md and report.html.
//!
//! A call is put in a chapter by what it was about: a Proofreading batch by the chapter in
//! its call key, a translation (or a split's rejected answers) by its unit, or by the unit
//! whose fingerprint starts its key (a part `<fp>.p1`). Calls about the whole book (Glossary
//! batches, the brief, reconciliations, Manager decisions), and translations of a unit
//! fingerprint no longer current, are on the campaign-wide line (`chapter: null`). The lines
//! add up exactly to the summary's usage and cost.
//!
//! Savings from cached input: cached prompt tokens × (input price − cached input price) per
//! million, zero when `[pricing]` gives no cached price (the cached price is then the input
//! price).

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use crate::agents::Agent;
use crate::campaign::Campaign;
use crate::campaign::core::CallKey;
use crate::campaign::core::state::State;
use crate::config::Pricing;

/// Tokens and cost of a set of calls. Tokens are `o200k_base` as reported by the provider;
/// amounts are in the ledger's currency.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct LedgerLine {
    /// Billed calls (finished calls that made requests, failed calls, split answers).
    pub calls: u64,
    /// Every prompt token, cached or not.
    pub prompt_tokens: u64,
    /// Prompt tokens the provider served from its prefix cache (part of `prompt_tokens`).
    pub cached_tokens: u64,
    pub completion_tokens: u64,
    /// Cost at `[pricing]` ([`Pricing::cost`]).
    pub cost: f64,
    /// What the cached tokens saved against the input price.
    pub cache_savings: f64,
}

impl LedgerLine {
    fn add(&mut self, o: &LedgerLine) {
        self.calls += o.calls;
        self.prompt_tokens += o.prompt_tokens;
        self.cached_tokens += o.cached_tokens;
        self.completion_tokens += o.completion_tokens;
        self.cost += o.cost;
        self.cache_savings += o.cache_savings;
    }
}

/// One chapter's line of the ledger (or the campaign-wide one).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ChapterLedger {
    /// The chapter key; `null` for calls about the whole book.
    pub chapter: Option<String>,
    /// Per agent that has a billed call here.
    pub by_agent: BTreeMap<Agent, LedgerLine>,
    pub total: LedgerLine,
}

/// The ledger: per chapter (book order, then the campaign-wide line), per agent and in all.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Ledger {
    pub currency: String,
    /// Price per million tokens used: input, cached input, output.
    pub input_per_million: f64,
    pub cached_input_per_million: f64,
    pub output_per_million: f64,
    pub chapters: Vec<ChapterLedger>,
    /// Every agent (zero lines included), summed over the chapters.
    pub by_agent: BTreeMap<Agent, LedgerLine>,
    pub total: LedgerLine,
}

/// The ledger of state `s`, or `None` when the campaign has no `[pricing]`.
pub fn ledger(c: &Campaign, s: &State) -> Option<Ledger> {
    let pricing = c.plan.pricing.as_ref()?;
    let cached_price = pricing
        .cached_input_per_million
        .unwrap_or(pricing.input_per_million);
    let chapter_of_unit: HashMap<&str, &str> = c
        .units
        .iter()
        .map(|u| (u.id.as_str(), u.chapter.as_str()))
        .collect();
    let chapter_of_fp: HashMap<&str, &str> = c
        .units
        .iter()
        .filter_map(|u| Some((s.fp(&u.id)?, u.chapter.as_str())))
        .collect();
    let mut lines: BTreeMap<Option<&str>, BTreeMap<Agent, LedgerLine>> = BTreeMap::new();
    for p in s.paid_calls() {
        let by_fp = |key: &str| {
            let fp = key.split('.').next().unwrap_or(key);
            chapter_of_fp.get(fp).copied()
        };
        let chapter = match CallKey::parse(&p.call) {
            CallKey::Proofread { chapter, .. } => c
                .chapters
                .iter()
                .find(|ch| ch.key == chapter)
                .map(|ch| ch.key.as_str()),
            CallKey::Translate { key, .. } => p
                .unit
                .as_deref()
                .and_then(|u| chapter_of_unit.get(u).copied().or_else(|| by_fp(u)))
                .or_else(|| by_fp(&key)),
            _ => None,
        };
        let line = line_of(pricing, cached_price, &p.usage);
        lines
            .entry(chapter)
            .or_default()
            .entry(p.agent)
            .or_default()
            .add(&line);
    }
    // Book order, then the campaign-wide line.
    let mut chapters = Vec::new();
    let order = c
        .chapters
        .iter()
        .map(|ch| Some(ch.key.as_str()))
        .chain([None]);
    for key in order {
        let Some(by_agent) = lines.remove(&key) else {
            continue;
        };
        let mut total = LedgerLine::default();
        for l in by_agent.values() {
            total.add(l);
        }
        chapters.push(ChapterLedger {
            chapter: key.map(String::from),
            by_agent,
            total,
        });
    }
    let mut by_agent: BTreeMap<Agent, LedgerLine> = Agent::ALL
        .iter()
        .map(|a| (*a, LedgerLine::default()))
        .collect();
    let mut total = LedgerLine::default();
    for ch in &chapters {
        for (a, l) in &ch.by_agent {
            by_agent.entry(*a).or_default().add(l);
        }
        total.add(&ch.total);
    }
    Some(Ledger {
        currency: pricing.currency.clone(),
        input_per_million: pricing.input_per_million,
        cached_input_per_million: cached_price,
        output_per_million: pricing.output_per_million,
        chapters,
        by_agent,
        total,
    })
}

fn line_of(pricing: &Pricing, cached_price: f64, u: &crate::llm::Usage) -> LedgerLine {
    let cached = u.cached_tokens.min(u.prompt_tokens);
    LedgerLine {
        calls: 1,
        prompt_tokens: u.prompt_tokens,
        cached_tokens: cached,
        completion_tokens: u.completion_tokens,
        cost: pricing.cost(u.prompt_tokens, cached, u.completion_tokens),
        cache_savings: cached as f64 * (pricing.input_per_million - cached_price) / 1e6,
    }
}

impl Ledger {
    /// The ledger as Markdown: a table per chapter × agent with the totals, and the savings
    /// sentence. Amounts have four decimals (as the summary's cost line).
    pub fn markdown(&self) -> String {
        use std::fmt::Write;
        let cur = &self.currency;
        let mut o = String::new();
        let _ = writeln!(
            o,
            "| chapter | agent | calls | prompt tokens | cached tokens | completion tokens | cost ({cur}) | cache savings ({cur}) |\n|---|---|---|---|---|---|---|---|"
        );
        let row = |o: &mut String, ch: &str, agent: &str, l: &LedgerLine| {
            let _ = writeln!(
                o,
                "| {ch} | {agent} | {} | {} | {} | {} | {:.4} | {:.4} |",
                l.calls,
                l.prompt_tokens,
                l.cached_tokens,
                l.completion_tokens,
                l.cost,
                l.cache_savings
            );
        };
        for ch in &self.chapters {
            let name = ch.chapter.as_deref().unwrap_or("(whole book)");
            for (a, l) in &ch.by_agent {
                row(&mut o, name, a.as_str(), l);
            }
        }
        for (a, l) in &self.by_agent {
            row(&mut o, "**whole campaign**", a.as_str(), l);
        }
        row(&mut o, "**total**", "all", &self.total);
        let _ = writeln!(
            o,
            "\nCached input saved {:.4} {cur}: {} cached prompt tokens × ({} − {}) {cur} per million.",
            self.total.cache_savings,
            self.total.cached_tokens,
            self.input_per_million,
            self.cached_input_per_million
        );
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_prices_cached_tokens_and_counts_their_savings() {
        let p = Pricing {
            input_per_million: 2.0,
            cached_input_per_million: Some(0.5),
            output_per_million: 8.0,
            currency: "USD".into(),
            max_cost: None,
        };
        let u = crate::llm::Usage {
            prompt_tokens: 3_000_000,
            cached_tokens: 1_000_000,
            completion_tokens: 1_000_000,
            ..Default::default()
        };
        let l = line_of(&p, 0.5, &u);
        assert_eq!(l.cost, 2.0 * 2.0 + 0.5 + 8.0);
        assert_eq!(l.cache_savings, 1.5);
        // No cached price: cached tokens cost the input price and save nothing.
        let p = Pricing {
            cached_input_per_million: None,
            ..p
        };
        let l = line_of(&p, p.input_per_million, &u);
        assert_eq!(l.cost, 3.0 * 2.0 + 8.0);
        assert_eq!(l.cache_savings, 0.0);
    }
}
