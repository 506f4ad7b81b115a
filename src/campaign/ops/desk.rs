//! The editor's desk: the files an editor reads, edits and approves, in the campaign's
//! `report_dir`, and the approvals that let a gated campaign go on.
//!
//! ```text
//! brief.md               the book brief in force (editable; part of every translation prompt)
//! glossary-review.csv    glossary gate: the proposed termbase, `source,target,note,origin,…`
//! glossary-review.md     glossary gate: what needs a decision (new terms, house-style
//!                        conflicts, low-confidence entries) and the command to approve
//! revisions-review.md    revisions gate: the units proposed for revision, with reasons
//! ```
//!
//! Nothing here lives only in memory. Every file put on the desk is journaled with its sha256
//! ([`Event::BriefWritten`], [`Event::GlossaryReviewWritten`]); an edit found on the desk or an
//! approval is journaled too ([`Event::BriefEdited`], [`Event::GlossaryApproved`],
//! [`Event::RevisionsApproved`]) with a copy of what was approved in the state directory. A
//! gate is therefore a stage derived from recorded facts ([`crate::campaign::core::manager::Stage::AwaitingApproval`]):
//! the process may exit and the approval come a week later.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::PathBuf;

use crate::campaign::core::Campaign;
use crate::campaign::core::manager::{Gate, Manager, Stage};
use crate::campaign::core::state::{RevisionApproval, State};
use crate::campaign::core::store::{Event, Store};
use crate::exit::UsageError;
use crate::termbase::{Entry, Origin, Termbase, term_key};

/// The brief on the desk.
pub const BRIEF_FILE: &str = "brief.md";
/// The termbase under review (glossary gate).
pub const GLOSSARY_CSV: &str = "glossary-review.csv";
/// What needs a decision at the glossary gate.
pub const GLOSSARY_MD: &str = "glossary-review.md";
/// The revision proposal (revisions gate).
pub const REVISIONS_MD: &str = "revisions-review.md";
/// An agent entry whose term occurs fewer times than this in the book is low-confidence: the
/// Glossary agent saw little context, and a rare term is cheap to get wrong unnoticed.
pub const LOW_CONFIDENCE_MIN_OCCURRENCES: usize = 3;
/// Columns of the review CSV. `origin`, `occurrences` and `flags` are for reading; on approval
/// the origin is derived again (house style, agent, or editor for what the editor changed).
pub const REVIEW_COLUMNS: [&str; 7] = [
    "source",
    "target",
    "note",
    "origin",
    "forbidden",
    "occurrences",
    "flags",
];

/// The path of desk file `name`.
pub fn path(c: &Campaign, name: &str) -> PathBuf {
    c.plan.report_dir.join(name)
}

/// What a campaign waiting at `gate` waits for, in lines for the terminal: the files to read
/// or edit and the exact command that continues it.
pub fn waiting_lines(c: &Campaign, m: &Manager, s: &State, gate: Gate) -> Vec<String> {
    match gate {
        Gate::Glossary => {
            let rows = review_rows(c, s);
            let count = |p: &str| {
                rows.iter()
                    .filter(|r| r.flags.iter().any(|f| f.starts_with(p)))
                    .count()
            };
            // The brief is named only when the campaign writes one (`brief = true`).
            let (and_brief, brief_file) = if c.plan.brief {
                (
                    " and the book brief",
                    format!(", {}", c.plan.show(&path(c, BRIEF_FILE))),
                )
            } else {
                ("", String::new())
            };
            vec![
                format!(
                    "waiting for the editor's approval of the glossary: {} entries ({} new, {} house-style conflicts, {} low-confidence){and_brief}",
                    rows.len(),
                    count("new"),
                    count("house conflict"),
                    count("low confidence")
                ),
                format!(
                    "  review and edit: {} (summary: {}){brief_file}",
                    c.plan.show(&path(c, GLOSSARY_CSV)),
                    c.plan.show(&path(c, GLOSSARY_MD)),
                ),
                format!("  then run: {}", gate.approve_command(c)),
            ]
        }
        Gate::Revisions { round } => {
            let units = m.undecided_revisions(s, round);
            let mut v = vec![format!(
                "waiting for the editor's approval of {} revision(s) after round {round} (see {}):",
                units.len(),
                c.plan.show(&path(c, REVISIONS_MD))
            )];
            for (u, why) in units.iter().take(10) {
                v.push(format!("  {u}: {}", crate::util::excerpt(why, 100)));
            }
            if units.len() > 10 {
                v.push(format!("  …and {} more", units.len() - 10));
            }
            v.push(format!(
                "  then run: {} [--chapter NAME…] [--only UNIT…] [--reject UNIT…]",
                gate.approve_command(c)
            ));
            v
        }
    }
}

