//! CSV and TSV glossaries, read and written with the `csv` crate.
//!
//! Three layouts are read, told apart by the first row:
//!
//! 1. a **named header**: columns `source` and `target` (or `term`/`translation`, `source term`/
//!    `target term`), optional `note`, `forbidden` (renderings QA must flag, separated by `;` or
//!    `|`) and `origin` (`house_style`, `agent`, `reconciled`, as booktr exports it), in any
//!    order;
//! 2. a **language-code header**: two columns named by language codes (`en,zh-CN`), matched
//!    leniently against the campaign's languages, with the optional named columns beside them;
//! 3. **no header**, as DeepL glossaries are written: `source,target`, or
//!    `source,target,source_lang,target_lang` where rows of another language pair are skipped.
//!
//! Export writes a named header `source,target,note,forbidden,origin` (plus `,variants` when an
//! entry has variants). A spreadsheet would run a
//! cell starting with `=`, `+`, `-`, `@`, a tab or a carriage return as a formula (CSV
//! injection, OWASP), so such cells are written with a leading `'` ([`neutralize`]); reading
//! removes it again ([`restore`]), so export → import → export is stable.

use std::borrow::Cow;

use super::{FileError, check_terms};
use crate::lang::Lang;
use crate::termbase::{Entry, Origin};

/// First characters that make a spreadsheet treat a cell as a formula (OWASP, "CSV Injection").
const FORMULA_STARTS: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// `cell` made safe to open in a spreadsheet: a leading `'` when the cell, after any leading
/// `'`s, starts with a formula character. [`restore`] undoes it exactly.
pub fn neutralize(cell: &str) -> Cow<'_, str> {
    if cell.trim_start_matches('\'').starts_with(FORMULA_STARTS) {
        Cow::Owned(format!("'{cell}"))
    } else {
        Cow::Borrowed(cell)
    }
}

/// The inverse of [`neutralize`]: removes the one `'` it added.
pub fn restore(cell: &str) -> &str {
    match cell.strip_prefix('\'') {
        Some(rest) if rest.trim_start_matches('\'').starts_with(FORMULA_STARTS) => rest,
        _ => cell,
    }
}

/// The name booktr writes for an origin.
pub fn origin_name(o: Origin) -> &'static str {
    match o {
        Origin::HouseStyle => "house_style",
        Origin::Agent => "agent",
        Origin::Reconciled => "reconciled",
        Origin::Editor => "editor",
    }
}

/// Reads an origin name (`house_style`, `house style`, `agent`, `reconciled`, `editor`; any
/// case).
pub fn parse_origin(s: &str) -> Option<Origin> {
    match s
        .trim()
        .to_ascii_lowercase()
        .replace([' ', '-'], "_")
        .as_str()
    {
        "house_style" | "house" => Some(Origin::HouseStyle),
        "agent" => Some(Origin::Agent),
        "reconciled" => Some(Origin::Reconciled),
        "editor" => Some(Origin::Editor),
        _ => None,
    }
}

#[derive(Debug, Default)]
struct Columns {
    source: usize,
    target: usize,
    note: Option<usize>,
    forbidden: Option<usize>,
    origin: Option<usize>,
    /// The `allowed`/`variants` column: accepted other renderings (inflected forms).
    variants: Option<usize>,
    /// Header-less DeepL rows with language columns: (source lang column, target lang column).
    langs: Option<(usize, usize)>,
    has_header: bool,
}

fn named(h: &str) -> Option<&'static str> {
    match h
        .trim()
        .to_ascii_lowercase()
        .replace(['_', '-'], " ")
        .as_str()
    {
        "source" | "source term" | "term" | "src" | "source text" => Some("source"),
        "target" | "target term" | "translation" | "tgt" | "target text" => Some("target"),
        "note" | "notes" | "comment" | "comments" | "description" | "definition" => Some("note"),
        "forbidden" | "do not use" | "deprecated" => Some("forbidden"),
        "origin" => Some("origin"),
        "variants" | "variant" | "allowed" | "allowed forms" | "inflections" | "forms" => {
            Some("variants")
        }
        _ => None,
    }
}

