//! The multilingual real set: published human translations of three public projects in
//! thirteen languages, checked by QA as `booktr validate` checks a translation, with planted
//! faults. Shared by `tests/it/qa_multilingual.rs` and `benches/qa_labelled.rs`.
//!
//! The projects (no text is committed: `tests/fixtures/qa-multilingual/fetch.sh` puts the pinned
//! files of `sources.tsv` into a cache, and the shared sites are read in place):
//! - `react.dev`: the `learn` pages of react.dev's translations (ko, fa, zh-hans, ja, zh-hant,
//!   ar, ru, uk, de, fr, es, pt-br, it), each against the English at the last react.dev commit
//!   merged into it, section by section (pages whose section counts differ are left out and
//!   counted, as are pages the translation keeps byte for byte in English);
//! - `rust-by-example`: the PO catalogs of `../shared/sites/rust-by-example` (es, ja, ko, zh):
//!   each translated, non-fuzzy message is a unit;
//! - `yew`: the Yew website's current docs in ja, zh-Hans and zh-Hant
//!   (`../shared/sites/yew-docusaurus`), section by section;
//! - `comprehensive-rust`: the course's PO catalogs in the 13 languages of `sources.tsv`. It is
//!   wholly in the held-out half.
//!
//! Halves: every page of `react.dev`, `rust-by-example` and `yew` goes to the development or
//! the held-out half by the parity of the first byte of the sha256 of `project/page` (a PO
//! message is its own page); `comprehensive-rust` is held out whole. Tuning reads the
//! development half only; the held-out half is reported, never tuned on.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use booktr::lang::Lang;
use booktr::qa::{self, Finding, QaContext, Severity};
use booktr::termbase::Termbase;

const MANIFEST: &str = env!("CARGO_MANIFEST_DIR");

/// One aligned pair of the set: a section of a page, or a PO message.
#[derive(Debug, Clone)]
pub struct Pair {
    pub project: &'static str,
    /// The target language as the project names it (`zh-hans`, `pt-BR`, `zh_CN` → see
    /// [`lang_code`]).
    pub lang: String,
    pub page: String,
    /// `page#section` or the PO message's 12-hex-digit msgid hash.
    pub unit: String,
    pub held_out: bool,
    pub source: String,
    pub target: String,
}

/// What loading left out, per project and language, for the report.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct Skipped {
    /// Pages whose translation is byte for byte the English page.
    pub english_pages: usize,
    /// Pages whose section counts differ from the English page's.
    pub unaligned_pages: usize,
    /// PO messages that are fuzzy, empty or copied unchanged.
    pub po_messages: usize,
}

/// The cache `fetch.sh` fills: `BOOKTR_QA_MULTILINGUAL`, else `~/.cache/booktr/qa-multilingual`.
pub fn cache_dir() -> PathBuf {
    std::env::var_os("BOOKTR_QA_MULTILINGUAL")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let base = std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from(std::env::var("HOME").unwrap()).join(".cache"));
            base.join("booktr/qa-multilingual")
        })
}

/// `../shared/sites`.
pub fn shared_sites() -> PathBuf {
    Path::new(MANIFEST).join("../shared/sites")
}

/// The language code booktr reads for a project's language name.
pub fn lang_code(lang: &str) -> String {
    match lang {
        "zh-hans" | "zh-CN" | "zh" | "zh_CN" | "zh-Hans" => "zh".into(),
        "zh-hant" | "zh-TW" | "zh-Hant" => "zh-Hant".into(),
        "pt-br" | "pt-BR" => "pt-BR".into(),
        other => other.into(),
    }
}

/// Whether `project/page` is in the held-out half (see the module docs).
pub fn held_out(project: &str, page: &str) -> bool {
    project == "comprehensive-rust"
        || booktr::util::sha256_hex(format!("{project}/{page}").as_bytes()).as_bytes()[1] % 2 == 1
}

/// Splits a page at its top-level headings (the corpus set's rule, [`super::real::sections`]).
fn sections(text: &str) -> Vec<&str> {
    super::real::sections(text)
}

