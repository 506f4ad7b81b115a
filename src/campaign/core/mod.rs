//! The campaign's core: what a campaign is and how its facts are kept. Nothing here imports
//! [`super::ops`]; the operations build on these modules, never the other way round.
//!
//! - [`Campaign`] (this file): the plan plus everything read from disk once: chapters, units,
//!   house-style termbase, guide, and the fingerprint over them ([`fingerprint`]).
//! - [`store`]: the state directory (atomic result files, append-only journal, lock).
//! - [`state`]: the in-memory view rebuilt from the journal and result files.
//! - [`manager`]: the state machine (`next_actions`) and the Manager's compact context.
//! - [`commit`]: the one write protocol (result file, journal line, state) every writer uses.
//! - [`call_key`], [`pieces`], [`judgment`]: the keys, split plans and verdict records results
//!   are filed under.
//! - [`edits`], [`mark_review`], [`verdict`], [`source_targets`]: editors' hand edits and
//!   marks, and the per-unit verdict every report and gate reads.
//! - [`summary`]: the campaign's status and summary, the one vocabulary of every command.

pub mod blocks;
pub mod call_key;
pub mod commit;
pub mod edits;
pub mod fingerprint;
pub mod judgment;
pub mod manager;
pub mod mark_review;
pub mod pieces;
pub mod reuse;
pub mod source_targets;
pub mod state;
pub mod store;
pub mod summary;
pub mod verdict;

use std::collections::HashMap;

use anyhow::Context;

use crate::book::{Chapter, Unit};
use crate::config::Plan;
use crate::exit::UsageError;
use crate::termbase::{self, Termbase};

pub use call_key::CallKey;
pub use fingerprint::{ConfigPrint, Manifest};

/// One house-style glossary file as read: its path relative to the campaign file, the sha256
/// of its bytes (hex) and its entries (any origin; they become house style).
#[derive(Debug, Clone)]
pub struct SourceGlossary {
    pub rel: String,
    pub sha256: String,
    pub entries: Vec<termbase::Entry>,
}

/// A campaign's inputs once read, before segmentation (see [`Campaign::from_sources`]).
#[derive(Debug, Clone, Default)]
pub struct Sources {
    /// The chapters in book order.
    pub chapters: Vec<Chapter>,
    /// House-style glossaries, in the campaign file's order.
    pub glossaries: Vec<SourceGlossary>,
    /// The translation guide text (the campaign's or the built-in default).
    pub guide: String,
    /// The translation memory (empty without).
    pub memory: crate::interchange::memory::Memory,
}

/// A campaign's inputs, loaded and segmented once.
#[derive(Debug, Clone)]
pub struct Campaign {
    pub plan: Plan,
    pub chapters: Vec<Chapter>,
    /// All units in book order (chapter order, then unit index).
    pub units: Vec<Unit>,
    /// House-style entries from the campaign's glossary files (mandatory).
    pub house: Termbase,
    /// The translation guide text (the campaign's `guide` file or the built-in default).
    pub guide: String,
    /// The translation memory from the campaign's `memory` TMX files (empty without).
    pub memory: crate::interchange::memory::Memory,
    /// The blocks seeded from existing human translations (campaign key `seed`, and the
    /// `memory` TMX files block by block): see [`crate::interchange::seed`].
    pub seeds: crate::interchange::seed::Seeds,
    pub manifest: Manifest,
    /// sha256 over [`Manifest`] (hex): this version of the book and settings.
    pub fingerprint: String,
    /// The configuration every request depends on; its sha256 names the state directory.
    pub config: ConfigPrint,
    chapter_index: HashMap<String, usize>,
    /// Term candidates of the whole book (computed once, on first use).
    candidates: std::sync::OnceLock<Vec<crate::termbase::candidates::Candidate>>,
    unit_index: HashMap<String, usize>,
    /// Chapter key → the range of its units in `units` (units are segmented chapter by
    /// chapter, so each chapter's units are contiguous): [`Campaign::units_of`] walks one
    /// chapter, not the whole book, so a step's cost does not grow with the book.
    chapter_units: HashMap<String, std::ops::Range<usize>>,
    /// The memo of every QA context this campaign builds ([`Campaign::qa_context`]), so the
    /// Manager's rounds, the verdict and the report reuse one another's QA work.
    qa_cache: crate::qa::QaCache,
    /// The source heading ids the translation keeps (computed once, on first use; `None`
    /// unless the book is a site whose tool reads explicit ids): see
    /// [`crate::book::anchors::HeadingIds`].
    heading_ids: std::sync::OnceLock<Option<std::sync::Arc<crate::book::anchors::HeadingIds>>>,
    site_book: std::sync::OnceLock<Option<std::sync::Arc<crate::qa::book::site_links::SiteBook>>>,
    /// Chapter key → the labels its link reference definitions define (computed once, on
    /// first use): see [`Campaign::chapter_labels`].
    chapter_labels: std::sync::OnceLock<HashMap<String, std::collections::HashSet<String>>>,
    /// Token counter with the memo of this campaign's counts (see [`crate::tokens::Counter`]).
    tokens: crate::tokens::Counter,
    /// The last brief split for prompts, with the text it was split from
    /// ([`Campaign::brief_parts`]): one split per brief, not one per request.
    brief_parts: BriefPartsMemo,
}

