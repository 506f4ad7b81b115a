//! `booktr validate`: re-run every QA check, either on a campaign's current output files
//! (recording any hand edits first, so a later `run` keeps them) or on translations made
//! elsewhere (`--source`/`--target`, chapters paired by file name). Writes report.json, .md and
//! .html. Exit 0 when no error finding, 1 when there are error findings, 2 on usage errors, so
//! it can gate a publishing pipeline.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::book::{Chapter, align};
use crate::campaign::Campaign;
use crate::campaign::core::manager::Manager;
use crate::campaign::core::state::State;
use crate::campaign::core::store::Store;
use crate::campaign::core::summary::Status;
use crate::campaign::ops::runner::import_edits;
use crate::cli::ValidateArgs;
use crate::exit::{ExitCode, UsageError};
use crate::lang::Lang;
use crate::llm::Usage;
use crate::qa::{self, Severity};
use crate::report::{self, Report, UnitReport};
use crate::termbase::{self, Termbase};

pub fn run(args: &ValidateArgs) -> anyhow::Result<ExitCode> {
    let report = match &args.campaign {
        Some(file) => validate_campaign(file)?,
        None => validate_files(args)?,
    };
    let errors = report.error_count();
    let warnings = report
        .findings()
        .iter()
        .filter(|f| f.severity == Severity::Warning)
        .count();
    if args.json {
        println!(
            "{}",
            serde_json::json!({
                "campaign": report.summary.campaign,
                // The status word `run` and `status` use for the same state
                // (`crate::campaign::core::summary::Status`); `pass` is the gate the exit code gives.
                "status": report.summary.status,
                "pass": errors == 0,
                "errors": errors,
                "warnings": warnings,
                "units": report.units.len(),
                "qa_counts": report.qa_counts,
                "report_dir": report.summary.report_dir,
            })
        );
    }
    eprintln!(
        "{}{}: {} error finding(s), {} warning(s) over {} unit(s); status {}. Report: {}",
        if report.rehearsal { "REHEARSAL " } else { "" },
        report.summary.campaign,
        errors,
        warnings,
        report.units.len(),
        report
            .summary
            .status
            .headline(&report.summary.findings, &report.summary.units),
        report.summary.report_dir
    );
    Ok(if errors == 0 {
        ExitCode::Ok
    } else {
        ExitCode::Failed
    })
}

/// Campaign mode: the saved state plus the current output files.
fn validate_campaign(file: &Path) -> anyhow::Result<Report> {
    let plan = crate::config::Plan::load(file, &Default::default())?;
    let campaign = Campaign::load(plan)?;
    let dir = campaign.state_path();
    if !dir.exists() {
        return Err(UsageError::new(format!(
            "no saved state for this configuration of {}: run `booktr run {}` first (validate checks a campaign's outputs), or use --source/--target for files made elsewhere",
            file.display(),
            file.display()
        ))
        .into());
    }
    let mut store = Store::open_for_run(&campaign, crate::campaign::core::store::Existing::Refuse)?;
    let mut state = State::load(&campaign, &store.dir, "validate")?;
    // Result files found without their journal line are journaled by every writer.
    crate::campaign::core::commit::journal_adopted(&mut store, &mut state)?;
    let edited = import_edits(&campaign, &mut store, &mut state)?;
    if edited > 0 {
        eprintln!("recorded {edited} unit(s) edited by hand; `booktr run` will keep them");
        // The output chapters are the edits just recorded: journaled as written (their text is
        // the final texts, rewritten byte for byte), so that the status is the one `run` would
        // give now, not `incomplete` at "write outputs". As `import` does after an import.
        crate::campaign::ops::outputs::record_outputs(&campaign, &mut store, &mut state)?;
    }
    // Marks the editor wrote in findings-review.csv.
    for line in crate::campaign::ops::mark_journal::journal_csv(&campaign, &mut store, &mut state)?
    {
        eprintln!("{line}");
    }
    let manager = Manager::new(&campaign, &state);
    let stage = manager.next_step(&state, &BTreeSet::new()).stage;
    // The status as `status` gives it for this state (the report turns `complete` with errors
    // into `needs_review`, as `run` does).
    let status = Status::of_stage(&stage);
    let report = report::build(&campaign, &manager, &state, status, &[]);
    let texts = report::texts_of(&campaign, &state);
    // Dropped before the write, as in `run` (they stacked under the page's texts).
    drop(manager);
    drop(state);
    let (mut report, _) = report.write(&campaign.plan.report_dir, texts)?;
    report.summary.report_dir = campaign.plan.show(&campaign.plan.report_dir);
    Ok(report)
}

