//! `report.md`: the editor's two-minute summary. Worst problems first: failures, QA errors
//! (by severity, then by how badly the check breaks the book, [`crate::qa::CHECK_ORDER`]),
//! the candidates each unit had and which one is kept, reviewer findings, then decisions,
//! glossary and usage.

use std::fmt::Write;

use super::Report;
use crate::agents::Agent;
use crate::qa::{Finding, Severity};
use crate::termbase::Origin;

/// Escapes text for a Markdown table cell (pipes and line breaks).
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace(['\n', '\r'], " ")
}

pub fn render(r: &Report) -> String {
    let mut o = String::new();
    header_section(&mut o, r);
    failures_section(&mut o, r);
    repairs_section(&mut o, r);
    pieces_section(&mut o, r);
    qa_findings_section(&mut o, r);
    choices_section(&mut o, r);
    proofreading_section(&mut o, r);
    decisions_and_drift_section(&mut o, r);
    terminology_section(&mut o, r);
    brief_and_approvals_section(&mut o, r);
    glossary_and_usage_section(&mut o, r);
    o
}

/// The title, the status line, unit counts and cost, then what the run kept, reused, stopped
/// on or threw away.
fn header_section(o: &mut String, r: &Report) {
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
        "**Status: {}** · {} → {} · provider `{}` · model `{}` · fingerprint `{}`\n",
        s.status.headline(&s.findings, &s.units),
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
    // The same cost sentence as report.html's summary.
    let _ = writeln!(o, "Cost: {}.\n", super::counts::cost_line(s));
    let edited = r.units.iter().filter(|u| u.outcome == "edited").count();
    if edited > 0 {
        let _ = writeln!(
            o,
            "{edited} unit(s) hold hand edits or imported edits: those are never overwritten by a model translation.\n"
        );
    }
    let reused: Vec<&super::UnitReport> = r.units.iter().filter(|u| u.blocks.is_some()).collect();
    if !reused.is_empty() {
        let sum = |f: fn(&crate::campaign::core::state::Reused) -> usize| -> usize {
            reused.iter().filter_map(|u| u.blocks.as_ref()).map(f).sum()
        };
        let _ = writeln!(
            o,
            "Block memory: {} unit(s) took recorded paragraphs instead of being translated whole: {} written by people (an editor's: {}, seeded from an existing translation: {}), {} a model's earlier translation; {} paragraph(s) were sent to the model.\n",
            reused.len(),
            sum(|b| b.human) + sum(|b| b.seeded),
            sum(|b| b.human),
            sum(|b| b.seeded),
            sum(|b| b.model),
            sum(|b| b.sent)
        );
    }
    let stale: Vec<(&str, &crate::campaign::core::blocks::Stale)> = r
        .units
        .iter()
        .filter(|u| {
            u.findings
                .iter()
                .any(|f| f.check == crate::campaign::core::state::STALE_EDIT)
        })
        .flat_map(|u| {
            u.blocks
                .iter()
                .flat_map(|b| b.stale.iter())
                .map(move |st| (u.id.as_str(), st))
        })
        .collect();
    if !stale.is_empty() {
        let _ = writeln!(
            o,
            "**Stale edits** (a paragraph an editor translated has a new source; the editor's text stays until you decide with `booktr approve CAMPAIGN --stale UNIT --keep editor|model`):\n"
        );
        for (id, st) in stale {
            let _ = writeln!(
                o,
                "- {id}: was \"{}\"; now \"{}\"; the editor's text: \"{}\"",
                crate::util::excerpt(&st.old_source, 160),
                crate::util::excerpt(&st.new_source, 160),
                crate::util::excerpt(&st.editor, 160)
            );
        }
        let _ = writeln!(o);
    }
    if s.units.memory_hits > 0 {
        let _ = writeln!(
            o,
            "Translation memory: {} unit(s) reused from TMX without a model call.\n",
            s.units.memory_hits
        );
    }
    let fz = &r.fuzzy_matches;
    if fz.total() > 0 {
        let _ = writeln!(
            o,
            "Fuzzy translation-memory matches (given to the translator as references, never copied): {} unit(s): 75–84%: {} · 85–94%: {} · 95–99%: {}.\n",
            fz.total(),
            fz.low,
            fz.mid,
            fz.high
        );
    }
    if let Some(stopped) = &s.stopped {
        let _ = writeln!(
            o,
            "**Stopped early:** {stopped}. Finished work is kept; resume with `{}`.\n",
            s.resume.as_deref().unwrap_or("booktr run <campaign>")
        );
    }
    if let Some(b) = &s.budget {
        let _ = writeln!(
            o,
            "**Budget reached:** {:.4} {cur} spent of max_cost {:.4} {cur}; the next call ({}) was not sent. Finished work is kept; resume with a higher cap: `{}`.\n",
            b.spent,
            b.cap,
            b.next_call,
            s.resume
                .as_deref()
                .unwrap_or("booktr run <campaign> --max-cost <amount>"),
            cur = b.currency
        );
    }
    let rr = &r.runaway;
    if rr.replies > 0 && rr.kept == 0 {
        let _ = writeln!(
            o,
            "Runaway replies: {} stopped by the stream reader ({} repeating themselves, {} past the hard ceiling), {} completion tokens billed and discarded; none was kept. See `runaway` in report.json.\n",
            rr.replies,
            rr.repetitions,
            rr.replies - rr.repetitions,
            rr.completion_tokens
        );
    } else if rr.replies > 0 {
        let _ = writeln!(
            o,
            "Runaway replies: {} stopped by the stream reader ({} repeating themselves, {} past the hard ceiling); {} of them covered every block of the unit before the repetition, and that part was kept as the answer, for QA to judge ({} completion tokens, the repetition included); {} completion tokens of the others billed and discarded. See `runaway` in report.json.\n",
            rr.replies,
            rr.repetitions,
            rr.replies - rr.repetitions,
            rr.kept,
            rr.kept_completion_tokens,
            rr.completion_tokens - rr.kept_completion_tokens
        );
    }
    if !rr.continued.is_empty() || !rr.kept_splits.is_empty() {
        let _ = writeln!(
            o,
            "Long answers: {} reply(ies) reached max_tokens and were continued ({} continuation request(s), {} prompt and {} completion tokens); {} cut reply(ies) kept their first blocks and the rest of the unit was translated apart. Nothing of them was discarded but an unfinished last block.\n",
            rr.continued.len(),
            rr.continuations,
            rr.continuation_usage.prompt_tokens,
            rr.continuation_usage.completion_tokens,
            rr.kept_splits.len()
        );
    }
    if rr.not_kept.completion_tokens > 0 {
        let _ = writeln!(o, "Paid and not kept: {}.\n", rr.not_kept.line());
    }
}

