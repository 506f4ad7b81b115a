//! The rehearsal mark of interchange files: what a campaign run with the offline `pseudo`
//! provider writes into its exports so that its pseudo text never passes for translations, and
//! how a file is recognised as such an export.
//!
//! Each format carries the mark in its own metadata place, valid for its schema (the exports
//! still open in translate-toolkit):
//!
//! | format | mark |
//! |---|---|
//! | TMX 1.4b | `<header>` › `<prop type="x-booktr-rehearsal">true</prop>` plus a human-readable `<note>` |
//! | XLIFF 2.0 | every `<file>` › `<mda:metadata>` (Metadata module, `urn:oasis:names:tc:xliff:metadata:2.0`) › `<mda:metaGroup category="booktr">` › `<mda:meta type="x-booktr-rehearsal">true</mda:meta>`, plus a file-level `<note category="booktr:rehearsal">` that CAT tools show |
//! | TBX (martif) | `<martifHeader>` › `<fileDesc>` › `<titleStmt>` › `<note>x-booktr-rehearsal: true. …</note>` |
//! | CSV / TSV termbase | an extra column `rehearsal` whose cell is `true` in every row (readers, booktr's included, ignore columns they do not know) |
//! | gettext PO | a header comment line `# x-booktr-rehearsal: true. …` |
//! | XLIFF 1.2 | every `<file>` › `<header>` › `<note from="booktr:rehearsal">x-booktr-rehearsal: true. …</note>` |
//! | bilingual Markdown | an HTML comment `<!-- x-booktr-rehearsal: true … -->` (first line, or last when the chapter starts with front matter) |
//!
//! A real (non-pseudo) campaign refuses a marked file as `memory`, as a glossary and as `booktr
//! import` input (exit 2, naming the file and the remedy); a pseudo campaign may use it.
//! [`looks_pseudo`] recognises the pseudo generator's text ([`crate::llm::pseudo`]) that lost
//! its mark, for a warning.

use super::Format;
use super::xml::{self, Node};
use crate::lang::{Script, script_of};

/// The property type, metadata type and note prefix of the mark.
pub const MARK: &str = "x-booktr-rehearsal";

/// The CSV/TSV column of the mark.
pub const CSV_COLUMN: &str = "rehearsal";

/// The XLIFF 2.0 Metadata module namespace.
pub const MDA_NS: &str = "urn:oasis:names:tc:xliff:metadata:2.0";

/// The human-readable note written beside the machine mark.
pub const NOTE: &str = "REHEARSAL: exported from a campaign run with the offline pseudo provider. The targets are pseudo text, not translations; do not use this file as a translation memory, glossary or import of a real campaign.";

/// The TBX header note (the mark, then [`NOTE`]).
pub fn tbx_note() -> String {
    format!("{MARK}: true. {NOTE}")
}

/// Whether `bytes` (a file of format `format`) carries the rehearsal mark (see the module
/// docs). A file that does not parse carries no mark: its reader reports the error.
pub fn is_marked(format: Format, bytes: &[u8]) -> bool {
    match format {
        Format::Csv => csv_marked(bytes, b','),
        Format::Tsv => csv_marked(bytes, b'\t'),
        Format::Po => std::str::from_utf8(bytes).is_ok_and(super::po::is_marked),
        Format::Tmx | Format::Xliff | Format::Tbx | Format::Xliff12 => {
            let Ok(text) = std::str::from_utf8(bytes) else {
                return false;
            };
            let Ok(nodes) = xml::parse(text, "") else {
                return false;
            };
            xml_marked(format, &nodes)
        }
    }
}