/// Every Markdown file under `dir`, as paths relative to it, sorted.
fn markdown_files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| {
            e.file_type().is_file()
                && e.path()
                    .extension()
                    .is_some_and(|x| x == "md" || x == "mdx")
        })
        .map(|e| e.path().strip_prefix(dir).unwrap().to_path_buf())
        .collect();
    out.sort();
    out
}

/// Pairs the pages of `target_dir` with those of `source_dir`, section by section.
fn page_pairs(
    project: &'static str,
    lang: &str,
    source_dir: &Path,
    target_dir: &Path,
    skipped: &mut Skipped,
    out: &mut Vec<Pair>,
) {
    for rel in markdown_files(target_dir) {
        let Ok(source) = std::fs::read_to_string(source_dir.join(&rel)) else {
            continue;
        };
        let target = std::fs::read_to_string(target_dir.join(&rel)).unwrap();
        if source == target {
            skipped.english_pages += 1;
            continue;
        }
        let (a, b) = (sections(&source), sections(&target));
        if a.len() != b.len() {
            skipped.unaligned_pages += 1;
            continue;
        }
        let page = rel.to_string_lossy().replace('\\', "/");
        let held_out = held_out(project, &page);
        for (i, (s, t)) in a.iter().zip(&b).enumerate() {
            out.push(Pair {
                project,
                lang: lang.to_string(),
                page: page.clone(),
                unit: format!("{page}#{i:03}"),
                held_out,
                source: s.to_string(),
                target: t.to_string(),
            });
        }
    }
}

/// The translated messages of a PO catalog.
fn po_pairs(
    project: &'static str,
    lang: &str,
    file: &Path,
    skipped: &mut Skipped,
    out: &mut Vec<Pair>,
) {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let messages = booktr::interchange::po::read(&text, &file.display().to_string())
        .unwrap_or_else(|e| panic!("{e}"));
    for m in messages {
        if m.fuzzy || m.msgstr.trim().is_empty() || m.msgstr == m.msgid || m.msgid.is_empty() {
            skipped.po_messages += 1;
            continue;
        }
        let hash = booktr::util::sha256_hex(m.msgid.as_bytes())[..12].to_string();
        out.push(Pair {
            project,
            lang: lang.to_string(),
            page: hash.clone(),
            held_out: held_out(project, &hash),
            unit: hash,
            source: m.msgid,
            target: m.msgstr,
        });
    }
}

/// The whole set, with what was left out per `project/lang`; `Err` says what is missing (the
/// cache or the shared sites) and how to get it.
pub fn load() -> Result<(Vec<Pair>, BTreeMap<String, Skipped>), String> {
    let cache = cache_dir();
    let sites = shared_sites();
    let manifest = Path::new(MANIFEST).join("tests/fixtures/qa-multilingual/sources.tsv");
    let mut out = Vec::new();
    let mut skipped: BTreeMap<String, Skipped> = BTreeMap::new();
    let text = std::fs::read_to_string(&manifest).unwrap();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let cols: Vec<&str> = line.split('\t').collect();
        let (project, lang, path) = (cols[0], cols[1], cols[4]);
        let project: &'static str = match project {
            "react.dev" => "react.dev",
            "comprehensive-rust" => "comprehensive-rust",
            other => panic!("{}: unknown project {other}", manifest.display()),
        };
        let dir = cache.join(project).join(lang);
        if !dir.is_dir() {
            return Err(format!(
                "no {} (run tests/fixtures/qa-multilingual/fetch.sh)",
                dir.display()
            ));
        }
        let skip = skipped.entry(format!("{project}/{lang}")).or_default();
        if project == "comprehensive-rust" {
            po_pairs(project, lang, &dir.join(path), skip, &mut out);
        } else {
            let commit = std::fs::read_to_string(dir.join("SOURCE")).unwrap();
            let source = cache
                .join(project)
                .join(format!("en@{}", commit.trim()))
                .join(path);
            page_pairs(project, lang, &source, &dir.join(path), skip, &mut out);
        }
    }
    let rbe = sites.join("rust-by-example/po");
    let yew = sites.join("yew-docusaurus");
    if !rbe.is_dir() || !yew.is_dir() {
        return Err(format!(
            "no {} or {} (the shared sites)",
            rbe.display(),
            yew.display()
        ));
    }
    for lang in ["es", "ja", "ko", "zh"] {
        let skip = skipped
            .entry(format!("rust-by-example/{lang}"))
            .or_default();
        po_pairs(
            "rust-by-example",
            lang,
            &rbe.join(format!("{lang}.po")),
            skip,
            &mut out,
        );
    }
    for lang in ["ja", "zh-Hans", "zh-Hant"] {
        let skip = skipped.entry(format!("yew/{lang}")).or_default();
        page_pairs(
            "yew",
            lang,
            &yew.join("docs"),
            &yew.join(format!(
                "i18n/{lang}/docusaurus-plugin-content-docs/current"
            )),
            skip,
            &mut out,
        );
    }
    Ok((out, skipped))
}

