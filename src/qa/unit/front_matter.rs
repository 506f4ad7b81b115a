//! Front matter, part of the `structure` check (error): the YAML block between `---` lines at
//! the start of a chapter is metadata a site generator reads (slugs, weights, layouts,
//! taxonomies), so only the values of [`TRANSLATED_KEYS`] are translated and everything else
//! stays as the source has it. This module owns reading such a block ([`block`], [`parse`],
//! with the `saphyr` YAML 1.2 library, which keeps key order and gives every node its span)
//! and the findings ([`findings`]):
//!
//! - a block the source has and the translation lost, or one the translation added;
//! - YAML that no longer parses (a quote left open, a key joined onto the previous key's
//!   translated value: `title: Werkzeuge slug: tools`), with the line and column the parser
//!   stopped at;
//! - keys lost, added or renamed (a key is compared by its value, so `"title":` and `title:`
//!   are the same key; the order of keys is not compared, a YAML mapping has none). A lost key
//!   found inside another key's translated value is named as joined onto it;
//! - a value outside [`TRANSLATED_KEYS`] changed, compared as YAML data (quoting style does not
//!   count; a list whose items were translated does, item by item);
//! - a value of [`TRANSLATED_KEYS`] whose shape changed (a list turned into text, a list with
//!   another number of items): its words may change, its structure may not.
//!
//! Every finding points (`span`) at the target's key, value or parse fault.

use std::ops::Range;

use saphyr::{LoadableYamlNode, MarkedYaml, Scalar, YamlData};

use crate::qa::{Finding, Severity, quote};

/// Check name of the findings (front matter is part of the block structure).
pub const CHECK: &str = crate::qa::unit::structure::CHECK;

/// Front matter keys whose values are translated; every other value is kept as the source has
/// it. Those of Hugo, Jekyll, MkDocs Material, Docusaurus and Astro content collections that
/// hold reader-facing text (titles, descriptions, labels) or a reader-facing term list
/// (`keywords`, the page's search words). `tags` are not among them: a tag is a taxonomy key
/// that every edition shares (Hugo and Jekyll build the tag pages' URLs from it, Docusaurus
/// matches it against `tags.yml` and fails the build on an unknown one when told to), and a
/// site translates a tag's label in its own tag definitions, not page by page.
pub const TRANSLATED_KEYS: &[&str] = &[
    "title",
    "subtitle",
    "description",
    "summary",
    "abstract",
    "excerpt",
    "sidebar_label",
    "caption",
    "keywords",
];

/// Front matter keys a translated edition may add to credit its translators (react.dev's
/// Chinese edition writes `translators:` on every page): read by the site's theme, not a
/// change to the source's data.
pub const CREDIT_KEYS: &[&str] = &["translators", "translator", "translated_by"];

/// The YAML front matter at the start of `text` (after a BOM): the lines between an opening
/// `---` line and the next `---` or `...` line, or `None`.
pub fn block(text: &str) -> Option<&str> {
    let text = crate::book::markdown::split_bom(text).1;
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    let mut at = 0;
    for line in rest.split_inclusive('\n') {
        let l = line.trim_end();
        if l == "---" || l == "..." {
            return Some(&rest[..at]);
        }
        at += line.len();
    }
    None
}

/// One top-level entry of a front matter mapping.
#[derive(Debug, Clone)]
pub struct Entry<'a> {
    /// The key as data: a string key's text, another scalar written as YAML reads it (`1`,
    /// `true`), a complex key as written.
    pub key: String,
    /// The value, compared as YAML data ([`MarkedYaml`] equality ignores spans and quoting).
    pub value: MarkedYaml<'a>,
    /// Bytes of the key as written (quotes included), in the front matter block.
    pub key_range: Range<usize>,
    /// Bytes of the whole entry, from its key to the end of its value (trailing blank lines
    /// and comment lines at column 0 excluded), in the front matter block.
    pub range: Range<usize>,
}

