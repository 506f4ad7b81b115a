//! `report.md`: the editor's two-minute summary. Worst problems first: failures, QA errors,
//! reviewer findings, then decisions, glossary and usage.

use std::fmt::Write;

use super::Report;
use crate::agents::Agent;
use crate::qa::Severity;
use crate::termbase::Origin;

/// Escapes text for a Markdown table cell (pipes and line breaks).
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace(['\n', '\r'], " ")
}

pub fn render(r: &Report) -> String {
    let mut o = String::new();
    let s = &r.summary;
    if r.rehearsal {
        let _ = writeln!(
            o,
            "> **REHEARSAL** — produced by the offline `pseudo` provider. The outputs are pseudo-translations for checking the pipeline, not translations.\n"
        );
    }
    let _ = writeln!(o, "# Translation report: {}\n", s.campaign);
    let _ = writeln!(
        o,
        "**Status: {:?}** · {} → {} · provider `{}` · model `{}` · fingerprint `{}`\n",
        s.status,
        r.source_lang,
        r.target_lang,
        r.provider,
        r.model,
        &s.fingerprint[..12.min(s.fingerprint.len())]
    );
    let _ = writeln!(
        o,
        "Units: {} total · {} translated · {} revised · {} failed · {} copied unchanged. Manager context peak: {} tokens.\n",
        s.units.total,
        s.units.translated,
        s.units.revised,
        s.units.failed,
        s.units.copied,
        s.manager_context_peak_tokens
    );
    if s.units.memory_hits > 0 {
        let _ = writeln!(
            o,
            "Translation memory: {} unit(s) reused from TMX without a model call.\n",
            s.units.memory_hits
        );
    }

    let failed: Vec<_> = r
        .units
        .iter()
        .filter(|u| u.error.is_some() && matches!(u.outcome, "failed" | "pending"))
        .collect();
    if !failed.is_empty() || !r.chapters_not_written.is_empty() {
        let _ = writeln!(o, "## Needs attention\n");
        for u in failed {
            let _ = writeln!(
                o,
                "- **{}** failed: {}",
                u.id,
                u.error.as_deref().unwrap_or("")
            );
        }
        if !r.chapters_not_written.is_empty() {
            let _ = writeln!(
                o,
                "- Chapters not written (a unit is missing): {}. Run again to retry.",
                r.chapters_not_written.join(", ")
            );
        }
        o.push('\n');
    }

    let findings = r.findings();
    // What the repair loop fixed, and what still needs a human.
    let fixed: Vec<String> = r
        .units
        .iter()
        .filter_map(|u| {
            let first = u.history.first()?;
            let last = u.history.last()?;
            (u.history.len() > 1 && !first.errors.is_empty() && last.errors.is_empty()).then(|| {
                format!(
                    "{} ({} fixed in round {})",
                    u.id,
                    first.errors.join(", "),
                    last.round.map_or("edit".into(), |r| r.to_string())
                )
            })
        })
        .collect();
    let open: Vec<String> = r
        .units
        .iter()
        .filter(|u| u.findings.iter().any(|f| f.severity == Severity::Error))
        .map(|u| {
            let checks: Vec<&str> = u
                .findings
                .iter()
                .filter(|f| f.severity == Severity::Error)
                .map(|f| f.check.as_str())
                .collect();
            format!("{} ({})", u.id, checks.join(", "))
        })
        .collect();
    if !fixed.is_empty() || !open.is_empty() {
        let _ = writeln!(o, "## Repairs\n");
        let _ = writeln!(
            o,
            "- Fixed by revision: {}",
            if fixed.is_empty() {
                "none".into()
            } else {
                fixed.join("; ")
            }
        );
        let _ = writeln!(
            o,
            "- Still needs a human: {}\n",
            if open.is_empty() {
                "none".into()
            } else {
                open.join("; ")
            }
        );
    }

    let _ = writeln!(o, "## QA findings on the final translations\n");
    if findings.is_empty() {
        let _ = writeln!(o, "No deterministic check found a problem.\n");
    } else {
        let _ = writeln!(
            o,
            "| severity | check | unit | message |\n|---|---|---|---|"
        );
        for f in findings.iter().take(50) {
            let sev = match f.severity {
                Severity::Error => "**error**",
                Severity::Warning => "warning",
                Severity::Info => "info",
            };
            let _ = writeln!(
                o,
                "| {sev} | {} | {} | {} |",
                f.check,
                f.unit,
                cell(&f.message)
            );
        }
        if findings.len() > 50 {
            let _ = writeln!(o, "\n…and {} more in report.json.", findings.len() - 50);
        }
        o.push('\n');
    }

    let issues: usize = r.proofreading.iter().map(|b| b.issues.len()).sum();
    let _ = writeln!(o, "## Proofreading (advisory)\n");
    let _ = writeln!(
        o,
        "{} batches reviewed, {} issues reported.\n",
        r.proofreading.len(),
        issues
    );
    for b in &r.proofreading {
        for i in b.issues.iter().take(20) {
            let _ = writeln!(
                o,
                "- round {} · {} · {}: {}",
                b.round,
                i.unit,
                i.kind,
                cell(&i.detail)
            );
        }
    }
    if issues > 0 {
        o.push('\n');
    }

    if !r.decisions.is_empty() {
        let _ = writeln!(o, "## Manager decisions\n");
        for d in &r.decisions {
            let chosen: Vec<&str> = d.revise.iter().map(|o| o.unit.as_str()).collect();
            let _ = writeln!(
                o,
                "- Round {}: revise {} unit(s) for QA errors ({}), {} of {} flagged by the reviewer ({}). {}",
                d.round,
                d.forced.len(),
                if d.forced.is_empty() {
                    "none".into()
                } else {
                    d.forced.join(", ")
                },
                chosen.len(),
                d.candidates.len(),
                if chosen.is_empty() {
                    "none".into()
                } else {
                    chosen.join(", ")
                },
                cell(&d.summary)
            );
        }
        o.push('\n');
    }

    if !r.drift.is_empty() {
        let _ = writeln!(o, "## Terminology drift\n");
        let _ = writeln!(
            o,
            "| term | in glossary | renderings (units) | suggested |\n|---|---|---|---|"
        );
        for d in r.drift.iter().take(40) {
            let cells: Vec<String> = d
                .cells
                .iter()
                .map(|(k, v)| format!("{} ({})", k, v.len()))
                .collect();
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} |",
                cell(&d.term),
                if d.in_glossary { "yes" } else { "no" },
                cell(&cells.join(", ")),
                cell(d.suggested.as_deref().unwrap_or(""))
            );
        }
        if r.drift.len() > 40 {
            let _ = writeln!(
                o,
                "\n…and {} more terms in report.json.",
                r.drift.len() - 40
            );
        }
        o.push('\n');
    }
    if !r.reconciliations.is_empty() {
        let _ = writeln!(o, "## Terminology reconciliation\n");
        for x in &r.reconciliations {
            let offered: Vec<String> = x
                .renderings
                .iter()
                .map(|r| format!("{} ({})", r.rendering, r.units))
                .collect();
            match &x.reason {
                Some(reason) => {
                    let _ = writeln!(
                        o,
                        "- round {} · **{}**: {} → answer **rejected**: {}",
                        x.round,
                        x.term,
                        offered.join(", "),
                        cell(reason)
                    );
                }
                None => {
                    let _ = writeln!(
                        o,
                        "- round {} · **{}**: {} → chosen **{}**. {}",
                        x.round,
                        x.term,
                        offered.join(", "),
                        x.chosen.as_deref().unwrap_or("(none)"),
                        cell(&x.note)
                    );
                }
            }
        }
        o.push('\n');
    }
    if !r.glossary_rejections.is_empty() {
        let _ = writeln!(
            o,
            "## Glossary proposals not enforced\n\nEntries the Glossary agent proposed that failed a deterministic check: `dropped` ones were discarded, `review` ones wait for an editor at the glossary gate. Neither is in the termbase.\n\n| source | target | action | reason |\n|---|---|---|---|"
        );
        for g in &r.glossary_rejections {
            let action = match g.action {
                crate::termbase::vet::Action::Dropped => "dropped",
                crate::termbase::vet::Action::Review => "review",
            };
            let _ = writeln!(
                o,
                "| {} | {} | {action} | {} |",
                cell(&g.source),
                cell(&g.target),
                cell(&g.reason)
            );
        }
        o.push('\n');
    }
    if !r.review_terms.is_empty() {
        let _ = writeln!(o, "## Terms to review\n");
        let _ = writeln!(
            o,
            "| rendering | term | unit | marked | context |\n|---|---|---|---|---|"
        );
        for t in r.review_terms.iter().take(60) {
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} | {} |",
                cell(&t.rendering),
                cell(t.term.as_deref().unwrap_or("")),
                t.unit,
                if t.marked { "yes" } else { "no" },
                cell(&t.context)
            );
        }
        o.push('\n');
    }

    if let Some(b) = &r.brief {
        let _ = writeln!(
            o,
            "## Book brief\n\n`{}` ({} characters, {}), sha256 `{}`: part of every translation prompt.\n",
            b.file,
            b.chars,
            if b.edited {
                "edited by the editor"
            } else {
                "written by the Glossary agent"
            },
            &b.sha256[..12]
        );
    }
    if !r.approvals.is_empty() {
        let _ = writeln!(o, "## Approvals\n");
        for a in &r.approvals {
            let _ = writeln!(o, "- {a}");
        }
        o.push('\n');
    }
    if let Some(cmp) = &r.comparison {
        let _ = writeln!(
            o,
            "## Comparison: orchestration vs a single agent\n\n`booktr experiment`, {} · provider {} · model {} · judge {} · evidence `{}`{}\n",
            cmp.generated_at,
            cmp.provider,
            cmp.model,
            cmp.judge_model,
            cmp.evidence,
            if cmp.rehearsal {
                " · REHEARSAL (pseudo provider: the numbers measure the pipeline, not a model)"
            } else {
                ""
            }
        );
        let _ = writeln!(
            o,
            "| metric | orchestration | single agent |\n|---|---|---|"
        );
        for [m, a, b] in &cmp.rows {
            let _ = writeln!(o, "| {m} | {a} | {b} |");
        }
        let _ = writeln!(o);
        for g in &cmp.gates {
            let _ = writeln!(
                o,
                "- gate {} **{}**: {}",
                g.name,
                if g.pass { "true" } else { "FALSE" },
                g.reason
            );
        }
        o.push('\n');
    }
    let _ = writeln!(o, "## Glossary\n");
    let count = |origin: Origin| r.glossary.iter().filter(|e| e.origin == origin).count();
    let _ = writeln!(
        o,
        "{} entries: {} house style, {} proposed by the Glossary agent (to review), {} reconciled, {} set by the editor. {} proposals dropped because house style fixes the term.\n",
        r.glossary.len(),
        count(Origin::HouseStyle),
        count(Origin::Agent),
        count(Origin::Reconciled),
        count(Origin::Editor),
        r.glossary_dropped_by_house
    );
    if !r.glossary.is_empty() {
        let _ = writeln!(o, "| source | target | origin | note |\n|---|---|---|---|");
        for e in r.glossary.iter().take(60) {
            let _ = writeln!(
                o,
                "| {} | {} | {:?} | {} |",
                cell(&e.source),
                cell(&e.target),
                e.origin,
                cell(&e.note)
            );
        }
        if r.glossary.len() > 60 {
            let _ = writeln!(o, "\n…and {} more in report.json.", r.glossary.len() - 60);
        }
        o.push('\n');
    }

    let _ = writeln!(
        o,
        "## Usage\n\n| agent | calls | requests | failed | prompt tokens | cached | completion tokens |\n|---|---|---|---|---|---|---|"
    );
    for a in Agent::ALL {
        let u = r.usage_of(a);
        let _ = writeln!(
            o,
            "| {a} | {} | {} | {} | {} | {} | {} |",
            u.calls, u.requests, u.failed, u.prompt_tokens, u.cached_tokens, u.completion_tokens
        );
    }
    o.push('\n');
    if let Some(cost) = &s.cost {
        let by: Vec<String> = cost
            .by_agent
            .iter()
            .map(|(a, v)| format!("{a} {v:.4}"))
            .collect();
        let _ = writeln!(
            o,
            "Cost: **{:.4} {}** ({}).\n",
            cost.total,
            cost.currency,
            by.join(", ")
        );
    }
    o
}