/// One row of the glossary review.
#[derive(Debug, Clone, PartialEq)]
pub struct ReviewRow {
    pub entry: Entry,
    /// Occurrences of the term in the book's prose (from term extraction; 0 when unknown).
    pub occurrences: usize,
    /// What needs a decision: `new`, `house conflict: …`, `low confidence: …`.
    pub flags: Vec<String>,
}

/// The glossary review of the merged termbase in force: house-style entries, then agent
/// entries in the order of the book's candidates, each with its flags. Entries the editor set
/// in an earlier approval (origin `editor`) are carried over, so a re-review after the book
/// changed keeps the editor's decisions.
pub fn review_rows(c: &Campaign, s: &State) -> Vec<ReviewRow> {
    let Some((_, merged)) = &s.termbase() else {
        return Vec::new();
    };
    let proposals = s.proposed_entries();
    let mut entries: Vec<Entry> = merged.entries.clone();
    if let Some(previous) = &s.glossary_approval() {
        for e in previous
            .termbase
            .entries
            .iter()
            .filter(|e| e.origin == Origin::Editor)
        {
            match entries
                .iter_mut()
                .find(|x| term_key(&x.source) == term_key(&e.source))
            {
                Some(x) if x.origin != Origin::HouseStyle => *x = e.clone(),
                Some(_) => {}
                None => entries.push(e.clone()),
            }
        }
    }
    // Occurrences of every entry's term (and plurals) in the book's prose, counted as the
    // glossary QA check finds them (longest match first, on word boundaries).
    let mut freq = vec![0usize; entries.len()];
    let matcher = crate::termbase::Matcher::new(&crate::termbase::Termbase::new(entries.clone()));
    for ch in &c.chapters {
        for r in crate::book::markdown::prose_ranges(&ch.text) {
            for o in matcher.find_all(&ch.text[r]) {
                freq[o.entry] += 1;
            }
        }
    }
    // Agent entries left out of the termbase for review (see `crate::termbase::vet`): shown
    // at the end, flagged, so the editor decides; approving the row keeps it as it stands.
    let review: Vec<&crate::termbase::vet::Rejection> = s
        .glossary_rejections()
        .iter()
        .filter(|r| r.action == crate::termbase::vet::Action::Review)
        .filter(|r| {
            !entries
                .iter()
                .any(|e| term_key(&e.source) == term_key(&r.source))
        })
        .collect();
    let mut rows: Vec<ReviewRow> = entries
        .into_iter()
        .zip(freq)
        .map(|(e, occurrences)| {
            let key = term_key(&e.source);
            let mut flags = Vec::new();
            match e.origin {
                Origin::HouseStyle => {
                    if let Some(p) = proposals.get(&key)
                        && p.target != e.target
                    {
                        flags.push(format!(
                            "house conflict: the Glossary agent proposed `{}`; house style keeps `{}`",
                            p.target, e.target
                        ));
                    }
                }
                Origin::Agent => {
                    flags.push("new".into());
                    let mut why = Vec::new();
                    if occurrences < LOW_CONFIDENCE_MIN_OCCURRENCES {
                        why.push(format!("{occurrences} occurrence(s) in the book"));
                    }
                    if e.target.trim().eq_ignore_ascii_case(e.source.trim()) {
                        why.push("kept untranslated".into());
                    }
                    if e.target.contains(&c.plan.review_marker)
                        || e.note.contains('?')
                        || e.note.to_lowercase().contains("uncertain")
                    {
                        why.push("the agent was unsure".into());
                    }
                    if !why.is_empty() {
                        flags.push(format!("low confidence: {}", why.join(", ")));
                    }
                }
                Origin::Reconciled | Origin::Editor => {}
            }
            ReviewRow {
                entry: e,
                occurrences,
                flags,
            }
        })
        .collect();
    for r in review {
        let entry = r.entry();
        let occurrences = {
            let m = crate::termbase::Matcher::new(&Termbase::new(vec![entry.clone()]));
            c.chapters
                .iter()
                .map(|ch| {
                    crate::book::markdown::prose_ranges(&ch.text)
                        .into_iter()
                        .map(|pr| m.find_all(&ch.text[pr]).len())
                        .sum::<usize>()
                })
                .sum()
        };
        rows.push(ReviewRow {
            entry,
            occurrences,
            flags: vec!["new".into(), format!("{REJECTED_FLAG}: {}", r.reason)],
        });
    }
    rows
}

/// Flag of the review rows the deterministic glossary checks rejected (not in the termbase
/// until an editor approves them): `rejected (review): <reason>`.
pub const REJECTED_FLAG: &str = "rejected (review)";

