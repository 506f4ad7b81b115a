//! Renderings named by evidence (a) and (b), and kept terms (module docs, "Classification"):
//! per tracked term and translated unit, whether the translation keeps the term, writes its
//! termbase rendering, or glosses it (`R（Term）`), with the glossed renderings cut at the word
//! starts the translations show.

use std::collections::HashMap;

use super::{Book, Terms};
use crate::qa::view::term_text;
use crate::qa::view::words::{self, Words};
use crate::termbase::term_key;

/// What one unit's translation shows of one tracked term.
#[derive(Clone, Default)]
pub(super) struct Cell {
    /// The term is written in the source script outside a gloss.
    pub(super) kept: bool,
    /// Renderings credited to the unit.
    pub(super) rendered: Vec<String>,
}

/// Per tracked term: translated unit → its [`Cell`], for the units whose source has the term.
pub(super) type Cells = Vec<HashMap<usize, Cell>>;

/// A gloss of a term in a translation: term, unit, the run before the parenthesis, and the
/// parenthesis' content.
type GlossRun = (usize, usize, String, String);

/// Evidence (a), (b) and kept terms for every kept tracked term of every translated unit.
pub(super) fn named(book: &Book, terms: &Terms) -> Cells {
    // Word boundaries with the termbase's renderings as known words; the glosses' renderings
    // are added later (`Vocabulary`).
    let termbase_words: Vec<Words> = book.words_with(
        words::known_automaton(terms.renderings.iter().flatten().map(String::as_str)).as_ref(),
    );
    let mut cells: Cells = vec![HashMap::new(); terms.tracked.len()];
    let mut gloss_runs: Vec<GlossRun> = Vec::new();
    for k in 0..terms.src_terms.len() {
        let mut scan = UnitScan::new(book, terms, k);
        for &t in terms.src_terms[k].iter().filter(|&&t| terms.keep(t)) {
            let mut cell = Cell::default();
            if let Some(r) = &terms.renderings[t]
                && book.occurs(&termbase_words, k, r) > 0
            {
                cell.rendered.push(r.clone());
            }
            for &(_, s, e) in terms.occurrences(k, t) {
                match scan.classify(t, s, e) {
                    Seen::Ignored => {}
                    Seen::Kept => cell.kept = true,
                    Seen::Glossed { run, content } => gloss_runs.push((t, k, run, content)),
                }
            }
            cells[t].insert(k, cell);
        }
    }
    drop(termbase_words);
    credit_glosses(book, &mut cells, gloss_runs);
    cells
}

/// What an occurrence of a tracked term in a translation is evidence of.
enum Seen {
    /// Nothing: inside another entry's rendering, a URL, a literal label, or a gloss of
    /// something else.
    Ignored,
    /// The term kept in the source language.
    Kept,
    /// A gloss `R（Term）`: `run` is the text before the parenthesis, `content` its content.
    Glossed { run: String, content: String },
}

/// One translated unit being scanned for the occurrences of its terms.
struct UnitScan<'s> {
    book: &'s Book<'s>,
    terms: &'s Terms,
    k: usize,
    /// The translation as the check reads it.
    w: &'s str,
    /// (term, start, end) of the termbase renderings of the unit's terms in `w`.
    spans: Vec<(usize, usize, usize)>,
    /// The URLs of `w`, found on first need.
    urls: Option<Vec<std::ops::Range<usize>>>,
    /// The source's clean prose in lower case, made on first need.
    src_lower: Option<String>,
}