/// A parsed front matter block.
#[derive(Debug, Clone)]
pub enum Parsed<'a> {
    /// A mapping, its entries in document order.
    Mapping(Vec<Entry<'a>>),
    /// Anything else (a scalar, a list, an empty block as `None`).
    Other(Option<MarkedYaml<'a>>),
}

/// Why a front matter block is not YAML: the parser's message and where it stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YamlError {
    /// The parser's own words, e.g. "mapping values are not allowed in this context".
    pub message: String,
    /// Line in the block, 1-based.
    pub line: usize,
    /// Column, 1-based, in chars.
    pub column: usize,
    /// Byte offset of the fault in the block.
    pub at: usize,
}

/// Byte offsets of every char of `s`, plus `s.len()` (saphyr counts positions in chars).
fn char_bytes(s: &str) -> Vec<usize> {
    s.char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(s.len()))
        .collect()
}

/// Parses a front matter block (see [`block`]).
///
/// Errors: the block is not YAML ([`YamlError`]), including a mapping with a duplicated key.
pub fn parse(fm: &str) -> Result<Parsed<'_>, YamlError> {
    let bytes = char_bytes(fm);
    let byte = |c: usize| bytes.get(c).copied().unwrap_or(fm.len());
    let docs = MarkedYaml::load_from_str(fm).map_err(|e| {
        let m = e.marker();
        YamlError {
            message: e.info().to_string(),
            line: m.line(),
            column: m.col() + 1,
            at: byte(m.index()),
        }
    })?;
    let Some(doc) = docs.into_iter().next() else {
        return Ok(Parsed::Other(None));
    };
    let YamlData::Mapping(map) = doc.data else {
        return Ok(Parsed::Other(Some(doc)));
    };
    let mut entries: Vec<Entry<'_>> = map
        .into_iter()
        .map(|(k, v)| {
            let key_range = byte(k.span.start.index())..byte(k.span.end.index());
            Entry {
                key: key_text(&k, &fm[key_range.clone()]),
                value: v,
                range: key_range.start..fm.len(),
                key_range,
            }
        })
        .collect();
    // An entry runs to the next key's line; what follows its value there (blank lines,
    // comments at column 0) is not part of it.
    for i in 0..entries.len() {
        let next = entries
            .get(i + 1)
            .map_or(fm.len(), |n| line_start(fm, n.key_range.start));
        let start = entries[i].range.start;
        entries[i].range = start..entry_end(fm, start, next);
    }
    Ok(Parsed::Mapping(entries))
}

fn key_text(k: &MarkedYaml<'_>, raw: &str) -> String {
    match &k.data {
        YamlData::Value(Scalar::String(s)) => s.to_string(),
        YamlData::Value(_) => raw.trim().to_string(),
        _ => raw.trim().to_string(),
    }
}

fn line_start(s: &str, at: usize) -> usize {
    s[..at].rfind('\n').map_or(0, |i| i + 1)
}

/// End of an entry that starts at `start` and may run to `next`: trailing blank lines and
/// comment lines at column 0 are dropped (a value's own lines are indented or follow its key
/// on its line), then trailing whitespace.
fn entry_end(fm: &str, start: usize, next: usize) -> usize {
    let mut end = next;
    loop {
        let text = &fm[start..end];
        let body = text.strip_suffix('\n').unwrap_or(text);
        let last_line_at = body.rfind('\n').map_or(0, |i| i + 1);
        let last = &body[last_line_at..];
        if last_line_at > 0 && (last.trim().is_empty() || last.starts_with('#')) {
            end = start + last_line_at;
        } else {
            break;
        }
    }
    start + fm[start..end].trim_end().len()
}

/// What a value is, for messages: `text`, `a list of 3 items`, `a mapping`.
fn shape(v: &MarkedYaml<'_>) -> String {
    match &v.data {
        YamlData::Sequence(s) => match s.len() {
            1 => "a list of 1 item".to_string(),
            n => format!("a list of {n} items"),
        },
        YamlData::Mapping(_) => "a mapping".to_string(),
        YamlData::Tagged(_, inner) => shape(inner),
        YamlData::Value(Scalar::Null) => "empty".to_string(),
        _ => "text".to_string(),
    }
}

