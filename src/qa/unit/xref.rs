//! Cross-reference integrity: the book's numbering and its in-page links must
//! survive translation. Four checks, all `error`s unless said otherwise:
//!
//! - `xref_numbers` (per unit, [`check`]): every numbered reference of the source ("see
//!   Chapter 3", "Figure 2-4", "Table 1", "§2.4", "Section 7.1", "Equation (3)", "Listing
//!   4-1") keeps its number in the translation. The comparison is a set comparison per kind
//!   (chapter, section, figure, table, equation, listing), so word order does not matter: the
//!   target's references are read with the target language's own patterns ([`refs`]; zh
//!   `第3章`/`第三章`, `图 2-4`, `表 1`, `7.1 节`, `公式 (3)`; ja `図`, `節`; fr, de, es the
//!   usual words; a reference kept as in the source counts too). A source number absent from
//!   the whole translation is an error; present but not written as a reference of the same
//!   kind, an `info` note (the number is kept; the phrasing is the translator's choice; for a
//!   target language without patterns only the number's presence is checked). A target reference whose number the
//!   source does not contain at all is an error (a renumbered reference).
//! - `xref_targets` (book level, [`check_book`]): every reference of the translated book that
//!   resolves in the source book still resolves in the translated book. A label is defined by a
//!   caption (a prose line, image alt text or bold run that *starts* with the reference, the way
//!   books caption figures and tables), a heading that starts with it (or, for sections, a
//!   heading starting with the section number `2.4`), a `\tag{n}` in display math (equations),
//!   or, for chapters, a chapter key with that number (`chapter07`, `03-memory`). A reference
//!   that already dangles in the source is the source's business and not reported.
//! - `anchor_links` (chapter level): a link `#frag` that resolved in the source chapter still
//!   resolves in its translation. Slugs are computed the way GitHub and mdBook generate them
//!   ([`slug`]); when the source relied on a heading's implicit slug and the translated heading
//!   slugs differently, the message gives the fix: add `{#frag}` to the translated heading
//!   (pulldown-cmark, mdBook, Docusaurus and MkDocs' `attr_list` read heading attributes).
//! - `footnote_pairs` (chapter level): footnote references and definitions pair up across the
//!   units of each chapter: a label the source chapter both references and defines must not be
//!   only referenced (no definition) or only defined (no reference) in the translated chapter.
//!
//! Only translated units take part in the book- and chapter-level checks, on both sides, so a
//! campaign half done reports nothing that the remaining units may still supply. The patterns
//! are regular expressions (the `regex` crate); the numeral reader for `第三章` and the slug
//! function are hand-rolled because they are a few lines of this core check.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::LazyLock;

use regex::Regex;

use crate::lang::Lang;
use crate::qa::Parsed;
use crate::qa::view::doc::Doc;
use crate::qa::{Finding, QaContext, Severity};

/// Check name: numbers of cross-references kept per unit.
pub const NUMBERS: &str = "xref_numbers";
/// Check name: references resolve to a caption or heading of the translated book.
pub const TARGETS: &str = "xref_targets";
/// Check name: in-page `#anchor` links resolve after headings are translated.
pub const ANCHORS: &str = "anchor_links";
/// Check name: footnote references and definitions pair up per chapter.
pub const FOOTNOTES: &str = "footnote_pairs";

/// What a reference points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Chapter,
    Section,
    Figure,
    Table,
    Equation,
    Listing,
}

impl Kind {
    /// The English noun, for messages.
    pub fn noun(self) -> &'static str {
        match self {
            Kind::Chapter => "chapter",
            Kind::Section => "section",
            Kind::Figure => "figure",
            Kind::Table => "table",
            Kind::Equation => "equation",
            Kind::Listing => "listing",
        }
    }
}

/// One numbered reference found in a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XRef {
    pub kind: Kind,
    /// The number as digits, en dashes read as `-` and Chinese numerals as digits (`2-4`,
    /// `7.1`, `3`).
    pub number: String,
    /// The reference as written (`Figure 2-4`, `第三章`).
    pub text: String,
    /// Byte offset of the reference in the text searched.
    pub start: usize,
}

/// A pattern: kind, regex whose group 1 is the number, and characters that must not come
/// right before the match (CJK words such as 试图 "attempt" or 代表 "represent" end in the
/// figure or table character).
struct Pattern {
    kind: Kind,
    re: Regex,
    not_after: &'static str,
}

const NUM: &str = r"(\d+(?:[.\-–]\d+)*)";

fn pattern(kind: Kind, re: &str, not_after: &'static str) -> Pattern {
    Pattern {
        kind,
        re: Regex::new(&re.replace("{N}", NUM)).expect("valid xref pattern"),
        not_after,
    }
}