/// Name of the folder `validate --source/--target` writes its report under by default, in the
/// current folder.
pub const DEFAULT_REPORT_FOLDER: &str = "booktr-validate";

/// Where `validate --source SRC --target TGT` writes its report without `--report-dir`:
/// `booktr-validate/<name>` (`name` without its extension for a file) in the current folder,
/// or the same under the system's temporary folder when the current folder is inside the
/// source or the target (their folder, for files), so that the report never lands in the
/// book. The caller prints the folder.
///
/// Errors: the current folder cannot be read.
pub fn default_report_dir(src: &Path, tgt: &Path, name: &str) -> anyhow::Result<PathBuf> {
    let cwd = crate::util::normalize(&std::env::current_dir()?);
    let folder = |p: &Path| {
        let abs = crate::util::normalize(&cwd.join(p));
        if abs.is_dir() {
            abs
        } else {
            abs.parent().map(Path::to_path_buf).unwrap_or_default()
        }
    };
    let inside_book = [src, tgt].iter().any(|p| cwd.starts_with(folder(p)));
    let base = if inside_book {
        std::env::temp_dir()
    } else {
        cwd
    };
    // A chapter file's report folder is named without its extension.
    let folder_name = if src.is_file() {
        Path::new(name)
            .file_stem()
            .map_or(name.to_string(), |s| s.to_string_lossy().into_owned())
    } else {
        name.to_string()
    };
    Ok(base.join(DEFAULT_REPORT_FOLDER).join(folder_name))
}

/// The language of one side of `validate --source/--target`: `given` (the value of `flag`),
/// else detected from the prose of `files` (as `init` detects a book's language) and said on
/// stderr. Errors ([`UsageError`]): the files have too little prose to tell, naming `shown`
/// and the flag to add.
fn side_lang(
    given: Option<&str>,
    flag: &str,
    shown: &Path,
    files: &[PathBuf],
) -> anyhow::Result<Lang> {
    if let Some(tag) = given {
        return Ok(Lang::parse(tag));
    }
    let mut texts = Vec::new();
    let mut total = 0;
    for f in files {
        if total >= super::init::DETECT_BYTES {
            break;
        }
        if let Ok(ch) = Chapter::load(Path::new(""), &f.display().to_string()) {
            total += ch.text.len();
            texts.push(ch.text.to_string());
        }
    }
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    match super::init::detect_source_lang(&refs) {
        Some(l) => {
            eprintln!(
                "{} language: {} (detected from the prose of {}; pass {flag} LANG if it is wrong)",
                if flag == "--source-lang" {
                    "source"
                } else {
                    "target"
                },
                l.code,
                shown.display()
            );
            Ok(l)
        }
        None => Err(UsageError::new(format!(
            "cannot tell the language of {} from its prose: add {flag} LANG (a BCP 47 tag such as en, zh or pt-BR)",
            shown.display()
        ))
        .into()),
    }
}

/// Extensions of the Markdown files `validate` reads in a folder.
const MARKDOWN_EXTENSIONS: &[&str] = &["md", "mdx", "markdown"];

/// The Markdown files of `path` (itself when it is a file): every `.md`, `.mdx` and
/// `.markdown` file in the folder and its subfolders (a Docusaurus or MkDocs docs folder nests
/// its pages), as ripgrep's walker finds them (hidden files and what `.gitignore` leaves out
/// skipped), sorted by path.
fn chapter_files(path: &Path) -> anyhow::Result<Vec<PathBuf>> {
    if path.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    if !path.exists() {
        return Err(UsageError::new(format!(
            "cannot read the source {}: no such file or folder; pass the source chapter or the folder of source chapters with --source",
            path.display()
        ))
        .into());
    }
    if let Err(e) = std::fs::read_dir(path) {
        return Err(UsageError::new(format!("cannot read {}: {e}", path.display())).into());
    }
    let mut v: Vec<PathBuf> = ignore::WalkBuilder::new(path)
        .build()
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .map(|e| e.into_path())
        .filter(|p| {
            p.extension()
                .is_some_and(|x| MARKDOWN_EXTENSIONS.iter().any(|m| x == *m))
        })
        .collect();
    v.sort();
    if v.is_empty() {
        return Err(UsageError::new(format!(
            "{} has no Markdown files (.md, .mdx, .markdown) in it or its subfolders",
            path.display()
        ))
        .into());
    }
    Ok(v)
}