/// The memo of [`Campaign::brief_parts`]: the brief text and its split (shared by clones).
type BriefPartsMemo = std::sync::Arc<
    std::sync::Mutex<
        Option<(
            String,
            std::sync::Arc<crate::agents::brief_parts::BriefParts>,
        )>,
    >,
>;

impl Campaign {
    /// Reads chapters, glossaries and guide, segments the chapters and computes the fingerprint.
    ///
    /// Errors ([`UsageError`], exit 2): a chapter or glossary that cannot be read, is not UTF-8
    /// or is malformed, naming the file (and line) and the remedy; a house-style term given two
    /// different renderings; in a real (non-pseudo) campaign, a glossary or memory file that
    /// carries the rehearsal mark ([`crate::interchange::rehearsal`]). Memory entries that look
    /// like pseudo text give a warning on stderr.
    pub fn load(plan: Plan) -> anyhow::Result<Campaign> {
        let mut chapters = Vec::new();
        for (i, rel) in plan.chapters.iter().enumerate() {
            let mut ch = Chapter::load(&plan.campaign_dir, rel)
                .map_err(|e| UsageError::new(e.to_string()))?;
            // A site's chapters keep their folders: the key and the output path come from the
            // layout (see `crate::book::site::Page`).
            if let Some(page) = plan.site.as_ref().and_then(|s| s.pages.get(i)) {
                ch.key = page.key.clone();
                ch.file_name = page.out.clone();
            }
            chapters.push(ch);
        }
        if let Some(site) = plan.site.as_ref().filter(|s| s.has_titles()) {
            chapters.push(titles_chapter(site)?);
        }
        let mut glossaries = Vec::new();
        for rel in &plan.glossaries {
            let path = plan.campaign_dir.join(rel);
            // CSV, TSV or TBX, by extension or content; every entry is house style.
            let entries =
                crate::interchange::load_glossary(&path, rel, &plan.source_lang, &plan.target_lang)
                    .map_err(|e| UsageError::new(format!("glossary {e}")))?;
            let bytes = std::fs::read(&path).with_context(|| format!("reading glossary {rel}"))?;
            if !plan.is_rehearsal()
                && crate::interchange::rehearsal::is_marked(
                    crate::interchange::Format::detect(&path, &bytes),
                    &bytes,
                )
            {
                return Err(UsageError::new(crate::interchange::rehearsal::refusal(
                    &format!("glossary {rel}"),
                    "a glossary",
                    &plan.campaign_file.display().to_string(),
                    &format!(
                        "Remove it from `glossaries` in {}.",
                        plan.campaign_file.display()
                    ),
                ))
                .into());
            }
            glossaries.push(SourceGlossary {
                rel: rel.clone(),
                sha256: crate::util::sha256_hex(&bytes),
                entries,
            });
        }
        let memory_files: Vec<(std::path::PathBuf, &str)> = plan
            .memory
            .iter()
            .map(|rel| (plan.campaign_dir.join(rel), rel.as_str()))
            .collect();
        let memory = crate::interchange::memory::Memory::load(
            &memory_files
                .iter()
                .map(|(p, r)| (p.as_path(), *r))
                .collect::<Vec<_>>(),
            &plan.source_lang,
            &plan.target_lang,
        )
        .map_err(|e| UsageError::new(format!("translation memory {e}")))?;
        if !plan.is_rehearsal() {
            // A rehearsal's memory would fill every unit with pseudo text.
            if let Some(file) = memory.rehearsal_files().first() {
                return Err(UsageError::new(crate::interchange::rehearsal::refusal(
                    &format!("translation memory {file}"),
                    "a translation memory",
                    &plan.campaign_file.display().to_string(),
                    &format!(
                        "Remove it from `memory` in {}.",
                        plan.campaign_file.display()
                    ),
                ))
                .into());
            }
            let suspect = memory.pseudo_looking();
            if let Some(first) = suspect.first() {
                eprintln!(
                    "warning: translation memory {}: {} stored translation(s) look like pseudo text from a rehearsal (e.g. unit {}), though the file carries no rehearsal mark; units matching them would get pseudo text. Check the file, or remove it from `memory`",
                    first.file,
                    suspect.len(),
                    first.id
                );
            }
        }
        let guide = match &plan.guide {
            Some(rel) => std::fs::read_to_string(plan.campaign_dir.join(rel)).map_err(|e| {
                UsageError::new(format!(
                    "cannot read the translation guide {rel}: {e}. Fix `guide` in {}",
                    plan.campaign_file.display()
                ))
            })?,
            None => crate::agents::translation::default_guide(&plan.target_lang),
        };
        let mut c = Campaign::from_sources(
            plan,
            Sources {
                chapters,
                glossaries,
                guide,
                memory,
            },
        )?;
        c.seeds = c.load_seeds()?;
        Ok(c)
    }