/// The kind of a value's shape, for the comparison of translated values: scalars are one kind,
/// a list is its length.
fn shape_key(v: &MarkedYaml<'_>) -> (u8, usize) {
    match &v.data {
        YamlData::Sequence(s) => (1, s.len()),
        YamlData::Mapping(m) => (2, m.len()),
        YamlData::Tagged(_, inner) => shape_key(inner),
        _ => (0, 0),
    }
}

/// A value as written in `fm` (its span), for messages and excerpts.
fn written<'f>(fm: &'f str, bytes: &[usize], v: &MarkedYaml<'_>) -> &'f str {
    let b = |c: usize| bytes.get(c).copied().unwrap_or(fm.len());
    let (s, e) = (b(v.span.start.index()), b(v.span.end.index()));
    if s < e { fm[s..e].trim() } else { "" }
}

/// Char offset of byte `at` of the front matter block `fm`, within `text` (which contains it).
fn char_offset(text: &str, fm: &str, at: usize) -> usize {
    let base = fm.as_ptr() as usize - text.as_ptr() as usize;
    text[..base + at].chars().count()
}

/// The front matter findings of a translation (see the module docs), with spans in chars of
/// `target`: the blocks' presence, the translation's YAML, then its keys and values.
pub fn findings(source: &str, target: &str) -> Vec<Finding> {
    let (sf, tf) = match (block(source), block(target)) {
        (None, None) => return Vec::new(),
        (None, Some(tf)) => {
            let (s, e) = span_in(target, tf, 0..tf.len());
            return vec![
                Finding::new(
                    CHECK,
                    Severity::Error,
                    "the translation opens with a front matter block the source does not have; remove it",
                    "",
                    tf,
                )
                .with_span(s, e),
            ];
        }
        (Some(sf), None) => {
            return vec![Finding::new(
                CHECK,
                Severity::Error,
                "the source's front matter is missing from the translation (dropped, or its `---` lines damaged); keep the front matter block with its keys",
                sf,
                target
                    .lines()
                    .take(4)
                    .collect::<Vec<_>>()
                    .join("\n")
                    .as_str(),
            )];
        }
        (Some(sf), Some(tf)) => (sf, tf),
    };
    // The source's own front matter is what it is: when it is not YAML there is nothing to
    // compare with.
    let Ok(sp) = parse(sf) else {
        return Vec::new();
    };
    let blocks = Blocks {
        target,
        sf,
        tf,
        sb: Vec::new(),
        tb: Vec::new(),
    };
    let tp = match parse(tf) {
        Ok(p) => p,
        Err(e) => return vec![blocks.invalid_yaml(&sp, &e)],
    };
    let blocks = Blocks {
        sb: char_bytes(sf),
        tb: char_bytes(tf),
        ..blocks
    };
    let (se, te) = match (&sp, &tp) {
        (Parsed::Mapping(a), Parsed::Mapping(b)) => (a, b),
        (Parsed::Mapping(_), Parsed::Other(_)) => {
            return vec![blocks.whole(
                "the translation's front matter is no longer a mapping of `key: value` lines; keep the source's keys and translate only the values",
            )];
        }
        (Parsed::Other(a), _) => {
            let same = match (&tp, a) {
                (Parsed::Other(b), a) => a == b,
                _ => false,
            };
            if same {
                return Vec::new();
            }
            return vec![blocks.whole(
                "the translation's front matter differs from the source's, which has no keys to translate; copy it unchanged",
            )];
        }
    };
    let mut out = blocks.key_findings(se, te);
    out.extend(se.iter().filter_map(|a| blocks.value_finding(a, te)));
    out
}

/// The char span, within `text`, of bytes `r` of its front matter block `fm`.
fn span_in(text: &str, fm: &str, r: Range<usize>) -> (usize, usize) {
    let s = char_offset(text, fm, r.start);
    (s, s + fm[r].chars().count())
}

/// The position of `k` among `es`.
fn find(es: &[Entry<'_>], k: &str) -> Option<usize> {
    es.iter().position(|e| e.key == k)
}

/// The two front matter blocks being compared.
struct Blocks<'f> {
    /// The whole translation (spans are in its chars).
    target: &'f str,
    /// The source's and the translation's front matter blocks.
    sf: &'f str,
    tf: &'f str,
    /// [`char_bytes`] of `sf` and `tf`.
    sb: Vec<usize>,
    tb: Vec<usize>,
}