/// Words of English prose in a source text (whitespace-separated tokens with a letter), the
/// denominator of findings per 10,000 words.
pub fn words(source: &str) -> usize {
    source
        .split_whitespace()
        .filter(|w| w.chars().any(char::is_alphabetic))
        .count()
}

/// The QA context for one language's pairs, as `booktr validate --source --target` builds it:
/// no glossary, comments in code blocks translatable, and the words the translation keeps in
/// English tallied over all of that language's pairs.
pub fn context(lang: &str, pairs: &[&Pair]) -> QaContext {
    let tb = Termbase::default();
    let mut ctx = QaContext::new(&Lang::parse("en"), &Lang::parse(&lang_code(lang)), &tb);
    let kept = qa::unit::untranslated::KeptWords::tally(
        &ctx,
        pairs.iter().map(|p| (p.source.as_str(), p.target.as_str())),
    );
    ctx.kept_words = Some(std::sync::Arc::new(kept));
    ctx.prose_norm = qa::unit::alignment::ProseNorm::of_book(
        pairs.iter().map(|p| (p.source.as_str(), p.target.as_str())),
    );
    ctx.code_comments = booktr::qa::unit::code_comments::CodeComments::Translate;
    ctx.human_edition = true;
    if std::env::var("BOOKTR_SHOW_NORM").is_ok() {
        eprintln!("NORM {} {} {:?}", pairs[0].project, lang, ctx.prose_norm);
    }
    ctx
}

/// The error findings of QA on one pair.
pub fn errors(ctx: &QaContext, unit: &str, source: &str, target: &str) -> Vec<Finding> {
    qa::check_unit(ctx, unit, "", source, target)
        .into_iter()
        .filter(|f| f.severity == Severity::Error)
        .collect()
}

/// Where a finding points, for its label: `@` and the char offset of its span's start in the
/// target (no text of the translation is stored), `@-` without a span.
pub fn at_of(f: &Finding) -> String {
    match f.span {
        Some((s, _)) => format!("@{s}"),
        None => "@-".into(),
    }
}

/// One label of `tests/fixtures/qa-multilingual/labels.jsonl`: whether an error finding on
/// the human text is a fault an editor must fix, and why, in the labeller's words.
#[derive(Debug, Clone, serde::Deserialize, serde::Serialize)]
pub struct Label {
    pub project: String,
    pub lang: String,
    pub unit: String,
    pub check: String,
    pub at: String,
    pub fault: bool,
    pub why: String,
}

/// `tests/fixtures/qa-multilingual/labels.jsonl`.
pub fn labels_file() -> PathBuf {
    Path::new(MANIFEST).join("tests/fixtures/qa-multilingual/labels.jsonl")
}

/// Every label (none when the file is absent).
pub fn labels() -> Vec<Label> {
    let path = labels_file();
    super::read_jsonl(&path)
}