static EN: LazyLock<Vec<Pattern>> = LazyLock::new(|| {
    vec![
        pattern(Kind::Chapter, r"\b(?i:chapter|chap\.)\s*{N}", ""),
        pattern(Kind::Section, r"\b(?i:section|sec\.)\s*{N}", ""),
        pattern(Kind::Section, r"§\s*{N}", ""),
        pattern(Kind::Figure, r"\b(?:[Ff]igure|Fig\.|fig\.)\s*{N}", ""),
        pattern(Kind::Table, r"\bTable\s*{N}", ""),
        pattern(Kind::Equation, r"\b(?i:equation|eq\.)\s*\(?{N}\)?", ""),
        pattern(Kind::Listing, r"\bListing\s*{N}", ""),
    ]
});

/// Characters before 图/圖/図 that make a word rather than a figure reference.
const NOT_BEFORE_FIGURE: &str = "试意地视构企蓝插草截制绘拓框示版略";
/// Characters before 表 that make a word rather than a table reference.
const NOT_BEFORE_TABLE: &str = "代列发报时课仪手外电年价钟量图日";

static ZH: LazyLock<Vec<Pattern>> = LazyLock::new(|| {
    vec![
        pattern(
            Kind::Chapter,
            r"第\s*(\d+|[零〇一二两三四五六七八九十百]+)\s*章",
            "",
        ),
        pattern(
            Kind::Section,
            r"第\s*(\d+(?:\.\d+)*|[零〇一二两三四五六七八九十百]+)\s*[节節]",
            "",
        ),
        pattern(Kind::Section, r"{N}\s*[节節]", ""),
        pattern(Kind::Section, r"§\s*{N}", ""),
        pattern(Kind::Figure, r"[图圖図]\s*{N}", NOT_BEFORE_FIGURE),
        pattern(Kind::Table, r"表\s*{N}", NOT_BEFORE_TABLE),
        pattern(Kind::Equation, r"(?:公式|式)\s*[（(]\s*{N}\s*[）)]", ""),
        pattern(Kind::Equation, r"公式\s*{N}", ""),
        pattern(
            Kind::Listing,
            r"(?:代码清单|清单|代码)\s*(\d+(?:[.\-–]\d+)+)",
            "",
        ),
    ]
});

static FR: LazyLock<Vec<Pattern>> = LazyLock::new(|| {
    vec![
        pattern(Kind::Chapter, r"\b(?i:chapitre)\s*{N}", ""),
        pattern(Kind::Section, r"\b(?i:section)\s*{N}", ""),
        pattern(Kind::Section, r"§\s*{N}", ""),
        pattern(Kind::Figure, r"\b(?i:figure|fig\.)\s*{N}", ""),
        pattern(Kind::Table, r"\bTableau\s*{N}", ""),
        pattern(Kind::Equation, r"(?i:équation|éq\.)\s*\(?{N}\)?", ""),
        pattern(Kind::Listing, r"\b(?i:listing|listage)\s*{N}", ""),
    ]
});

static DE: LazyLock<Vec<Pattern>> = LazyLock::new(|| {
    vec![
        pattern(Kind::Chapter, r"\b(?i:kapitel|kap\.)\s*{N}", ""),
        pattern(Kind::Section, r"\b(?i:abschnitt)\s*{N}", ""),
        pattern(Kind::Section, r"§\s*{N}", ""),
        pattern(Kind::Figure, r"\b(?i:abbildung|abb\.)\s*{N}", ""),
        pattern(Kind::Table, r"\b(?:Tabelle|Tab\.)\s*{N}", ""),
        pattern(Kind::Equation, r"\b(?i:gleichung|gl\.)\s*\(?{N}\)?", ""),
        pattern(Kind::Listing, r"\bListing\s*{N}", ""),
    ]
});

static ES: LazyLock<Vec<Pattern>> = LazyLock::new(|| {
    vec![
        pattern(Kind::Chapter, r"(?i:capítulo)\s*{N}", ""),
        pattern(Kind::Section, r"(?i:sección)\s*{N}", ""),
        pattern(Kind::Section, r"§\s*{N}", ""),
        pattern(Kind::Figure, r"\b(?i:figura|fig\.)\s*{N}", ""),
        pattern(Kind::Table, r"\bTabla\s*{N}", ""),
        pattern(Kind::Equation, r"(?i:ecuación)\s*\(?{N}\)?", ""),
        pattern(Kind::Listing, r"\b(?i:listado)\s*{N}", ""),
    ]
});

/// The reference patterns of `lang` (by primary subtag), `None` for a language without any.
fn patterns(lang: &Lang) -> Option<&'static [Pattern]> {
    Some(match lang.primary().as_str() {
        "en" => &EN,
        "zh" | "ja" => &ZH,
        "fr" => &FR,
        "de" => &DE,
        "es" => &ES,
        _ => return None,
    })
}