/// Units whose translation failed, and chapters not written.
fn failures_section(o: &mut String, r: &Report) {
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
    if !r.site_notes.is_empty() {
        let _ = writeln!(o, "## The translated site\n");
        for n in &r.site_notes {
            let _ = writeln!(o, "- {n}");
        }
        o.push('\n');
    }
}

/// What the repair loop fixed, and what still needs a human.
fn repairs_section(o: &mut String, r: &Report) {
    // What the repair loop fixed, and what still needs a human.
    let fixed: Vec<String> = r
        .units
        .iter()
        .filter_map(|u| {
            let first = u.history.first()?;
            // The kept text, not the newest: a rejected revision fixed nothing.
            let kept = u.candidates.iter().find(|k| k.kept)?;
            (u.history.len() > 1 && !first.errors.is_empty() && kept.errors == 0).then(|| {
                format!(
                    "{} ({} fixed in round {})",
                    u.id,
                    first.errors.join(", "),
                    kept.round.map_or("edit".into(), |r| r.to_string())
                )
            })
        })
        .collect();
    // A unit not translated yet (never reached: the run stopped before it) is the run's work
    // left, not an editor's: counted apart. A failed unit stays in the list with its error.
    let untranslated_only = |u: &&super::UnitReport| u.outcome == "pending";
    let not_yet = r
        .units
        .iter()
        .filter(|u| u.findings.iter().any(|f| f.severity == Severity::Error))
        .filter(untranslated_only)
        .count();
    let open: Vec<String> = r
        .units
        .iter()
        .filter(|u| u.findings.iter().any(|f| f.severity == Severity::Error))
        .filter(|u| !untranslated_only(u))
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
    if !fixed.is_empty() || !open.is_empty() || not_yet > 0 || r.repairs > 0 {
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
            "- Still needs a human: {}",
            if open.is_empty() {
                "none".into()
            } else {
                open.join("; ")
            }
        );
        if not_yet > 0 {
            let _ = writeln!(
                o,
                "- Not translated yet (run the campaign again): {not_yet} unit(s)"
            );
        }
        let _ = writeln!(o);
    }

    if r.repairs > 0 {
        let by: Vec<String> = r
            .repairs_by_class
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        let _ = writeln!(
            o,
            "### Repairs made from the source\n\n{} mechanical repair(s) ({}): what the model should have copied, restored byte for byte; no model call.\n\n| unit | round | class | before → after | kept |\n|---|---|---|---|---|",
            r.repairs,
            by.join(", ")
        );
        let rows: Vec<(&str, &super::RepairReport)> = r
            .units
            .iter()
            .flat_map(|u| u.repairs.iter().map(move |x| (u.id.as_str(), x)))
            .collect();
        let cell = |t: &str| {
            if t.is_empty() {
                return "(removed)".to_string();
            }
            let t: String = t.chars().take(60).collect();
            format!(
                "`{}`",
                t.replace('`', "'").replace('\n', "⏎").replace('|', "\\|")
            )
        };
        for (id, x) in rows.iter().take(MAX_FINDING_ROWS) {
            let _ = writeln!(
                o,
                "| {id} | {} | {} | {} → {} | {} |",
                x.round,
                x.class.as_str(),
                cell(&x.before),
                cell(&x.after),
                if x.kept { "yes" } else { "no" }
            );
        }
        if rows.len() > MAX_FINDING_ROWS {
            let _ = writeln!(
                o,
                "\n…and {} more repairs in report.json.",
                rows.len() - MAX_FINDING_ROWS
            );
        }
        o.push('\n');
    }
}

