//! The aligned segments of the translations and their n-gram index: the counts behind the Dice
//! association of statistical renderings (evidence (d) of the parent module's docs, "The
//! association, in detail"), and the competitive-linking test against a term's neighbours.

// FxHash for the n-gram and count maps: they are looked up once per n-gram of the book, where
// SipHash was a tenth of the check's time; their keys come from the book, not an adversary who
// could choose colliding keys.
use rustc_hash::FxHashMap;

use super::{MAX_RENDERING_CHARS, MIN_DICE, MIN_JOINT, MIN_LIFT, Tracked};
use crate::qa::Parsed;
use crate::qa::view::term_text;
use crate::qa::view::words::{self, Words};
use crate::termbase::Matcher;

/// The segments of the association for one term: `a` marks the segments whose source has the
/// term (set `A`), `excl` those left out of the contrast (the term only nested inside a longer
/// tracked term), `n_excl` how many.
#[derive(Clone, Copy)]
pub(super) struct Contrast<'a> {
    pub(super) a: &'a [bool],
    pub(super) excl: &'a [bool],
    pub(super) n_excl: usize,
}

/// Words of a term for nesting: lower case, split at non-alphanumerics, a final `s` dropped
/// (the matcher folds simple plurals).
pub(super) fn term_words(term: &str) -> Vec<String> {
    term.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| {
            let w = w.to_lowercase();
            match w.strip_suffix('s') {
                Some(stem) if stem.len() >= 3 && !stem.ends_with('s') => stem.to_string(),
                _ => w,
            }
        })
        .collect()
}

/// Per tracked term: the other tracked terms whose words it contains as a contiguous run
/// (`assistant` inside `assistant message`), sorted.
pub(super) fn nested_terms(tracked: &[Tracked]) -> Vec<Vec<usize>> {
    let words: Vec<Vec<String>> = tracked.iter().map(|t| term_words(&t.term)).collect();
    words
        .iter()
        .enumerate()
        .map(|(i, long)| {
            (0..words.len())
                .filter(|&j| {
                    let short = &words[j];
                    j != i
                        && !short.is_empty()
                        && short.len() < long.len()
                        && long.windows(short.len()).any(|w| w == &short[..])
                })
                .collect()
        })
        .collect()
}

/// The paragraphs (blank-line separated) of a text.
pub(super) fn paragraphs(text: &str) -> Vec<&str> {
    text.split("\n\n")
        .map(|p| p.trim_matches(|c: char| c == '\n' || c == '\r'))
        .filter(|p| !p.trim().is_empty())
        .collect()
}

/// The aligned segments of the translations and their n-gram → segments index, for the Dice
/// association.
#[derive(Default)]
pub(super) struct NgramIndex {
    pub(super) ids: FxHashMap<String, u32>,
    pub(super) strings: Vec<String>,
    /// Per segment: its translated unit.
    pub(super) seg_unit: Vec<u32>,
    /// Per segment: the tracked terms of its source, sorted.
    pub(super) seg_terms: Vec<Vec<usize>>,
    /// Per segment: the tracked terms found only inside a longer tracked term of its source
    /// (see [`nested_terms`]), sorted.
    pub(super) seg_nested: Vec<Vec<usize>>,
    /// Per segment: its distinct n-grams that occur in at least [`MIN_JOINT`] segments,
    /// ascending.
    pub(super) seg_ngrams: Vec<Gaps>,
    /// Per translated unit: its segments.
    pub(super) unit_segs: Vec<std::ops::Range<usize>>,
    /// Per n-gram: the segments that contain it, ascending.
    pub(super) postings: Vec<Gaps>,
    /// Source words ([`term_words`] of the segments' sources) → their numbers.
    pub(super) src_ids: FxHashMap<String, u32>,
    /// Per source word: the segments holding it.
    pub(super) src_count: Vec<u32>,
    /// Per segment: its source's words, ascending.
    pub(super) seg_src: Vec<Gaps>,
}

