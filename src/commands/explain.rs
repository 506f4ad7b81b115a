//! `booktr explain CAMPAIGN.toml UNIT`: one unit's history, read from the files on disk alone
//! (the campaign's sources, its journal and result files; no model call, no lock, nothing
//! written). It gives the source fingerprint, model and prompt version; the glossary entries
//! the unit's prompts carried (with their origin) and the brief hash; every candidate text
//! (first translation, repaired text, revision rounds, pieces, memory match, hand or imported
//! edit) with its findings, which one is kept and why (the never-worse rule,
//! [`crate::campaign::core::state::select_kept`]); and where the kept text came from.
//!
//! `--json` prints [`Explanation`], a stable schema ([`SCHEMA_VERSION`]): fields are only ever
//! added, at the end of a struct.

use serde::Serialize;

use crate::campaign::Campaign;
use crate::campaign::core::manager::{Manager, translate_key};
use crate::campaign::core::state::{Candidate, CandidateOrigin, HUMAN_ROUND, State};
use crate::campaign::core::store::ResultOrigin;
use crate::cli::ExplainArgs;
use crate::exit::{ExitCode, UsageError};
use crate::llm::Usage;
use crate::qa::Finding;

/// Version of the [`Explanation`] JSON schema.
pub const SCHEMA_VERSION: u32 = 1;

/// Everything `booktr explain` knows about one unit (`--json`).
#[derive(Debug, Clone, Serialize)]
pub struct Explanation {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The campaign file, as given on the command line.
    pub campaign: String,
    /// The unit id (`<chapter key>-<index>`).
    pub unit: String,
    pub chapter: String,
    /// Hex sha256 of the unit's source bytes.
    pub source_sha256: String,
    /// Source length in characters (Unicode scalar values).
    pub source_chars: usize,
    /// `translate` or `copy` (copied units are never sent to a model).
    pub kind: String,
    /// The unit fingerprint under the glossary termbase (first 16 hex digits of a sha256 over
    /// source, entries, brief, prompt version, provider, model, …; see
    /// [`crate::campaign::core::fingerprint::unit_fingerprint`]); `null` before the Glossary stage.
    pub fingerprint: Option<String>,
    /// Provider kind of the campaign configuration (`openai`, `anthropic`, `pseudo`).
    pub provider: String,
    /// Model of the campaign configuration (each candidate names the model that answered).
    pub model: String,
    /// The prompt version in force ([`crate::agents::PROMPT_VERSION`] when the state was made).
    pub prompt_version: String,
    /// sha256 of the book brief in force (hex); `null` before the Brief stage.
    pub brief_sha256: Option<String>,
    /// Whether the editor's version of the brief replaced the agent's.
    pub brief_edited: bool,
    /// The glossary entries the unit's Translation prompts carry (those whose terms occur in
    /// the unit, or the whole termbase with `prompt_layout = "full"`), with their origin.
    pub glossary: Vec<GlossaryUse>,
    /// Every candidate text, oldest first (see [`crate::campaign::core::state::State::candidates`]).
    pub candidates: Vec<CandidateExplained>,
    /// Index in `candidates` of the text the book uses; `null` when there is none.
    pub kept: Option<usize>,
    /// Why that candidate is the one kept.
    pub kept_because: Option<String>,
    /// Where the kept text came from: `model`, `memory`, `human`, `imported`, `copied` (the
    /// source itself) or `pending` (nothing yet).
    pub text_origin: String,
    /// The translation memory match the first translation came from, if it did.
    pub memory: Option<MemoryMatch>,
    /// Per-unit QA findings of the text the book uses.
    pub final_findings: Vec<Finding>,
    /// Editor marks (confirm / dismiss, or removed) on this unit's findings, in journal order
    /// ([`crate::campaign::core::mark_review::unit_marks`]): the finding id, the mark, the note, the
    /// check, where it was made (`cli` or `csv`) and the sha256 of the text it was made on.
    pub marks: Vec<crate::campaign::ops::mark_journal::MarkRecord>,
    /// The unit's replies that reached `max_tokens` (its translation calls and their parts),
    /// oldest key first: continued, or cut with their first blocks kept.
    pub long_answers: Vec<LongAnswerExplained>,
}

/// One reply of the unit that reached `max_tokens`.
#[derive(Debug, Clone, Serialize)]
pub struct LongAnswerExplained {
    /// The call key (a part's key when the unit was split).
    pub call: String,
    /// Continuation requests made (0 when the provider could not continue).
    pub continuations: u32,
    /// What the continuation requests cost.
    pub continuation_usage: Usage,
    /// Blocks kept from a reply that could not be continued (the rest of the unit became a
    /// part of its own).
    pub kept_blocks: Option<usize>,
}