    /// Reads the campaign's seeds (`seed`: PO, TMX, XLIFF files and translated folders, in
    /// order; then the `memory` TMX files, block by block) against this version of the book.
    ///
    /// Errors ([`UsageError`]): a seed that cannot be read or parsed, naming it and the
    /// remedy.
    fn load_seeds(&self) -> anyhow::Result<crate::interchange::seed::Seeds> {
        use crate::interchange::{Format, seed};
        let mut seeds = seed::Seeds::default();
        if self.plan.seed.is_empty() && self.memory.is_empty() {
            return Ok(seeds);
        }
        let blocks: Vec<Vec<&str>> = self
            .chapters
            .iter()
            .map(|ch| {
                self.units_of(&ch.key)
                    .filter(|u| u.kind.needs_translation())
                    .flat_map(|u| blocks::cores(self.source_text(u)))
                    .filter(|b| pieces::needs_model(b))
                    .collect()
            })
            .collect();
        let root = common_dir(self.chapters.iter().map(|ch| ch.rel_path.as_str()));
        let rels: Vec<String> = self
            .chapters
            .iter()
            .map(|ch| ch.rel_path[root.len()..].to_string())
            .collect();
        let chapters: Vec<seed::SeedChapter> = self
            .chapters
            .iter()
            .zip(&blocks)
            .zip(&rels)
            .map(|((ch, b), rel)| seed::SeedChapter {
                rel_path: rel,
                text: &ch.text,
                blocks: b,
                summary: ch.rel_path.ends_with("SUMMARY.md"),
            })
            .collect();
        let shown = self.plan.campaign_file.display().to_string();
        let bad = |rel: &str, e: &dyn std::fmt::Display| {
            UsageError::new(format!(
                "seed {rel}: {e}. Fix the file, or remove it from `seed` in {shown}"
            ))
        };
        for rel in &self.plan.seed {
            let path = self.plan.campaign_dir.join(rel);
            if path.is_dir() {
                let read = |r: &str| std::fs::read_to_string(path.join(r)).ok();
                seeds.add_folder(rel, &chapters, &read);
                continue;
            }
            let bytes = std::fs::read(&path).map_err(|e| bad(rel, &e))?;
            let text = crate::interchange::utf8(&bytes, rel).map_err(|e| bad(rel, &e))?;
            match Format::detect(&path, &bytes) {
                Format::Po => {
                    let messages =
                        crate::interchange::po::read(text, rel).map_err(|e| bad(rel, &e))?;
                    seeds.add_po(rel, &chapters, &messages);
                }
                Format::Tmx => {
                    let pairs = crate::interchange::tmx::read(
                        text,
                        rel,
                        &self.plan.source_lang,
                        &self.plan.target_lang,
                    )
                    .map_err(|e| bad(rel, &e))?;
                    let pairs: Vec<(String, String)> =
                        pairs.into_iter().map(|p| (p.source, p.target)).collect();
                    seeds.add_pairs(rel, "tmx", &chapters, &pairs);
                }
                f @ (Format::Xliff | Format::Xliff12) => {
                    let units = if f == Format::Xliff {
                        crate::interchange::xliff::read(text, rel)
                    } else {
                        crate::interchange::xliff12::read(text, rel)
                    }
                    .map_err(|e| bad(rel, &e))?;
                    let pairs: Vec<(String, String)> = units
                        .into_iter()
                        .filter_map(|u| Some((u.source, u.target?)))
                        .collect();
                    seeds.add_pairs(rel, "xliff", &chapters, &pairs);
                }
                _ => {
                    return Err(bad(
                        rel,
                        &"is not a PO, TMX or XLIFF file nor a folder; a seed is an existing translation",
                    )
                    .into());
                }
            }
        }
        if !self.memory.is_empty() {
            let pairs: Vec<(String, String)> = self.memory.pairs();
            seeds.add_pairs("memory", "tmx", &chapters, &pairs);
        }
        Ok(seeds)
    }