/// A source chapter of `validate`, its key made from its path inside the source folder
/// `root` (`concepts/index.mdx` → `concepts-index`), so that pages of the same name in
/// different folders stay apart.
fn load_chapter(root: &Path, path: &Path) -> Result<Chapter, crate::book::chapter::ChapterError> {
    let mut ch = Chapter::load(Path::new(""), &path.display().to_string())?;
    if let Ok(rel) = path.strip_prefix(root)
        && rel.components().count() > 1
    {
        let stem = rel.with_extension("");
        ch.key = stem
            .to_string_lossy()
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        ch.file_name = rel.to_string_lossy().replace('\\', "/");
    }
    Ok(ch)
}

/// Files mode: chapters paired by file name, units paired by block structure: the languages
/// and house glossary, the book's kept words, the pairing, the checks, then the report.
fn validate_files(args: &ValidateArgs) -> anyhow::Result<Report> {
    let (src, tgt) = (
        args.source.as_ref().expect("clap requires it"),
        args.target.as_ref().expect("clap requires it"),
    );
    if !tgt.exists() {
        return Err(UsageError::new(format!(
            "cannot read the target {}: no such file or folder; pass the translated chapter or the folder of translated chapters with --target",
            tgt.display()
        ))
        .into());
    }
    for (flag, tag) in [
        ("--source-lang", &args.source_lang),
        ("--target-lang", &args.target_lang),
    ] {
        if let Some(tag) = tag {
            crate::lang::check_tag(tag).map_err(|why| UsageError::new(format!("{flag} {why}")))?;
        }
    }
    let sources = chapter_files(src)?;
    let target_dir_mode = tgt.is_dir();
    let target_of = |ch: &Chapter| {
        if target_dir_mode {
            tgt.join(&ch.file_name)
        } else {
            tgt.clone()
        }
    };
    let source_lang = side_lang(args.source_lang.as_deref(), "--source-lang", src, &sources)?;
    let targets: Vec<PathBuf> = sources
        .iter()
        .filter_map(|p| load_chapter(src, p).ok())
        .map(|ch| target_of(&ch))
        .collect();
    let target_lang = side_lang(args.target_lang.as_deref(), "--target-lang", tgt, &targets)?;
    let tb = house_glossary(args, &source_lang, &target_lang)?;
    let mut ctx = qa::QaContext::new(&source_lang, &target_lang, &tb);
    // A translation made elsewhere is held to its code, not to booktr's prompt rule that keeps
    // comments: translators of published editions translate comments throughout.
    ctx.code_comments = crate::qa::unit::code_comments::CodeComments::Translate;
    ctx.human_edition = true;
    if let Some(v) = &args.code_comments {
        ctx.code_comments = v.trim().parse().map_err(|m: crate::util::UnknownValue| {
            UsageError::new(format!("--code-comments: {m}"))
        })?;
    }
    let (kept, norm) = book_tallies(&ctx, src, &sources, &target_of);
    ctx.kept_words = Some(std::sync::Arc::new(kept));
    ctx.prose_norm = norm;
    let slots = pair_chapters(src, &sources, &target_of, args.max_unit_chars.max(200))?;
    let (checked, campaign_qa) = check_slots(&ctx, &slots);
    let (units, texts) = unit_reports(slots, checked, &campaign_qa);
    let name = src
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "validate".into());
    let report_dir = match &args.report_dir {
        Some(d) => d.clone(),
        None => default_report_dir(src, tgt, &name)?,
    };
    let mut report = report::build_standalone(
        &name,
        &source_lang.code,
        &target_lang.code,
        units,
        tb.entries.clone(),
        &report_dir.display().to_string(),
        campaign_qa,
    );
    ids_and_scorecard(&mut report, &texts);
    let (report, _) = report.write(&report_dir, texts)?;
    Ok(report)
}

/// The `--glossary` files as one house-style termbase.
fn house_glossary(
    args: &ValidateArgs,
    source_lang: &Lang,
    target_lang: &Lang,
) -> anyhow::Result<Termbase> {
    let mut entries = Vec::new();
    for g in &args.glossary {
        let found = crate::interchange::load_glossary(
            g,
            &g.display().to_string(),
            source_lang,
            target_lang,
        )
        .map_err(|e| UsageError::new(format!("glossary {e}")))?;
        entries.extend(found.into_iter().map(|e| termbase::Entry {
            origin: termbase::Origin::HouseStyle,
            ..e
        }));
    }
    Ok(Termbase::from_entries(entries))
}