/// Whether `s` looks like a BCP 47 language tag (`en`, `zh-Hans-CN`, `pt_BR`).
fn looks_like_lang(s: &str) -> bool {
    let mut parts = s.trim().split(['-', '_']);
    let primary = parts.next().unwrap_or("");
    (2..=3).contains(&primary.len())
        && primary.chars().all(|c| c.is_ascii_alphabetic())
        && parts.all(|p| (1..=8).contains(&p.len()) && p.chars().all(|c| c.is_ascii_alphanumeric()))
}

fn layout(
    first: &csv::StringRecord,
    display: &str,
    source: &Lang,
    target: &Lang,
) -> Result<Columns, FileError> {
    let fields: Vec<&str> = first.iter().collect();
    let find = |what: &str| fields.iter().position(|f| named(f) == Some(what));
    let (s, t) = (find("source"), find("target"));
    let others = |c: &mut Columns| {
        c.note = find("note");
        c.forbidden = find("forbidden");
        c.origin = find("origin");
        c.variants = find("variants");
    };
    if s.is_some() || t.is_some() {
        let (Some(s), Some(t)) = (s, t) else {
            return Err(FileError::new(
                display,
                Some(1),
                format!(
                    "the header needs both a `source` and a `target` column, found `{}`. Fix the header line",
                    fields.join(",")
                ),
            ));
        };
        let mut c = Columns {
            source: s,
            target: t,
            has_header: true,
            ..Default::default()
        };
        others(&mut c);
        return Ok(c);
    }
    // A header of language codes.
    let score = |lang: &Lang, f: &str| {
        if looks_like_lang(f) {
            lang.match_score(f)
        } else {
            0
        }
    };
    let best = |lang: &Lang, skip: Option<usize>| {
        fields
            .iter()
            .enumerate()
            .filter(|(i, _)| Some(*i) != skip)
            .map(|(i, f)| (score(lang, f), std::cmp::Reverse(i), i))
            .filter(|(s, _, _)| *s > 0)
            .max()
            .map(|(_, _, i)| i)
    };
    // Only a row of nothing but language codes and column names is a header: a DeepL row
    // `tool,工具,en,zh` has codes too, beside its terms.
    let all_header = fields
        .iter()
        .all(|f| f.is_empty() || looks_like_lang(f) || named(f).is_some());
    if all_header
        && let Some(s) = best(source, None)
        && let Some(t) = best(target, Some(s))
    {
        let mut c = Columns {
            source: s,
            target: t,
            has_header: true,
            ..Default::default()
        };
        others(&mut c);
        return Ok(c);
    }
    if fields.len() < 2 {
        return Err(FileError::new(
            display,
            Some(1),
            "a glossary row needs at least two columns (source and target term); add a header `source,target,note` or check the delimiter",
        ));
    }
    // No header: DeepL's `source,target[,source_lang,target_lang]`.
    let langs = (fields.len() >= 4 && looks_like_lang(fields[2]) && looks_like_lang(fields[3]))
        .then_some((2, 3));
    Ok(Columns {
        source: 0,
        target: 1,
        note: (fields.len() == 3).then_some(2),
        langs,
        ..Default::default()
    })
}