/// The Wilson score interval at 95 % for `k` successes in `n` trials (`(0, 1)` when `n` is 0).
/// Wilson rather than the normal approximation because many cells are small or near 1.
pub fn wilson(k: usize, n: usize) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let (k, n, z) = (k as f64, n as f64, 1.96_f64);
    let p = k / n;
    let denom = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / denom;
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / denom;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// Counts for one cell (a check, a language, or both) of one half.
#[derive(Debug, Default, Clone, Copy, serde::Serialize)]
pub struct Cell {
    pub errors: usize,
    /// Source words of the pairs the cell covers (for a check: every pair of the half).
    pub words: usize,
    /// Error findings labelled a fault, labelled a false alarm, and not labelled.
    pub tp: usize,
    pub fp: usize,
    pub unlabelled: usize,
}

impl Cell {
    /// Error findings per 10,000 source words.
    pub fn per_10k(&self) -> f64 {
        if self.words == 0 {
            0.0
        } else {
            self.errors as f64 * 10_000.0 / self.words as f64
        }
    }
    /// Labelled precision and its Wilson interval, `None` without a labelled finding.
    pub fn precision(&self) -> Option<(f64, f64, f64)> {
        let n = self.tp + self.fp;
        (n > 0).then(|| {
            let (lo, hi) = wilson(self.tp, n);
            (self.tp as f64 / n as f64, lo, hi)
        })
    }
}

/// One error finding of the set, with its pair.
#[derive(Debug, Clone)]
pub struct Found<'a> {
    pub pair: &'a Pair,
    pub finding: Finding,
    pub at: String,
}

/// QA's error findings on every pair of `pairs`, one QA context per project and language.
pub fn findings(pairs: &[Pair]) -> Vec<Found<'_>> {
    let mut groups: BTreeMap<(&str, &str), Vec<&Pair>> = BTreeMap::new();
    for p in pairs {
        groups.entry((p.project, &p.lang)).or_default().push(p);
    }
    let mut out = Vec::new();
    for ((_, lang), group) in groups {
        let ctx = context(lang, &group);
        for p in group {
            for f in errors(&ctx, &p.unit, &p.source, &p.target) {
                let at = at_of(&f);
                out.push(Found {
                    pair: p,
                    finding: f,
                    at,
                });
            }
        }
    }
    out
}

/// The per-check, per-language and per-(check, language) cells of one half, scored against
/// `labels`.
#[derive(Debug, Default, serde::Serialize)]
pub struct Table {
    pub words: usize,
    pub total: Cell,
    pub by_check: BTreeMap<String, Cell>,
    pub by_lang: BTreeMap<String, Cell>,
    pub by_check_lang: BTreeMap<String, Cell>,
}

/// Scores the findings of one half (`held_out`) of `pairs`.
pub fn table(pairs: &[Pair], found: &[Found], labels: &[Label], held_out: bool) -> Table {
    let mut t = Table::default();
    for p in pairs.iter().filter(|p| p.held_out == held_out) {
        let w = words(&p.source);
        t.words += w;
        t.by_lang.entry(lang_code(&p.lang)).or_default().words += w;
    }
    for f in found.iter().filter(|f| f.pair.held_out == held_out) {
        let lang = lang_code(&f.pair.lang);
        let label = labels.iter().find(|l| {
            l.project == f.pair.project
                && l.lang == f.pair.lang
                && l.unit == f.pair.unit
                && l.check == f.finding.check
                && l.at == f.at
        });
        let key = format!("{} {lang}", f.finding.check);
        let lang_words = t.by_lang[&lang].words;
        let all_words = t.words;
        for (cell, words) in [
            (&mut t.total, all_words),
            (
                t.by_check.entry(f.finding.check.clone()).or_default(),
                all_words,
            ),
            (t.by_lang.get_mut(&lang).unwrap(), lang_words),
            (t.by_check_lang.entry(key.clone()).or_default(), lang_words),
        ] {
            cell.words = words;
            cell.errors += 1;
            match label {
                Some(l) if l.fault => cell.tp += 1,
                Some(_) => cell.fp += 1,
                None => cell.unlabelled += 1,
            }
        }
    }
    t
}

