//! Reading house-style glossary CSV files (`source,target,note`) with the `csv` crate.

use std::path::Path;

use super::{Entry, Origin, Termbase};

/// A glossary file that cannot be used, naming the file and line.
#[derive(Debug, thiserror::Error)]
pub enum GlossaryFileError {
    #[error("cannot read glossary {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "glossary {path}: the header must start with `source,target` (optionally `,note`), found `{found}`. Add that header line."
    )]
    Header { path: String, found: String },
    #[error("glossary {path}, line {line}: {message}")]
    Row {
        path: String,
        line: u64,
        message: String,
    },
}

/// Longest source or target term accepted, in characters.
pub const MAX_TERM_CHARS: usize = 200;

/// Loads a house-style glossary CSV: a header `source,target[,note][,forbidden]` then one entry
/// per row; `forbidden` lists renderings QA must flag, separated by `;` or `|`.
/// Every entry gets [`Origin::HouseStyle`]. Blank rows are skipped. A leading BOM is accepted.
///
/// Errors name the file and the 1-based line: a wrong header, a row with an empty source or
/// target, a malformed CSV row, or non-UTF-8 content.
pub fn load_csv(path: &Path, display: &str) -> Result<Termbase, GlossaryFileError> {
    let bytes = std::fs::read(path).map_err(|source| GlossaryFileError::Io {
        path: display.to_string(),
        source,
    })?;
    parse_csv(&bytes, display)
}

/// Parses glossary CSV bytes; see [`load_csv`].
pub fn parse_csv(bytes: &[u8], display: &str) -> Result<Termbase, GlossaryFileError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(bytes);
    let headers = rdr
        .headers()
        .map_err(|e| GlossaryFileError::Row {
            path: display.into(),
            line: 1,
            message: e.to_string(),
        })?
        .clone();
    let h: Vec<String> = headers.iter().map(|s| s.to_ascii_lowercase()).collect();
    if h.first().map(String::as_str) != Some("source")
        || h.get(1).map(String::as_str) != Some("target")
    {
        return Err(GlossaryFileError::Header {
            path: display.into(),
            found: headers.iter().collect::<Vec<_>>().join(","),
        });
    }
    let note_col = h.iter().position(|c| c == "note");
    let forbidden_col = h.iter().position(|c| c == "forbidden");
    let mut entries = Vec::new();
    for rec in rdr.records() {
        let rec = rec.map_err(|e| GlossaryFileError::Row {
            path: display.into(),
            line: e.position().map_or(0, |p| p.line()),
            message: format!("{e}; check quoting and UTF-8 encoding"),
        })?;
        let line = rec.position().map_or(0, |p| p.line());
        if rec.iter().all(|f| f.is_empty()) {
            continue;
        }
        let source = rec.get(0).unwrap_or("").to_string();
        let target = rec.get(1).unwrap_or("").to_string();
        if source.chars().count() > MAX_TERM_CHARS || target.chars().count() > MAX_TERM_CHARS {
            return Err(GlossaryFileError::Row {
                path: display.into(),
                line,
                message: format!(
                    "a term longer than {MAX_TERM_CHARS} characters is not a term; check the column order and quoting"
                ),
            });
        }
        if source.is_empty() || target.is_empty() {
            return Err(GlossaryFileError::Row {
                path: display.into(),
                line,
                message: "an entry needs both `source` and `target`; fill in the empty field or delete the row".into(),
            });
        }
        let note = note_col.and_then(|i| rec.get(i)).unwrap_or("").to_string();
        let forbidden = forbidden_col
            .and_then(|i| rec.get(i))
            .unwrap_or("")
            .split([';', '|'])
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect();
        entries.push(Entry {
            source,
            target,
            note,
            origin: Origin::HouseStyle,
            forbidden,
        });
    }
    Ok(Termbase::from_entries(entries))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_header_and_rows() {
        let tb = parse_csv(b"\xEF\xBB\xBFsource,target,note\nAgent,\xE6\x99\xBA\xE8\x83\xBD\xE4\xBD\x93,core term\n\nLLM,\"\xE5\xA4\xA7\xE6\xA8\xA1\xE5\x9E\x8B\"\n", "g.csv").unwrap();
        assert_eq!(tb.len(), 2);
        assert_eq!(tb.entries[0].target, "智能体");
        assert_eq!(tb.entries[0].note, "core term");
        assert_eq!(tb.entries[1].note, "");
    }

    #[test]
    fn forbidden_column() {
        let tb = parse_csv(
            "source,target,note,forbidden\nAgent,智能体,,代理; 代理人\n".as_bytes(),
            "g.csv",
        )
        .unwrap();
        assert_eq!(tb.entries[0].forbidden, vec!["代理", "代理人"]);
    }

    #[test]
    fn bad_header_names_file() {
        let e = parse_csv(b"term,translation\nA,B\n", "house.csv").unwrap_err();
        assert!(e.to_string().contains("house.csv") && e.to_string().contains("header"));
    }

    #[test]
    fn empty_target_names_line() {
        let e = parse_csv(b"source,target\nA,B\nC,\n", "g.csv").unwrap_err();
        assert!(e.to_string().contains("line 3"), "{e}");
    }
}