/// A CSV cell safe to open in a spreadsheet: a value starting with `=`, `+`, `-`, `@`, tab or
/// carriage return gets a leading `'`, so it is shown as text and never evaluated as a formula
/// (OWASP, "CSV Injection"). [`from_cell`] undoes it. The same guard as the termbase CSV
/// export ([`crate::interchange::delimited::neutralize`]).
pub fn to_cell(v: &str) -> String {
    crate::interchange::delimited::neutralize(v).into_owned()
}

/// Undoes [`to_cell`] ([`crate::interchange::delimited::restore`]).
pub fn from_cell(v: &str) -> String {
    crate::interchange::delimited::restore(v).to_string()
}

fn origin_name(o: Origin) -> &'static str {
    crate::interchange::delimited::origin_name(o)
}

/// The review CSV bytes (UTF-8 with BOM so spreadsheet programs read it as UTF-8).
pub fn review_csv(rows: &[ReviewRow]) -> anyhow::Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(b"\xEF\xBB\xBF".to_vec());
    w.write_record(REVIEW_COLUMNS)?;
    for r in rows {
        w.write_record([
            to_cell(&r.entry.source),
            to_cell(&r.entry.target),
            to_cell(&r.entry.note),
            origin_name(r.entry.origin).to_string(),
            to_cell(&r.entry.forbidden.join("; ")),
            r.occurrences.to_string(),
            to_cell(&r.flags.join(" | ")),
        ])?;
    }
    Ok(w.into_inner()?)
}

/// The review summary (Markdown).
pub fn review_summary(c: &Campaign, rows: &[ReviewRow]) -> String {
    let mut o = String::new();
    let new: Vec<&ReviewRow> = rows
        .iter()
        .filter(|r| r.flags.iter().any(|f| f == "new"))
        .collect();
    let conflicts: Vec<&ReviewRow> = rows
        .iter()
        .filter(|r| r.flags.iter().any(|f| f.starts_with("house conflict")))
        .collect();
    let low: Vec<&ReviewRow> = rows
        .iter()
        .filter(|r| r.flags.iter().any(|f| f.starts_with("low confidence")))
        .collect();
    let rehearsal = if c.plan.is_rehearsal() {
        "REHEARSAL (pseudo provider): the proposed renderings are not translations.\n\n"
    } else {
        ""
    };
    let _ = writeln!(
        o,
        "# Glossary review: {}\n\n{rehearsal}The termbase below waits for your approval before anything is translated.\n\n\
         - **{}** entries in `{GLOSSARY_CSV}` ({} house style, {} proposed by the Glossary agent)\n\
         - **{}** new terms proposed by the agent\n\
         - **{}** conflicts with house style (house style wins; shown so you can update the house glossary)\n\
         - **{}** low-confidence entries (rare in the book, kept untranslated, or marked unsure)\n\n\
         Edit `{GLOSSARY_CSV}` (change `target` or `note`, delete rows, add rows; house-style rows must keep their target) \
         {}if needed, then run:\n\n    {}\n",
        c.plan.name,
        rows.len(),
        rows.iter()
            .filter(|r| r.entry.origin == Origin::HouseStyle)
            .count(),
        rows.iter()
            .filter(|r| r.entry.origin == Origin::Agent)
            .count(),
        new.len(),
        conflicts.len(),
        low.len(),
        if c.plan.brief {
            format!("and `{BRIEF_FILE}` ")
        } else {
            String::new()
        },
        Gate::Glossary.approve_command(c)
    );
    let mut section = |title: &str, list: &[&ReviewRow]| {
        if list.is_empty() {
            return;
        }
        let _ = writeln!(o, "## {title}\n\n| source | target | why |\n|---|---|---|");
        for r in list.iter().take(50) {
            let _ = writeln!(
                o,
                "| {} | {} | {} |",
                md_cell(&r.entry.source),
                md_cell(&r.entry.target),
                md_cell(&r.flags.join("; "))
            );
        }
        if list.len() > 50 {
            let _ = writeln!(o, "\n…and {} more in `{GLOSSARY_CSV}`.", list.len() - 50);
        }
        o.push('\n');
    };
    let rejected: Vec<&ReviewRow> = rows
        .iter()
        .filter(|r| r.flags.iter().any(|f| f.starts_with(REJECTED_FLAG)))
        .collect();
    section("Conflicts with house style", &conflicts);
    section("Low-confidence entries", &low);
    section(
        "Proposals that failed a check (not in the termbase; approving the row keeps it as it stands: fix the target or delete the row)",
        &rejected,
    );
    o
}

/// The glossary-review section listing the agent entries a deterministic check dropped (they
/// are not rows of the review CSV; add a row to keep a corrected version). Empty when none.
pub fn dropped_summary(s: &State) -> String {
    let dropped: Vec<&crate::termbase::vet::Rejection> = s
        .glossary_rejections()
        .iter()
        .filter(|r| r.action == crate::termbase::vet::Action::Dropped)
        .collect();
    if dropped.is_empty() {
        return String::new();
    }
    let mut o = format!(
        "## Proposals dropped by a check\n\nNot in `{GLOSSARY_CSV}`; add a row with a corrected target to keep the term.\n\n| source | target | why |\n|---|---|---|\n"
    );
    for r in dropped {
        let _ = writeln!(
            o,
            "| {} | {} | {} |",
            md_cell(&r.source),
            md_cell(&r.target),
            md_cell(&r.reason)
        );
    }
    o.push('\n');
    o
}

