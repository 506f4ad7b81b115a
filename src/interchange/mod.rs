//! Interchange with CAT tools and termbases: files editors already use, read and written with
//! the `csv` and `quick-xml` crates.
//!
//! | format | module | read | write |
//! |---|---|---|---|
//! | CSV / TSV glossary (header `source,target[,note][,forbidden][,origin]`, a language-code header, or DeepL's header-less `source,target[,source_lang,target_lang]`) | [`delimited`] | glossary entries | the campaign termbase, formula-safe |
//! | TBX (ISO 30042: TBX-Basic/TBX-Core, `martif`/`termEntry`/`langSet` and `tbx`/`conceptEntry`/`langSec`) | [`tbx`] | glossary entries | the campaign termbase (TBX-Basic, `martif`) |
//! | XLIFF 2.0 | [`xliff`] | edited targets → human edits | one `<file>` per chapter, one `<unit>` per translation unit |
//! | TMX 1.4b | [`tmx`] | a translation memory ([`memory::Memory`]) | every unit pair |
//! | gettext PO (as `mdbook-i18n-helpers` writes it) | [`po`] | edited `msgstr`s → human edits | the messages `mdbook-xgettext` extracts ([`xgettext`]), machine translations `fuzzy` |
//! | XLIFF 1.2 | [`xliff12`] | edited targets → human edits | one `<file>` per chapter, one `<trans-unit>` per translation unit |
//!
//! Inline Markdown that must not be translated (code, HTML, link targets, math) is carried in
//! XLIFF as `<ph>`/`<pc>` placeholders ([`inline`]), so a round trip gives back the exact bytes.
//! [`bilingual`] pairs source and target blocks for the bilingual output and report view;
//! [`align`] pairs the blocks of an existing human translation with its source, where it can
//! tell that they correspond, to seed a campaign from it.
//! Exports of a rehearsal (pseudo provider) carry a mark in each format's metadata, and a real
//! campaign refuses marked files ([`rehearsal`]).
//!
//! File formats only, over neutral types (entries, units, pairs): what a file does to a
//! campaign (memory hits, imported edits, exports assembled from its state) lives with the
//! campaign, above this layer.
//!
//! Language codes in files are matched leniently ([`crate::lang::Lang::match_score`]): `zh`,
//! `zh-CN` and `zh-Hans` all name a Simplified Chinese target.

pub mod align;
pub mod bilingual;
pub mod delimited;
pub mod inline;
pub mod memory;
pub mod po;
pub mod rehearsal;
pub mod seed;
pub mod segments;
pub mod tbx;
pub mod tmx;
pub mod xgettext;
pub mod xliff;
pub mod xliff12;
pub mod xml;

use std::path::Path;

use crate::lang::Lang;
use crate::termbase::Entry;

/// Longest source or target term accepted, in characters: a longer "term" is a column or
/// quoting mistake.
pub const MAX_TERM_CHARS: usize = 200;

/// A file that cannot be used, naming the file and (when known) the 1-based line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}{}: {message}", line.map(|l| format!(", line {l}")).unwrap_or_default())]
pub struct FileError {
    /// The file as the user named it.
    pub path: String,
    pub line: Option<u64>,
    /// What is wrong and what to do.
    pub message: String,
}

impl FileError {
    pub fn new(path: &str, line: Option<u64>, message: impl Into<String>) -> FileError {
        FileError {
            path: path.to_string(),
            line,
            message: message.into(),
        }
    }
}

/// The interchange formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Csv,
    Tsv,
    Tbx,
    Xliff,
    Tmx,
    /// gettext PO ([`po`]).
    Po,
    /// XLIFF 1.2 ([`xliff12`]); `Xliff` is 2.0.
    Xliff12,
}

impl std::str::FromStr for Format {
    type Err = crate::util::UnknownValue;
    fn from_str(s: &str) -> Result<Format, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "csv" => Ok(Format::Csv),
            "tsv" => Ok(Format::Tsv),
            "tbx" => Ok(Format::Tbx),
            "xliff" | "xlf" => Ok(Format::Xliff),
            "tmx" => Ok(Format::Tmx),
            "po" | "pot" | "gettext" => Ok(Format::Po),
            "xliff12" | "xliff1.2" | "xlf12" => Ok(Format::Xliff12),
            other => Err(crate::util::UnknownValue {
                what: "format",
                value: other.to_string(),
                choices: "xliff (2.0), xliff12, po, tmx, tbx, csv or tsv",
            }),
        }
    }
}