impl NgramIndex {
    /// Segments each translated unit into paragraph pairs when its source and translation have
    /// the same number of paragraphs (more than one), else into one segment (the clean prose of
    /// both), and indexes the n-grams of the translations' segments.
    pub(super) fn build<'w>(
        tu: &[(&'w Parsed, &'w str)],
        work: &[&'w str],
        matcher: &Matcher,
        target: &crate::lang::Lang,
        fold: bool,
        nested: &[Vec<usize>],
        known: Option<&aho_corasick::AhoCorasick>,
    ) -> NgramIndex {
        let mut builder = IndexBuilder {
            index: NgramIndex {
                unit_segs: Vec::with_capacity(tu.len()),
                ..NgramIndex::default()
            },
            occurrences: Vec::new(),
            last_seen: Vec::new(),
        };
        let segmented = term_text::unspaced(target);
        for (k, (u, _)) in tu.iter().enumerate() {
            let first = builder.index.seg_unit.len();
            for (a, b) in aligned_pairs(u, work[k], fold) {
                let mut terms: Vec<usize> = matcher.find_all(a).iter().map(|o| o.entry).collect();
                terms.sort_unstable();
                terms.dedup();
                let mut inner: Vec<usize> = terms
                    .iter()
                    .flat_map(|&t| nested[t].iter().copied())
                    .collect();
                inner.sort_unstable();
                inner.dedup();
                let grams = segment_ngrams(&b, segmented, target, known);
                builder.add_segment(k, a, terms, inner, grams);
            }
            let end = builder.index.seg_unit.len();
            builder.index.unit_segs.push(first..end);
        }
        builder.finish()
    }

    /// Whether n-gram `g` is the rendering of a neighbour of the term rather than of the term:
    /// some source word outside the term's own words (`term_words`, numbers `own`) is more
    /// strongly associated with it, by the Dice coefficient over all segments, than the term's
    /// segments `a` (set `A` of the module docs: units that only keep the term, where its
    /// rendering is absent by construction, are not the term's evidence against a rendering)
    /// are. A word that keeps the term company in many segments
    /// (`system` beside `Agent`) shares its rendering's segments with the term, but its own
    /// segments match the rendering's better. This is the test of competitive linking (a
    /// target word is linked to the source word it is most associated with; I. D. Melamed,
    /// "Models of translational equivalence among words", Computational Linguistics 26(2),
    /// 2000), applied to the one link the check is about to make.
    pub(super) fn neighbour_of(&self, g: u32, a: &[bool], own: &[u32]) -> bool {
        let segs: Vec<u32> = self.postings[g as usize].iter().collect();
        let ng = segs.len();
        let n_term = a.iter().filter(|&&x| x).count();
        if ng == 0 || n_term == 0 {
            return false;
        }
        let joint_t = segs.iter().filter(|&&s| a[s as usize]).count();
        let dice_t = 2.0 * joint_t as f64 / (ng + n_term) as f64;
        let mut joint: FxHashMap<u32, u32> = FxHashMap::default();
        for &s in &segs {
            for w in self.seg_src[s as usize].iter() {
                *joint.entry(w).or_insert(0) += 1;
            }
        }
        joint.iter().any(|(&w, &j)| {
            !own.contains(&w)
                && 2.0 * j as f64 / (ng + self.src_count[w as usize] as usize) as f64
                    > dice_t + 1e-9
        })
    }

    pub(super) fn joint(&self, g: u32, a: &[bool]) -> usize {
        self.postings[g as usize]
            .iter()
            .filter(|&k| a[k as usize])
            .count()
    }

    /// Segments holding n-gram `g`, leaving out the excluded ones.
    pub(super) fn count(&self, g: u32, c: Contrast) -> usize {
        self.postings[g as usize]
            .iter()
            .filter(|&k| !c.excl[k as usize])
            .count()
    }

    /// Dice coefficient of n-gram `g` with the segment set `c.a` of size `na`.
    pub(super) fn dice(&self, g: u32, c: Contrast, na: usize) -> f64 {
        2.0 * self.joint(g, c.a) as f64 / (na + self.count(g, c)) as f64
    }

    /// Dice of an n-gram with the segment set `c.a` (of size `na`), if it passes the guards of
    /// the module docs (all but the relative one), from its counts: `joint` segments of A hold
    /// it, `nb` segments outside the excluded ones ([`NgramIndex::joint`],
    /// [`NgramIndex::count`]).
    pub(super) fn association_of(
        &self,
        joint: usize,
        nb: usize,
        c: Contrast,
        na: usize,
    ) -> Option<f64> {
        if joint < MIN_JOINT {
            return None;
        }
        let dice = 2.0 * joint as f64 / (na + nb) as f64;
        let outside = c.a.len() - na - c.n_excl;
        let p_in = joint as f64 / na as f64;
        let p_out = (nb - joint) as f64 / outside as f64;
        (dice >= MIN_DICE && p_in >= MIN_LIFT * p_out).then_some(dice)
    }
}