fn md_cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The local action [`crate::campaign::core::manager::Action::WriteDesk`]: writes the brief when the one in
/// force is not on the desk, and with the glossary gate on the review files of the merged
/// termbase; each write is journaled.
pub fn write(c: &Campaign, store: &mut Store, state: &mut State) -> anyhow::Result<()> {
    if let Some(b) = state.brief().clone()
        && state.brief_on_desk().as_deref() != Some(b.sha256.as_str())
    {
        let p = path(c, BRIEF_FILE);
        crate::util::write_atomic(&p, b.text.as_bytes())?;
        crate::campaign::core::commit::record_event(
            c,
            store,
            state,
            Event::BriefWritten {
                file: c.plan.rel(&p),
                sha256: b.sha256,
            },
        )?;
    }
    if c.plan.gates.glossary
        && !state.glossary_approved()
        && state.glossary_review_of() != state.merged_sha256()
        && let Some(merged_sha256) = state.merged_sha256().clone()
    {
        let rows = review_rows(c, state);
        let csv = review_csv(&rows)?;
        let p = path(c, GLOSSARY_CSV);
        crate::util::write_atomic(&p, &csv)?;
        let mut md = review_summary(c, &rows);
        md.push_str(&dropped_summary(state));
        crate::util::write_atomic(&path(c, GLOSSARY_MD), md.as_bytes())?;
        crate::campaign::core::commit::record_event(
            c,
            store,
            state,
            Event::GlossaryReviewWritten {
                csv: c.plan.rel(&p),
                csv_sha256: crate::util::sha256_hex(&csv),
                merged_sha256,
            },
        )?;
    }
    Ok(())
}

