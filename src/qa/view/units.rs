//! The book's units as the book-level checks read them: each unit's source and translation
//! ([`UnitText`]), each chapter's written output ([`ChapterText`]), and every unit parsed once
//! ([`Parsed`]) so that no check parses a text again.

use crate::qa::{Doc, Finding};

/// One unit of the campaign: its source and its translation, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnitText<'a> {
    pub unit: &'a str,
    pub chapter: &'a str,
    pub source: &'a str,
    pub target: Option<&'a str>,
}

/// One chapter: the written output file, to compare with its units joined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChapterText<'a> {
    pub chapter: &'a str,
    pub output: Option<&'a str>,
}

/// A unit parsed once: the texts, their [`Doc`]s and clean prose.
///
/// The two `Doc`s keep only what the campaign-level checks read ([`Doc::for_campaign`]:
/// prose, headings, display math, links and footnote definitions): every unit of the book is
/// parsed at once here, and the whole `Doc`s (code, HTML, inline code, block outline) of a
/// 10x book took 114 MB.
#[derive(Debug, Clone)]
pub struct Parsed<'a> {
    pub unit: &'a str,
    pub chapter: &'a str,
    pub source: &'a str,
    pub target: Option<&'a str>,
    /// The source's document for campaign checks ([`Doc::for_campaign`]: its prose is the
    /// clean prose).
    pub src: Doc,
    pub tgt: Option<Doc>,
}

impl<'a> Parsed<'a> {
    pub fn new(u: &UnitText<'a>) -> Parsed<'a> {
        let src = Doc::parse(u.source).for_campaign();
        let tgt = u.target.map(|t| Doc::parse(t).for_campaign());
        Parsed {
            unit: u.unit,
            chapter: u.chapter,
            source: u.source,
            target: u.target,
            src,
            tgt,
        }
    }

    /// The source's clean prose ([`Doc::clean_prose`]).
    pub fn src_prose(&self) -> &str {
        &self.src.prose
    }

    /// The translation's clean prose, `None` for a unit without one.
    pub fn tgt_prose(&self) -> Option<&str> {
        self.tgt.as_ref().map(|d| d.prose.as_str())
    }

    /// Parses every unit.
    pub fn all(units: &[UnitText<'a>]) -> Vec<Parsed<'a>> {
        units.iter().map(Parsed::new).collect()
    }

    /// Fills in the unit and chapter of a finding.
    pub(crate) fn locate(&self, mut f: Finding) -> Finding {
        f.unit = self.unit.to_string();
        f.chapter = self.chapter.to_string();
        f
    }
}