/// Units translated again in smaller pieces, and why.
fn pieces_section(o: &mut String, r: &Report) {
    // Which units were translated again in pieces when still wrong after their revisions, and why.
    let pieces: Vec<(&str, &super::PiecesReport, bool)> = r
        .units
        .iter()
        .filter_map(|u| {
            let p = u.pieces.as_ref()?;
            Some((u.id.as_str(), p, u.kept_round == Some(p.round)))
        })
        .collect();
    if !pieces.is_empty() {
        let _ = writeln!(
            o,
            "### Translated again in pieces\n\n{} unit(s) still had errors after the revision rounds and were translated again in smaller pieces (inline markup masked), then joined and checked; the joined text is kept only when no worse.\n\n| unit | round | pieces | kept | errors that sent it |\n|---|---|---|---|---|",
            pieces.len()
        );
        for (id, p, kept) in pieces.iter().take(MAX_FINDING_ROWS) {
            let why: String = p.reason.chars().take(160).collect();
            let _ = writeln!(
                o,
                "| {id} | {} | {} | {} | {} |",
                p.round,
                p.parts,
                if *kept { "yes" } else { "no" },
                why.replace('|', "\\|").replace('\n', " ")
            );
        }
        o.push('\n');
    }
}

/// The QA findings on the final translations, by check, then the worst rows.
fn qa_findings_section(o: &mut String, r: &Report) {
    let findings = r.findings();
    let _ = writeln!(o, "## QA findings on the final translations\n");
    if findings.is_empty() {
        let _ = writeln!(o, "No deterministic check found a problem.\n");
    } else {
        // Counts per check first: the whole picture, whatever the table below leaves out.
        let _ = writeln!(
            o,
            "| severity | check | findings | units |\n|---|---|---|---|"
        );
        for (sev, check, n, units) in per_check(&findings) {
            let _ = writeln!(o, "| {} | {check} | {n} | {units} |", severity_cell(sev));
        }
        o.push('\n');
        let rows = table_rows(&findings, MAX_FINDING_ROWS);
        let _ = writeln!(
            o,
            "| severity | check | unit | message |\n|---|---|---|---|"
        );
        for f in &rows {
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} |",
                reviewed_severity_cell(f),
                f.check,
                f.unit,
                cell(&f.message)
            );
        }
        if findings.len() > rows.len() {
            let _ = writeln!(
                o,
                "\n…and {} more in report.json (every check above has at least one row here).",
                findings.len() - rows.len()
            );
        }
        o.push('\n');
    }

    marks_section(o, r);
    mqm_section(o, r);
}

