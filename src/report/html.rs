//! `report.html`: one self-contained page (inline CSS, no script, no network) rendered with
//! minijinja. Auto-escaping is on for every value, so book or model text containing `<script>`
//! or a `javascript:` link is shown as text, never run; a Content-Security-Policy that forbids
//! scripts is a second line of defence.

use std::collections::BTreeMap;

use std::sync::Arc;

use minijinja::value::{Enumerator, Object, ObjectRepr, Serde};
use minijinja::{Environment, Value, context};
use serde::Serialize;

use super::Report;
use crate::agents::Agent;
use crate::qa::{Finding, Severity};

/// A unit as shown side by side. It borrows from the report and the texts: on a long book
/// the page's data is tens of MB, and copies of it made the HTML report the peak of a run's
/// memory.
#[derive(Debug, Clone, Serialize)]
pub struct UnitView<'a> {
    pub id: &'a str,
    pub chapter: &'a str,
    pub outcome: &'a str,
    pub rounds: &'a [u32],
    pub source: &'a str,
    pub target: &'a str,
    pub findings: &'a [Finding],
    pub errors: usize,
    pub warnings: usize,
    pub history: &'a [super::RoundHistory],
    /// The unit's candidates (see [`super::UnitReport::candidates`]).
    pub candidates: &'a [super::CandidateReport],
    /// The repairs of the unit's repaired candidates (see [`super::UnitReport::repairs`]).
    pub repairs: &'a [super::RepairReport],
    /// Worst severity of the kept candidate's findings (the unit's final findings):
    /// `error`, `warning` or `none` (see [`super::counts::worst`]); `missing` when the unit
    /// has no translation (failed or pending), so there is no kept candidate to judge.
    pub worst: &'static str,
}

/// A unit's square in the chapter table: what the square shows, without the texts.
#[derive(Debug, Clone, Serialize)]
struct CellView<'a> {
    id: &'a str,
    outcome: &'a str,
    worst: &'static str,
    errors: usize,
    warnings: usize,
}

/// Every field of [`Report`] but `units`, by reference: the page shows the units through
/// [`UnitView`], and converting the report's units for the template as well copied the
/// book's findings and candidates once more.
#[derive(Serialize)]
struct ReportHead<'a> {
    schema_version: u32,
    generated_at_ms: u64,
    rehearsal: bool,
    summary: &'a super::Summary,
    source_lang: &'a str,
    target_lang: &'a str,
    provider: &'a str,
    model: &'a str,
    glossary: &'a [crate::termbase::Entry],
    glossary_dropped_by_house: usize,
    glossary_parse: &'a crate::agents::json::ParseStats,
    #[serde(skip_serializing_if = "Option::is_none")]
    proofread_share: Option<f64>,
    proofreading: &'a [super::ProofBatch],
    decisions: &'a [super::DecisionReport],
    revisions_withheld: &'a [crate::campaign::core::manager::RevisionsWithheld],
    refuted_issues: &'a [crate::campaign::core::manager::RefutedIssue],
    reconciliations: &'a [super::ReconciliationReport],
    drift: &'a [crate::qa::DriftRow],
    review_terms: &'a [crate::qa::ReviewTerm],
    adherence: &'a [crate::qa::Adherence],
    norms: &'a Option<crate::qa::Norms>,
    chapter_findings: &'a [Finding],
    qa_counts: &'a BTreeMap<String, usize>,
    chapters_not_written: &'a [String],
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    site_notes: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    brief: &'a Option<super::BriefReport>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    approvals: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    comparison: &'a Option<super::Comparison>,
    runaway: &'a super::RunawayReport,
    glossary_rejections: &'a [crate::termbase::vet::Rejection],
    repairs_by_class: &'a BTreeMap<String, usize>,
    repairs: usize,
    fuzzy_matches: &'a crate::campaign::ops::memory::FuzzyBands,
    ledger: &'a Option<super::ledger::Ledger>,
    finding_marks: &'a crate::campaign::core::mark_review::Review,
    mqm: &'a super::MqmReport,
}