fn xml_marked(format: Format, nodes: &[Node]) -> bool {
    let mut i = 0;
    while i < nodes.len() {
        let n = &nodes[i];
        let hit = match format {
            Format::Tmx => {
                n.is_start("header") && {
                    let end = xml::skip(nodes, i);
                    (i..end).any(|j| {
                        nodes[j].is_start("prop")
                            && nodes[j].attr("type") == Some(MARK)
                            && xml::text_until_end(nodes, j).0.trim() == "true"
                    })
                }
            }
            Format::Xliff | Format::Xliff12 => {
                (n.is_start("meta")
                    && n.attr("type") == Some(MARK)
                    && xml::text_until_end(nodes, i).0.trim() == "true")
                    || (n.is_start("note") && n.attr("category") == Some("booktr:rehearsal"))
                    || (n.is_start("note") && n.attr("from") == Some("booktr:rehearsal"))
            }
            _ => {
                (n.is_start("martifHeader") || n.is_start("tbxHeader")) && {
                    let end = xml::skip(nodes, i);
                    (i..end).any(|j| {
                        nodes[j].is_start("note")
                            && xml::text_until_end(nodes, j)
                                .0
                                .trim_start()
                                .starts_with(&format!("{MARK}: true"))
                    })
                }
            }
        };
        if hit {
            return true;
        }
        i += 1;
    }
    false
}

fn csv_marked(bytes: &[u8], delimiter: u8) -> bool {
    let bytes = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(bytes);
    let mut r = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .has_headers(false)
        .flexible(true)
        .from_reader(bytes);
    let mut records = r.records();
    let Some(Ok(header)) = records.next() else {
        return false;
    };
    let Some(col) = header
        .iter()
        .position(|h| h.trim().eq_ignore_ascii_case(CSV_COLUMN))
    else {
        return false;
    };
    records.flatten().any(|rec| {
        rec.get(col)
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
    })
}

/// The message refusing `display`, a marked file, as `what` (e.g. "a translation memory") of
/// the real campaign `campaign_file`, with the remedy.
pub fn refusal(display: &str, what: &str, campaign_file: &str, remedy: &str) -> String {
    format!(
        "{display} is an export of a rehearsal (a campaign run with the offline `pseudo` provider; it carries the `{MARK}` mark): its targets are pseudo text, not translations, so the real campaign {campaign_file} does not take it as {what}. {remedy} Export the file again from a campaign run with a real provider; a rehearsal (`--provider pseudo`) may still use this one."
    )
}

/// `text` (a bilingual chapter) with the rehearsal mark as an HTML comment: on the first line,
/// or on the last when the text starts with front matter or a BOM (which must stay first).
pub fn mark_markdown(text: &str) -> String {
    let comment = format!("<!-- {MARK}: true. {NOTE} -->");
    if text.starts_with("---") || text.starts_with("+++") || text.starts_with('\u{feff}') {
        let sep = if text.ends_with('\n') { "" } else { "\n" };
        format!("{text}{sep}\n{comment}\n")
    } else {
        format!("{comment}\n\n{text}")
    }
}

/// Shortest run of CJK letters (Han, kana, Hangul) [`looks_pseudo`] judges, in characters:
/// below it, a short term could consist of these characters by chance.
pub const MIN_PSEUDO_LETTERS: usize = 8;