/// Every numbered reference in `text` with the patterns of `lang`, in text order (overlapping
/// matches of several patterns keep the first found at a position). Empty for a language
/// without patterns.
pub fn refs(lang: &Lang, text: &str) -> Vec<XRef> {
    let Some(pats) = patterns(lang) else {
        return Vec::new();
    };
    let mut out: Vec<XRef> = Vec::new();
    let mut taken: Vec<std::ops::Range<usize>> = Vec::new();
    for p in pats {
        for c in p.re.captures_iter(text) {
            let (m, n) = (c.get(0).expect("match"), c.get(1).expect("group"));
            if taken.iter().any(|r| r.start < m.end() && m.start() < r.end) {
                continue;
            }
            if !p.not_after.is_empty()
                && text[..m.start()]
                    .chars()
                    .next_back()
                    .is_some_and(|ch| p.not_after.contains(ch))
            {
                continue;
            }
            let Some(number) = normalize_number(n.as_str()) else {
                continue;
            };
            taken.push(m.range());
            out.push(XRef {
                kind: p.kind,
                number,
                text: m.as_str().trim().to_string(),
                start: m.start(),
            });
        }
    }
    out.sort_by_key(|r| r.start);
    out
}

/// A number as compared: en dashes as `-`, Chinese numerals (up to 999) as digits, leading
/// zeros of each part dropped. `None` for a numeral it cannot read.
fn normalize_number(n: &str) -> Option<String> {
    if n.chars().all(|c| c.is_ascii_digit() || ".-–".contains(c)) {
        let parts: Vec<String> = n
            .replace('–', "-")
            .split_inclusive(['.', '-'])
            .map(|p| {
                let (digits, sep) = p
                    .strip_suffix(['.', '-'])
                    .map_or((p, ""), |d| (d, &p[d.len()..]));
                let d = digits.trim_start_matches('0');
                format!("{}{sep}", if d.is_empty() { "0" } else { d })
            })
            .collect();
        return Some(parts.concat());
    }
    chinese_numeral(n).map(|v| v.to_string())
}

/// The value of a Chinese numeral such as 三, 十二, 二十, 一百零五 (at most 999).
fn chinese_numeral(s: &str) -> Option<u32> {
    let val = |c: char| -> Option<u32> {
        Some(match c {
            '零' | '〇' => 0,
            '一' => 1,
            '二' | '两' => 2,
            '三' => 3,
            '四' => 4,
            '五' => 5,
            '六' => 6,
            '七' => 7,
            '八' => 8,
            '九' => 9,
            _ => return None,
        })
    };
    let (mut total, mut cur) = (0u32, None::<u32>);
    for c in s.chars() {
        match c {
            '百' => {
                total += cur.unwrap_or(1) * 100;
                cur = None;
            }
            '十' => {
                total += cur.unwrap_or(1) * 10;
                cur = None;
            }
            c => cur = Some(val(c)?),
        }
    }
    let v = total + cur.unwrap_or(0);
    (v > 0).then_some(v)
}

/// Number tokens (`3`, `2-4`, `7.1`) anywhere in `text`, normalized as [`refs`] does.
fn number_tokens(text: &str) -> BTreeSet<String> {
    static RE: LazyLock<Regex> = LazyLock::new(|| Regex::new(NUM).expect("valid"));
    let mut out = BTreeSet::new();
    for m in RE.find_iter(text) {
        if let Some(n) = normalize_number(m.as_str()) {
            out.insert(n);
        }
    }
    out
}