impl<'s> UnitScan<'s> {
    fn new(book: &'s Book<'s>, terms: &'s Terms, k: usize) -> UnitScan<'s> {
        let w = book.work[k];
        let spans = terms.src_terms[k]
            .iter()
            .filter_map(|&t| terms.renderings[t].as_ref().map(|r| (t, r)))
            .flat_map(|(t, r)| {
                w.match_indices(r.as_str())
                    .map(move |(s, m)| (t, s, s + m.len()))
            })
            .collect();
        UnitScan {
            book,
            terms,
            k,
            w,
            spans,
            urls: None,
            src_lower: None,
        }
    }

    /// Classifies the occurrence `s..e` (bytes of `w`) of term `t`.
    fn classify(&mut self, t: usize, s: usize, e: usize) -> Seen {
        let (book, w, k) = (self.book, self.w, self.k);
        let ctx = book.ctx;
        if self
            .spans
            .iter()
            .any(|&(o, a, b)| o != t && a <= s && e <= b)
        {
            return Seen::Ignored;
        }
        // A URL is copied as is: a term inside it is not kept by the translator.
        let urls = self.urls.get_or_insert_with(|| url_spans(w));
        if urls.iter().any(|u| u.start <= s && e <= u.end) {
            return Seen::Ignored;
        }
        // A word the source writes in capitals (`USER:`, `ASSISTANT:`) for a term it
        // otherwise writes in lower case is a literal label, copied as is.
        let surface = &w[s..e];
        if !book.fold
            && surface.chars().any(char::is_alphabetic)
            && !surface.chars().any(char::is_lowercase)
            && self.terms.tracked[t].term.chars().any(char::is_lowercase)
            && book.tu[k].0.src_prose().contains(surface)
        {
            return Seen::Ignored;
        }
        let same_script = ctx.source_lang.script == ctx.target_lang.script;
        let src_lower = &mut self.src_lower;
        let glossed = term_text::enclosing_paren(w, s, e, &ctx.source_lang).and_then(|p| {
            if same_script {
                let src = src_lower.get_or_insert_with(|| book.tu[k].0.src_prose().to_lowercase());
                if term_text::parenthesized_in(src, &p.content, &ctx.source_lang) {
                    return None;
                }
            }
            let (_, run) = term_text::run_before(w, p.open, &ctx.target_lang, Some(&p.content))?;
            Some((p, run))
        });
        match glossed {
            Some((p, run)) if term_key(&p.content) == term_key(&w[s..e]) => Seen::Glossed {
                run,
                content: p.content,
            },
            Some(_) => Seen::Ignored,
            None => Seen::Kept,
        }
    }
}

/// Credits each gloss's rendering to its unit, cut with the word starts the translations show.
fn credit_glosses(book: &Book, cells: &mut Cells, gloss_runs: Vec<GlossRun>) {
    let target = &book.ctx.target_lang;
    let boundaries = (term_text::unspaced(target) && !gloss_runs.is_empty()).then(|| {
        term_text::Boundaries::new(gloss_runs.iter().map(|g| g.2.as_str()), &book.work, target)
    });
    for (t, k, run, content) in gloss_runs {
        let r = term_text::finish(&run, Some(&content), target, boundaries.as_ref());
        let cell = cells[t].get_mut(&k).expect("cell");
        if !cell.rendered.contains(&r) {
            cell.rendered.push(r);
        }
    }
}

/// Consolidates renderings cut too long (each becomes the shortest known rendering it ends
/// with) and returns the known renderings of each term.
pub(super) fn consolidate(cells: &mut Cells) -> Vec<Vec<String>> {
    let mut known: Vec<Vec<String>> = vec![Vec::new(); cells.len()];
    for (t, by_unit) in cells.iter_mut().enumerate() {
        let mut all: Vec<String> = by_unit.values().flat_map(|c| c.rendered.clone()).collect();
        all.sort();
        all.dedup();
        let refs: Vec<&str> = all.iter().map(String::as_str).collect();
        for c in by_unit.values_mut() {
            for r in c.rendered.iter_mut() {
                *r = term_text::shortest_known_suffix(r, &refs);
            }
            c.rendered.sort();
            c.rendered.dedup();
        }
        let mut k: Vec<String> = all
            .iter()
            .map(|r| term_text::shortest_known_suffix(r, &refs))
            .collect();
        k.sort();
        k.dedup();
        known[t] = k;
    }
    known
}

/// Byte ranges of the URLs in `text`: `scheme://…` or `www.…` up to the next whitespace or
/// non-ASCII character, wherever they start (a Chinese translation writes `。https://…`
/// with no space, which [`crate::book::markdown::protected_spans`] does not take for a URL).
pub(super) fn url_spans(text: &str) -> Vec<std::ops::Range<usize>> {
    let b = text.as_bytes();
    let mut out: Vec<std::ops::Range<usize>> = Vec::new();
    let end_of = |from: usize| {
        text[from..]
            .find(|c: char| c.is_whitespace() || !c.is_ascii() || c == '<' || c == '>')
            .map_or(text.len(), |e| from + e)
    };
    for (i, _) in text.match_indices("://") {
        let mut start = i;
        while start > 0 && b[start - 1].is_ascii_alphabetic() {
            start -= 1;
        }
        if start < i {
            out.push(start..end_of(i));
        }
    }
    for (i, _) in text.match_indices("www.") {
        if !out.iter().any(|r| r.contains(&i)) {
            out.push(i..end_of(i));
        }
    }
    out
}