/// Whether `text` looks like the pseudo generator's CJK output: at least
/// [`MIN_PSEUDO_LETTERS`] Han, kana or Hangul letters, of which at least 90 % are the pseudo
/// syllables ([`crate::llm::pseudo::syllables`]: 伪译演练样文, ギジホンヤク, 가짜번역연습).
/// Real prose in these scripts draws on thousands of characters, so it never comes close; a
/// Latin-script pseudo-localisation (accented letters) is not recognised.
pub fn looks_pseudo(text: &str) -> bool {
    let tables: Vec<&[char]> = [Script::Han, Script::Japanese, Script::Hangul]
        .into_iter()
        .filter_map(crate::llm::pseudo::syllables)
        .collect();
    let (mut letters, mut pseudo) = (0usize, 0usize);
    for c in text.chars() {
        if matches!(
            script_of(c),
            Some(Script::Han | Script::Japanese | Script::Hangul)
        ) {
            letters += 1;
            if tables.iter().any(|t| t.contains(&c)) {
                pseudo += 1;
            }
        }
    }
    letters >= MIN_PSEUDO_LETTERS && pseudo * 10 >= letters * 9
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_are_found_only_in_their_metadata_place() {
        let tmx = format!(
            "<tmx version=\"1.4\"><header srclang=\"en\"><note>x</note><prop type=\"{MARK}\">true</prop></header><body/></tmx>"
        );
        assert!(is_marked(Format::Tmx, tmx.as_bytes()));
        // The same words in a segment are not a mark.
        let text_only = format!(
            "<tmx version=\"1.4\"><header srclang=\"en\"/><body><tu><prop type=\"{MARK}\">true</prop></tu></body></tmx>"
        );
        assert!(!is_marked(Format::Tmx, text_only.as_bytes()));
        assert!(!is_marked(Format::Tmx, b"<tmx><header"));
        let xlf = format!(
            "<xliff xmlns=\"urn:oasis:names:tc:xliff:document:2.0\" xmlns:mda=\"{MDA_NS}\" version=\"2.0\"><file id=\"f\"><mda:metadata><mda:metaGroup category=\"booktr\"><mda:meta type=\"{MARK}\">true</mda:meta></mda:metaGroup></mda:metadata></file></xliff>"
        );
        assert!(is_marked(Format::Xliff, xlf.as_bytes()));
        assert!(!is_marked(
            Format::Xliff,
            b"<xliff version=\"2.0\"><file id=\"f\"/></xliff>"
        ));
        let tbx = format!(
            "<martif><martifHeader><fileDesc><titleStmt><title>t</title><note>{}</note></titleStmt></fileDesc></martifHeader><text/></martif>",
            tbx_note()
        );
        assert!(is_marked(Format::Tbx, tbx.as_bytes()));
        assert!(!is_marked(
            Format::Tbx,
            b"<martif><martifHeader/><text><body><termEntry><note>x-booktr-rehearsal: true</note></termEntry></body></text></martif>"
        ));
        assert!(is_marked(
            Format::Csv,
            "\u{feff}source,target,note,forbidden,origin,rehearsal\nAgent,伪译,,,agent,true\n"
                .as_bytes()
        ));
        assert!(is_marked(
            Format::Tsv,
            b"source\ttarget\tRehearsal\nAgent\tx\tTRUE\n"
        ));
        assert!(!is_marked(Format::Csv, b"source,target\nrehearsal,true\n"));
        assert!(!is_marked(Format::Csv, b"source,target,rehearsal\na,b,\n"));
    }

    #[test]
    fn markdown_mark_keeps_front_matter_first() {
        assert!(mark_markdown("# T\n").starts_with(&format!("<!-- {MARK}: true.")));
        let fm = mark_markdown("---\ntitle: x\n---\n\n# T\n");
        assert!(fm.starts_with("---\ntitle: x\n---\n"));
        assert!(fm.trim_end().ends_with("-->"));
    }

    #[test]
    fn pseudo_text_is_recognised_and_real_text_is_not() {
        let zh = crate::lang::Lang::parse("zh");
        let pseudo = crate::llm::pseudo::pseudo_translate(
            "The agent reads its context window and calls a tool before it plans the next step.",
            &zh,
            &[],
        );
        assert!(looks_pseudo(&pseudo), "{pseudo}");
        assert!(looks_pseudo("伪译演练样文伪译 `code` 演练样文。"));
        assert!(!looks_pseudo(
            "智能体读取其上下文窗口，并在规划下一步之前调用工具。"
        ));
        assert!(
            !looks_pseudo("伪译演练"),
            "too short to judge: {MIN_PSEUDO_LETTERS} letters at least"
        );
        assert!(!looks_pseudo("The agent reads."));
    }
}