impl<'a> ReportHead<'a> {
    fn of(r: &'a Report) -> ReportHead<'a> {
        ReportHead {
            schema_version: r.schema_version,
            generated_at_ms: r.generated_at_ms,
            rehearsal: r.rehearsal,
            summary: &r.summary,
            source_lang: &r.source_lang,
            target_lang: &r.target_lang,
            provider: &r.provider,
            model: &r.model,
            glossary: &r.glossary,
            glossary_dropped_by_house: r.glossary_dropped_by_house,
            glossary_parse: &r.glossary_parse,
            proofread_share: r.proofread_share,
            proofreading: &r.proofreading,
            decisions: &r.decisions,
            revisions_withheld: &r.revisions_withheld,
            refuted_issues: &r.refuted_issues,
            reconciliations: &r.reconciliations,
            drift: &r.drift,
            review_terms: &r.review_terms,
            adherence: &r.adherence,
            norms: &r.norms,
            chapter_findings: &r.chapter_findings,
            qa_counts: &r.qa_counts,
            chapters_not_written: &r.chapters_not_written,
            site_notes: &r.site_notes,
            brief: &r.brief,
            approvals: &r.approvals,
            comparison: &r.comparison,
            runaway: &r.runaway,
            glossary_rejections: &r.glossary_rejections,
            repairs_by_class: &r.repairs_by_class,
            repairs: r.repairs,
            fuzzy_matches: &r.fuzzy_matches,
            ledger: &r.ledger,
            finding_marks: &r.finding_marks,
            mqm: &r.mqm,
        }
    }
}

/// A finding in the findings table, with where its links go.
#[derive(Debug, Clone, Serialize)]
pub struct FindingView<'a> {
    #[serde(flatten)]
    pub finding: &'a Finding,
    /// The element id the finding links to: `u-<unit>` for a unit's finding, `ch-<chapter>`
    /// for a chapter-level one (a finding that spans the units of a chapter), `None` when it
    /// names neither a unit nor a chapter of the report.
    pub anchor: Option<String>,
    /// Other units of the report the message or excerpts name (e.g. the units of each
    /// rendering of a drifting term, or the unit that holds a footnote's definition), in order
    /// of mention, each linked as `u-<unit>`.
    pub related: Vec<String>,
}

/// Unit ids of `known` named in `message` other than `own`, in order of first mention. A unit
/// id is `<chapter key>-<index>` with the key in `[A-Za-z0-9._-]`, so a word of those
/// characters (trailing `.` dropped: the end of a sentence) is looked up as a whole.
fn named_units(message: &str, own: &str, known: &std::collections::HashSet<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in message.split(|c: char| !(c.is_ascii_alphanumeric() || "._-".contains(c))) {
        let w = w.trim_end_matches('.');
        if !w.is_empty() && w != own && known.contains(w) && !out.iter().any(|o| o == w) {
            out.push(w.to_string());
        }
    }
    out
}

#[derive(Serialize)]
struct ChapterRow<'a> {
    key: &'a str,
    /// Chapter-level findings (no unit) of this chapter.
    chapter_findings: usize,
    units: usize,
    translated: usize,
    revised: usize,
    failed: usize,
    errors: usize,
    warnings: usize,
    cells: Vec<CellView<'a>>,
}

#[derive(Serialize)]
struct AdherenceRow<'a> {
    source: &'a str,
    target: &'a str,
    origin: crate::termbase::Origin,
    note: &'a str,
    units: usize,
    units_correct: usize,
    units_violating: usize,
    violating_units: &'a [String],
}

/// The glossary with each entry's adherence (entries without adherence data show zeros).
fn adherence_rows(r: &Report) -> Vec<AdherenceRow<'_>> {
    r.glossary
        .iter()
        .map(|e| {
            let a = r.adherence.iter().find(|a| a.source == e.source);
            AdherenceRow {
                source: &e.source,
                target: &e.target,
                origin: e.origin,
                note: &e.note,
                units: a.map_or(0, |a| a.units),
                units_correct: a.map_or(0, |a| a.units_correct),
                units_violating: a.map_or(0, |a| a.units_violating),
                violating_units: a.map_or(&[], |a| a.violating_units.as_slice()),
            }
        })
        .collect()
}

#[derive(Serialize)]
struct BilingualChapter<'a> {
    key: &'a str,
    rows: Vec<crate::interchange::bilingual::Row>,
}

/// The texts the page shows, by unit id: `(source, target)` (target empty when missing).
pub type Texts = BTreeMap<String, (Shared, String)>;

/// A text the page shows without owning a copy: a byte range of a shared text (a unit's
/// source inside its chapter's text, shared with the campaign: a copy of every source was
/// 12 MB of a ten-times-the-book run's peak), or a whole text of its own.
#[derive(Debug, Clone)]
pub struct Shared {
    text: Arc<str>,
    range: std::ops::Range<usize>,
}

