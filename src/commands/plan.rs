//! `booktr plan`: an offline dry run. Shows the units per chapter, the agent graph, the
//! Manager's plan, estimated calls and tokens per agent with the cost at `[pricing]`, and, when
//! the campaign has state, what is done and what a resume would send. Needs no key and sends
//! no request.

use serde_json::json;

use crate::agents::Agent;
use crate::campaign::Campaign;
use crate::campaign::core::manager::Manager;
use crate::campaign::core::state::State;
use crate::campaign::ops::estimate::{self, Estimate};
use crate::cli::PlanArgs;
use crate::exit::ExitCode;

pub fn run(args: &PlanArgs) -> anyhow::Result<ExitCode> {
    let plan = super::plan(&args.campaign, None)?;
    let campaign = Campaign::load(plan)?;
    let dir = campaign.state_path();
    let state = if dir.exists() {
        State::load(&campaign, &dir, "plan")?
    } else {
        State::default()
    };
    let manager = Manager::new(&campaign, &state);
    let est = estimate::estimate(&campaign, &state, &manager);
    let p = &campaign.plan;
    let chapters: Vec<serde_json::Value> = campaign
        .chapters
        .iter()
        .map(|ch| {
            let units: Vec<&crate::book::Unit> = campaign.units_of(&ch.key).collect();
            let prose = units.iter().filter(|u| u.kind.needs_translation()).count();
            json!({
                "chapter": ch.key,
                "file": ch.rel_path,
                "units": units.len(),
                "to_translate": prose,
                "copied": units.len() - prose,
                "chars": ch.text.chars().count(),
                "source_tokens": crate::tokens::count(&ch.text),
            })
        })
        .collect();
    let graph = agent_graph(&campaign, &manager);
    let steps = manager.context(&state).plan;
    if args.json {
        println!(
            "{}",
            json!({
                "campaign": p.name,
                "rehearsal": p.is_rehearsal(),
                "provider": p.provider.kind.as_str(),
                "model": p.provider.model,
                "chapters": chapters,
                "chapter_sources": p.chapter_entries,
                "agent_graph": graph,
                "manager_plan": steps,
                "estimate": est,
                "seeds": campaign.seeds.reports,
            })
        );
        return Ok(ExitCode::Ok);
    }
    println!(
        "{}Plan for '{}' ({} → {}), provider {}, model {}\n",
        if p.is_rehearsal() { "REHEARSAL " } else { "" },
        p.name,
        p.source_lang.code,
        p.target_lang.code,
        p.provider.kind.as_str(),
        p.provider.model
    );
    for line in super::chapter_source_lines(p, 12) {
        println!("{line}");
    }
    for r in &campaign.seeds.reports {
        println!(
            "seed {} ({}): {} distinct block(s) of this book taken from it, never sent to a model{}{}",
            r.file,
            r.kind,
            r.blocks,
            if r.fuzzy + r.untranslated > 0 {
                format!(
                    "; {} distinct block(s) left to the model ({} only fuzzy, {} without a translation)",
                    r.fuzzy + r.untranslated,
                    r.fuzzy,
                    r.untranslated
                )
            } else {
                String::new()
            },
            if r.missing_chapters.is_empty() && r.unaligned.is_empty() {
                String::new()
            } else {
                format!(
                    "; {} chapter(s) without a counterpart, {} block(s) it could not align (e.g. {})",
                    r.missing_chapters.len(),
                    r.unaligned.len(),
                    r.unaligned
                        .first()
                        .or(r.missing_chapters.first())
                        .map_or("", String::as_str)
                )
            }
        );
    }
    println!(
        "| chapter | units | to translate | copied | chars | source tokens |\n|---|---|---|---|---|---|"
    );
    for ch in &chapters {
        println!(
            "| {} | {} | {} | {} | {} | {} |",
            ch["chapter"].as_str().unwrap_or(""),
            ch["units"],
            ch["to_translate"],
            ch["copied"],
            ch["chars"],
            ch["source_tokens"]
        );
    }
    println!("\nAgent graph:\n  {}\n", graph.join("\n  → "));
    println!("Manager's plan:");
    for s in &steps {
        println!("  - {s}");
    }
    print_estimate(&est, p.proofreads());
    Ok(ExitCode::Ok)
}