/// The aligned segments of one translated unit: its paragraph pairs when source and
/// translation have the same number of paragraphs (more than one, the translation's folded to
/// lower case when `fold`), else one segment of the source's clean prose and `work` (the
/// translation's clean prose as the check reads it).
fn aligned_pairs<'w>(
    u: &'w Parsed,
    work: &'w str,
    fold: bool,
) -> Vec<(&'w str, std::borrow::Cow<'w, str>)> {
    let src = paragraphs(u.source);
    let tgt = paragraphs(u.target.unwrap_or(""));
    if src.len() == tgt.len() && src.len() > 1 {
        src.into_iter()
            .zip(tgt)
            .map(|(a, b)| {
                let b = if fold {
                    std::borrow::Cow::Owned(b.to_lowercase())
                } else {
                    std::borrow::Cow::Borrowed(b)
                };
                (a, b)
            })
            .collect()
    } else {
        vec![(u.src_prose(), std::borrow::Cow::Borrowed(work))]
    }
}

/// The distinct n-grams of one segment's translation `b`: runs of whole words where the script
/// is `segmented` (module docs, "Word boundaries"), else the script's n-grams.
fn segment_ngrams<'b>(
    b: &'b str,
    segmented: bool,
    target: &crate::lang::Lang,
    known: Option<&aho_corasick::AhoCorasick>,
) -> Vec<std::borrow::Cow<'b, str>> {
    if segmented {
        let ws = Words::new(b, known);
        let mut v: Vec<&str> = words::rendering_ngrams(b, &ws, target, MAX_RENDERING_CHARS)
            .into_iter()
            .map(|r| &b[r])
            .collect();
        v.sort_unstable();
        v.dedup();
        v.into_iter().map(std::borrow::Cow::Borrowed).collect()
    } else {
        term_text::script_ngram_slices(b, target)
    }
}

/// An [`NgramIndex`] being filled segment by segment.
struct IndexBuilder {
    index: NgramIndex,
    /// Segments per n-gram, counted first so that each posting list is allocated at its size:
    /// the lists hold one entry per (n-gram, segment) pair (millions on a long book), and
    /// lists grown by doubling carried up to as much again in spare capacity.
    occurrences: Vec<u32>,
    /// Per n-gram: 1 + the last segment that listed it. B is a set of segments (module docs):
    /// an n-gram written three times in a segment is one member of it, not three (regression
    /// test `repeated_ngrams_were_counted_as_segments`).
    last_seen: Vec<u32>,
}

impl IndexBuilder {
    /// Adds one segment of translated unit `k`: its source `a`, the tracked `terms` of that
    /// source (sorted), those found only nested in a longer one (`inner`), and the n-grams of
    /// its translation.
    fn add_segment(
        &mut self,
        k: usize,
        a: &str,
        terms: Vec<usize>,
        inner: Vec<usize>,
        grams: Vec<std::borrow::Cow<'_, str>>,
    ) {
        let seg = self.index.seg_unit.len() as u32 + 1;
        let src = self.source_words(a);
        self.index.seg_src.push(src);
        let mut mine = Vec::new();
        for g in grams {
            let id = self.ngram_id(g);
            if self.last_seen[id as usize] == seg {
                continue;
            }
            self.last_seen[id as usize] = seg;
            self.occurrences[id as usize] += 1;
            mine.push(id);
        }
        mine.sort_unstable();
        self.index.seg_unit.push(k as u32);
        self.index.seg_terms.push(terms);
        self.index.seg_nested.push(inner);
        self.index.seg_ngrams.push(Gaps::of(&mine));
    }

    /// The source's words (lower case, simple plurals folded) as numbers, counted, for the
    /// test of a rendering against the neighbours of its term ([`NgramIndex::neighbour_of`]).
    fn source_words(&mut self, a: &str) -> Gaps {
        let index = &mut self.index;
        let mut src_words: Vec<u32> = term_words(a)
            .into_iter()
            .map(|w| {
                let n = index.src_ids.len() as u32;
                *index.src_ids.entry(w).or_insert_with(|| {
                    index.src_count.push(0);
                    n
                })
            })
            .collect();
        src_words.sort_unstable();
        src_words.dedup();
        for &w in &src_words {
            index.src_count[w as usize] += 1;
        }
        Gaps::of(&src_words)
    }