/// One glossary entry a unit's prompts carried.
#[derive(Debug, Clone, Serialize)]
pub struct GlossaryUse {
    pub source: String,
    pub target: String,
    /// `house_style`, `agent`, `reconciled` or `editor`.
    pub origin: crate::termbase::Origin,
    pub note: String,
    pub forbidden: Vec<String>,
}

/// The translation memory entry a first translation was taken from.
#[derive(Debug, Clone, Serialize)]
pub struct MemoryMatch {
    /// The TMX file, as named in the campaign file.
    pub file: String,
    /// The `tuid` of the matching translation unit.
    pub tuid: String,
}

/// One candidate text of the unit.
#[derive(Debug, Clone, Serialize)]
pub struct CandidateExplained {
    /// The translation round; `null` for a hand or imported edit.
    pub round: Option<u32>,
    /// `translation`, `revision`, `memory`, `joined`, `pieces`, `repaired`, `human` or
    /// `imported`.
    pub origin: CandidateOrigin,
    /// The call key of the model translation (`translate/<fingerprint>/r<round>`); `null`
    /// for edits.
    pub call: Option<String>,
    /// The result file of that call, relative to the state directory.
    pub result_file: Option<String>,
    /// The model that answered, as the provider named it.
    pub model: Option<String>,
    /// Tokens of that call (as reported by the provider); `null` for edits and repairs.
    pub usage: Option<Usage>,
    pub errors: usize,
    pub warnings: usize,
    /// The per-unit QA findings of this text.
    pub findings: Vec<Finding>,
    /// For a repaired candidate: what repair changed (`class: before → after`).
    pub repairs: Vec<String>,
    /// Why the unit was translated again after this round, if it was.
    pub sent_back_because: Option<String>,
    /// Nearly all of the text is still in the source language (ranks below any translation).
    pub left_in_source: bool,
    /// Error findings that lost content (MQM critical; ranks below any text that lost none).
    pub critical: usize,
    /// A revision that ranks below the best earlier candidate (left in the source language,
    /// content lost, or more error findings).
    pub rejected: bool,
    pub kept: bool,
    /// One sentence on this candidate's fate under the never-worse rule.
    pub verdict: String,
}

/// Runs `booktr explain` (see the module docs). Errors: an unknown unit or a campaign
/// without saved state ([`UsageError`], exit 2).
pub fn run(args: &ExplainArgs) -> anyhow::Result<ExitCode> {
    let plan = super::plan(&args.campaign, None)?;
    let campaign = Campaign::load(plan)?;
    let e = explain(&campaign, &args.unit)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&e)?);
    } else {
        for line in text_lines(&e) {
            println!("{line}");
        }
    }
    Ok(ExitCode::Ok)
}

/// Up to three unit ids of `c` closest to `wanted` (normalised Levenshtein distance, ties in
/// book order), for the "did you mean" of an unknown unit.
pub fn close_units(c: &Campaign, wanted: &str) -> Vec<String> {
    let mut scored: Vec<(f64, usize)> = c
        .units
        .iter()
        .enumerate()
        .map(|(i, u)| (strsim::normalized_levenshtein(&u.id, wanted), i))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored
        .into_iter()
        .take(3)
        .map(|(_, i)| c.units[i].id.clone())
        .collect()
}