/// sha256 of a desk file, `None` when it does not exist.
fn desk_sha(c: &Campaign, name: &str) -> anyhow::Result<Option<String>> {
    match std::fs::read(path(c, name)) {
        Ok(b) => Ok(Some(crate::util::sha256_hex(b))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => {
            Err(anyhow::Error::new(e).context(format!("reading {}", c.plan.show(&path(c, name)))))
        }
    }
}

/// Checks the desk when a run starts. Under an approved glossary gate, the approved review CSV
/// and brief must be unchanged: an edit made after the approval is refused (a
/// [`UsageError`] saying what to do), never silently used or ignored. Otherwise an edited
/// `brief.md` is recorded as the brief in force ([`Event::BriefEdited`]); returns a note for
/// the user when it was.
pub fn check_at_start(
    c: &Campaign,
    store: &mut Store,
    state: &mut State,
) -> anyhow::Result<Option<String>> {
    let gated = c.plan.gates.glossary;
    if gated && state.glossary_approved() {
        let a = state.glossary_approval().clone().expect("approved");
        let when = httpdate::fmt_http_date(
            std::time::UNIX_EPOCH + std::time::Duration::from_millis(a.at_ms),
        );
        for (name, sha) in [(GLOSSARY_CSV, &a.csv_sha256), (BRIEF_FILE, &a.brief_sha256)] {
            if let Some(now) = desk_sha(c, name)?
                && now != *sha
            {
                return Err(UsageError::new(format!(
                    "{} was edited after the glossary was approved ({when}); nothing was run. To use the edited file, approve it again: `{}` (units whose glossary entries or brief changed are translated again). To keep the approved version, restore the file.",
                    c.plan.show(&path(c, name)),
                    Gate::Glossary.approve_command(c)
                ))
                .into());
            }
        }
        return Ok(None);
    }
    if gated {
        // Waiting at the gate: edits are taken by `booktr approve`.
        return Ok(None);
    }
    let Some(on_desk) = state.brief_on_desk().clone() else {
        return Ok(None);
    };
    let p = path(c, BRIEF_FILE);
    let Ok(bytes) = std::fs::read(&p) else {
        return Ok(None);
    };
    let sha = crate::util::sha256_hex(&bytes);
    if sha == on_desk {
        return Ok(None);
    }
    let text = String::from_utf8(bytes).map_err(|_| {
        UsageError::new(format!(
            "{} is not UTF-8; save it as UTF-8 text and run again",
            c.plan.show(&p)
        ))
    })?;
    record_brief_edit(c, store, state, &text)?;
    Ok(Some(format!(
        "using your edited brief {} (units are translated again with it)",
        c.plan.show(&p)
    )))
}

/// Copies an editor's brief into the state directory and journals it.
fn record_brief_edit(
    c: &Campaign,
    store: &mut Store,
    state: &mut State,
    text: &str,
) -> anyhow::Result<()> {
    let rel = format!("results/brief/edited.{}.md", store.next_seq());
    let sha256 = store.write_file(&rel, text.as_bytes())?;
    let rec = store.append(Event::BriefEdited { file: rel, sha256 })?;
    state.apply(c, &store.dir, &rec, None)
}

/// What `approve --stage glossary` recorded.
#[derive(Debug, Clone)]
pub struct GlossaryApprovalReport {
    pub entries: usize,
    pub changes: Vec<String>,
    pub brief_edited: bool,
    /// False when the same files were already approved (nothing was recorded).
    pub recorded: bool,
}

/// `booktr approve --stage glossary`: reads the review CSV and the brief from the desk,
/// records the approved termbase (house-style entries unchanged; entries the editor added or
/// changed get origin `editor`) and the brief, and the changes against the proposal.
///
/// Errors ([`UsageError`]): the campaign has no glossary gate; nothing to approve yet; the CSV
/// is missing or malformed (file and line named); a house-style entry's target was changed.
pub fn approve_glossary(
    c: &Campaign,
    store: &mut Store,
    state: &mut State,
) -> anyhow::Result<GlossaryApprovalReport> {
    let campaign = c.plan.show(&c.plan.campaign_file);
    if !c.plan.gates.glossary {
        return Err(UsageError::new(format!(
            "{campaign} has no glossary gate: add `review = [\"glossary\"]` to it to review the termbase before translation"
        ))
        .into());
    }
    let Some(merged_sha256) = state.merged_sha256().clone() else {
        return Err(UsageError::new(format!(
            "nothing to approve yet: run `booktr run {campaign}` first; it stops at the glossary gate with the review files"
        ))
        .into());
    };
    let stale = state.glossary_review_of().as_deref() != Some(merged_sha256.as_str())
        && !state.glossary_approved();
    if stale {
        return Err(UsageError::new(format!(
            "the review files are older than the proposed termbase: run `booktr run {campaign}` to write them again"
        ))
        .into());
    }
    let csv_path = path(c, GLOSSARY_CSV);
    let shown = c.plan.show(&csv_path);
    let bytes = std::fs::read(&csv_path).map_err(|e| {
        UsageError::new(format!(
            "cannot read {shown}: {e}. Run `booktr run {campaign}` to write it again"
        ))
    })?;
    let csv_sha256 = crate::util::sha256_hex(&bytes);
    let brief_path = path(c, BRIEF_FILE);
    let brief_text = match std::fs::read(&brief_path) {
        Ok(b) => Some(String::from_utf8(b).map_err(|_| {
            UsageError::new(format!(
                "{} is not UTF-8; save it as UTF-8 text",
                c.plan.show(&brief_path)
            ))
        })?),
        Err(_) => None,
    };
    let brief_now = brief_text
        .as_deref()
        .map(|t| crate::util::sha256_hex(t.as_bytes()));
    if let Some(a) = &state.glossary_approval()
        && a.merged_sha256 == merged_sha256
        && a.csv_sha256 == csv_sha256
        && brief_now.as_deref().is_none_or(|b| b == a.brief_sha256)
    {
        return Ok(GlossaryApprovalReport {
            entries: a.termbase.len(),
            changes: a.changes.clone(),
            brief_edited: false,
            recorded: false,
        });
    }
    // Cells come back with the formula guard removed (`delimited` restores them).
    let edited = crate::interchange::delimited::read(
        &bytes,
        &shown,
        b',',
        &c.plan.source_lang,
        &c.plan.target_lang,
    )
    .map_err(|e| UsageError::new(format!("{e}. Fix the file and approve again")))?;
    let proposed: Vec<Entry> = review_rows(c, state).into_iter().map(|r| r.entry).collect();
    let proposed_by_key: BTreeMap<String, &Entry> =
        proposed.iter().map(|e| (term_key(&e.source), e)).collect();
    let mut approved: Vec<Entry> = Vec::new();
    for e in edited {
        let e = Entry {
            origin: Origin::Editor,
            ..e
        };
        let key = term_key(&e.source);
        if let Some(h) = c.house.get(&e.source) {
            if h.target != e.target {
                return Err(UsageError::new(format!(
                    "{shown}: `{}` is a house-style entry and must stay `{}` (found `{}`). House style always wins: change the house glossary file instead, then run again",
                    e.source, h.target, e.target
                ))
                .into());
            }
            approved.push(h.clone());
            continue;
        }
        let origin = match proposed_by_key.get(&key) {
            Some(p) if p.target == e.target && p.note == e.note && p.forbidden == e.forbidden => {
                p.origin
            }
            _ => Origin::Editor,
        };
        approved.push(Entry { origin, ..e });
    }
    let (tb, _) = Termbase::merge(&c.house, &approved);
    let changes = diff(&proposed, &tb);
    let mut brief_edited = false;
    if let (Some(text), Some(sha)) = (&brief_text, &brief_now)
        && state.brief().as_ref().is_none_or(|b| b.sha256 != *sha)
    {
        record_brief_edit(c, store, state, text)?;
        brief_edited = true;
    }
    let brief_sha256 = state
        .brief()
        .as_ref()
        .map(|b| b.sha256.clone())
        .unwrap_or_default();
    let mut json = serde_json::to_vec_pretty(&tb)?;
    json.push(b'\n');
    let rel = format!(
        "results/glossary/termbase.approved.{}.json",
        store.next_seq()
    );
    let sha256 = store.write_file(&rel, &json)?;
    crate::campaign::core::commit::record_event(
        c,
        store,
        state,
        Event::GlossaryApproved {
            merged_sha256,
            csv_sha256,
            file: rel,
            sha256,
            brief_sha256,
            changes: changes.clone(),
        },
    )?;
    Ok(GlossaryApprovalReport {
        entries: tb.len(),
        changes,
        brief_edited,
        recorded: true,
    })
}

/// The changes from `proposed` to `approved`, one line each: added, removed, changed.
pub fn diff(proposed: &[Entry], approved: &Termbase) -> Vec<String> {
    let before: BTreeMap<String, &Entry> =
        proposed.iter().map(|e| (term_key(&e.source), e)).collect();
    let after: BTreeMap<String, &Entry> = approved
        .entries
        .iter()
        .map(|e| (term_key(&e.source), e))
        .collect();
    let keys: BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    let mut out = Vec::new();
    for k in keys {
        match (before.get(k), after.get(k)) {
            (None, Some(a)) => out.push(format!("added: {} → {}", a.source, a.target)),
            (Some(b), None) => out.push(format!("removed: {} → {}", b.source, b.target)),
            (Some(b), Some(a)) if b.target != a.target => out.push(format!(
                "changed: {}: {} → {}",
                a.source, b.target, a.target
            )),
            (Some(b), Some(a)) if b.note != a.note || b.forbidden != a.forbidden => out.push(
                format!("changed note or forbidden renderings: {}", a.source),
            ),
            _ => {}
        }
    }
    out
}

/// (round, decision call key, proposed units with reasons).
pub type PendingRevisions = (u32, String, Vec<(String, String)>);

/// The revision proposal waiting for approval: its round, decision key and the units still
/// waiting for a decision, with reasons ([`Manager::undecided_revisions`]: all proposed units
/// until an approval by chapter decides some). `None` when the campaign does not wait at the
/// revisions gate.
pub fn pending_revisions(m: &Manager, s: &State) -> Option<PendingRevisions> {
    match m.next_step(s, &BTreeSet::new()).stage {
        Stage::AwaitingApproval(Gate::Revisions { round }) => Some((
            round,
            m.decide_key(s, round),
            m.undecided_revisions(s, round),
        )),
        _ => None,
    }
}

/// The chapter key of unit `id` (empty when the campaign has no such unit).
fn chapter_of<'c>(c: &'c Campaign, id: &str) -> &'c str {
    c.units
        .iter()
        .find(|u| u.id == id)
        .map_or("", |u| u.chapter.as_str())
}