/// The candidates of each unit that had more than one, and which one is kept.
fn choices_section(o: &mut String, r: &Report) {
    let choices: Vec<&super::UnitReport> = r
        .units
        .iter()
        .filter(|u| u.candidates.len() > 1 || u.candidates.iter().any(|k| k.rejected))
        .collect();
    if !choices.is_empty() {
        let rejected: usize = r
            .units
            .iter()
            .map(|u| u.candidates.iter().filter(|k| k.rejected).count())
            .sum();
        let _ = writeln!(o, "## Candidates\n");
        let _ = writeln!(
            o,
            "Each unit keeps a translation before a text left in the source language, then the candidate with the fewest error findings, then the fewest warnings (the latest on a tie); an editor's text always wins. {} unit(s) had more than one candidate; {rejected} revision(s) were rejected for adding errors or for being left in the source language.\n",
            choices.len()
        );
        for u in choices.iter().take(MAX_FINDING_ROWS) {
            let _ = writeln!(o, "- {}: {}", u.id, candidates_line(u));
        }
        if choices.len() > MAX_FINDING_ROWS {
            let _ = writeln!(
                o,
                "\n…and {} more units in report.json.",
                choices.len() - MAX_FINDING_ROWS
            );
        }
        o.push('\n');
    }
}

/// What report.md and report.html say when the campaign ran without the Proofreading agent.
pub(crate) const PROOFREADING_OFF: &str = "Off (proofread_share = 0, the default): no model reviewed the translations; the QA findings are the whole review. proofread_share = 0.2 turns the Proofreading agent on.";

/// The Proofreading agent's findings (advisory).
fn proofreading_section(o: &mut String, r: &Report) {
    let issues: usize = r.proofreading.iter().map(|b| b.issues.len()).sum();
    let _ = writeln!(o, "## Proofreading (advisory)\n");
    if r.proofreading_off() {
        let _ = writeln!(o, "{PROOFREADING_OFF}\n");
        return;
    }
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
    for x in &r.refuted_issues {
        let _ = writeln!(
            o,
            "- Refuted, not fed back: round {} · {} · the reviewer claimed \"{}\" was not rendered as the termbase says; the glossary check found its rendering and no fault: {}",
            x.round,
            x.unit,
            x.term,
            cell(&x.detail)
        );
    }
    if issues > 0 {
        o.push('\n');
    }
}