/// Reads glossary rows separated by `delimiter` (`b','` or `b'\t'`); see the module docs for
/// the layouts. A leading BOM and blank rows are accepted; a header alone gives no entry.
///
/// Errors name the file and the 1-based line: malformed rows, non-UTF-8 text, an empty or
/// over-long term, an unknown `origin`, an empty file, or (with language columns) no row for
/// the pair.
pub fn read(
    bytes: &[u8],
    display: &str,
    delimiter: u8,
    source: &Lang,
    target: &Lang,
) -> Result<Vec<Entry>, FileError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(delimiter)
        .trim(csv::Trim::All)
        .from_reader(bytes);
    let mut records = Vec::new();
    for rec in rdr.records() {
        let rec = rec.map_err(|e| {
            let line = e.position().map(|p| p.line());
            let message = match e.kind() {
                csv::ErrorKind::Utf8 { .. } => {
                    "is not UTF-8 text; save it as UTF-8 and try again".to_string()
                }
                _ => format!("{e}; check quoting and the delimiter"),
            };
            FileError::new(display, line, message)
        })?;
        if rec.iter().all(|f| f.is_empty()) {
            continue;
        }
        records.push(rec);
    }
    let Some(first) = records.first() else {
        return Err(FileError::new(display, None, "has no glossary entry"));
    };
    let cols = layout(first, display, source, target)?;
    let mut entries = Vec::new();
    let mut other_pairs: Option<(String, String)> = None;
    for rec in records.iter().skip(usize::from(cols.has_header)) {
        let line = rec.position().map(|p| p.line());
        let get = |i: Option<usize>| i.and_then(|i| rec.get(i)).map(restore).unwrap_or("");
        if let Some((sl, tl)) = cols.langs {
            let (a, b) = (get(Some(sl)), get(Some(tl)));
            if source.match_score(a) == 0 || target.match_score(b) == 0 {
                other_pairs.get_or_insert((a.to_string(), b.to_string()));
                continue;
            }
        }
        let (s, t) = (get(Some(cols.source)), get(Some(cols.target)));
        check_terms(display, line, s, t)?;
        let origin = match cols
            .origin
            .and_then(|i| rec.get(i))
            .filter(|o| !o.is_empty())
        {
            None => Origin::HouseStyle,
            Some(o) => parse_origin(o).ok_or_else(|| {
                FileError::new(
                    display,
                    line,
                    format!("origin `{o}` is not one of house_style, agent, reconciled, editor"),
                )
            })?,
        };
        entries.push(Entry {
            source: s.to_string(),
            target: t.to_string(),
            note: get(cols.note).to_string(),
            origin,
            forbidden: get(cols.forbidden)
                .split([';', '|'])
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect(),
            variants: get(cols.variants)
                .split([';', '|'])
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect(),
        });
    }
    // A header with no row under it is an empty glossary (a house style not written yet, or a
    // review table whose every row the editor deleted); rows only for other language pairs,
    // or no row at all, are a mistake.
    if entries.is_empty() && !(cols.has_header && other_pairs.is_none()) {
        let why = match other_pairs {
            Some((a, b)) => format!(
                "has no entry for {} → {} (its rows are for {a} → {b})",
                source.code, target.code
            ),
            None => "has no glossary entry".into(),
        };
        return Err(FileError::new(display, None, why));
    }
    Ok(entries)
}

/// Writes `entries` with the header `source,target,note,forbidden,origin` (`forbidden` joined
/// by `; `), every cell passed through [`neutralize`]. `delimiter` is `b','` or `b'\t'`.
pub fn write(entries: &[Entry], delimiter: u8) -> Vec<u8> {
    write_marked(entries, delimiter, false)
}