impl Format {
    /// The usual file extension.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::Tsv => "tsv",
            Format::Tbx => "tbx",
            Format::Xliff => "xlf",
            Format::Tmx => "tmx",
            Format::Po => "po",
            Format::Xliff12 => "xlf",
        }
    }

    /// The end of an export's default file name (`<name>.<this>`): the extension, except for
    /// XLIFF 1.2 (`xliff12.xlf`), whose default file would otherwise overwrite the XLIFF 2.0
    /// export.
    pub fn export_suffix(self) -> &'static str {
        match self {
            Format::Xliff12 => "xliff12.xlf",
            f => f.extension(),
        }
    }

    /// The format of a file: by extension (`.csv`, `.tsv`/`.tab`, `.tbx`, `.xlf`/`.xliff`,
    /// `.tmx`, `.po`/`.pot`), otherwise sniffed from its content: the root element of an XML
    /// document (`martif`/`tbx`, `xliff`, `tmx`), a PO file's `msgid` lines, else TSV when the
    /// first line has a tab and no comma, else CSV. An `xliff` root with `version="1.x"` is
    /// XLIFF 1.2, whatever the extension.
    pub fn detect(path: &Path, bytes: &[u8]) -> Format {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        let text = String::from_utf8_lossy(&bytes[..bytes.len().min(4096)]);
        let text = text.trim_start_matches('\u{feff}').trim_start();
        match ext.as_str() {
            "csv" => return Format::Csv,
            "tsv" | "tab" => return Format::Tsv,
            "tbx" => return Format::Tbx,
            "xlf" | "xliff" if xliff_version_1(text) => return Format::Xliff12,
            "xlf" | "xliff" => return Format::Xliff,
            "tmx" => return Format::Tmx,
            "po" | "pot" => return Format::Po,
            _ => {}
        }
        if text
            .lines()
            .find(|l| !l.starts_with('#') && !l.trim().is_empty())
            .is_some_and(|l| l.starts_with("msgid ") || l.starts_with("msgctxt "))
        {
            return Format::Po;
        }
        if text.starts_with('<') {
            // The first element that is not a declaration, comment or doctype.
            let mut rest = text;
            while let Some(i) = rest.find('<') {
                rest = &rest[i + 1..];
                if rest.starts_with('?') || rest.starts_with('!') {
                    continue;
                }
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || matches!(c, ':' | '_' | '-'))
                    .collect();
                let local = name.rsplit(':').next().unwrap_or("").to_ascii_lowercase();
                return match local.as_str() {
                    "xliff" if xliff_version_1(text) => Format::Xliff12,
                    "xliff" => Format::Xliff,
                    "tmx" => Format::Tmx,
                    _ => Format::Tbx,
                };
            }
            return Format::Tbx;
        }
        let first = text.lines().next().unwrap_or("");
        if first.contains('\t') && !first.contains(',') {
            Format::Tsv
        } else {
            Format::Csv
        }
    }
}

/// Whether the `<xliff` root of `text` (the start of an XML file) says `version="1.…"`.
fn xliff_version_1(text: &str) -> bool {
    let Some(i) = text.find("<xliff").or_else(|| text.find(":xliff")) else {
        return false;
    };
    let tag = &text[i..];
    let tag = &tag[..tag.find('>').unwrap_or(tag.len())];
    tag.contains("version=\"1.") || tag.contains("version='1.")
}

/// Reads a glossary file in any supported format (see [`Format::detect`]) for the language pair
/// `source` → `target`. Entries keep the origin the file records (booktr's own exports record
/// it), else [`crate::termbase::Origin::HouseStyle`]; the campaign makes every entry of its
/// `glossaries` house style.
///
/// Errors name the file and line: unreadable file, non-UTF-8 text, malformed CSV or XML, a row
/// or entry without source or target term, a term over [`MAX_TERM_CHARS`], no entry for the
/// language pair, or an XLIFF/TMX file given as a glossary.
pub fn load_glossary(
    path: &Path,
    display: &str,
    source: &Lang,
    target: &Lang,
) -> Result<Vec<Entry>, FileError> {
    let bytes = std::fs::read(path).map_err(|e| {
        FileError::new(
            display,
            None,
            format!("cannot read glossary: {e}. Check the path (relative to the campaign file)"),
        )
    })?;
    match Format::detect(path, &bytes) {
        Format::Csv => delimited::read(&bytes, display, b',', source, target),
        Format::Tsv => delimited::read(&bytes, display, b'\t', source, target),
        Format::Tbx => tbx::read(utf8(&bytes, display)?, display, source, target),
        f @ (Format::Xliff | Format::Tmx | Format::Po | Format::Xliff12) => Err(FileError::new(
            display,
            None,
            format!(
                "is a {} file, not a glossary; use it with `booktr import` (or `memory = [...]` for TMX)",
                f.extension().to_uppercase()
            ),
        )),
    }
}

/// `text` with the surrounding whitespace, BOM and line-ending style of `reference` (the unit's
/// source or current text): a CAT tool or memory may have trimmed or normalised them, and a
/// unit's trailing blank lines separate it from the next one in the chapter.
pub fn surround_like(reference: &str, text: &str) -> String {
    let bom = if reference.starts_with('\u{feff}') {
        "\u{feff}"
    } else {
        ""
    };
    let body_ref = &reference[bom.len()..];
    let lead = &body_ref[..body_ref.len() - body_ref.trim_start().len()];
    let trail = &body_ref[body_ref.trim_end().len()..];
    let body = text.trim_start_matches('\u{feff}').trim();
    let crlf = reference.contains("\r\n");
    let body = if crlf && !body.contains("\r\n") {
        body.replace('\n', "\r\n")
    } else if !crlf && !reference.contains('\r') {
        body.replace("\r\n", "\n")
    } else {
        body.to_string()
    };
    format!("{bom}{lead}{body}{trail}")
}