/// The Manager's decisions and the terms rendered inconsistently.
fn decisions_and_drift_section(o: &mut String, r: &Report) {
    for w in &r.revisions_withheld {
        let _ = writeln!(
            o,
            "Revisions withheld after round {}: the model's first {} revisions of the round were all rejected (QA ranked each below the text it would replace), so {} unit(s) were not sent back ({}); those still wrong were translated again in pieces, and their errors are listed above.\n",
            w.round,
            w.judged,
            w.units.len(),
            w.units.join(", ")
        );
    }
    if !r.decisions.is_empty() {
        let _ = writeln!(o, "## Manager decisions\n");
        for d in &r.decisions {
            let chosen: Vec<&str> = d.revise.iter().map(|o| o.unit.as_str()).collect();
            let pieces = if d.to_pieces.is_empty() {
                String::new()
            } else {
                format!(
                    "; {} left in the source language, to be translated again in pieces instead ({})",
                    d.to_pieces.len(),
                    d.to_pieces.join(", ")
                )
            };
            // Without proofreading there is no reviewer to count.
            let reviewed = if r.proofreading_off() {
                String::new()
            } else {
                format!(
                    ", {} of {} flagged by the reviewer ({})",
                    chosen.len(),
                    d.candidates.len(),
                    if chosen.is_empty() {
                        "none".into()
                    } else {
                        chosen.join(", ")
                    }
                )
            };
            let _ = writeln!(
                o,
                "- Round {}: revise {} unit(s) for QA errors ({}{pieces}){reviewed}. {}",
                d.round,
                d.forced.len(),
                if d.forced.is_empty() {
                    "none".into()
                } else {
                    d.forced.join(", ")
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
}

/// Reconciled terms, glossary proposals not enforced, and terms for review.
fn terminology_section(o: &mut String, r: &Report) {
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
}

/// The book brief, the approvals given, and the comparison with another run.
fn brief_and_approvals_section(o: &mut String, r: &Report) {
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
            "| metric | orchestration | single agent | stateless loop |\n|---|---|---|---|"
        );
        for [m, a, b, l] in &cmp.rows {
            let _ = writeln!(o, "| {m} | {a} | {b} | {l} |");
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
}

/// The glossary, usage by agent and the cost ledger.
fn glossary_and_usage_section(o: &mut String, r: &Report) {
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
    if let Some(l) = &r.ledger {
        let _ = writeln!(
            o,
            "## Cost ledger\n\nActual cost of every billed call at `[pricing]`, per chapter and agent (calls about the whole book on their own line).\n"
        );
        o.push_str(&l.markdown());
        o.push('\n');
    }
}

/// The severity cell of a finding with the editor's review: `info (dismissed error)`,
/// `**error** (confirmed)`, `warning (error, check downgraded)`.
fn reviewed_severity_cell(f: &Finding) -> String {
    let Some(r) = &f.review else {
        return severity_cell(f.severity).to_string();
    };
    let was = match r.checked_severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "info",
    };
    let what = match r.mark {
        Some(crate::qa::findings::editor_marks::Mark::Dismissed) => format!("dismissed {was}"),
        Some(crate::qa::findings::editor_marks::Mark::Confirmed) => "confirmed".to_string(),
        None => format!("{was}, check downgraded"),
    };
    format!("{} ({what})", severity_cell(f.severity))
}

/// `## Editor marks`: counts, precision per marked check, downgraded checks, cleared marks.
fn marks_section(o: &mut String, r: &Report) {
    let m = &r.finding_marks;
    if m.precision.is_empty() && m.cleared.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "## Editor marks\n\n{} finding(s) confirmed, {} dismissed on the final texts (dismissed findings count toward neither the status nor the exit code). Precision is confirmed / marked over every marked finding of the check; a check under {} with at least {} marks is downgraded to warnings for this campaign (campaign key `mark_precision_threshold`).\n",
        m.confirmed, m.dismissed, m.threshold, m.min_marks
    );
    let _ = writeln!(
        o,
        "| check | confirmed | dismissed | precision | downgraded |\n|---|---|---|---|---|"
    );
    for p in &m.precision {
        let _ = writeln!(
            o,
            "| {} | {} | {} | {:.2} | {} |",
            p.check,
            p.confirmed,
            p.dismissed,
            p.precision,
            if p.downgraded { "**yes**" } else { "no" }
        );
    }
    o.push('\n');
    if !m.downgraded.is_empty() {
        let _ = writeln!(
            o,
            "Downgraded to warnings for this campaign (precision under {}): {}.\n",
            m.threshold,
            m.downgraded.join(", ")
        );
    }
    if !m.cleared.is_empty() {
        let _ = writeln!(o, "Marks cleared ({}):\n", m.cleared.len());
        for c in m.cleared.iter().take(MAX_FINDING_ROWS) {
            let _ = writeln!(
                o,
                "- `{}` ({} {}, {}): {}",
                c.id,
                c.check,
                c.unit,
                c.mark.as_str(),
                c.reason
            );
        }
        o.push('\n');
    }
}

/// `## MQM scorecard`: penalty per 1,000 source words per chapter.
fn mqm_section(o: &mut String, r: &Report) {
    let q = &r.mqm;
    if q.chapters.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "## MQM scorecard\n\nPenalty points per 1,000 source words (MQM scoring model, themqm.org: minor {}, major {}, critical {}); unconfirmed issues and editor-confirmed errors apart; a chapter passes at {} or less (campaign key `mqm_threshold`). Overall: **{}**.\n",
        q.weights[0],
        q.weights[1],
        q.weights[2],
        q.threshold,
        if q.pass { "pass" } else { "fail" }
    );
    let _ = writeln!(
        o,
        "| chapter | words | unconfirmed | confirmed | total | dismissed | result |\n|---|---|---|---|---|---|---|"
    );
    for c in &q.chapters {
        let _ = writeln!(
            o,
            "| {} | {} | {:.1} | {:.1} | {:.1} | {} | {} |",
            c.chapter,
            c.source_words,
            c.unconfirmed.per_1000_words,
            c.confirmed.per_1000_words,
            c.per_1000_words,
            c.dismissed,
            if c.pass { "pass" } else { "**fail**" }
        );
    }
    o.push('\n');
}

/// Most rows of the findings table (and of the candidates list) in report.md.
pub const MAX_FINDING_ROWS: usize = 50;

fn severity_cell(s: Severity) -> &'static str {
    match s {
        Severity::Error => "**error**",
        Severity::Warning => "warning",
        Severity::Info => "info",
    }
}