impl Shared {
    /// Bytes `range` of `text`.
    ///
    /// # Panics
    /// When `range` is not a range of char boundaries of `text` (a unit's range always is).
    pub fn slice(text: &Arc<str>, range: std::ops::Range<usize>) -> Shared {
        assert!(text.get(range.clone()).is_some(), "{range:?} cuts a char");
        Shared {
            text: Arc::clone(text),
            range,
        }
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.text[self.range.clone()]
    }
}

impl From<String> for Shared {
    fn from(text: String) -> Shared {
        let range = 0..text.len();
        Shared {
            text: text.into(),
            range,
        }
    }
}

impl From<&str> for Shared {
    fn from(text: &str) -> Shared {
        Shared::from(text.to_string())
    }
}

/// The unit's view: its texts from `texts` (empty when absent) and its finding counts.
fn unit_view<'a>(u: &'a super::UnitReport, texts: &'a Texts) -> UnitView<'a> {
    let (source, target) = texts
        .get(&u.id)
        .map_or(("", ""), |(s, t)| (s.as_str(), t.as_str()));
    let count = |sev: Severity| u.findings.iter().filter(|f| f.severity == sev).count();
    UnitView {
        id: &u.id,
        chapter: &u.chapter,
        outcome: u.outcome,
        rounds: &u.rounds,
        source,
        target,
        errors: count(Severity::Error),
        warnings: count(Severity::Warning),
        findings: &u.findings,
        history: &u.history,
        candidates: &u.candidates,
        repairs: &u.repairs,
        worst: if matches!(u.outcome, "failed" | "pending") {
            "missing"
        } else {
            super::counts::worst(&u.findings)
        },
    }
}

/// What the page is rendered from, owned so that the template can walk the units and the
/// findings lazily (minijinja objects are `'static`): the template sees one unit or one
/// finding as a `Value` at a time, never the whole book at once (converting every
/// unit's texts, findings and candidates into `Value`s up front was the peak of a long
/// book's run).
struct Page {
    report: Report,
    texts: Texts,
    /// Unit ids of the report (each has an element `u-<id>` on the page).
    known: std::collections::HashSet<String>,
    /// Chapter keys of the report (each has a row `ch-<key>`).
    chapters: std::collections::HashSet<String>,
    /// The findings table's order: positions from [`Report::finding_positions`].
    findings: Vec<super::FindingAt>,
}

impl std::fmt::Debug for Page {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "<page of {} units>", self.report.units.len())
    }
}

impl Page {
    fn finding_view(&self, at: super::FindingAt) -> FindingView<'_> {
        let f = self.report.finding_at(at);
        FindingView {
            anchor: if self.known.contains(f.unit.as_str()) {
                Some(format!("u-{}", f.unit))
            } else if f.unit.is_empty() && self.chapters.contains(f.chapter.as_str()) {
                Some(format!("ch-{}", f.chapter))
            } else {
                None
            },
            related: named_units(
                &format!("{} {} {}", f.message, f.source_excerpt, f.target_excerpt),
                &f.unit,
                &self.known,
            ),
            finding: f,
        }
    }
}

/// A sequence of the page for the template (the units as [`UnitView`]s, the findings table
/// as [`FindingView`]s), each item made when the template reaches it.
#[derive(Debug)]
struct PageSeq {
    page: Arc<Page>,
    len: fn(&Page) -> usize,
    item: fn(&Page, usize) -> Option<Value>,
}

impl PageSeq {
    fn units(page: &Arc<Page>) -> Value {
        Value::from_object(PageSeq {
            page: Arc::clone(page),
            len: |p| p.report.units.len(),
            item: |p, i| {
                let u = p.report.units.get(i)?;
                Some(Value::from(Serde(unit_view(u, &p.texts))))
            },
        })
    }

    fn findings(page: &Arc<Page>) -> Value {
        Value::from_object(PageSeq {
            page: Arc::clone(page),
            len: |p| p.findings.len(),
            item: |p, i| Some(Value::from(Serde(p.finding_view(*p.findings.get(i)?)))),
        })
    }
}

impl Object for PageSeq {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Seq
    }
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        (self.item)(&self.page, key.as_usize()?)
    }
    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Seq((self.len)(&self.page))
    }
}