    /// The number of n-gram `g`, given on first sight.
    fn ngram_id(&mut self, g: std::borrow::Cow<'_, str>) -> u32 {
        if let Some(&id) = self.index.ids.get(g.as_ref()) {
            return id;
        }
        let id = self.index.strings.len() as u32;
        let g = g.into_owned();
        self.index.ids.insert(g.clone(), id);
        self.index.strings.push(g);
        self.occurrences.push(0);
        self.last_seen.push(0);
        id
    }

    /// The posting lists, and each segment's n-grams cut to those in at least [`MIN_JOINT`]
    /// segments.
    fn finish(self) -> NgramIndex {
        let mut index = self.index;
        let mut postings: Vec<GapsBuilder> = self
            .occurrences
            .iter()
            .map(|&n| GapsBuilder::with_len(n as usize))
            .collect();
        for (seg, v) in index.seg_ngrams.iter().enumerate() {
            for g in v.iter() {
                postings[g as usize].push(seg as u32);
            }
        }
        index.postings = postings.into_iter().map(GapsBuilder::finish).collect();
        for v in index.seg_ngrams.iter_mut() {
            let kept: Vec<u32> = v
                .iter()
                .filter(|&g| index.postings[g as usize].len() >= MIN_JOINT)
                .collect();
            *v = Gaps::of(&kept);
        }
        index
    }
}

/// An ascending list of `u32` (segment or n-gram numbers) stored as the LEB128 varint code of
/// its gaps: 1 byte for most entries instead of 4. The Dice index holds millions of such
/// entries on a long book (4.7 M postings and as many segment n-grams at ten times the corpus,
/// 37 MB as `Vec<u32>`, the largest part of the drift check's peak).
///
/// Hand-rolled (30 lines) rather than a compressed-bitmap crate such as `roaring`: the lists
/// are only ever walked in order, never searched or intersected, so a gap code is the smallest
/// form and needs no dependency.
#[derive(Debug, Default)]
pub(super) struct Gaps {
    bytes: Box<[u8]>,
    len: u32,
}

impl Gaps {
    /// The list of `sorted` (ascending, no repeats).
    pub(super) fn of(sorted: &[u32]) -> Gaps {
        let mut b = GapsBuilder::with_len(0);
        for &x in sorted {
            b.push(x);
        }
        b.finish()
    }

    /// Number of entries.
    pub(super) fn len(&self) -> usize {
        self.len as usize
    }

    /// The entries, ascending.
    pub(super) fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        let mut at = 0usize;
        let mut value = 0u32;
        std::iter::from_fn(move || {
            if at >= self.bytes.len() {
                return None;
            }
            let (mut gap, mut shift) = (0u32, 0);
            loop {
                let byte = self.bytes[at];
                at += 1;
                gap |= u32::from(byte & 0x7f) << shift;
                if byte & 0x80 == 0 {
                    break;
                }
                shift += 7;
            }
            value += gap;
            Some(value)
        })
    }
}

/// Builds a [`Gaps`] from entries pushed in ascending order.
struct GapsBuilder {
    bytes: Vec<u8>,
    last: u32,
    len: u32,
}

impl GapsBuilder {
    /// A builder for about `n` entries (1 byte each is reserved; more grows the buffer).
    fn with_len(n: usize) -> GapsBuilder {
        GapsBuilder {
            bytes: Vec::with_capacity(n),
            last: 0,
            len: 0,
        }
    }

    /// Appends `x`, which must be above every entry pushed so far (the first may be 0).
    fn push(&mut self, x: u32) {
        debug_assert!(self.len == 0 || x > self.last, "Gaps entries ascend");
        let mut gap = x - self.last;
        loop {
            let byte = (gap & 0x7f) as u8;
            gap >>= 7;
            if gap == 0 {
                self.bytes.push(byte);
                break;
            }
            self.bytes.push(byte | 0x80);
        }
        self.last = x;
        self.len += 1;
    }

    fn finish(self) -> Gaps {
        Gaps {
            bytes: self.bytes.into_boxed_slice(),
            len: self.len,
        }
    }
}