/// The explanation of unit `id` of campaign `c` from its saved state.
pub fn explain(c: &Campaign, id: &str) -> anyhow::Result<Explanation> {
    let file = c.plan.campaign_file.display().to_string();
    let Some(u) = c.unit(id) else {
        return Err(UsageError::new(format!(
            "unit `{id}` is not in campaign {file} ({} units); did you mean {}? Unit ids are `<chapter key>-<index>`, as `booktr status` and the report list them",
            c.units.len(),
            close_units(c, id)
                .iter()
                .map(|s| format!("`{s}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ))
        .into());
    };
    let dir = c.state_path();
    if !dir.exists() {
        return Err(UsageError::new(format!(
            "no saved state for this configuration of {file} (expected {}); run `booktr run {file}` first",
            c.plan.show(&dir)
        ))
        .into());
    }
    let s = State::load(c, &dir, "explain")?;
    let m = Manager::new(c, &s);
    let text = c.source_text(u);
    let tb = match s.termbase() {
        Some(_) => s.effective_termbase().clone(),
        None => c.house.clone(),
    };
    let glossary = c
        .prompt_entries(&tb, text)
        .into_iter()
        .map(|e| GlossaryUse {
            source: e.source.clone(),
            target: e.target.clone(),
            origin: e.origin,
            note: e.note.clone(),
            forbidden: e.forbidden.clone(),
        })
        .collect();
    let fp = s.fp(id).map(str::to_string);
    let fp_for_long = fp.clone();
    let mut memory = None;
    let mut candidates = Vec::new();
    let mut best: Option<(usize, usize)> = None;
    for k in s.candidates(id) {
        let (explained, from_memory) = explain_candidate(&s, &m, id, fp.as_deref(), &k, best);
        if from_memory.is_some() {
            memory = from_memory;
        }
        if k.round.is_some() {
            let sc = (k.errors, k.warnings);
            best = Some(best.map_or(sc, |b| b.min(sc)));
        }
        candidates.push(explained);
    }
    let kept = candidates.iter().position(|k| k.kept);
    let kept_because = kept.map(|i| kept_reason(&candidates, i));
    let text_origin = match kept.map(|i| candidates[i].origin) {
        _ if !u.kind.needs_translation() => "copied",
        Some(CandidateOrigin::Human) => "human",
        Some(CandidateOrigin::Imported) => "imported",
        Some(CandidateOrigin::Memory) => "memory",
        Some(_) => "model",
        None => "pending",
    }
    .to_string();
    Ok(Explanation {
        schema_version: SCHEMA_VERSION,
        campaign: file,
        unit: u.id.clone(),
        chapter: u.chapter.clone(),
        source_sha256: u.sha256.clone(),
        source_chars: u.chars,
        kind: if u.kind.needs_translation() {
            "translate"
        } else {
            "copy"
        }
        .to_string(),
        fingerprint: fp,
        provider: c.manifest.provider.clone(),
        model: c.manifest.model.clone(),
        prompt_version: c.manifest.prompt_version.clone(),
        brief_sha256: s.brief().as_ref().map(|b| b.sha256.clone()),
        brief_edited: s.brief().as_ref().is_some_and(|b| b.edited),
        glossary,
        candidates,
        kept,
        kept_because,
        text_origin,
        memory,
        final_findings: s.final_findings(id).to_vec(),
        marks: crate::campaign::core::mark_review::unit_marks(&s, id)
            .into_iter()
            .cloned()
            .collect(),
        long_answers: long_answers(&s, fp_for_long.as_deref()),
    })
}

/// One candidate of unit `id` (fingerprint `fp`) explained, given the best (errors,
/// warnings) of the earlier candidates; with the memory match its result came from, if any.
fn explain_candidate(
    s: &State,
    m: &Manager<'_>,
    id: &str,
    fp: Option<&str>,
    k: &Candidate,
    best: Option<(usize, usize)>,
) -> (CandidateExplained, Option<MemoryMatch>) {
    let (call, result) = match (k.round, fp) {
        (Some(r), Some(fp)) if k.origin != CandidateOrigin::Repaired => {
            let call = translate_key(fp, r);
            let result = s.finished().get(&call).cloned();
            (Some(call), result)
        }
        (Some(r), Some(fp)) => (Some(translate_key(fp, r)), None),
        _ => (None, None),
    };
    let memory = match result.as_ref().and_then(|r| r.origin.clone()) {
        Some(ResultOrigin::Memory { file, tuid }) => Some(MemoryMatch { file, tuid }),
        _ => None,
    };
    let findings: Vec<Finding> = match (k.origin, k.round) {
        (CandidateOrigin::Repaired, Some(r)) => s
            .repaired_at(id, r)
            .map(|x| x.findings.clone())
            .unwrap_or_default(),
        (_, Some(r)) => s.findings_at(id, r).to_vec(),
        (_, None) => s.findings_at(id, HUMAN_ROUND).to_vec(),
    };
    let sent_back_because = match (k.origin, k.round) {
        (CandidateOrigin::Repaired, _) | (_, None) => None,
        (_, Some(r)) => m
            .revision_set(s, r)
            .into_iter()
            .find(|(u, _)| u == id)
            .map(|(_, why)| why),
    };
    let explained = CandidateExplained {
        round: k.round,
        origin: k.origin,
        model: result.as_ref().and_then(|r| r.model.clone()),
        usage: result.as_ref().map(|r| r.usage),
        result_file: call
            .as_ref()
            .filter(|_| result.is_some())
            .and_then(|c| s.files().get(c).cloned()),
        call: call.filter(|_| result.is_some()),
        errors: k.errors,
        warnings: k.warnings,
        findings,
        repairs: repairs_of(s, id, k),
        sent_back_because,
        left_in_source: k.left_in_source,
        critical: k.critical,
        rejected: k.rejected,
        kept: k.kept,
        verdict: verdict(s, id, k, best),
    };
    (explained, memory)
}

/// The mechanical repairs behind a repaired candidate (`class: before → after`).
fn repairs_of(s: &State, id: &str, k: &Candidate) -> Vec<String> {
    match (k.origin, k.round) {
        (CandidateOrigin::Repaired, Some(r)) => s
            .repaired_at(id, r)
            .map(|x| {
                x.repairs
                    .iter()
                    .map(|p| {
                        format!(
                            "{}: {} → {}",
                            serde_json::to_value(p.class)
                                .ok()
                                .and_then(|v| v.as_str().map(str::to_string))
                                .unwrap_or_default(),
                            crate::util::excerpt(&p.before, 80),
                            crate::util::excerpt(&p.after, 80)
                        )
                    })
                    .collect()
            })
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// Why a candidate is kept or not, given the best (errors, warnings) before it.
fn verdict(s: &State, id: &str, k: &Candidate, best: Option<(usize, usize)>) -> String {
    if k.kept {
        "kept".to_string()
    } else if matches!(k.origin, CandidateOrigin::Human | CandidateOrigin::Imported) {
        "an editor's text, superseded by a newer one".to_string()
    } else if k.rejected && k.left_in_source {
        "rejected: nearly all of it is still in the source language, and a translation ranks before it whatever its error count".to_string()
    } else if k.rejected && k.critical > 0 {
        format!(
            "rejected: it lost content ({} critical error finding(s): a paragraph cut off or missing), and a text that lost none ranks before it whatever its error count",
            k.critical
        )
    } else if k.rejected {
        format!(
            "rejected: {} error finding(s) against {} for the best earlier candidate; a revision worse than what it replaces is never kept",
            k.errors,
            best.map_or(0, |b| b.0)
        )
    } else if s.human_edit(id).is_some() {
        "not used: the editor's text wins over every model candidate".to_string()
    } else if k.left_in_source {
        "not kept: nearly all of it is still in the source language, and a translation ranks before it".to_string()
    } else if k.critical > 0 {
        // A real 1.5B run: a first translation with fewer errors than its pieces, but a
        // paragraph cut to four characters, was said to lose on error count.
        format!(
            "not kept: it lost content ({} critical error finding(s)), and a text that lost none ranks before it whatever its error count",
            k.critical
        )
    } else {
        "not kept: a later or better candidate scores fewer errors, then fewer warnings (or ties and is newer)".to_string()
    }
}

/// Why candidate `i` is kept, from the recorded scores (the rule of
/// [`crate::campaign::core::state::select_kept`] and [`crate::campaign::core::state::prefer_repaired`]).
fn kept_reason(cands: &[CandidateExplained], i: usize) -> String {
    let k = &cands[i];
    match k.origin {
        CandidateOrigin::Human => {
            return "the editor's hand edit of the output chapter wins over every model candidate and is never revised".into();
        }
        CandidateOrigin::Imported => {
            return "the edit imported from a file (XLIFF) wins over every model candidate and is never revised".into();
        }
        _ => {}
    }
    let models = cands.iter().filter(|c| c.round.is_some()).count();
    if models == 1 {
        return format!(
            "the only candidate ({} error(s), {} warning(s))",
            k.errors, k.warnings
        );
    }
    let scores: Vec<(bool, usize, usize, usize)> = cands
        .iter()
        .filter(|c| c.round.is_some())
        .map(|c| (c.left_in_source, c.critical, c.errors, c.warnings))
        .collect();
    let best = scores.iter().min().copied().unwrap_or_default();
    let ties = scores.iter().filter(|s| **s == best).count();
    let repaired = match (k.origin, k.round) {
        (CandidateOrigin::Repaired, Some(r)) => cands
            .iter()
            .find(|c| c.round == Some(r) && c.origin != CandidateOrigin::Repaired)
            .map(|m| {
                format!(
                    "; the repaired text of round {r} is no worse than the model's own text of that round ({} error(s), {} warning(s))",
                    m.errors, m.warnings
                )
            })
            .unwrap_or_default(),
        _ => String::new(),
    };
    let left = cands
        .iter()
        .filter(|c| c.round.is_some() && c.left_in_source)
        .count();
    let left = match left {
        0 => String::new(),
        n => format!("a translation before the {n} left in the source language, then "),
    };
    let lost = cands
        .iter()
        .filter(|c| c.round.is_some() && c.critical > 0)
        .count();
    let left = match lost {
        0 => left,
        n => format!("{left}a text that lost no content before the {n} that did, then "),
    };
    format!(
        "{left}fewest error findings, then fewest warnings among {models} candidates ({} error(s), {} warning(s)){}{repaired}: the never-worse rule keeps a revision only when QA finds it no worse",
        k.errors,
        k.warnings,
        if ties > 1 {
            format!("; {ties} candidates tie and the latest of them is kept")
        } else {
            String::new()
        }
    )
}

/// The plain-text form of an explanation, one line per fact.
/// The replies of the unit with fingerprint `fp` (its calls `translate/<fp>…`) that reached
/// `max_tokens`.
fn long_answers(s: &State, fp: Option<&str>) -> Vec<LongAnswerExplained> {
    let Some(fp) = fp else {
        return Vec::new();
    };
    let prefix = format!("translate/{fp}");
    let mut out: Vec<LongAnswerExplained> = s
        .finished()
        .values()
        .filter(|r| r.call.starts_with(&prefix))
        .filter(|r| r.long.is_some() || (r.kept_blocks.is_some() && r.requests > 0))
        .map(|r| LongAnswerExplained {
            call: r.call.clone(),
            continuations: r.long.map_or(0, |l| l.continuations),
            continuation_usage: r.long.map_or_else(Usage::default, |l| l.usage),
            kept_blocks: r.kept_blocks.filter(|_| r.requests > 0),
        })
        .collect();
    out.sort_by(|a, b| a.call.cmp(&b.call));
    out
}

pub fn text_lines(e: &Explanation) -> Vec<String> {
    let mut out = vec![
        format!("unit {} (chapter {}) of {}", e.unit, e.chapter, e.campaign),
        format!(
            "  source: sha256 {}, {} chars, {}",
            e.source_sha256, e.source_chars, e.kind
        ),
        format!(
            "  fingerprint: {}",
            e.fingerprint
                .as_deref()
                .unwrap_or("none yet (no glossary stage)")
        ),
        format!(
            "  provider {}, model {}, prompt version {}",
            e.provider, e.model, e.prompt_version
        ),
        format!(
            "  brief: {}{}",
            e.brief_sha256.as_deref().unwrap_or("none yet"),
            if e.brief_edited {
                " (edited by the editor)"
            } else {
                ""
            }
        ),
    ];
    if e.glossary.is_empty() {
        out.push("  glossary: no entry applies".into());
    } else {
        out.push(format!("  glossary: {} entries", e.glossary.len()));
        for g in &e.glossary {
            let origin = serde_json::to_value(g.origin)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            out.push(format!("    {} → {} ({origin})", g.source, g.target));
        }
    }
    if let Some(m) = &e.memory {
        out.push(format!("  memory: {} tuid {}", m.file, m.tuid));
    }
    out.push(format!("  candidates: {}", e.candidates.len()));
    for (i, k) in e.candidates.iter().enumerate() {
        let origin = serde_json::to_value(k.origin)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        out.push(format!(
            "    #{i} {}{origin}{}: {} error(s), {} warning(s) — {}",
            k.round.map_or(String::new(), |r| format!("round {r} ")),
            k.model
                .as_deref()
                .map_or(String::new(), |m| format!(" by {m}")),
            k.errors,
            k.warnings,
            k.verdict
        ));
        for f in &k.findings {
            out.push(format!("       {:?} {}", f.severity, f.line()));
        }
        for r in &k.repairs {
            out.push(format!("       repaired {r}"));
        }
        if let Some(why) = &k.sent_back_because {
            out.push(format!("       sent back: {why}"));
        }
    }
    match (&e.kept, &e.kept_because) {
        (Some(i), Some(why)) => out.push(format!("  kept: #{i} ({}): {why}", e.text_origin)),
        _ => out.push(format!("  kept: nothing ({})", e.text_origin)),
    }
    for l in &e.long_answers {
        let mut line = format!("  long answer {}:", l.call);
        if l.continuations > 0 {
            line.push_str(&format!(
                " reached max_tokens and was continued {} time(s) ({} prompt + {} completion tokens)",
                l.continuations,
                l.continuation_usage.prompt_tokens,
                l.continuation_usage.completion_tokens
            ));
        }
        if let Some(k) = l.kept_blocks {
            line.push_str(&format!(
                " cut and not continued: its first {k} block(s) kept, the rest translated as a part of its own"
            ));
        }
        out.push(line);
    }
    for m in &e.marks {
        let mark = m
            .mark
            .map_or("removed".to_string(), |k| format!("{k:?}").to_lowercase());
        let note = if m.note.is_empty() {
            String::new()
        } else {
            format!(": {}", m.note)
        };
        out.push(format!(
            "  mark: finding {} ({}) {mark} via {}{note}",
            m.id, m.check, m.via
        ));
    }
    out
}