    /// A campaign built from `chapters` (path relative to the campaign file, Markdown text)
    /// without touching the disk: no house style, no memory, the built-in guide. The plan's
    /// `chapters` list is set to the given paths. Used by tests of the Manager; it shares
    /// [`Campaign::from_sources`] with [`Campaign::load`].
    ///
    /// Errors ([`UsageError`]): a chapter text with a NUL byte.
    pub fn in_memory(mut plan: Plan, chapters: Vec<(String, String)>) -> anyhow::Result<Campaign> {
        plan.chapters = chapters.iter().map(|(rel, _)| rel.clone()).collect();
        plan.glossaries.clear();
        plan.memory.clear();
        plan.guide = None;
        let chapters = chapters
            .into_iter()
            .map(|(rel, text)| {
                Chapter::from_bytes(&rel, text.into_bytes())
                    .map_err(|e| UsageError::new(e.to_string()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let guide = crate::agents::translation::default_guide(&plan.target_lang);
        Campaign::from_sources(
            plan,
            Sources {
                chapters,
                glossaries: Vec::new(),
                guide,
                memory: Default::default(),
            },
        )
    }

    /// Builds the campaign from inputs already read ([`Sources`]): checks house style (one
    /// rendering per term), segments the chapters with `plan.max_unit_chars`, and computes
    /// the manifest, fingerprint and indexes. The one path after the files are read, shared
    /// by [`Campaign::load`] and [`Campaign::in_memory`].
    ///
    /// Errors ([`UsageError`], exit 2): a house-style term given two different renderings, in
    /// one glossary file or two, naming both files and the remedy.
    pub fn from_sources(plan: Plan, sources: Sources) -> anyhow::Result<Campaign> {
        let Sources {
            chapters,
            glossaries,
            guide,
            memory,
        } = sources;
        let mut house_entries = Vec::new();
        let mut house_targets: std::collections::HashMap<String, (String, String)> =
            std::collections::HashMap::new();
        let mut glossary_hashes = Vec::new();
        for SourceGlossary {
            rel,
            sha256,
            entries,
        } in glossaries
        {
            glossary_hashes.push((rel.clone(), sha256));
            // A house-style term has one rendering: two different ones (in one file or two)
            // would make the glossary QA check fail whatever the translator does.
            for e in &entries {
                let key = termbase::term_key(&e.source);
                match house_targets.get(&key) {
                    Some((target, file))
                        if termbase::term_key(target) != termbase::term_key(&e.target) =>
                    {
                        return Err(UsageError::new(format!(
                            "glossary {rel}: `{}` is rendered `{}` here but `{target}` in {file}; a house-style term takes one rendering: keep one row (list the other rendering in the `forbidden` column if QA should flag it)",
                            e.source.trim(),
                            e.target.trim()
                        ))
                        .into());
                    }
                    Some(_) => {}
                    None => {
                        house_targets.insert(key, (e.target.clone(), rel.clone()));
                    }
                }
            }
            house_entries.extend(entries.into_iter().map(|e| termbase::Entry {
                origin: termbase::Origin::HouseStyle,
                ..e
            }));
        }
        let house = Termbase::from_entries(house_entries);
        let mut units = Vec::new();
        for ch in &chapters {
            units.extend(ch.segment(plan.max_unit_chars));
        }
        let manifest = Manifest::new(&plan, &chapters, &units, &glossary_hashes, &house, &guide);
        let fingerprint = manifest.fingerprint();
        let config = ConfigPrint::of(&manifest);
        let chapter_index = chapters
            .iter()
            .enumerate()
            .map(|(i, c)| (c.key.clone(), i))
            .collect();
        let unit_index = units
            .iter()
            .enumerate()
            .map(|(i, u)| (u.id.clone(), i))
            .collect();
        let mut chapter_units: HashMap<String, std::ops::Range<usize>> = HashMap::new();
        for (i, u) in units.iter().enumerate() {
            chapter_units
                .entry(u.chapter.clone())
                .and_modify(|r| r.end = i + 1)
                .or_insert(i..i + 1);
        }
        Ok(Campaign {
            plan,
            chapters,
            units,
            house,
            guide,
            memory,
            seeds: Default::default(),
            manifest,
            fingerprint,
            config,
            chapter_index,
            candidates: Default::default(),
            unit_index,
            chapter_units,
            qa_cache: Default::default(),
            heading_ids: Default::default(),
            site_book: Default::default(),
            chapter_labels: Default::default(),
            tokens: Default::default(),
            brief_parts: Default::default(),
        })
    }

    /// Term candidates for the Glossary agent over the whole book, best first: the book's top
    /// candidates by C-value, plus the best few of every chapter so that each chapter's own
    /// terms are covered (see [`crate::termbase::candidates::candidates`]). How many scales with
    /// the book: 4 per unit to translate, between 60 and 400.
    pub fn candidates(&self) -> &[crate::termbase::candidates::Candidate] {
        self.candidates.get_or_init(|| {
            use crate::termbase::candidates;
            let max = (self.prose_units().count() * 4).clamp(60, 400);
            let texts: Vec<&str> = self.chapters.iter().map(|c| &*c.text).collect();
            let mut all = candidates::candidates(&texts, &self.house, max);
            let per_chapter = 8;
            for ch in &self.chapters {
                for cand in candidates::candidates(&[&*ch.text], &self.house, per_chapter) {
                    if !all.iter().any(|c| {
                        crate::termbase::term_key(&c.term) == crate::termbase::term_key(&cand.term)
                    }) {
                        all.push(cand);
                    }
                }
            }
            all
        })
    }

    /// The chapter with key `key`.
    pub fn chapter(&self, key: &str) -> &Chapter {
        &self.chapters[self.chapter_index[key]]
    }

    /// The unit with id `id`, if any.
    pub fn unit(&self, id: &str) -> Option<&Unit> {
        self.unit_index.get(id).map(|&i| &self.units[i])
    }

    /// A unit's source text.
    pub fn source_text(&self, u: &Unit) -> &str {
        u.text(&self.chapter(&u.chapter).text)
    }

    /// The range of [`Campaign::units`] indices that holds chapter `key`'s units (empty for an
    /// unknown key). The units are in book order, so each chapter's are one run of indices.
    pub fn chapter_range(&self, key: &str) -> std::ops::Range<usize> {
        self.chapter_units
            .get(key)
            .filter(|r| r.end <= self.units.len())
            .cloned()
            .unwrap_or(0..0)
    }

    /// Units that go to the Translation agent.
    pub fn prose_units(&self) -> impl Iterator<Item = &Unit> {
        self.units.iter().filter(|u| u.kind.needs_translation())
    }

    /// The units of one chapter, in order.
    ///
    /// Walks the chapter's own range of units (see `chapter_units`), still filtered by
    /// chapter key, so the result is the same as filtering the whole book.
    pub fn units_of<'a>(&'a self, chapter: &'a str) -> impl Iterator<Item = &'a Unit> + 'a {
        self.units[self.chapter_range(chapter)]
            .iter()
            .filter(move |u| u.chapter == chapter)
    }

    /// The index in [`Campaign::units`] of the unit with id `id`, if any.
    pub fn unit_position(&self, id: &str) -> Option<usize> {
        self.unit_index.get(id).copied()
    }

    /// The translation setup shared by every Translation request.
    pub fn translation_setup(&self) -> crate::agents::translation::Setup {
        self.translation_setup_with(String::new())
    }

    /// The translation setup with the book-level part of the book brief `brief` (the whole
    /// brief as recorded; its chapter synopses are left out, see
    /// [`crate::agents::brief_parts`]) and no chapter synopsis: what every Translation request
    /// of the campaign shares. [`Campaign::translation_setup_for`] adds a unit's chapter.
    ///
    /// A book of one chapter keeps the whole brief in the system message, as before the split:
    /// its book part and its one synopsis are the whole brief, bounded already, and every unit
    /// shares all of it (so the prompts of one-chapter campaigns, and the recorded fixtures of
    /// the tests, do not change).
    pub fn translation_setup_with(&self, brief: String) -> crate::agents::translation::Setup {
        let book = if brief.trim().is_empty() || self.chapters.len() <= 1 {
            brief
        } else {
            self.brief_parts(&brief).book.clone()
        };
        crate::agents::translation::Setup {
            source: self.plan.source_lang.clone(),
            target: self.plan.target_lang.clone(),
            guide: self.guide.clone(),
            review_marker: self.plan.review_marker.clone(),
            brief: book,
            code_comments: self.plan.code_comments,
            chapter_brief: String::new(),
            example: if self.plan.translation_example {
                crate::agents::translation::example_pair(
                    &self.plan.source_lang,
                    &self.plan.target_lang,
                )
            } else {
                None
            },
        }
    }

    /// The translation setup for a unit of chapter `chapter` (key): the book-level part of
    /// `brief` (the whole brief as recorded) and that chapter's synopsis, so that the brief's
    /// share of the prompt does not grow with the book. An unknown chapter key gets
    /// no synopsis, nor does a book of one chapter (its whole brief is in the system message).
    pub fn translation_setup_for(
        &self,
        brief: &str,
        chapter: &str,
    ) -> crate::agents::translation::Setup {
        let mut setup = self.translation_setup_with(brief.to_string());
        if !brief.trim().is_empty()
            && self.chapters.len() > 1
            && let Some(&i) = self.chapter_index.get(chapter)
        {
            setup.chapter_brief = self
                .brief_parts(brief)
                .synopsis(i)
                .unwrap_or_default()
                .to_string();
        }
        setup
    }

    /// The brief `brief` split for prompts over this campaign's chapters
    /// ([`crate::agents::brief_parts::BriefParts::split`]), memoised: the split of the last
    /// brief seen is kept with its text, so a campaign splits each brief once. A book part cut
    /// to its bound is reported once per split on stderr (tracing `warn`).
    pub fn brief_parts(
        &self,
        brief: &str,
    ) -> std::sync::Arc<crate::agents::brief_parts::BriefParts> {
        use crate::agents::brief_parts::{BOOK_PART_MAX_CHARS, BriefParts, ChapterRef};
        let mut memo = self.brief_parts.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((text, parts)) = memo.as_ref()
            && text == brief
        {
            return parts.clone();
        }
        let refs: Vec<ChapterRef> = self.chapters.iter().map(ChapterRef::of).collect();
        let parts = std::sync::Arc::new(BriefParts::split(brief, &refs));
        if parts.book_truncated {
            tracing::warn!(
                "the book brief's sections other than the chapter synopses are longer than {BOOK_PART_MAX_CHARS} characters; translation prompts carry their first {BOOK_PART_MAX_CHARS}. Shorten brief.md (or put per-chapter notes under `## Chapter synopses`, one list item per chapter naming its key)"
            );
        }
        *memo = Some((brief.to_string(), parts.clone()));
        parts
    }

    /// The campaign's token counter: its memo serves the budget check of every request and the
    /// plan's estimate (counts in `o200k_base` tokens, see [`crate::tokens`]).
    pub fn tokens(&self) -> &crate::tokens::Counter {
        &self.tokens
    }

    /// The QA context for this campaign with termbase `tb`.
    pub fn qa_context(&self, tb: &Termbase) -> crate::qa::QaContext {
        let mut ctx = crate::qa::QaContext::new(&self.plan.source_lang, &self.plan.target_lang, tb)
            .with_cache(self.qa_cache.clone());
        ctx.review_marker = self.plan.review_marker.clone();
        ctx.code_comments = self.plan.code_comments;
        ctx.style = self.plan.style.clone();
        ctx.pseudo_targets = self.plan.is_rehearsal();
        ctx.heading_ids = self.heading_ids();
        ctx.site_book = self.site_book();
        ctx
    }

    /// The labels (as [`crate::book::markdown::label_key`]s) the link reference definitions of
    /// chapter `key` define, so that a unit's `[label]` defined in another unit of its chapter
    /// is read as the link it is ([`crate::book::markdown::full_references`]).
    pub fn chapter_labels(&self, key: &str) -> &std::collections::HashSet<String> {
        static NONE: std::sync::OnceLock<std::collections::HashSet<String>> =
            std::sync::OnceLock::new();
        self.chapter_labels
            .get_or_init(|| {
                self.chapters
                    .iter()
                    .map(|ch| {
                        (
                            ch.key.clone(),
                            crate::book::markdown::defined_labels(&ch.text),
                        )
                    })
                    .collect()
            })
            .get(key)
            .unwrap_or_else(|| NONE.get_or_init(Default::default))
    }

    /// The source heading ids the translation keeps ([`crate::book::anchors::HeadingIds`]),
    /// for a site whose tool reads explicit heading ids; `None` otherwise.
    pub fn heading_ids(&self) -> Option<std::sync::Arc<crate::book::anchors::HeadingIds>> {
        self.heading_ids
            .get_or_init(|| {
                let site = self.plan.site.as_ref().filter(|s| s.keeps_source_ids())?;
                let chapters = self.chapters.iter().map(|ch| {
                    self.units_of(&ch.key)
                        .map(|u| self.source_text(u))
                        .collect::<Vec<&str>>()
                });
                Some(std::sync::Arc::new(
                    crate::book::anchors::HeadingIds::of_book(site.slug_rule, chapters),
                ))
            })
            .clone()
    }

    /// The site's link map and source pages for the `site_links` check, built once; `None`
    /// for a campaign without a site.
    pub fn site_book(&self) -> Option<std::sync::Arc<crate::qa::book::site_links::SiteBook>> {
        self.site_book
            .get_or_init(|| {
                let site = self.plan.site.as_ref()?;
                let map = crate::book::links::SiteMap::of(site, &self.plan.campaign_dir);
                let chapters = self.chapters.iter().map(|ch| {
                    (
                        ch.key.as_str(),
                        self.units_of(&ch.key)
                            .map(|u| self.source_text(u))
                            .collect::<Vec<&str>>(),
                    )
                });
                Some(std::sync::Arc::new(
                    crate::qa::book::site_links::SiteBook::new(map, chapters),
                ))
            })
            .clone()
    }

    /// The shares of this campaign's `max_context_tokens` each kind of request may fill (see
    /// [`crate::agents::shares`]).
    pub fn shares(&self) -> crate::agents::shares::ContextShares {
        crate::agents::shares::ContextShares::of(self.plan.max_context_tokens)
    }

    /// The state directory of this campaign's configuration: `<state_dir>/<config key>`.
    pub fn state_path(&self) -> std::path::PathBuf {
        self.plan.state_dir.join(self.config.key())
    }

    /// The fingerprint of unit `u` given the glossary termbase `tb` (see
    /// [`fingerprint::unit_fingerprint`]).
    pub fn unit_fp(&self, u: &Unit, tb: &Termbase, brief_sha256: &str) -> String {
        let text = self.source_text(u);
        fingerprint::unit_fingerprint(
            &self.manifest,
            text,
            &self.prompt_entries(tb, text),
            brief_sha256,
        )
    }

    /// The memory key of a model's translation of source block `core`
    /// ([`blocks`]): the unit fingerprint's rule applied to the block alone, so the block's
    /// glossary entries, the brief, the model and the prompt settings are part of it.
    pub fn block_key(&self, core: &str, tb: &Termbase, brief_sha256: &str) -> String {
        fingerprint::unit_fingerprint(
            &self.manifest,
            core.trim(),
            &self.prompt_entries(tb, core),
            brief_sha256,
        )
    }

    /// Read-only context for translating `u`: the end of the source text before it in its
    /// chapter, at most `context_chars` and at most a quarter of the unit's length (so the
    /// context never costs more than about 15 % extra prompt tokens), starting at a line start
    /// when possible. `None` for the first unit of a chapter or with `context_chars = 0`.
    pub fn context_for(&self, u: &Unit) -> Option<String> {
        self.context_before(&u.chapter, u.range.start, u.chars)
    }

    /// [`Campaign::context_for`] of a text of `chars` characters that starts at byte `pos` of
    /// chapter `chapter` (a unit, or a part of one sent alone).
    pub fn context_before(&self, chapter: &str, pos: usize, chars: usize) -> Option<String> {
        let limit =
            crate::agents::shares::ContextShares::neighbour_chars(self.plan.context_chars, chars);
        if limit == 0 || pos == 0 {
            return None;
        }
        let before = &self.chapter(chapter).text[..pos];
        let start = before
            .char_indices()
            .rev()
            .nth(limit.saturating_sub(1))
            .map_or(0, |(i, _)| i);
        // Start at a line start when that keeps at least half of the context, else at the next
        // word, marked with an ellipsis.
        let (start, cut) = match before[start..].find('\n') {
            Some(n) if before.len() - (start + n + 1) >= limit / 2 => (start + n + 1, false),
            _ if start == 0 => (0, false),
            _ => (
                before[start..]
                    .find(char::is_whitespace)
                    .map_or(start, |w| start + w),
                true,
            ),
        };
        let ctx = before[start..].trim();
        (!ctx.is_empty()).then(|| {
            if cut {
                format!("…{ctx}")
            } else {
                ctx.to_string()
            }
        })
    }

    /// The glossary entries a Translation prompt for `text` carries: those whose terms occur
    /// in it, or the whole termbase with `prompt_layout = "full"`.
    pub fn prompt_entries<'t>(
        &self,
        tb: &'t Termbase,
        text: &str,
    ) -> Vec<&'t crate::termbase::Entry> {
        if self.plan.full_glossary_prompt {
            let mut all: Vec<&crate::termbase::Entry> = tb.entries.iter().collect();
            all.sort_by_key(|e| crate::termbase::term_key(&e.source));
            all
        } else {
            tb.relevant_to(text)
        }
    }
}

impl Campaign {
    /// The text booktr writes for chapter `ch` given its units' final texts joined
    /// (`assembled`): the same text, except that
    /// - in an mdBook each include of a file outside the site's folder
    ///   (`{{#include ../../../examples/a.rs}}`) points at that file from the output's place
    ///   ([`crate::book::includes::rebase_outside`]); the output mirrors the site's folder one
    ///   level deeper, so only those would not resolve;
    /// - on a site that does not keep the source's heading ids, links to headings point at the
    ///   translated headings' ids (`retarget`, from [`Campaign::retarget`]).
    ///
    /// [`Campaign::read_back`] undoes both, so QA and hand-edit detection compare written files
    /// with the units as they are.
    pub fn written_text(
        &self,
        ch: &Chapter,
        assembled: String,
        retarget: Option<&crate::book::links::Retarget>,
    ) -> String {
        let text = match (retarget, self.site_book()) {
            (Some(r), Some(book)) => r.rewrite(&book.map, &ch.key, &assembled),
            _ => assembled,
        };
        match self.include_root() {
            Some((root, pattern)) => crate::book::includes::rebase_outside_with(
                pattern,
                &text,
                &self.plan.campaign_dir.join(&ch.rel_path),
                &self.plan.out_dir.join(&ch.file_name),
                &root,
            ),
            None => text,
        }
    }