/// `(severity, check, findings, distinct units)` per check, in the order of `findings`
/// (severity, then [`crate::qa::CHECK_ORDER`]).
fn per_check<'a>(findings: &[&'a Finding]) -> Vec<(Severity, &'a str, usize, usize)> {
    let mut out: Vec<(Severity, &str, usize, std::collections::BTreeSet<&str>)> = Vec::new();
    for f in findings {
        match out
            .iter_mut()
            .find(|(s, c, _, _)| *s == f.severity && *c == f.check)
        {
            Some((_, _, n, units)) => {
                *n += 1;
                units.insert(&f.unit);
            }
            None => out.push((f.severity, &f.check, 1, [f.unit.as_str()].into())),
        }
    }
    out.into_iter()
        .map(|(s, c, n, u)| (s, c, n, u.len()))
        .collect()
}

/// At most `max` of `findings` (already in report order) for the table, such that every
/// (severity, check) class keeps at least one row even when rows are cut: first the first
/// finding of each class, then the others in order, shown in report order.
fn table_rows<'a>(findings: &[&'a Finding], max: usize) -> Vec<&'a Finding> {
    if findings.len() <= max {
        return findings.to_vec();
    }
    let mut chosen = vec![false; findings.len()];
    let mut seen: Vec<(Severity, &str)> = Vec::new();
    let mut n = 0;
    for (i, f) in findings.iter().enumerate() {
        if !seen.contains(&(f.severity, f.check.as_str())) {
            seen.push((f.severity, &f.check));
            chosen[i] = true;
            n += 1;
        }
    }
    for c in chosen.iter_mut() {
        if n >= max {
            break;
        }
        if !*c {
            *c = true;
            n += 1;
        }
    }
    findings
        .iter()
        .zip(chosen)
        .filter(|(_, c)| *c)
        .map(|(f, _)| *f)
        .collect()
}