/// Resolves `--chapter` names to chapter keys, in the order given (duplicates once). A name
/// is a chapter's key (`chapter01`), its path as written in the campaign file
/// (`en/chapter01.md`) or its file name (`chapter01.md`).
///
/// Errors ([`UsageError`], exit 2): a name that is none of these; the message lists the
/// campaign's chapters as `key (path)`.
pub fn resolve_chapters(c: &Campaign, names: &[String]) -> Result<Vec<String>, UsageError> {
    let mut out: Vec<String> = Vec::new();
    for n in names {
        let n = n.trim();
        let Some(ch) = c
            .chapters
            .iter()
            .find(|ch| ch.key == n || ch.rel_path == n || ch.file_name == n)
        else {
            let known: Vec<String> = c
                .chapters
                .iter()
                .map(|ch| format!("{} ({})", ch.key, ch.rel_path))
                .collect();
            return Err(UsageError::new(format!(
                "unknown chapter `{n}` in {}: its chapters are {}",
                c.plan.show(&c.plan.campaign_file),
                known.join(", ")
            )));
        };
        if !out.contains(&ch.key) {
            out.push(ch.key.clone());
        }
    }
    Ok(out)
}

/// The findings an editor weighs for unit `id` proposed after `round`: the per-unit QA
/// findings of its kept candidate up to that round, then the campaign-level findings about
/// it, errors first and in [`crate::qa::check_rank`] order within a severity.
fn proposal_findings(m: &Manager, s: &State, id: &str, round: u32) -> Vec<crate::qa::Finding> {
    let mut f: Vec<crate::qa::Finding> = s.kept_findings(id, round).to_vec();
    f.extend(
        m.campaign_qa(s, round)
            .findings
            .iter()
            .filter(|x| x.unit == id)
            .cloned(),
    );
    f.sort_by_key(|x| (x.severity, crate::qa::check_rank(&x.check)));
    f
}