/// `xref_numbers` for one unit (see the module docs).
pub fn check(ctx: &QaContext, src: &Doc, tgt: &Doc, _source: &str, _target: &str) -> Vec<Finding> {
    let (sp, tp) = (src.clean_prose(), tgt.clean_prose());
    let s = refs(&ctx.source_lang, &sp);
    let t = target_refs(ctx, &tp);
    if s.is_empty() && t.is_empty() {
        return Vec::new();
    }
    let has_patterns = patterns(&ctx.target_lang).is_some();
    let mut tnums = number_tokens(&tp);
    tnums.extend(t.iter().map(|r| r.number.clone()));
    let snums = number_tokens(&sp);
    let tset: BTreeSet<(Kind, &str)> = t.iter().map(|r| (r.kind, r.number.as_str())).collect();
    let sset: BTreeSet<(Kind, &str)> = s.iter().map(|r| (r.kind, r.number.as_str())).collect();
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for r in &s {
        if !seen.insert((r.kind, r.number.as_str())) || tset.contains(&(r.kind, &*r.number)) {
            continue;
        }
        let changed: Vec<&XRef> = t
            .iter()
            .filter(|x| x.kind == r.kind && !sset.contains(&(x.kind, x.number.as_str())))
            .collect();
        if !tnums.contains(&r.number) {
            let also = if changed.is_empty() {
                String::new()
            } else {
                format!(
                    " (the translation refers to {} instead)",
                    changed
                        .iter()
                        .map(|x| format!("`{}`", x.text))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            out.push(Finding::new(
                NUMBERS,
                Severity::Error,
                format!(
                    "cross-reference `{}` lost its number {}{also}; keep the {} number in the translation",
                    r.text,
                    r.number,
                    r.kind.noun()
                ),
                &r.text,
                &changed.iter().map(|x| x.text.as_str()).collect::<Vec<_>>().join(" "),
            ));
        } else if has_patterns {
            out.push(Finding::new(
                NUMBERS,
                Severity::Info,
                format!(
                    "cross-reference `{}`: the number {} is in the translation but not as a {} reference; write it as one (e.g. {})",
                    r.text,
                    r.number,
                    r.kind.noun(),
                    example(&ctx.target_lang, r.kind, &r.number)
                ),
                &r.text,
                "",
            ));
        }
    }
    let mut extra_seen = BTreeSet::new();
    for x in &t {
        if sset.contains(&(x.kind, x.number.as_str()))
            || snums.contains(&x.number)
            || !extra_seen.insert((x.kind, x.number.as_str()))
        {
            continue;
        }
        out.push(Finding::new(
            NUMBERS,
            Severity::Error,
            format!(
                "cross-reference `{}` has a number ({}) the source does not contain; keep the source's {} numbers",
                x.text,
                x.number,
                x.kind.noun()
            ),
            "",
            &x.text,
        ));
    }
    out
}

/// The references of a translation: read with the target language's patterns and with the
/// source language's (a reference kept as in the source, `Figure 2-4` in a Chinese text, still
/// carries its number), in text order.
fn target_refs(ctx: &QaContext, text: &str) -> Vec<XRef> {
    let mut t = refs(&ctx.target_lang, text);
    if ctx.source_lang.primary() != ctx.target_lang.primary() {
        for r in refs(&ctx.source_lang, text) {
            if !t
                .iter()
                .any(|x| x.start <= r.start && r.start < x.start + x.text.len())
            {
                t.push(r);
            }
        }
        t.sort_by_key(|r| r.start);
    }
    t
}

/// How a reference of `kind` to `number` is written in `lang`, for messages.
fn example(lang: &Lang, kind: Kind, number: &str) -> String {
    let zh = matches!(lang.primary().as_str(), "zh" | "ja");
    let w = match (zh, kind) {
        (true, Kind::Chapter) => return format!("`第{number}章`"),
        (true, Kind::Section) => return format!("`{number} 节`"),
        (true, Kind::Figure) => "图",
        (true, Kind::Table) => "表",
        (true, Kind::Equation) => return format!("`公式 ({number})`"),
        (true, Kind::Listing) => "代码清单",
        (false, k) => k.noun(),
    };
    format!("`{w} {number}`")
}

/// The labels a text defines (see the module docs): captions and headings that start with a
/// reference, section numbers opening a heading, and `\tag{n}` in display math.
fn labels(lang: &Lang, doc: &Doc) -> BTreeSet<(Kind, String)> {
    static SECTION_HEADING: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^\s*§?\s*(\d+(?:\.\d+)+)\b").expect("valid"));
    static TAG: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\\tag\*?\{\s*([0-9.\-]+)\s*\}").expect("valid"));
    let mut out = BTreeSet::new();
    let starts = |line: &str, caption: bool, out: &mut BTreeSet<(Kind, String)>| {
        let trimmed = line.trim_start_matches(|c: char| c.is_whitespace() || "*_>#".contains(c));
        if let Some(r) = refs(lang, trimmed).into_iter().next()
            && r.start == 0
            && (!caption || is_caption(&trimmed[r.text.len()..]))
        {
            out.insert((r.kind, r.number));
        }
    };
    for line in doc.prose.lines() {
        starts(line, true, &mut out);
    }
    for h in &doc.headings {
        starts(&h.text, false, &mut out);
        if let Some(c) = SECTION_HEADING.captures(&h.text)
            && let Some(n) = normalize_number(&c[1])
        {
            out.insert((Kind::Section, n));
        }
    }
    for m in &doc.display_math {
        for c in TAG.captures_iter(m) {
            if let Some(n) = normalize_number(&c[1]) {
                out.insert((Kind::Equation, n));
            }
        }
    }
    out
}

/// Whether the rest of a prose line after a leading reference makes the line a caption: only
/// punctuation (`**Figure 2-1.**`), or a title that does not end a sentence (`Table 8-1
/// Trajectory evaluation dimensions`, `Figure 2-6: Attention`), not a sentence that merely
/// starts with the reference (`Figure 2-1 shows the loop.`).
fn is_caption(rest: &str) -> bool {
    let rest = rest.trim();
    rest.chars().all(|c| !c.is_alphanumeric())
        || !rest.ends_with(['.', '。', '!', '！', '?', '？', ';', '；', ','])
}

/// The chapter number in a chapter key: its first run of digits without leading zeros
/// (`chapter07` → 7, `03-memory` → 3).
fn chapter_number(key: &str) -> Option<String> {
    static RE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\d+").expect("valid"));
    RE.find(key).and_then(|m| normalize_number(m.as_str()))
}

/// A heading's slug as GitHub (github-slugger) and mdBook (`normalize_id`) generate it
/// ([`crate::book::anchors::SlugRule::GitHub`]). Duplicates in one page get `-1`, `-2`, …
/// (see [`page_slugs`]).
pub fn slug(text: &str) -> String {
    crate::book::anchors::SlugRule::GitHub.slug(text)
}

/// A heading as the anchor check sees it ([`crate::book::anchors::HeadingAnchor`]).
type AnchorHeading = crate::book::anchors::HeadingAnchor;

fn anchor_headings(text: &str) -> Vec<AnchorHeading> {
    crate::book::anchors::headings(text)
}

/// How a page's anchor resolves.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Anchor {
    /// An explicit `{#id}` of the heading with this index (in page order).
    Explicit(usize),
    /// The generated slug of the heading with this index.
    Implicit(usize),
}

/// Every anchor of a page with its headings in order: explicit ids, and generated slugs made
/// unique the GitHub/mdBook way (the second `Intro` is `intro-1`). Headings with an explicit
/// id get no generated slug.
fn page_slugs(headings: &[AnchorHeading]) -> HashMap<String, Anchor> {
    let mut out = HashMap::new();
    let mut counts: HashMap<String, usize> = HashMap::new();
    for (i, h) in headings.iter().enumerate() {
        if let Some(id) = &h.id {
            out.insert(id.clone(), Anchor::Explicit(i));
            continue;
        }
        let base = slug(&h.text);
        let n = counts.entry(base.clone()).or_default();
        let s = if *n == 0 {
            base.clone()
        } else {
            format!("{base}-{n}")
        };
        *n += 1;
        out.entry(s).or_insert(Anchor::Implicit(i));
    }
    out
}

/// The book- and chapter-level checks `xref_targets`, `anchor_links` and `footnote_pairs`
/// over the translated units of a campaign, in campaign order (see the module docs).
/// Findings carry the unit they are about.
pub fn check_book(ctx: &QaContext, units: &[Parsed]) -> Vec<Finding> {
    let units: Vec<&Parsed> = units.iter().filter(|u| u.tgt.is_some()).collect();
    let mut out = targets(ctx, &units);
    let mut chapters: BTreeMap<usize, (&str, Vec<&Parsed>)> = BTreeMap::new();
    let mut order: HashMap<&str, usize> = HashMap::new();
    for u in &units {
        let n = order.len();
        let i = *order.entry(u.chapter).or_insert(n);
        chapters
            .entry(i)
            .or_insert((u.chapter, Vec::new()))
            .1
            .push(u);
    }
    for (_, (_, ch)) in chapters {
        // A site's links, same-page ones included, are `site_links`' (with the tool's slugs).
        if ctx.site_book.is_none() {
            out.extend(anchors(&ch));
        }
        out.extend(footnote_pairs(&ch));
    }
    out
}

/// `xref_targets`.
fn targets(ctx: &QaContext, units: &[&Parsed]) -> Vec<Finding> {
    let mut src_labels: BTreeMap<(Kind, String), usize> = BTreeMap::new();
    let mut tgt_labels: BTreeSet<(Kind, String)> = BTreeSet::new();
    for (i, u) in units.iter().enumerate() {
        for l in labels(&ctx.source_lang, &u.src) {
            src_labels.entry(l).or_insert(i);
        }
        let tgt = u.tgt.as_ref().expect("translated");
        tgt_labels.extend(labels(&ctx.target_lang, tgt));
        // A caption kept as in the source still defines its label.
        tgt_labels.extend(labels(&ctx.source_lang, tgt));
        if let Some(n) = chapter_number(u.chapter) {
            src_labels.entry((Kind::Chapter, n.clone())).or_insert(i);
            tgt_labels.insert((Kind::Chapter, n));
        }
    }
    let mut out = Vec::new();
    for u in units {
        let prose = u.tgt_prose().unwrap_or("");
        let mut seen = BTreeSet::new();
        for r in target_refs(ctx, prose) {
            let key = (r.kind, r.number.clone());
            if !seen.insert(key.clone()) || tgt_labels.contains(&key) {
                continue;
            }
            let Some(&at) = src_labels.get(&key) else {
                continue;
            };
            out.push(u.locate(Finding::new(
                TARGETS,
                Severity::Error,
                format!(
                    "cross-reference `{}` points to {} {} whose caption or heading is not in the translated book (the source defines it in unit {}); keep the {} number in the translated caption or heading",
                    r.text,
                    r.kind.noun(),
                    r.number,
                    units[at].unit,
                    r.kind.noun()
                ),
                "",
                &r.text,
            )));
        }
    }
    out
}

/// `anchor_links` for the translated units of one chapter.
fn anchors(ch: &[&Parsed]) -> Vec<Finding> {
    let src_h: Vec<AnchorHeading> = ch.iter().flat_map(|u| anchor_headings(u.source)).collect();
    let tgt_h: Vec<AnchorHeading> = ch
        .iter()
        .flat_map(|u| anchor_headings(u.target.unwrap_or("")))
        .collect();
    let (src_a, tgt_a) = (page_slugs(&src_h), page_slugs(&tgt_h));
    let mut out = Vec::new();
    for u in ch {
        let tgt_links = &u.tgt.as_ref().expect("translated").links;
        let mut seen = BTreeSet::new();
        for link in &u.src.links {
            let Some(frag) = link.strip_prefix('#') else {
                continue;
            };
            if !tgt_links.contains(link) || !seen.insert(frag) || tgt_a.contains_key(frag) {
                continue;
            }
            let Some(how) = src_a.get(frag) else {
                continue; // dangling in the source already
            };
            let msg = match how {
                Anchor::Explicit(i) => format!(
                    "link `#{frag}` no longer resolves: the source heading `{}` has the id {{#{frag}}} but the translated chapter has no heading with it; keep `{{#{frag}}}` on the translated heading",
                    src_h[*i].text
                ),
                Anchor::Implicit(i) => {
                    let now = (src_h.len() == tgt_h.len()).then(|| &tgt_h[*i]);
                    match now {
                        Some(h) => format!(
                            "link `#{frag}` relied on the generated slug of the heading `{}`; the translated heading `{}` gets the slug `{}` (GitHub/mdBook rules), so the link breaks; add `{{#{frag}}}` to the translated heading",
                            src_h[*i].text,
                            h.text,
                            slug(&h.text)
                        ),
                        None => format!(
                            "link `#{frag}` relied on the generated slug of the heading `{}`, which no translated heading generates; add `{{#{frag}}}` to the translated heading",
                            src_h[*i].text
                        ),
                    }
                }
            };
            out.push(u.locate(Finding::new(ANCHORS, Severity::Error, msg, link, link)));
        }
    }
    out
}

/// Footnote references written `[^label]:` or `[^label]：` inside a line (`所指出的[^ch7-8]：当前`,
/// Chinese prose puts a full-width colon after a reference), as `[^label]`. The prose reader of
/// [`crate::qa::unit::links`] cannot tell them from a broken definition at the start of a line, which is
/// what the raw line shows: only a `[^` that is not the first thing on its line counts here.
fn midline_refs(raw: &str) -> Vec<String> {
    static RE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\[\^([^\]\s\[]+)\][:：]").expect("valid"));
    let mut out = Vec::new();
    for line in raw.lines() {
        let lead = line.len() - line.trim_start().len();
        for c in RE.captures_iter(line) {
            if c.get(0).expect("match").start() > lead {
                out.push(format!("[^{}]", &c[1]));
            }
        }
    }
    out
}

/// `footnote_pairs` for the translated units of one chapter.
fn footnote_pairs(ch: &[&Parsed]) -> Vec<Finding> {
    // label → (first unit index referencing it, first unit index defining it), per side.
    type Sides = BTreeMap<String, (Option<usize>, Option<usize>)>;
    let collect = |target: bool| -> Sides {
        let mut m: Sides = BTreeMap::new();
        for (i, u) in ch.iter().enumerate() {
            let (Some(d), Some(raw)) = (if target {
                (u.tgt.as_ref(), u.target)
            } else {
                (Some(&u.src), Some(u.source))
            }) else {
                continue;
            };
            for r in crate::qa::unit::links::footnote_refs(d)
                .into_iter()
                .chain(midline_refs(raw))
            {
                m.entry(r).or_default().0.get_or_insert(i);
            }
            for l in &d.footnote_defs {
                m.entry(format!("[^{l}]")).or_default().1.get_or_insert(i);
            }
        }
        m
    };
    let src = collect(false);
    let tgt = collect(true);
    let mut out = Vec::new();
    for (label, s) in &src {
        if !(s.0.is_some() && s.1.is_some()) {
            continue;
        }
        match tgt.get(label) {
            Some((Some(r), None)) => out.push(ch[*r].locate(Finding::new(
                FOOTNOTES,
                Severity::Error,
                format!(
                    "footnote {label} is referenced but no unit of chapter {} defines it in the translation (the source defines it in unit {}); restore the definition `{label}: …`",
                    ch[*r].chapter,
                    ch[s.1.expect("paired")].unit
                ),
                label,
                label,
            ))),
            Some((None, Some(d))) => out.push(ch[*d].locate(Finding::new(
                FOOTNOTES,
                Severity::Error,
                format!(
                    "footnote {label} is defined but never referenced in the translation of chapter {} (the source references it in unit {}); restore the marker {label}",
                    ch[*d].chapter,
                    ch[s.0.expect("paired")].unit
                ),
                label,
                label,
            ))),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qa::UnitText;
    use crate::termbase::Termbase;

    fn ctx(src: &str, tgt: &str) -> QaContext {
        QaContext::new(&Lang::parse(src), &Lang::parse(tgt), &Termbase::default())
    }

    fn nums(lang: &str, text: &str) -> Vec<(Kind, String)> {
        refs(&Lang::parse(lang), text)
            .into_iter()
            .map(|r| (r.kind, r.number))
            .collect()
    }

    fn unit_check(src: &str, tgt: &str, s: &str, t: &str) -> Vec<Finding> {
        check(&ctx(src, tgt), &Doc::parse(s), &Doc::parse(t), s, t)
    }

    #[test]
    fn references_are_read_in_each_language() {
        assert_eq!(
            nums(
                "en",
                "See Chapter 3, Figure 2–4, Table 1, §2.4, Section 7.1 and Equation (5); the chapter ends."
            ),
            vec![
                (Kind::Chapter, "3".into()),
                (Kind::Figure, "2-4".into()),
                (Kind::Table, "1".into()),
                (Kind::Section, "2.4".into()),
                (Kind::Section, "7.1".into()),
                (Kind::Equation, "5".into()),
            ]
        );
        assert_eq!(
            nums(
                "zh",
                "见第三章、第 12 章、图 2-4、表1、7.1 节、第二节和公式（5）。试图 3 次，代表 2 个，地图 4。"
            ),
            vec![
                (Kind::Chapter, "3".into()),
                (Kind::Chapter, "12".into()),
                (Kind::Figure, "2-4".into()),
                (Kind::Table, "1".into()),
                (Kind::Section, "7.1".into()),
                (Kind::Section, "2".into()),
                (Kind::Equation, "5".into()),
            ]
        );
        assert_eq!(chinese_numeral("二十"), Some(20));
        assert_eq!(chinese_numeral("十二"), Some(12));
        assert_eq!(chinese_numeral("一百零五"), Some(105));
        assert_eq!(normalize_number("07"), Some("7".into()));
        assert_eq!(normalize_number("02-04"), Some("2-4".into()));
        assert_eq!(
            nums("de", "Siehe Kapitel 3 und Abb. 2-1."),
            vec![(Kind::Chapter, "3".into()), (Kind::Figure, "2-1".into())]
        );
    }

    #[test]
    fn faithful_references_in_another_word_order_pass() {
        let f = unit_check(
            "en",
            "zh",
            "As Figure 2-4 shows, Chapter 3 builds on Table 1 and Section 7.1.\n",
            "第三章建立在表 1 和 7.1 节之上，如图 2-4 所示。\n",
        );
        assert_eq!(f, vec![]);
    }

    #[test]
    fn changed_reference_number_is_an_error() {
        let f = unit_check(
            "en",
            "zh",
            "As Figure 2-4 shows, see Chapter 3.\n",
            "如图 2-5 所示，见第三章。\n",
        );
        assert_eq!(f.len(), 2, "{f:#?}");
        assert_eq!(
            (f[0].check.as_str(), f[0].severity),
            (NUMBERS, Severity::Error)
        );
        assert_eq!(
            f[0].message,
            "cross-reference `Figure 2-4` lost its number 2-4 (the translation refers to `图 2-5` instead); keep the figure number in the translation"
        );
        assert_eq!(
            f[1].message,
            "cross-reference `图 2-5` has a number (2-5) the source does not contain; keep the source's figure numbers"
        );
    }

    /// Regression (seen in tests/it/report_html.rs): `## Section 2` translated `## 第二节` was
    /// reported as a lost number, because the section pattern read digits only.
    #[test]
    fn section_written_with_a_chinese_numeral_keeps_its_number() {
        assert_eq!(
            unit_check("en", "zh", "## Section 2\n", "## 第二节\n"),
            vec![]
        );
    }

    #[test]
    fn invented_reference_is_an_error() {
        let f = unit_check(
            "en",
            "zh",
            "The loop ends here.\n",
            "循环到此结束（见第 3 章）。\n",
        );
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(
            f[0].message,
            "cross-reference `第 3 章` has a number (3) the source does not contain; keep the source's chapter numbers"
        );
    }

    #[test]
    fn number_kept_outside_a_reference_is_only_noted() {
        let f = unit_check("en", "zh", "See Table 4.\n", "参见第 4 项。\n");
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].severity, Severity::Info);
        assert!(f[0].message.contains("e.g. `表 4`"), "{}", f[0].message);
        // A reference kept as in the source still carries its number.
        assert_eq!(
            unit_check("en", "zh", "See Table 4.\n", "参见 Table 4。\n"),
            vec![]
        );
        // A language without patterns: the number's presence is enough.
        assert_eq!(
            unit_check("en", "ko", "See Table 4.\n", "표 4 참조.\n"),
            vec![]
        );
        assert_eq!(
            unit_check("en", "ko", "See Table 4.\n", "표 참조.\n")[0].severity,
            Severity::Error
        );
    }

    fn book(rows: &[(&str, &str, &str, &str)]) -> Vec<Finding> {
        let units: Vec<UnitText> = rows
            .iter()
            .map(|(id, ch, s, t)| UnitText {
                unit: id,
                chapter: ch,
                source: s,
                target: Some(t),
            })
            .collect();
        check_book(&ctx("en", "zh"), &Parsed::all(&units))
    }

    #[test]
    fn reference_to_a_lost_caption_is_reported() {
        let rows = [
            (
                "u1",
                "ch02",
                "Figure 2-1 shows the loop.\n",
                "图 2-1 展示了这个循环。\n",
            ),
            (
                "u2",
                "ch02",
                "![Figure 2-1: The loop](loop.svg)\n\nTable 2-1 Tools\n\n| a |\n|---|\n| b |\n",
                "![循环](loop.svg)\n\n表 2-1 工具\n\n| a |\n|---|\n| b |\n",
            ),
        ];
        let f = book(&rows);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!((f[0].check.as_str(), f[0].unit.as_str()), (TARGETS, "u1"));
        assert!(
            f[0].message.starts_with("cross-reference `图 2-1` points to figure 2-1 whose caption or heading is not in the translated book (the source defines it in unit u2)"),
            "{}",
            f[0].message
        );
        // The source against itself: nothing.
        let same: Vec<_> = rows.iter().map(|r| (r.0, r.1, r.2, r.2)).collect();
        assert_eq!(book(&same), vec![]);
    }

    #[test]
    fn slugs_follow_github_and_mdbook() {
        assert_eq!(slug("Calling Tools"), "calling-tools");
        assert_eq!(slug("What's `new` in 2.0?"), "whats-new-in-20");
        assert_eq!(slug("调用工具"), "调用工具");
        let h = |t: &str| AnchorHeading {
            text: t.into(),
            id: None,
        };
        let s = page_slugs(&[h("Intro"), h("Intro"), h("Intro")]);
        assert_eq!(s.get("intro-2"), Some(&Anchor::Implicit(2)));
    }

    #[test]
    fn anchor_relying_on_an_implicit_slug_is_flagged_with_the_fix() {
        let rows = [
            (
                "u1",
                "ch01",
                "## Calling Tools\n\nText.\n",
                "## 调用工具\n\n正文。\n",
            ),
            (
                "u2",
                "ch01",
                "## Memory {#memory}\n\nSee [calling tools](#calling-tools) and [memory](#memory).\n",
                "## 记忆 {#memory}\n\n参见[调用工具](#calling-tools)和[记忆](#memory)。\n",
            ),
        ];
        let f = book(&rows);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!((f[0].check.as_str(), f[0].unit.as_str()), (ANCHORS, "u2"));
        assert_eq!(
            f[0].message,
            "link `#calling-tools` relied on the generated slug of the heading `Calling Tools`; the translated heading `调用工具` gets the slug `调用工具` (GitHub/mdBook rules), so the link breaks; add `{#calling-tools}` to the translated heading"
        );
        // With the explicit id the link resolves.
        let mut fixed = rows;
        fixed[0].3 = "## 调用工具 {#calling-tools}\n\n正文。\n";
        assert_eq!(book(&fixed), vec![]);
        // A dropped explicit id is reported too.
        let mut dropped = rows;
        dropped[0].3 = "## 调用工具 {#calling-tools}\n\n正文。\n";
        dropped[1].3 = "## 记忆\n\n参见[调用工具](#calling-tools)和[记忆](#memory)。\n";
        let f = book(&dropped);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert!(
            f[0].message
                .starts_with("link `#memory` no longer resolves")
        );
    }

    /// Regression (found on the corpus, chapter 7 of the Chinese original): a reference
    /// followed by a full-width colon, `所指出的[^ch7-8]：当前`, was not seen as a reference, so
    /// its definition looked unreferenced.
    #[test]
    fn footnote_ref_followed_by_a_fullwidth_colon_is_a_reference() {
        let rows = [
            (
                "u1",
                "ch07",
                "As Silver points out[^s8], RL.\n",
                "正如 Silver 所指出的[^s8]：RL。\n",
            ),
            (
                "u2",
                "ch07",
                "[^s8]: Silver, 2025.\n",
                "[^s8]: Silver, 2025.\n",
            ),
        ];
        assert_eq!(book(&rows), vec![]);
        assert_eq!(
            midline_refs("[^a]: def\nx[^b]：y\n"),
            vec!["[^b]".to_string()]
        );
    }

    #[test]
    fn footnotes_pair_up_across_units_of_a_chapter() {
        let rows = [
            (
                "u1",
                "ch01",
                "A claim[^a] and another[^b].\n",
                "一个论断[^a]和另一个。\n",
            ),
            (
                "u2",
                "ch01",
                "[^a]: Source A.\n\n[^b]: Source B.\n",
                "[^b]: 来源 B。\n",
            ),
        ];
        let f = book(&rows);
        let got: Vec<(&str, &str)> = f
            .iter()
            .map(|f| (f.unit.as_str(), f.message.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    "u1",
                    "footnote [^a] is referenced but no unit of chapter ch01 defines it in the translation (the source defines it in unit u2); restore the definition `[^a]: …`"
                ),
                (
                    "u2",
                    "footnote [^b] is defined but never referenced in the translation of chapter ch01 (the source references it in unit u1); restore the marker [^b]"
                ),
            ]
        );
        assert!(
            f.iter()
                .all(|f| f.check == FOOTNOTES && f.severity == Severity::Error)
        );
        let same: Vec<_> = rows.iter().map(|r| (r.0, r.1, r.2, r.2)).collect();
        assert_eq!(book(&same), vec![]);
    }
}