/// One unit's candidates on a line: `round 0 translation: 1 error, 0 warnings (kept) · round 1
/// revision: 5 errors, 0 warnings (rejected)`.
fn candidates_line(u: &super::UnitReport) -> String {
    u.candidates
        .iter()
        .map(|k| {
            let name = match k.round {
                Some(r) => format!("round {r}"),
                None => "editor".to_string(),
            };
            let origin = serde_json::to_value(k.origin)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default();
            let mark = if k.kept {
                " **(kept)**"
            } else if k.rejected {
                " (rejected)"
            } else {
                ""
            };
            let left = if k.left_in_source {
                ", left in the source language"
            } else if k.critical > 0 {
                ", content lost"
            } else {
                ""
            };
            format!(
                "{name} {origin}: {} error(s), {} warning(s){left}{mark}",
                k.errors, k.warnings
            )
        })
        .collect::<Vec<_>>()
        .join(" · ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::Lang;
    use crate::qa::{self, QaContext};
    use crate::report::{UnitReport, build_standalone};

    fn finding(check: &str, severity: Severity, unit: &str) -> Finding {
        Finding {
            unit: unit.into(),
            chapter: "c".into(),
            ..Finding::new(check, severity, format!("{check} in {unit}"), "", "")
        }
    }

    fn unit(id: &str, findings: Vec<Finding>) -> UnitReport {
        UnitReport {
            id: id.into(),
            chapter: "c".into(),
            kind: crate::book::UnitKind::Prose,
            chars: 10,
            outcome: "translated",
            rounds: vec![0],
            usage: Default::default(),
            attempts: 1,
            findings,
            error: None,
            history: Vec::new(),
            candidates: Vec::new(),
            kept_round: None,
            repairs: Vec::new(),
            pieces: None,
            blocks: None,
        }
    }

    /// 60 units with a `code_blocks` error, one with a `glossary` error (it sorts after them)
    /// and one with a `numbers` warning.
    fn crowded() -> Report {
        let ctx = QaContext::new(&Lang::parse("en"), &Lang::parse("zh"), &Default::default());
        let mut units: Vec<UnitReport> = (0..60)
            .map(|i| {
                let id = format!("c-{i:03}");
                unit(&id, vec![finding("code_blocks", Severity::Error, &id)])
            })
            .collect();
        // Listed first, reported after every code error: the order is the check's, not the
        // unit's.
        units.insert(
            0,
            unit(
                "b-000",
                vec![
                    finding("numbers", Severity::Warning, "b-000"),
                    finding("glossary", Severity::Error, "b-000"),
                ],
            ),
        );
        build_standalone(
            "t",
            "en",
            "zh",
            units,
            Vec::new(),
            "r",
            qa::check_campaign(&ctx, &[], &[]),
        )
    }

    #[test]
    fn report_md_lists_findings_by_severity_then_check_order() {
        let md = render(&crowded());
        let code = md
            .find("| **error** | code_blocks | c-000 |")
            .expect("code row");
        let glossary = md
            .find("| **error** | glossary | b-000 |")
            .expect("glossary row");
        let numbers = md
            .find("| warning | numbers | b-000 |")
            .expect("numbers row");
        assert!(code < glossary, "structure before terminology");
        assert!(glossary < numbers, "errors before warnings");
        // The per-check counts, in the same order.
        let c1 = md
            .find("| **error** | code_blocks | 60 | 60 |")
            .expect("count");
        let c2 = md.find("| **error** | glossary | 1 | 1 |").expect("count");
        let c3 = md.find("| warning | numbers | 1 | 1 |").expect("count");
        assert!(c1 < c2 && c2 < c3 && c3 < code, "{md}");
        assert!(
            md.contains("**Status: needs_review: 61 errors in 61 units**"),
            "{md}"
        );
        assert!(md.contains("\nCost: no pricing set"), "{md}");
    }

    #[test]
    fn truncated_findings_table_hides_no_check() {
        let md = render(&crowded());
        let rows = md
            .lines()
            .filter(|l| l.starts_with("| **error** | code_blocks | c-"))
            .count();
        // 50 rows in all: 48 code rows leave room for the glossary and numbers ones.
        assert_eq!(rows, MAX_FINDING_ROWS - 2, "{md}");
        assert!(md.contains("| **error** | glossary | b-000 |"), "{md}");
        assert!(md.contains("| warning | numbers | b-000 |"), "{md}");
        assert!(md.contains("…and 12 more in report.json"), "{md}");
    }
}