/// `bytes` as UTF-8 text, or an error naming the line of the first invalid byte.
pub fn utf8<'a>(bytes: &'a [u8], display: &str) -> Result<&'a str, FileError> {
    std::str::from_utf8(bytes).map_err(|e| {
        let at = e.valid_up_to();
        let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() as u64 + 1;
        FileError::new(
            display,
            Some(line),
            "is not UTF-8 text; save it as UTF-8 and try again",
        )
    })
}

/// Picks, among `(language code, value)` sections, the value whose code best matches `lang`
/// (see [`Lang::match_score`]); the first of equally good ones. `None` when no code matches.
pub fn best_match<'a, T>(lang: &Lang, sections: &'a [(String, T)]) -> Option<&'a T> {
    let mut best: Option<(u8, &T)> = None;
    for (code, v) in sections {
        let s = lang.match_score(code);
        if s > 0 && best.is_none_or(|(b, _)| s > b) {
            best = Some((s, v));
        }
    }
    best.map(|(_, v)| v)
}

/// Checks one entry read from `display` at `line`: both terms present and of term length.
pub(crate) fn check_terms(
    display: &str,
    line: Option<u64>,
    source: &str,
    target: &str,
) -> Result<(), FileError> {
    if source.chars().count() > MAX_TERM_CHARS || target.chars().count() > MAX_TERM_CHARS {
        return Err(FileError::new(
            display,
            line,
            format!(
                "a term longer than {MAX_TERM_CHARS} characters is not a term; check the column order and quoting"
            ),
        ));
    }
    if source.is_empty() || target.is_empty() {
        return Err(FileError::new(
            display,
            line,
            "an entry needs both a source and a target term; fill in the empty one or delete the entry",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_by_extension_and_content() {
        let p = Path::new;
        assert_eq!(Format::detect(p("g.TSV"), b"a,b"), Format::Tsv);
        assert_eq!(Format::detect(p("g.txt"), b"a\tb\n"), Format::Tsv);
        assert_eq!(Format::detect(p("g.txt"), b"a,b\tc\n"), Format::Csv);
        assert_eq!(
            Format::detect(
                p("g.xml"),
                b"\xEF\xBB\xBF<?xml version=\"1.0\"?>\n<!-- x --><martif>"
            ),
            Format::Tbx
        );
        assert_eq!(
            Format::detect(p("g.xml"), b"<tbx xmlns=\"urn:iso:std:iso:30042:ed-2\">"),
            Format::Tbx
        );
        assert_eq!(
            Format::detect(p("g"), b"<x:xliff version=\"2.0\">"),
            Format::Xliff
        );
        assert_eq!(
            Format::detect(p("g"), b"<tmx version=\"1.4\">"),
            Format::Tmx
        );
        assert_eq!(
            Format::detect(
                p("g.xlf"),
                b"<?xml version=\"1.0\"?><xliff version=\"1.2\">"
            ),
            Format::Xliff12
        );
        assert_eq!(
            Format::detect(p("g.txt"), b"# comment\nmsgid \"\"\nmsgstr \"\"\n"),
            Format::Po
        );
        assert_eq!(Format::detect(p("g.po"), b""), Format::Po);
    }

    #[test]
    fn best_match_prefers_exact_codes() {
        let zh = Lang::parse("zh-CN");
        let v = vec![
            ("zh-TW".to_string(), 1),
            ("zh".to_string(), 2),
            ("zh-cn".to_string(), 3),
        ];
        assert_eq!(best_match(&zh, &v), Some(&3));
        assert_eq!(best_match(&zh, &v[..2]), Some(&2));
        assert_eq!(best_match(&Lang::parse("ja"), &v), None);
    }

    #[test]
    fn surround_like_restores_whitespace_and_line_endings() {
        assert_eq!(surround_like("\n  A.\n\n", "甲。"), "\n  甲。\n\n");
        assert_eq!(
            surround_like("A\r\nB\r\n\r\n", "甲\n乙\n"),
            "甲\r\n乙\r\n\r\n"
        );
        assert_eq!(
            surround_like("\u{feff}A\n", "\u{feff}甲\r\n"),
            "\u{feff}甲\n"
        );
    }

    #[test]
    fn error_display_names_file_and_line() {
        assert_eq!(
            FileError::new("g.csv", Some(3), "bad").to_string(),
            "g.csv, line 3: bad"
        );
        assert_eq!(
            FileError::new("g.csv", None, "bad").to_string(),
            "g.csv: bad"
        );
    }
}