impl Blocks<'_> {
    /// The char span in the translation of bytes `r` of its block.
    fn span(&self, r: Range<usize>) -> (usize, usize) {
        span_in(self.target, self.tf, r)
    }

    /// An error on the whole translated block.
    fn whole(&self, message: &str) -> Finding {
        let (s, e) = self.span(0..self.tf.len());
        Finding::new(CHECK, Severity::Error, message, self.sf, self.tf).with_span(s, e)
    }

    /// The translation's block is not YAML: where, and whether a key was joined onto the
    /// previous line.
    fn invalid_yaml(&self, sp: &Parsed<'_>, e: &YamlError) -> Finding {
        let (sf, tf) = (self.sf, self.tf);
        let joined = joined_key(sp, tf, e);
        let line_end = tf[e.at..].find('\n').map_or(tf.len(), |i| e.at + i);
        let (s, t) = self.span(line_start(tf, e.at)..line_end);
        let why = match joined {
            Some(k) => format!(
                "; the key `{k}` follows another value on line {} instead of starting its own line (joined onto the previous key's value?)",
                e.line
            ),
            None => String::new(),
        };
        Finding::new(
            CHECK,
            Severity::Error,
            format!(
                "the translation's front matter is not valid YAML (line {}, column {}: {}){why}; keep the source's syntax, every key on its own line, and translate only the values",
                e.line, e.column, e.message
            ),
            sf,
            &tf[line_start(tf, e.at)..line_end],
        )
        .with_span(s, t)
    }

    /// Keys renamed, or else keys lost and keys added.
    fn key_findings(&self, se: &[Entry<'_>], te: &[Entry<'_>]) -> Vec<Finding> {
        let lost: Vec<usize> = (0..se.len())
            .filter(|&i| find(te, &se[i].key).is_none())
            .collect();
        let added: Vec<usize> = (0..te.len())
            .filter(|&j| find(se, &te[j].key).is_none())
            .collect();
        let renamed = renamed(se, te, &lost, &added);
        if !renamed.is_empty() {
            return renamed
                .iter()
                .map(|&(i, j)| self.renamed_key(&se[i], &te[j]))
                .collect();
        }
        let mut out: Vec<Finding> = lost.iter().map(|&i| self.lost_key(se, te, i)).collect();
        for &j in &added {
            if CREDIT_KEYS.contains(&te[j].key.as_str()) {
                continue;
            }
            let (s, e) = self.span(te[j].range.clone());
            out.push(
                Finding::new(
                    CHECK,
                    Severity::Error,
                    format!(
                        "front matter key `{}` does not occur in the source; remove it (only the source's keys are kept, with their values translated where they are text)",
                        te[j].key
                    ),
                    "",
                    &self.tf[te[j].range.clone()],
                )
                .with_span(s, e),
            );
        }
        out
    }

    fn renamed_key(&self, a: &Entry<'_>, b: &Entry<'_>) -> Finding {
        let (s, e) = self.span(b.key_range.clone());
        Finding::new(
            CHECK,
            Severity::Error,
            format!(
                "front matter key `{}` is renamed to `{}` in the translation; keep every key as written and translate only the values",
                a.key, b.key
            ),
            &self.sf[a.range.clone()],
            &self.tf[b.range.clone()],
        )
        .with_span(s, e)
    }

    /// Source key `se[i]` is missing: inside another key's value (joined onto its line?), or
    /// dropped.
    fn lost_key(&self, se: &[Entry<'_>], te: &[Entry<'_>], i: usize) -> Finding {
        let (sf, tf) = (self.sf, self.tf);
        let k = &se[i].key;
        let host = te.iter().find(|e| {
            key_positions(written(tf, &self.tb, &e.value), k)
                .next()
                .is_some()
                && find(se, &e.key).is_some()
        });
        let (msg, span_of) = match host {
            Some(h) => (
                format!(
                    "front matter key `{k}` of the source is missing from the translation: it is inside the value of `{}` (joined onto its line?); put `{k}` back on a line of its own with the source's value",
                    h.key
                ),
                Some(self.span(h.range.clone())),
            ),
            None => (
                format!(
                    "front matter key `{k}` of the source is missing from the translation; keep every key with its value"
                ),
                None,
            ),
        };
        let mut f = Finding::new(
            CHECK,
            Severity::Error,
            msg,
            &sf[se[i].range.clone()],
            host.map_or("", |h| &tf[h.range.clone()]),
        );
        if let Some((s, e)) = span_of {
            f = f.with_span(s, e);
        }
        f
    }

    /// The value of source entry `a` in the translation: a translated key's value keeps its
    /// shape, any other is unchanged.
    fn value_finding(&self, a: &Entry<'_>, te: &[Entry<'_>]) -> Option<Finding> {
        let (sf, tf, sb, tb) = (self.sf, self.tf, &self.sb, &self.tb);
        let b = &te[find(te, &a.key)?];
        let (s, e) = self.span(b.range.clone());
        let (aw, bw) = (written(sf, sb, &a.value), written(tf, tb, &b.value));
        if TRANSLATED_KEYS.contains(&a.key.as_str()) {
            if shape_key(&a.value) == shape_key(&b.value) {
                return None;
            }
            return Some(
                Finding::new(
                    CHECK,
                    Severity::Error,
                    format!(
                        "front matter value of `{}` is {} in the source but {} in the translation; translate its text and keep its shape",
                        a.key,
                        shape(&a.value),
                        shape(&b.value)
                    ),
                    &sf[a.range.clone()],
                    &tf[b.range.clone()],
                )
                .with_span(s, e),
            );
        }
        if a.value == b.value {
            return None;
        }
        let kept = format!(
            "only the values of {} are translated, keep the others as in the source",
            TRANSLATED_KEYS.join(", ")
        );
        let msg = match (&a.value.data, &b.value.data) {
            (YamlData::Sequence(x), YamlData::Sequence(y)) if x.len() == y.len() => {
                let n = x.iter().zip(y).position(|(p, q)| p != q).unwrap_or(0);
                format!(
                    "front matter list `{}` changed: item {} is {} in the source but {} in the translation; {kept}",
                    a.key,
                    n + 1,
                    quote(written(sf, sb, &x[n])),
                    quote(written(tf, tb, &y[n]))
                )
            }
            _ => format!(
                "front matter value of `{}` changed from {} to {}; {kept}",
                a.key,
                quote(&describe_value(aw, &a.value)),
                quote(&describe_value(bw, &b.value))
            ),
        };
        Some(
            Finding::new(
                CHECK,
                Severity::Error,
                msg,
                &sf[a.range.clone()],
                &tf[b.range.clone()],
            )
            .with_span(s, e),
        )
    }
}