fn agent_graph(c: &Campaign, m: &Manager) -> Vec<String> {
    let p = &c.plan;
    vec![
        format!(
            "Glossary agent: {} candidate terms in {} pending batch(es); house style wins",
            m.candidates.len(),
            m.glossary_batches.len()
        ),
        format!(
            "Translation agent: {} units, one fresh context each, up to {} at once",
            c.prose_units().count(),
            p.concurrency
        ),
        if p.proofreads() {
            format!(
                "QA checks on every unit; Proofreading agent on the units QA passes, riskiest first, within {:.0} % of the translation prompt tokens (and one unit per chapter at least); its claims about termbase terms the glossary check refutes are dropped",
                p.proofread_share * 100.0
            )
        } else {
            "QA checks on every unit; Proofreading agent off (proofread_share = 0, the default: see docs/src/benchmarks.md, finding 21)".into()
        },
        "Glossary agent: reconciliation of terms rendered more than one way".into(),
        if p.proofreads() {
            format!(
                "Manager: decides revisions, up to {} round(s); QA errors always go back (a model call only when the reviewer flags other units; a round's first two revisions go out alone, and the rest are withheld if both are rejected)",
                p.revision_rounds
            )
        } else {
            format!(
                "Manager: decides revisions, up to {} round(s); QA errors always go back, without a model call (no reviewer flags anything else); a round's first two revisions go out alone, and the rest are withheld if both are rejected",
                p.revision_rounds
            )
        },
        "Translation agent: revisions with the findings as feedback".into(),
        format!("write {} chapters and the reports", c.chapters.len()),
    ]
}

/// The estimate table, the cost and the range; `proofread` says whether the campaign runs the
/// Proofreading agent (the range's high end then proofreads every chapter again).
fn print_estimate(e: &Estimate, proofread: bool) {
    println!(
        "\nEstimate (tokens counted with o200k_base; revisions and reconciliations depend on QA and are not included):\n"
    );
    println!(
        "| agent | calls | prompt tokens | completion tokens | remaining calls | remaining prompt tokens |\n|---|---|---|---|---|---|"
    );
    for a in Agent::ALL {
        let (t, r) = (e.total[&a], e.remaining[&a]);
        println!(
            "| {a} | {} | {} | {} | {} | {} |",
            t.calls, t.prompt_tokens, t.completion_tokens, r.calls, r.prompt_tokens
        );
    }
    if let (Some(total), Some(rem), Some(cur)) = (e.cost_total, e.cost_remaining, &e.currency) {
        println!("\nCost: {total:.4} {cur} in all, {rem:.4} {cur} still to spend.");
    }
    print_range(e, proofread);
    println!(
        "\nUnits translated: {} of {}; a resume would send {} calls.",
        e.units_done,
        e.units_to_translate,
        e.remaining.values().map(|a| a.calls).sum::<u64>()
    );
}

/// The low/high table of the whole campaign per agent (see [`crate::campaign::ops::estimate`]):
/// costs with `[pricing]`, else tokens.
fn print_range(e: &Estimate, proofread: bool) {
    println!(
        "\nRange for the whole campaign (low: no revision, prefix-cache hits where `cached_input_per_million` is set; high: every revision round on every unit{}, no cache):\n",
        if proofread {
            ", every chapter proofread again"
        } else {
            ""
        }
    );
    match &e.currency {
        Some(cur) => {
            println!(
                "| agent | low ({cur}) | high ({cur}) | low calls | high calls | low cached tokens |\n|---|---|---|---|---|---|"
            );
            for a in Agent::ALL {
                let r = e.range[&a];
                println!(
                    "| {a} | {:.4} | {:.4} | {} | {} | {} |",
                    r.low.cost.unwrap_or(0.0),
                    r.high.cost.unwrap_or(0.0),
                    r.low.calls,
                    r.high.calls,
                    r.low.cached_tokens
                );
            }
            if let (Some(low), Some(high)) = (e.cost_low, e.cost_high) {
                println!("\nCost range: {low:.4} to {high:.4} {cur}.");
            }
        }
        None => {
            println!(
                "| agent | low tokens | high tokens | low calls | high calls |\n|---|---|---|---|---|"
            );
            for a in Agent::ALL {
                let r = e.range[&a];
                println!(
                    "| {a} | {} | {} | {} | {} |",
                    r.low.prompt_tokens + r.low.completion_tokens,
                    r.high.prompt_tokens + r.high.completion_tokens,
                    r.low.calls,
                    r.high.calls
                );
            }
            println!("\n(add a [pricing] table to the campaign file to see costs)");
        }
    }
}