/// Renders the page into a string: [`render_to`] into memory.
///
/// Errors: a template error (a bug), reported with its line.
pub fn render(r: Report, texts: Texts) -> anyhow::Result<String> {
    let mut out = Vec::new();
    render_to(r, texts, &mut out)?;
    Ok(String::from_utf8(out).expect("minijinja writes UTF-8"))
}

/// Renders the page into `out` as it is produced (the page of a long book is tens of MB) and
/// gives the report back. It takes the report and texts by value because the template walks
/// them lazily from an owned [`Page`]; nothing of them is copied.
///
/// Errors: a template error (a bug), reported with its line, or a write error of `out`.
pub fn render_to(r: Report, texts: Texts, out: &mut dyn std::io::Write) -> anyhow::Result<Report> {
    let page = Arc::new(Page {
        known: r.units.iter().map(|u| u.id.clone()).collect(),
        chapters: r.units.iter().map(|u| u.chapter.clone()).collect(),
        findings: r.finding_positions(),
        report: r,
        texts,
    });
    render_page(&page, out)?;
    // The template's values are gone with its environment, so the page is ours again; the
    // clone is only a fallback that keeps the report should a value ever outlive it.
    Ok(Arc::try_unwrap(page).map_or_else(|p| p.report.clone(), |p| p.report))
}