    /// The units' text of a written chapter file (`written`, read from `out_dir`): the
    /// inverse of [`Campaign::written_text`] (with the same `retarget`), with a notebook read
    /// through its Markdown view (a notebook that no longer parses is returned as it is).
    pub fn read_back(
        &self,
        ch: &Chapter,
        written: String,
        retarget: Option<&crate::book::links::Retarget>,
    ) -> String {
        let text = match self.include_root() {
            Some((_, pattern)) => crate::book::includes::rebase_outside_with(
                pattern,
                &written,
                &self.plan.out_dir.join(&ch.file_name),
                &self.plan.campaign_dir.join(&ch.rel_path),
                &crate::util::normalize(&self.plan.out_dir),
            ),
            None => written,
        };
        let text = match (retarget, self.site_book()) {
            (Some(r), Some(book)) => r.restore(&book.map, &ch.key, &text),
            _ => text,
        };
        ch.output_view(&text).unwrap_or(text)
    }

    /// Where the written chapters' links to headings point, for a site whose translation does
    /// not keep the source's heading ids ([`crate::book::site::Site::keeps_source_ids`]): the
    /// heading ids of every chapter whose units all have a final text in `s`, source and
    /// translated ([`crate::book::links::Retarget`]). `None` for a campaign without a site or
    /// one that keeps the source's ids.
    pub fn retarget(
        &self,
        s: &crate::campaign::core::state::State,
    ) -> Option<crate::book::links::Retarget> {
        let site = self.plan.site.as_ref().filter(|s| !s.keeps_source_ids())?;
        let pages: Vec<(&str, String, String)> = self
            .chapters
            .iter()
            .filter_map(|ch| {
                let mut source = String::new();
                let mut target = String::new();
                for u in self.units_of(&ch.key) {
                    if u.kind.needs_translation()
                        && s.human_edit(&u.id).is_none()
                        && s.kept_translation(&u.id, u32::MAX).is_none()
                    {
                        return None;
                    }
                    source.push_str(self.source_text(u));
                    target.push_str(edits::final_str(self, s, u));
                }
                Some((ch.key.as_str(), source, target))
            })
            .collect();
        Some(crate::book::links::Retarget::new(
            site.slug_rule,
            pages.iter().map(|(k, a, b)| (*k, a.as_str(), b.as_str())),
        ))
    }