/// [`write`], with the rehearsal mark when `rehearsal` is true: a last column
/// [`super::rehearsal::CSV_COLUMN`] (`rehearsal`) holding `true` in every row. Readers take
/// the columns they know by name and ignore the others, so the file still reads as a glossary.
pub fn write_marked(entries: &[Entry], delimiter: u8, rehearsal: bool) -> Vec<u8> {
    let mut w = csv::WriterBuilder::new()
        .delimiter(delimiter)
        .from_writer(Vec::new());
    let row = |w: &mut csv::Writer<Vec<u8>>, cells: &[&str], mark: &str| {
        let mut cells: Vec<String> = cells.iter().map(|c| neutralize(c).into_owned()).collect();
        if rehearsal {
            cells.push(mark.to_string());
        }
        w.write_record(cells).expect("writing to memory");
    };
    // The `variants` column is written only when an entry has variants, so termbases without
    // any keep the five-column layout other tools already read.
    let with_variants = entries.iter().any(|e| !e.variants.is_empty());
    let header = [
        "source",
        "target",
        "note",
        "forbidden",
        "origin",
        "variants",
    ];
    row(
        &mut w,
        &header[..5 + usize::from(with_variants)],
        super::rehearsal::CSV_COLUMN,
    );
    for e in entries {
        let variants = e.variants.join("; ");
        let cells = [
            e.source.as_str(),
            &e.target,
            &e.note,
            &e.forbidden.join("; "),
            origin_name(e.origin),
            &variants,
        ];
        row(&mut w, &cells[..5 + usize::from(with_variants)], "true");
    }
    w.into_inner().expect("writing to memory")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn en() -> Lang {
        Lang::parse("en")
    }
    fn zh() -> Lang {
        Lang::parse("zh-CN")
    }
    fn rd(text: &str) -> Result<Vec<Entry>, FileError> {
        read(text.as_bytes(), "g.csv", b',', &en(), &zh())
    }

    #[test]
    fn variants_column_is_read_and_written() {
        let ru = Lang::parse("ru");
        let text = "source,target,allowed,forbidden\nstonekeeper,камнехранитель,камнехранителям; камнехранителей,камнеед\n";
        let e = read(text.as_bytes(), "g.csv", b',', &en(), &ru).unwrap();
        assert_eq!(e[0].variants, vec!["камнехранителям", "камнехранителей"]);
        assert_eq!(e[0].forbidden, vec!["камнеед"]);
        let out = String::from_utf8(write(&e, b',')).unwrap();
        assert!(
            out.starts_with("source,target,note,forbidden,origin,variants\n"),
            "{out}"
        );
        assert_eq!(read(out.as_bytes(), "g.csv", b',', &en(), &ru).unwrap(), e);
        // Without variants the export keeps its five columns.
        let plain = write(
            &[Entry {
                variants: Vec::new(),
                ..e[0].clone()
            }],
            b',',
        );
        assert!(
            String::from_utf8(plain)
                .unwrap()
                .starts_with("source,target,note,forbidden,origin\n")
        );
    }

    #[test]
    fn named_header_in_any_order_with_bom() {
        let e = read(
            "\u{feff}note,target,source,forbidden\ncore,智能体,Agent,代理| 代理人\n\n".as_bytes(),
            "g.csv",
            b',',
            &en(),
            &zh(),
        )
        .unwrap();
        assert_eq!(e.len(), 1);
        assert_eq!(
            (e[0].source.as_str(), e[0].target.as_str()),
            ("Agent", "智能体")
        );
        assert_eq!(e[0].note, "core");
        assert_eq!(e[0].forbidden, vec!["代理", "代理人"]);
        assert_eq!(e[0].origin, Origin::HouseStyle);
    }

    #[test]
    fn language_code_header_is_matched_leniently() {
        let e = rd("zh-Hans,en-US,note\n智能体,Agent,n\n").unwrap();
        assert_eq!(
            (e[0].source.as_str(), e[0].target.as_str()),
            ("Agent", "智能体")
        );
        assert_eq!(e[0].note, "n");
    }

    #[test]
    fn deepl_headerless_two_and_four_columns() {
        let e = rd("Agent,智能体\ntool,工具\n").unwrap();
        assert_eq!(e.len(), 2);
        assert_eq!(e[1].target, "工具");
        let e = rd("Agent,智能体,en,zh\nAgent,Agent,en,de\ntool,工具,EN,ZH\n").unwrap();
        assert_eq!(e.len(), 2, "the first row is an entry, not a header: {e:?}");
        assert_eq!(
            e.iter().map(|e| e.target.as_str()).collect::<Vec<_>>(),
            ["智能体", "工具"]
        );
        let err = rd("Agent,Agent,en,de\n").unwrap_err();
        assert!(err.to_string().contains("en → de"), "{err}");
    }

    #[test]
    fn tsv() {
        let e = read(
            "source\ttarget\nAgent\t智能体\n".as_bytes(),
            "g.tsv",
            b'\t',
            &en(),
            &zh(),
        )
        .unwrap();
        assert_eq!(e[0].target, "智能体");
    }

    #[test]
    fn malformed_rows_name_file_and_line() {
        let err = rd("source,target\nA,B\nC,\n").unwrap_err();
        assert_eq!((err.path.as_str(), err.line), ("g.csv", Some(3)), "{err}");
        let err = rd("source,note\nA,B\n").unwrap_err();
        assert_eq!(err.line, Some(1));
        assert!(err.to_string().contains("`target`"), "{err}");
        let err = rd("just-one-column\n").unwrap_err();
        assert!(err.to_string().contains("two columns"), "{err}");
        let err = rd(&format!("source,target\nA,{}\n", "x".repeat(300))).unwrap_err();
        assert_eq!(err.line, Some(2));
        let err = rd("source,target,origin\nA,B,robot\n").unwrap_err();
        assert!(
            err.to_string().contains("robot") && err.line == Some(2),
            "{err}"
        );
        let err = read(b"source,target\nA,\xff\xfe\n", "g.csv", b',', &en(), &zh()).unwrap_err();
        assert!(
            err.to_string().contains("UTF-8") && err.line == Some(2),
            "{err}"
        );
        assert!(
            rd("\n\n")
                .unwrap_err()
                .to_string()
                .contains("no glossary entry")
        );
        assert_eq!(
            rd("source,target,note\n").unwrap(),
            vec![],
            "a header alone is empty"
        );
    }

    #[test]
    fn export_neutralises_formulas() {
        let e = Entry {
            source: "=HYPERLINK(\"http://x\")".into(),
            target: "@SUM(A1)".into(),
            note: "-2+3".into(),
            origin: Origin::Agent,
            forbidden: vec!["+x".into()],
            variants: Vec::new(),
        };
        let text = String::from_utf8(write(std::slice::from_ref(&e), b',')).unwrap();
        for line in text.lines().skip(1) {
            let mut r = csv::ReaderBuilder::new()
                .has_headers(false)
                .from_reader(line.as_bytes());
            for cell in r.records().next().unwrap().unwrap().iter() {
                assert!(!cell.starts_with(FORMULA_STARTS), "{cell:?} in {line}");
            }
        }
        assert_eq!(rd(&text).unwrap(), vec![e]);
    }

    fn term() -> impl Strategy<Value = String> {
        // Terms as entries hold them: trimmed, non-empty, any characters (quotes, delimiters,
        // formula starts, CJK) but no line breaks.
        "['=+@\\-]{0,2}[^\\r\\n]{0,20}"
            .prop_map(|s| s.trim().to_string())
            .prop_filter("non-empty", |s| !s.is_empty())
    }

    proptest! {
        #[test]
        fn neutralize_round_trips(s in "['=+@\\-\\t\\r]{0,3}.{0,8}") {
            let n = neutralize(&s);
            prop_assert_eq!(restore(&n), s.as_str());
            prop_assert!(!neutralize(&s).starts_with(FORMULA_STARTS));
        }

        #[test]
        fn export_import_export_is_stable(
            rows in proptest::collection::vec((term(), term(), term(), 0..3u8, proptest::collection::vec("[^;|\\r\\n]{1,6}", 0..3)), 1..6)
        ) {
            let entries: Vec<Entry> = rows
                .into_iter()
                .map(|(s, t, n, o, f)| Entry {
                    source: s,
                    target: t,
                    note: n,
                    origin: [Origin::HouseStyle, Origin::Agent, Origin::Reconciled][o as usize],
                    forbidden: f.iter().map(|x| x.trim().to_string()).filter(|x| !x.is_empty()).collect(),
                    variants: Vec::new(),
                })
                .collect();
            for delim in [b',', b'\t'] {
                let once = write(&entries, delim);
                let back = read(&once, "g.csv", delim, &en(), &zh()).unwrap();
                prop_assert_eq!(&back, &entries);
                prop_assert_eq!(write(&back, delim), once);
            }
        }
    }
}