/// Recall of the planted faults of each kind on one half: `(planted, caught)` per kind, and
/// per kind and language.
#[derive(Debug, Default, serde::Serialize)]
pub struct Planted {
    pub by_kind: BTreeMap<String, (usize, usize)>,
    pub by_kind_lang: BTreeMap<String, (usize, usize)>,
    /// One line per missed fault (kind, project, language, unit).
    pub missed: Vec<String>,
}

/// Plants every kind of fault into up to `per_lang` clean pairs of each language of the half
/// (pairs QA passes without an error, taken in the order of the sha256 of their unit and the
/// kind) and counts the ones QA catches.
pub fn planted(pairs: &[Pair], held_out: bool, per_lang: usize) -> Planted {
    use super::plant::{KINDS, caught, plant};
    let mut groups: BTreeMap<(&str, &str), Vec<&Pair>> = BTreeMap::new();
    for p in pairs.iter().filter(|p| p.held_out == held_out) {
        groups.entry((p.project, &p.lang)).or_default().push(p);
    }
    let mut by_lang: BTreeMap<String, Vec<(&QaContext, &Pair)>> = BTreeMap::new();
    let contexts: Vec<(QaContext, Vec<&Pair>)> = groups
        .into_values()
        .map(|g| (context(&g[0].lang, &g), g))
        .collect();
    for (ctx, group) in &contexts {
        for p in group {
            by_lang
                .entry(lang_code(&p.lang))
                .or_default()
                .push((ctx, p));
        }
    }
    let mut out = Planted::default();
    for (lang, list) in &by_lang {
        for &kind in KINDS {
            let mut order: Vec<usize> = (0..list.len()).collect();
            order.sort_by_key(|&i| {
                booktr::util::sha256_hex(format!("{}{}", list[i].1.unit, kind.name()).as_bytes())
            });
            let mut done = 0;
            for (n, &i) in order.iter().enumerate() {
                if done == per_lang {
                    break;
                }
                let (ctx, p) = list[i];
                let donor = &list[order[(n + 1) % order.len()]].1.target;
                let Some(faulty) = plant(kind, &p.source, &p.target, lang, donor) else {
                    continue;
                };
                let clean = errors(ctx, &p.unit, &p.source, &p.target);
                if !clean.is_empty() {
                    continue;
                }
                done += 1;
                let bad = errors(ctx, &p.unit, &p.source, &faulty);
                let hit = caught(&clean, &bad);
                for key in [kind.name().to_string(), format!("{} {lang}", kind.name())] {
                    let e = if key.contains(' ') {
                        out.by_kind_lang.entry(key).or_default()
                    } else {
                        out.by_kind.entry(key).or_default()
                    };
                    e.0 += 1;
                    e.1 += usize::from(hit);
                }
                if !hit && std::env::var("BOOKTR_PLANT_SHOW").is_ok_and(|k| k == kind.name()) {
                    // Where the planted copy first differs, with 80 bytes around it.
                    let at = p
                        .target
                        .bytes()
                        .zip(faulty.bytes())
                        .take_while(|(a, b)| a == b)
                        .count();
                    let around = |t: &str| {
                        let (mut a, mut b) = (at.saturating_sub(80), (at + 80).min(t.len()));
                        while !t.is_char_boundary(a) {
                            a -= 1;
                        }
                        while !t.is_char_boundary(b) {
                            b += 1;
                        }
                        t[a..b].replace('\n', "⏎")
                    };
                    eprintln!(
                        "MISSED {} {} {}\n  was: {}\n  now: {}",
                        kind.name(),
                        p.lang,
                        p.unit,
                        around(&p.target),
                        around(&faulty)
                    );
                }
                if !hit {
                    out.missed.push(format!(
                        "{} {} {} {}",
                        kind.name(),
                        p.project,
                        p.lang,
                        p.unit
                    ));
                }
            }
        }
    }
    out
}