fn render_page(page: &Arc<Page>, out: &mut dyn std::io::Write) -> anyhow::Result<()> {
    let r = &page.report;
    let mut env = Environment::new();
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::Html);
    env.add_template("report.html", include_str!("report.html.j2"))?;
    // Views that borrow the report, for the small tables computed here (the chapter rows and
    // their squares, the bilingual view); the template's own walk over the units goes
    // through [`PageSeq`].
    let units: Vec<UnitView> = r.units.iter().map(|u| unit_view(u, &page.texts)).collect();
    let mut order: Vec<&str> = Vec::new();
    for u in &units {
        if !order.contains(&u.chapter) {
            order.push(u.chapter);
        }
    }
    let chapters: Vec<ChapterRow> = order
        .iter()
        .map(|key| {
            let cells: Vec<&UnitView> = units.iter().filter(|u| u.chapter == *key).collect();
            ChapterRow {
                key,
                chapter_findings: r
                    .chapter_findings
                    .iter()
                    .filter(|f| f.unit.is_empty() && f.chapter == *key)
                    .count(),
                units: cells.len(),
                translated: cells
                    .iter()
                    .filter(|u| u.outcome == "translated" || u.outcome == "revised")
                    .count(),
                revised: cells.iter().filter(|u| u.outcome == "revised").count(),
                failed: cells
                    .iter()
                    .filter(|u| u.outcome == "failed" || u.outcome == "pending")
                    .count(),
                errors: cells.iter().map(|u| u.errors).sum(),
                warnings: cells.iter().map(|u| u.warnings).sum(),
                cells: cells
                    .iter()
                    .map(|u| CellView {
                        id: u.id,
                        outcome: u.outcome,
                        worst: u.worst,
                        errors: u.errors,
                        warnings: u.warnings,
                    })
                    .collect(),
            }
        })
        .collect();
    // The bilingual view: per chapter, each source block beside its translation, code once.
    let bilingual: Vec<BilingualChapter> = if r.bilingual {
        order
            .iter()
            .map(|key| BilingualChapter {
                key,
                rows: units
                    .iter()
                    .filter(|u| u.chapter == *key)
                    .flat_map(|u| {
                        let translated = !matches!(u.outcome, "pending" | "failed");
                        crate::interchange::bilingual::pair_unit(
                            u.source,
                            translated.then_some(u.target),
                            u.outcome != "copied",
                        )
                    })
                    .collect(),
            })
            .collect()
    } else {
        Vec::new()
    };
    let usage: Vec<_> = Agent::ALL
        .iter()
        .map(|a| context! { agent => a.as_str(), u => Value::from(Serde(r.usage_of(*a))) })
        .collect();
    // Unit ids with an element on the page: other tables link a unit only when it is one.
    let unit_ids: BTreeMap<&str, bool> = page.known.iter().map(|u| (u.as_str(), true)).collect();
    env.get_template("report.html")?.render_captured_to(
        context! {
            r => Value::from(Serde(ReportHead::of(r))),
            units => PageSeq::units(page),
            chapters => Value::from(Serde(&chapters)),
            findings => PageSeq::findings(page),
            errors => r.error_count(),
            headline => r.summary.status.headline(&r.summary.findings, &r.summary.units),
            proofreading_off => r.proofreading_off().then_some(super::markdown::PROOFREADING_OFF),
            proofreading_issues => r.proofreading.iter().map(|b| b.issues.len()).sum::<usize>(),
            edited => r.units.iter().filter(|u| u.outcome == "edited").count(),
            usage => usage,
            adherence => Value::from(Serde(adherence_rows(r))),
            bilingual => Value::from(Serde(&bilingual)),
            version => env!("CARGO_PKG_VERSION"),
            source_tag => super::counts::lang_tag(&r.source_lang),
            target_tag => super::counts::lang_tag(&r.target_lang),
            cost => super::counts::cost_line(&r.summary),
            check_counts => Value::from(Serde(super::counts::check_counts(r))),
            unit_ids => Value::from(Serde(&unit_ids)),
        },
        out,
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::Lang;
    use crate::qa::{self, QaContext};
    use crate::report::{UnitReport, build_standalone};

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

    fn finding(check: &str, severity: Severity, unit: &str) -> Finding {
        Finding {
            unit: unit.into(),
            chapter: "c".into(),
            ..Finding::new(check, severity, format!("{check} in {unit}"), "", "")
        }
    }

    /// Values of attribute `name` (`id`, `href`) in `html`, in order.
    fn attrs<'a>(html: &'a str, name: &str) -> Vec<&'a str> {
        let pat = format!(" {name}=\"");
        html.match_indices(&pat)
            .map(|(i, _)| {
                let rest = &html[i + pat.len()..];
                &rest[..rest.find('"').unwrap()]
            })
            .collect()
    }

    /// A report of chapter `c` with no output file (a chapter-level finding: no unit), a
    /// campaign-level finding whose excerpt names two units, and units with an error, a
    /// warning, an info finding and none.
    fn spanning() -> Report {
        let ctx = QaContext::new(&Lang::parse("en"), &Lang::parse("zh"), &Default::default());
        let units = vec![
            unit(
                "c-000",
                vec![finding("code_blocks", Severity::Error, "c-000")],
            ),
            unit(
                "c-001",
                vec![finding("numbers", Severity::Warning, "c-001")],
            ),
            unit(
                "c-002",
                vec![finding("review_markers", Severity::Info, "c-002")],
            ),
            unit("c-003", Vec::new()),
        ];
        let texts: Vec<(String, String)> = (0..4)
            .map(|i| (format!("c-{i:03}"), "Text.\n".to_string()))
            .collect();
        let unit_texts: Vec<qa::UnitText> = texts
            .iter()
            .map(|(id, t)| qa::UnitText {
                unit: id,
                chapter: "c",
                source: t,
                target: Some(t),
            })
            .collect();
        let chapters = [qa::ChapterText {
            chapter: "c",
            output: None,
        }];
        let mut r = build_standalone(
            "t",
            "en",
            "zh-Hant-TW",
            units,
            Vec::new(),
            "r",
            qa::check_campaign(&ctx, &unit_texts, &chapters),
        );
        r.chapter_findings.push(Finding::new(
            "term_drift",
            Severity::Info,
            "\"agent\" is rendered two ways",
            "",
            "智能体: c-000, c-003; 代理: c-001",
        ));
        r
    }

    /// The page's report is every field of the report but its units (the units
    /// are shown through `UnitView`); a field added to `Report` and not to `ReportHead` would
    /// silently render empty.
    #[test]
    fn the_page_sees_every_report_field_but_the_units() {
        let r = spanning();
        let full = serde_json::to_value(&r).unwrap();
        let head = serde_json::to_value(ReportHead::of(&r)).unwrap();
        let mut full = full.as_object().unwrap().clone();
        assert!(full.remove("units").is_some());
        assert_eq!(&full, head.as_object().unwrap());
        assert!(full.len() > 20, "{:?}", full.keys());
    }

    /// A reviewer issue the glossary check refuted is named in report.md and report.html, with
    /// the term and the reviewer's words (finding 13 of docs/src/benchmarks.md).
    #[test]
    fn a_refuted_reviewer_issue_is_named_in_both_reports() {
        let mut r = spanning();
        r.refuted_issues
            .push(crate::campaign::core::manager::RefutedIssue {
                round: 0,
                unit: "c-001".into(),
                term: "Complete Payment".into(),
                detail: "'Complete Payment' is left untranslated".into(),
            });
        let md = crate::report::markdown::render(&r);
        assert!(
            md.contains("- Refuted, not fed back: round 0 · c-001 · the reviewer claimed \"Complete Payment\" was not rendered as the termbase says"),
            "{md}"
        );
        let page = render(r, Texts::new()).unwrap();
        assert!(
            page.contains("Reviewer issue refuted, not fed back (round 0, c-001)")
                && page.contains("<strong>Complete Payment</strong>"),
            "{page}"
        );
    }

    /// Streaming the page into a writer gives the same bytes as rendering it into a string.
    #[test]
    fn the_page_streamed_to_a_writer_is_the_page() {
        let r = spanning();
        let mut texts = Texts::new();
        texts.insert(
            "c-000".into(),
            ("Source <b>text</b>.".into(), "译文。".into()),
        );
        let mut out = Vec::new();
        let back = render_to(r.clone(), texts.clone(), &mut out).unwrap();
        assert_eq!(
            serde_json::to_value(&back).unwrap(),
            serde_json::to_value(&r).unwrap(),
            "the report comes back unchanged"
        );
        let page = render(r, texts).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), page);
        assert!(
            page.contains("Source &lt;b&gt;text&lt;"),
            "texts are escaped"
        );
        assert!(!page.contains("<b>text"));
        assert!(page.contains("译文。"));
    }

    #[test]
    fn findings_that_span_units_link_to_elements_of_the_page() {
        let r = spanning();
        assert!(
            r.chapter_findings
                .iter()
                .any(|f| f.unit.is_empty() && f.chapter == "c"),
            "{:?}",
            r.chapter_findings
        );
        let html = render(r.clone(), Texts::new()).unwrap();
        let ids: std::collections::BTreeSet<&str> = attrs(&html, "id").into_iter().collect();
        let links: Vec<&str> = attrs(&html, "href")
            .into_iter()
            .filter_map(|h| h.strip_prefix('#'))
            .collect();
        assert!(links.len() >= 12, "{links:?}");
        for l in &links {
            assert!(ids.contains(l), "#{l} has no element; ids: {ids:?}");
        }
        // The chapter finding links its chapter's overview row; the drift summary links the
        // three units its excerpt names.
        assert!(links.contains(&"ch-c"), "{links:?}");
        assert!(html.contains("<tr id=\"ch-c\">"));
        assert!(
            html.contains("(see <a href=\"#u-c-000\">c-000</a> <a href=\"#u-c-003\">c-003</a> <a href=\"#u-c-001\">c-001</a>)"),
            "{html}"
        );
        // No link to an empty or unknown unit.
        assert!(!html.contains("href=\"#u-\""));
    }

    #[test]
    fn squares_carry_the_worst_severity_and_texts_their_language() {
        let r = spanning();
        let mut texts = Texts::new();
        texts.insert("c-000".into(), ("Source.".into(), "譯文。".into()));
        let html = render(r, texts).unwrap();
        for (id, worst) in [
            ("c-000", "error"),
            ("c-001", "warning"),
            ("c-002", "none"),
            ("c-003", "none"),
        ] {
            assert!(
                html.contains(&format!(
                    "f-{worst}{}\" data-findings=\"{worst}\" href=\"#u-{id}\"",
                    if worst == "error" { " has-errors" } else { "" }
                )),
                "{id}: {html}"
            );
        }
        assert!(html.contains("<pre class=\"source\" lang=\"en\">Source.</pre><pre class=\"target\" lang=\"zh-Hant-TW\">譯文。</pre>"));
        assert!(html.contains("<p id=\"cost\">Cost: no pricing set"));
        // One row per check, in the check order of `qa::CHECK_ORDER`.
        let rows: Vec<&str> = attrs(&html, "data-check");
        assert_eq!(
            rows,
            [
                "completeness",
                "code_blocks",
                "numbers",
                "term_drift",
                "review_markers"
            ],
            "{html}"
        );
    }

    #[test]
    fn named_units_finds_whole_ids_only() {
        let known: std::collections::HashSet<String> =
            ["c-001", "c-010"].into_iter().map(String::from).collect();
        assert_eq!(
            named_units("see c-001, c-0011 and c-010.", "c-010", &known),
            vec!["c-001".to_string()]
        );
    }
}