    /// The site folder of a campaign whose tool includes files by a relative path that the
    /// output must rebase when it leaves the site (mdBook's `{{#include}}`, MyST's
    /// `{include}`/`{literalinclude}` in a Jupyter Book), and the pattern of those includes.
    fn include_root(&self) -> Option<(std::path::PathBuf, &'static regex::Regex)> {
        use crate::book::site::SiteKind;
        let site = self.plan.site.as_ref()?;
        let pattern: &'static regex::Regex = match site.kind {
            SiteKind::MdBook => &crate::book::includes::MDBOOK_INCLUDE,
            SiteKind::JupyterBook => &crate::book::includes::MYST_INCLUDE,
            _ => return None,
        };
        Some((
            crate::util::normalize(&self.plan.campaign_dir.join(&site.root)),
            pattern,
        ))
    }
}

/// The chapter that carries a site's navigation titles ([`crate::book::site::Site::titles_markdown`]) through
/// translation and QA like any chapter. Its key is [`crate::book::site::TITLES_KEY`], its output
/// [`crate::book::site::TITLES_OUT`] (outside the docs folder, so the site never shows it) and its source
/// path the site's configuration file, which it is read from.
///
/// Errors: none in practice (the list is UTF-8 text without NUL bytes); a NUL byte in a title
/// is reported as a [`UsageError`].
fn titles_chapter(site: &crate::book::site::Site) -> Result<Chapter, UsageError> {
    let config = match site.kind {
        crate::book::site::SiteKind::MkDocs => "mkdocs.yml",
        crate::book::site::SiteKind::MdBook => "book.toml",
        crate::book::site::SiteKind::Docusaurus => "_category_.json",
        crate::book::site::SiteKind::JupyterBook => "_toc.yml",
    };
    let rel = if site.root == "." {
        config.to_string()
    } else {
        format!("{}/{config}", site.root)
    };
    let mut ch = Chapter::from_bytes(&rel, site.titles_markdown().into_bytes())
        .map_err(|e| UsageError::new(e.to_string()))?;
    ch.key = crate::book::site::TITLES_KEY.into();
    ch.file_name = crate::book::site::TITLES_OUT.into();
    Ok(ch)
}