/// What is tallied over every chapter before any unit is checked: the stray source-language
/// words the whole translation keeps (a word kept throughout is the translation's convention,
/// a warning of `untranslated_word`, not an error, see `qa::unit::untranslated`), and the
/// length its paragraphs keep (`qa::unit::alignment::ProseNorm`). Chapters that cannot be
/// read are left out here (the pairing reports them).
fn book_tallies(
    ctx: &qa::QaContext,
    root: &Path,
    sources: &[PathBuf],
    target_of: &dyn Fn(&Chapter) -> PathBuf,
) -> (
    qa::unit::untranslated::KeptWords,
    Option<qa::unit::alignment::ProseNorm>,
) {
    let mut book: Vec<(std::sync::Arc<str>, std::sync::Arc<str>)> = Vec::new();
    for sp in sources {
        let Ok(ch) = load_chapter(root, sp) else {
            continue;
        };
        let tp = target_of(&ch);
        if let Ok(b) = std::fs::read(&tp)
            && let Ok(t) = Chapter::from_bytes(&tp.display().to_string(), b)
        {
            book.push((ch.text, t.text));
        }
    }
    let pairs = || book.iter().map(|(s, t)| (&**s, &**t));
    (
        qa::unit::untranslated::KeptWords::tally(ctx, pairs()),
        qa::unit::alignment::ProseNorm::of_book(pairs()),
    )
}

/// Every chapter paired with its translation, unit by unit (units of at most `max_chars`),
/// or reported missing.
fn pair_chapters(
    root: &Path,
    sources: &[PathBuf],
    target_of: &dyn Fn(&Chapter) -> PathBuf,
    max_chars: usize,
) -> anyhow::Result<Vec<Slot>> {
    let mut slots: Vec<Slot> = Vec::new();
    for sp in sources {
        let ch = load_chapter(root, sp).map_err(|e| UsageError::new(e.to_string()))?;
        let tp = target_of(&ch);
        let target = match std::fs::read(&tp) {
            Ok(b) => Some(
                Chapter::from_bytes(&tp.display().to_string(), b)
                    .map_err(|e| UsageError::new(e.to_string()))?
                    .text,
            ),
            Err(_) => None,
        };
        let Some(target) = target else {
            slots.push(Slot::Missing(Box::new(missing_chapter(&ch, &tp))));
            continue;
        };
        let pairing = align::pair(&ch.key, &ch.text, &target, max_chars);
        for (u, range) in pairing.pairs {
            let source = u.text(&ch.text).to_string();
            let target = target[range].to_string();
            slots.push(Slot::Paired {
                unit: u,
                source,
                target,
                method: pairing.method,
            });
        }
    }
    Ok(slots)
}

/// Checks the pairs: the per-unit checks are pure over (context, source, target), so they run
/// on every core (rayon; order kept), and the book-level checks (norms, drift, markers), which
/// read only the texts, run beside them.
fn check_slots(
    ctx: &qa::QaContext,
    slots: &[Slot],
) -> (Vec<Option<Vec<qa::Finding>>>, qa::book::CampaignQa) {
    let unit_texts: Vec<qa::UnitText> = slots
        .iter()
        .filter_map(|slot| match slot {
            Slot::Paired {
                unit,
                source,
                target,
                ..
            } if unit.kind.needs_translation() => Some(qa::UnitText {
                unit: &unit.id,
                chapter: &unit.chapter,
                source,
                target: Some(target),
            }),
            _ => None,
        })
        .collect();
    rayon::join(
        || {
            use rayon::prelude::*;
            slots
                .par_iter()
                .map(|slot| match slot {
                    Slot::Paired {
                        unit,
                        source,
                        target,
                        method,
                    } => Some(unit_findings(ctx, unit, source, target, *method)),
                    Slot::Missing(_) => None,
                })
                .collect::<Vec<_>>()
        },
        || qa::check_campaign(ctx, &unit_texts, &[]),
    )
}