/// The severity as the report spells it (`error`, `warning`, `info`).
fn severity_name(s: crate::qa::Severity) -> &'static str {
    match s {
        crate::qa::Severity::Error => "error",
        crate::qa::Severity::Warning => "warning",
        crate::qa::Severity::Info => "info",
    }
}

/// Writes `revisions-review.md` for a campaign waiting at the revisions gate (derived from the
/// state, like the report: not journaled). It lists the units still waiting, by chapter, each
/// with its reason and its findings (severity, check, message, source and target excerpts), so
/// an editor can decide from this file alone; with the command that approves all of them and
/// the one that approves each chapter.
pub fn write_revisions_review(c: &Campaign, m: &Manager, s: &State) -> anyhow::Result<()> {
    let Some((round, decision, units)) = pending_revisions(m, s) else {
        return Ok(());
    };
    let command = (Gate::Revisions { round }).approve_command(c);
    let mut chapters: Vec<&str> = Vec::new();
    for (u, _) in &units {
        let ch = chapter_of(c, u);
        if !chapters.contains(&ch) {
            chapters.push(ch);
        }
    }
    let mut o = format!(
        "# Revisions to approve: {} (after round {round})\n\n{} unit(s) in {} chapter(s) wait for a decision. Approve all, some (`--only UNIT…`), all but some (`--reject UNIT…`), or one chapter at a time (`--chapter NAME`, repeatable; the other chapters keep waiting):\n\n    {command}\n\n",
        c.plan.name,
        units.len(),
        chapters.len(),
    );
    if let Some(a) = s.revision_approvals().get(&decision) {
        let _ = writeln!(
            o,
            "Already decided for this round{}: {} approved, {} rejected.\n",
            if a.chapters.is_empty() {
                String::new()
            } else {
                format!(" (chapters {})", a.chapters.join(", "))
            },
            a.approved.len(),
            a.rejected.len()
        );
    }
    let findings: BTreeMap<&str, Vec<crate::qa::Finding>> = units
        .iter()
        .map(|(u, _)| (u.as_str(), proposal_findings(m, s, u, round)))
        .collect();
    let count = |u: &str, sev: crate::qa::Severity| {
        findings[u].iter().filter(|f| f.severity == sev).count()
    };
    o.push_str("| unit | chapter | reason | errors | warnings |\n|---|---|---|---|---|\n");
    for (u, why) in &units {
        let _ = writeln!(
            o,
            "| {u} | {} | {} | {} | {} |",
            chapter_of(c, u),
            md_cell(why),
            count(u, crate::qa::Severity::Error),
            count(u, crate::qa::Severity::Warning)
        );
    }
    for ch in &chapters {
        let mine: Vec<&(String, String)> = units
            .iter()
            .filter(|(u, _)| chapter_of(c, u) == *ch)
            .collect();
        let path = c
            .chapters
            .iter()
            .find(|x| x.key == *ch)
            .map_or(String::new(), |x| format!(" (`{}`)", x.rel_path));
        let _ = writeln!(
            o,
            "\n## Chapter {ch}{path}: {} unit(s)\n\nApprove this chapter only:\n\n    {command} --chapter {ch}",
            mine.len()
        );
        for (u, why) in mine {
            let _ = writeln!(o, "\n### {u}\n\nReason: {}\n", md_cell(why));
            let list = &findings[u.as_str()];
            if list.is_empty() {
                o.push_str("No QA finding on its kept translation (proposed by the reviewer).\n");
                continue;
            }
            o.push_str("| severity | check | message | source excerpt | target excerpt |\n|---|---|---|---|---|\n");
            for f in list {
                let _ = writeln!(
                    o,
                    "| {} | {} | {} | {} | {} |",
                    severity_name(f.severity),
                    f.check,
                    md_cell(&f.message),
                    md_cell(&f.source_excerpt),
                    md_cell(&f.target_excerpt)
                );
            }
        }
    }
    crate::util::write_atomic(&path(c, REVISIONS_MD), o.as_bytes())
}

/// `booktr approve --stage revisions [--only U…] [--reject U…]`: records which of the proposed
/// units go back for revision: `only` when given, else all but `reject` (both may be given).
/// [`approve_revisions_in`] with no chapter.
pub fn approve_revisions(
    c: &Campaign,
    m: &Manager,
    store: &mut Store,
    state: &mut State,
    only: &[String],
    reject: &[String],
) -> anyhow::Result<RevisionApproval> {
    approve_revisions_in(c, m, store, state, only, reject, &[])
}