/// The longest folder prefix (ending in `/`) shared by every path of `paths`: the book's root,
/// against which a translated folder's chapters are looked up. Empty when they share none.
fn common_dir<'a>(paths: impl Iterator<Item = &'a str>) -> String {
    let mut prefix: Option<String> = None;
    for p in paths {
        let dir = p.rfind('/').map_or("", |i| &p[..=i]);
        prefix = Some(match prefix {
            None => dir.to_string(),
            Some(cur) => {
                let mut end = 0;
                for (i, (a, b)) in cur.bytes().zip(dir.bytes()).enumerate() {
                    if a != b {
                        break;
                    }
                    if a == b'/' {
                        end = i + 1;
                    }
                }
                cur[..end].to_string()
            }
        });
    }
    prefix.unwrap_or_default()
}

#[cfg(test)]
mod common_dir_tests {
    use super::common_dir;

    #[test]
    fn the_book_root_is_the_folder_every_chapter_shares() {
        let paths = ["book/src/a.md", "book/src/x/b.md", "book/src/x/y/c.md"];
        assert_eq!(common_dir(paths.into_iter()), "book/src/");
        assert_eq!(common_dir(["a.md", "b.md"].into_iter()), "");
        assert_eq!(common_dir(["/c/en/a.md"].into_iter()), "/c/en/");
        // A shared name prefix is not a shared folder.
        assert_eq!(
            common_dir(["docs/en/a.md", "docs/es/b.md"].into_iter()),
            "docs/"
        );
    }
}