/// The report line of every slot, with its findings and the book-level findings on its unit,
/// and the texts of the paired units.
fn unit_reports(
    slots: Vec<Slot>,
    checked: Vec<Option<Vec<qa::Finding>>>,
    campaign_qa: &qa::book::CampaignQa,
) -> (Vec<UnitReport>, report::html::Texts) {
    let mut units: Vec<UnitReport> = Vec::new();
    let mut texts = report::html::Texts::new();
    for (slot, findings) in slots.into_iter().zip(checked) {
        match slot {
            Slot::Missing(r) => units.push(*r),
            Slot::Paired {
                unit: u,
                source,
                target,
                ..
            } => {
                texts.insert(u.id.clone(), (source.into(), target));
                units.push(UnitReport {
                    id: u.id.clone(),
                    chapter: u.chapter.clone(),
                    kind: u.kind,
                    chars: u.chars,
                    outcome: if u.kind.needs_translation() {
                        "translated"
                    } else {
                        "copied"
                    },
                    rounds: vec![],
                    usage: Usage::default(),
                    attempts: 0,
                    findings: findings.unwrap_or_default(),
                    error: None,
                    history: Vec::new(),
                    candidates: Vec::new(),
                    kept_round: None,
                    repairs: Vec::new(),
                    pieces: None,
                    blocks: None,
                });
            }
        }
    }
    for f in &campaign_qa.findings {
        if let Some(u) = units.iter_mut().find(|u| u.id == f.unit) {
            u.findings.push(f.clone());
        }
    }
    (units, texts)
}

/// Stable ids (the unit fingerprint here is sha256 of its source text: there is no campaign
/// state) and the MQM scorecard over the prose units' source words.
fn ids_and_scorecard(report: &mut Report, texts: &report::html::Texts) {
    let mut words: Vec<(String, usize)> = Vec::new();
    for u in &mut report.units {
        let source = texts.get(&u.id).map_or("", |t| t.0.as_str());
        qa::findings::editor_marks::assign_ids(&crate::util::sha256_hex(source), &mut u.findings);
        let w = if u.kind.needs_translation() {
            qa::findings::mqm::source_words(source)
        } else {
            0
        };
        match words.iter_mut().find(|(k, _)| *k == u.chapter) {
            Some(e) => e.1 += w,
            None => words.push((u.chapter.clone(), w)),
        }
    }
    crate::campaign::core::mark_review::assign_chapter_ids(&mut report.chapter_findings);
    report.mqm = report::MqmReport::of(
        &words,
        report
            .units
            .iter()
            .flat_map(|u| &u.findings)
            .chain(&report.chapter_findings),
        crate::config::DEFAULT_MQM_THRESHOLD,
    );
}

/// One unit of `validate --source/--target`, paired before it is checked.
enum Slot {
    /// A chapter without a translation file: its report line, ready.
    Missing(Box<UnitReport>),
    /// A source unit and the translation text paired with it.
    Paired {
        unit: crate::book::Unit,
        source: String,
        target: String,
        method: align::Method,
    },
}

/// The report line of a chapter whose translation file `tp` cannot be read.
fn missing_chapter(ch: &Chapter, tp: &Path) -> UnitReport {
    UnitReport {
        id: format!("{}-000", ch.key),
        chapter: ch.key.clone(),
        kind: crate::book::UnitKind::Prose,
        chars: ch.text.chars().count(),
        outcome: "pending",
        rounds: vec![],
        usage: Usage::default(),
        attempts: 0,
        findings: vec![qa::Finding {
            unit: format!("{}-000", ch.key),
            chapter: ch.key.clone(),
            ..qa::Finding::new(
                "completeness",
                Severity::Error,
                format!("no translation of {} at {}", ch.file_name, tp.display()),
                "",
                "",
            )
        }],
        error: None,
        history: Vec::new(),
        candidates: Vec::new(),
        kept_round: None,
        repairs: Vec::new(),
        pieces: None,
        blocks: None,
    }
}

/// The per-unit findings of one paired unit: every check for prose, the front-matter checks
/// for front matter (a translation made elsewhere may have translated it), none for the rest;
/// plus an info finding when the chapter was paired by sections or whole (`method`).
fn unit_findings(
    ctx: &qa::QaContext,
    u: &crate::book::Unit,
    s: &str,
    t: &str,
    method: align::Method,
) -> Vec<qa::Finding> {
    let mut findings = if u.kind.needs_translation() {
        qa::check_unit(ctx, &u.id, &u.chapter, s, t)
    } else if u.kind == crate::book::UnitKind::FrontMatter {
        qa::unit::front_matter::findings(s, t)
            .into_iter()
            .map(|f| qa::Finding {
                unit: u.id.clone(),
                chapter: u.chapter.clone(),
                ..f
            })
            .collect()
    } else {
        Vec::new()
    };
    if method != align::Method::Blocks {
        findings.push(qa::Finding {
            unit: u.id.clone(),
            chapter: u.chapter.clone(),
            ..qa::Finding::new(
                "pairing",
                Severity::Info,
                format!(
                    "source and translation have different block structures, so they were compared {}",
                    if method == align::Method::Sections {
                        "section by section"
                    } else {
                        "as whole chapters"
                    }
                ),
                "",
                "",
            )
        });
    }
    findings
}