/// `booktr approve --stage revisions [--chapter NAME…] [--only U…] [--reject U…]`: records
/// which of the units waiting for a decision go back for revision: those of `chapters` (names
/// as [`resolve_chapters`] takes them) when given, else all; of them `only` when given, else
/// all but `reject` (both may be given). With chapters, the units of other chapters keep
/// waiting: the Manager revises the approved ones and stops at the gate again
/// ([`Manager::undecided_revisions`]). Returns this approval's decisions.
///
/// Errors ([`UsageError`]): the campaign does not wait at the revisions gate; an unknown
/// chapter (the message lists the campaign's chapters); a chapter with no unit waiting (the
/// message names those that have some); a named unit is not among the units this approval
/// covers (the message lists them).
pub fn approve_revisions_in(
    c: &Campaign,
    m: &Manager,
    store: &mut Store,
    state: &mut State,
    only: &[String],
    reject: &[String],
    chapters: &[String],
) -> anyhow::Result<RevisionApproval> {
    let campaign = c.plan.show(&c.plan.campaign_file);
    let chapters = resolve_chapters(c, chapters)?;
    let Some((round, decision, waiting)) = pending_revisions(m, state) else {
        let stage = m.next_step(state, &BTreeSet::new()).stage;
        return Err(UsageError::new(format!(
            "{campaign} is not waiting for a revision approval (stage: {stage:?}); `booktr status {campaign}` shows what it waits for"
        ))
        .into());
    };
    let mut waiting_chapters: Vec<&str> = Vec::new();
    for (u, _) in &waiting {
        let ch = chapter_of(c, u);
        if !waiting_chapters.contains(&ch) {
            waiting_chapters.push(ch);
        }
    }
    for ch in &chapters {
        if !waiting_chapters.contains(&ch.as_str()) {
            return Err(UsageError::new(format!(
                "chapter `{ch}` has no unit waiting for a revision decision after round {round}; chapters with units waiting: {}",
                waiting_chapters.join(", ")
            ))
            .into());
        }
    }
    let ids: Vec<&str> = waiting
        .iter()
        .map(|(u, _)| u.as_str())
        .filter(|u| chapters.is_empty() || chapters.iter().any(|ch| ch == chapter_of(c, u)))
        .collect();
    for u in only.iter().chain(reject) {
        if !ids.contains(&u.as_str()) {
            return Err(UsageError::new(format!(
                "unit `{u}` is not among the units proposed for revision{}: {}",
                if chapters.is_empty() {
                    String::new()
                } else {
                    format!(" in chapter(s) {}", chapters.join(", "))
                },
                ids.join(", ")
            ))
            .into());
        }
    }
    let approved: Vec<String> = ids
        .iter()
        .filter(|u| only.is_empty() || only.iter().any(|o| o == *u))
        .filter(|u| !reject.iter().any(|r| r == *u))
        .map(|u| u.to_string())
        .collect();
    let rejected: Vec<String> = ids
        .iter()
        .filter(|u| !approved.iter().any(|a| a == *u))
        .map(|u| u.to_string())
        .collect();
    crate::campaign::core::commit::record_event(
        c,
        store,
        state,
        Event::RevisionsApproved {
            round,
            decision,
            approved: approved.clone(),
            rejected: rejected.clone(),
            chapters: chapters.clone(),
        },
    )?;
    Ok(RevisionApproval {
        round,
        approved,
        rejected,
        chapters,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_cannot_become_formulas_and_round_trip() {
        for v in [
            "=SUM(A1)",
            "+1",
            "-O2",
            "@cmd",
            "\tx",
            "智能体",
            "'quoted",
            "a=b",
        ] {
            let cell = to_cell(v);
            assert!(!cell.starts_with(['=', '+', '-', '@', '\t']), "{cell}");
            assert_eq!(from_cell(&cell), v);
        }
    }

    #[test]
    fn diff_names_added_removed_and_changed() {
        let e = |s: &str, t: &str| Entry {
            source: s.into(),
            target: t.into(),
            note: String::new(),
            origin: Origin::Agent,
            forbidden: Vec::new(),
            variants: Vec::new(),
        };
        let proposed = vec![e("agent", "代理"), e("token", "词元"), e("prompt", "提示")];
        let approved = Termbase::from_entries([
            e("Agent", "智能体"),
            e("prompt", "提示"),
            e("RAG", "检索增强生成"),
        ]);
        assert_eq!(
            diff(&proposed, &approved),
            vec![
                "changed: Agent: 代理 → 智能体",
                "added: RAG → 检索增强生成",
                "removed: token → 词元"
            ]
        );
    }
}