/// A key lost where the translation has a new one in the same place, the other keys around it
/// kept: renamed (translated, misspelt). The (source, translation) pairs, or none.
fn renamed(
    se: &[Entry<'_>],
    te: &[Entry<'_>],
    lost: &[usize],
    added: &[usize],
) -> Vec<(usize, usize)> {
    let kept_before = |n: usize, es: &[Entry<'_>], other: &[Entry<'_>]| {
        es[..n]
            .iter()
            .filter(|e| find(other, &e.key).is_some())
            .count()
    };
    if lost.len() == added.len()
        && lost
            .iter()
            .zip(added)
            .all(|(&i, &j)| kept_before(i, se, te) == kept_before(j, te, se))
    {
        lost.iter().copied().zip(added.iter().copied()).collect()
    } else {
        Vec::new()
    }
}

fn describe_value(written: &str, v: &MarkedYaml<'_>) -> String {
    if written.is_empty() {
        shape(v)
    } else {
        written.to_string()
    }
}

/// A key of the source whose `key:` stands, in the translation, after other text on the line
/// the parser stopped at: it was joined onto the previous value.
fn joined_key(sp: &Parsed<'_>, tf: &str, e: &YamlError) -> Option<String> {
    let Parsed::Mapping(es) = sp else { return None };
    let ls = line_start(tf, e.at);
    let line = &tf[ls..tf[ls..].find('\n').map_or(tf.len(), |i| ls + i)];
    es.iter()
        .find(|x| key_positions(line, &x.key).any(|i| i > 0))
        .map(|x| x.key.clone())
}

/// Byte positions in `text` where `key:` is written as a key would be: at the start or after
/// whitespace (so `script:` is not found inside `description:`).
fn key_positions<'t>(text: &'t str, key: &str) -> impl Iterator<Item = usize> + 't {
    let pat = format!("{key}:");
    let ok = !key.is_empty();
    text.match_indices(&pat)
        .map(|(i, _)| i)
        .filter(move |&i| ok && (i == 0 || text[..i].ends_with(char::is_whitespace)))
        .collect::<Vec<_>>()
        .into_iter()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msgs(s: &str, t: &str) -> Vec<String> {
        findings(s, t).into_iter().map(|f| f.message).collect()
    }

    const SRC: &str = "---\ntitle: \"Tool calls\"\nslug: tool-calls\nweight: 3\ncategories:\n  - agents\n  - tools\ntags: [llm, agents]\n---\n\nText.\n";

    #[test]
    fn entries_keep_order_spans_and_values() {
        let fm = block(SRC).unwrap();
        let Parsed::Mapping(es) = parse(fm).unwrap() else {
            panic!("a mapping")
        };
        let keys: Vec<&str> = es.iter().map(|e| e.key.as_str()).collect();
        assert_eq!(keys, ["title", "slug", "weight", "categories", "tags"]);
        assert_eq!(&fm[es[0].key_range.clone()], "title");
        assert_eq!(&fm[es[0].range.clone()], "title: \"Tool calls\"");
        assert_eq!(
            &fm[es[3].range.clone()],
            "categories:\n  - agents\n  - tools"
        );
        assert_eq!(&fm[es[4].range.clone()], "tags: [llm, agents]");
        // Comments after an entry are not part of it; quoting style is not a change.
        let Parsed::Mapping(a) = parse("a: x # c\n# own line\n\nb: 'y'\n").unwrap() else {
            panic!()
        };
        assert_eq!(a[0].range, 0..8);
        let Parsed::Mapping(b) = parse("a: \"x\"\nb: y\n").unwrap() else {
            panic!()
        };
        assert_eq!(a[1].value, b[1].value);
        assert_eq!(a[0].value, b[0].value);
    }

    #[test]
    fn faithful_front_matter_has_no_finding() {
        let t = SRC
            .replace("\"Tool calls\"", "\"Werkzeugaufrufe\"")
            .replace("Text.", "Texte.");
        assert_eq!(findings(SRC, &t), vec![]);
        // Requoting a kept value and reordering keys change nothing a site generator reads.
        let t2 = t.replace(
            "slug: tool-calls\nweight: 3\n",
            "weight: 3\nslug: 'tool-calls'\n",
        );
        assert_eq!(findings(SRC, &t2), vec![]);
    }

    #[test]
    fn a_key_joined_onto_the_previous_translated_value_was_not_reported() {
        // The translation put `slug:` at the end of the title's line: YAML no longer parses.
        let t = SRC.replace(
            "title: \"Tool calls\"\nslug: tool-calls",
            "title: Werkzeugaufrufe slug: tool-calls",
        );
        let f = findings(SRC, &t);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert!(
            f[0].message.starts_with(
                "the translation's front matter is not valid YAML (line 1, column 28: mapping values are not allowed in this context); the key `slug` follows another value on line 1"
            ),
            "{}",
            f[0].message
        );
        let span = f[0].span.unwrap();
        let line: String = t.chars().skip(span.0).take(span.1 - span.0).collect();
        assert_eq!(line, "title: Werkzeugaufrufe slug: tool-calls");
        // Joined into a folded value, where it still parses: the key is gone.
        let t = SRC.replace(
            "title: \"Tool calls\"\nslug: tool-calls",
            "title: >\n  Werkzeugaufrufe\n  slug: tool-calls",
        );
        assert_eq!(
            msgs(SRC, &t),
            [
                "front matter key `slug` of the source is missing from the translation: it is inside the value of `title` (joined onto its line?); put `slug` back on a line of its own with the source's value"
            ]
        );
    }

    #[test]
    fn translated_list_values_of_a_key_that_is_not_prose_were_not_reported() {
        let t = SRC.replace("  - agents\n  - tools", "  - Agenten\n  - Werkzeuge");
        let f = findings(SRC, &t);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert!(
            f[0].message.starts_with(
                "front matter list `categories` changed: item 1 is `agents` in the source but `Agenten` in the translation;"
            ),
            "{}",
            f[0].message
        );
        let (s, e) = f[0].span.unwrap();
        let at: String = t.chars().skip(s).take(e - s).collect();
        assert_eq!(at, "categories:\n  - Agenten\n  - Werkzeuge");
        // A flow list too.
        let t = SRC.replace("[llm, agents]", "[llm, agents]\nauthors: [Ann]");
        let s2 = SRC.replace("[llm, agents]", "[llm, agents]\nauthors: [Ann]");
        assert_eq!(findings(&s2, &t), vec![]);
        let t = s2.replace("authors: [Ann]", "authors: [Anna]");
        assert_eq!(
            msgs(&s2, &t),
            [
                "front matter list `authors` changed: item 1 is `Ann` in the source but `Anna` in the translation; only the values of title, subtitle, description, summary, abstract, excerpt, sidebar_label, caption, keywords are translated, keep the others as in the source"
            ]
        );
    }

    #[test]
    fn lost_added_and_renamed_keys() {
        let t = SRC.replace("slug:", "Kurzname:");
        assert_eq!(
            msgs(SRC, &t),
            [
                "front matter key `slug` is renamed to `Kurzname` in the translation; keep every key as written and translate only the values"
            ]
        );
        let t = SRC.replace("weight: 3\n", "");
        assert_eq!(
            msgs(SRC, &t),
            [
                "front matter key `weight` of the source is missing from the translation; keep every key with its value"
            ]
        );
        let t = SRC.replace("weight: 3\n", "weight: 3\ntranslators:\n  - Ann\n");
        assert_eq!(msgs(SRC, &t), Vec::<String>::new());
        let t = SRC.replace("weight: 3\n", "weight: 3\nlang: de\n");
        assert_eq!(
            msgs(SRC, &t),
            [
                "front matter key `lang` does not occur in the source; remove it (only the source's keys are kept, with their values translated where they are text)"
            ]
        );
        let t = SRC.replace("weight: 3", "weight: 4");
        assert!(
            msgs(SRC, &t)[0].starts_with("front matter value of `weight` changed from `3` to `4`")
        );
        // A translated list value keeps its shape.
        let src = SRC.replace("tags:", "keywords:");
        let t = src.replace("[llm, agents]", "LLM und Agenten");
        assert_eq!(
            msgs(&src, &t),
            [
                "front matter value of `keywords` is a list of 2 items in the source but text in the translation; translate its text and keep its shape"
            ]
        );
    }

    #[test]
    fn a_translated_tag_is_a_changed_taxonomy_key() {
        let t = SRC.replace("[llm, agents]", "[llm, Agenten]");
        let m = msgs(SRC, &t);
        assert_eq!(m.len(), 1, "{m:?}");
        assert!(m[0].starts_with("front matter list `tags` changed: item 2 is `agents` in the source but `Agenten` in the translation"), "{}", m[0]);
    }

    #[test]
    fn blocks_missing_added_unclosed_or_duplicated() {
        assert_eq!(findings("Text.\n", "Texte.\n"), vec![]);
        assert!(msgs(SRC, "Texte.\n")[0].contains("front matter is missing"));
        assert!(
            msgs("Text.\n", "---\ntitle: x\n---\n\nTexte.\n")[0]
                .contains("opens with a front matter block")
        );
        let t = SRC.replace("title: \"Tool calls\"", "title: \"Werkzeugaufrufe");
        assert!(
            msgs(SRC, &t)[0].starts_with("the translation's front matter is not valid YAML (line ")
        );
        let t = SRC.replace("weight: 3", "weight: 3\nslug: x");
        assert!(
            msgs(SRC, &t)[0].contains("duplicated key"),
            "{:?}",
            msgs(SRC, &t)
        );
        // A source that is not YAML is not compared.
        assert_eq!(
            findings("---\na: [\n---\n\nx\n", "---\nb\n---\n\ny\n"),
            vec![]
        );
    }
}
