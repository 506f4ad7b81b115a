//! Jupyter notebooks (nbformat 4, `*.ipynb`) as chapters: the Markdown cells are the text to
//! translate, everything else (code cells, outputs, attachments, metadata, cell ids) is kept
//! byte for byte.
//!
//! A notebook chapter is seen through its *Markdown view*: the sources of its Markdown cells in
//! order, joined by [`CELL_SEPARATOR`]. The view is what segmentation, the agents and QA read
//! (so a heading in a cell is a heading, and cells never run together). [`segment_cells`] cuts
//! every cell, and every separator, on its own, so no unit spans two cells; separators are
//! verbatim units, copied unchanged. [`Notebook::render`] puts translated cell sources back
//! into the file: only the JSON value of each changed `"source"` is replaced (located with
//! `serde_json`'s `RawValue`, so nothing is hand-parsed), in the same shape (a string, or a list
//! of lines in the file's own indentation), and every other byte of the file is the input's.
//! An untranslated notebook written back is therefore the input, byte for byte.
//!
//! The JSON escaping of a replaced source is `serde_json`'s, which matches what Jupyter writes
//! (Python's `json.dumps(ensure_ascii=False)`: `\"`, `\\`, `\n`, `\r`, `\t`, `\b`, `\f`, other
//! control characters as `\u00XX`, everything else as UTF-8).

use std::ops::Range;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::segment::{Unit, segment, unit_id};

/// Why a notebook (`.ipynb`) cannot be read as a chapter: the message says what to fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NotebookError(pub String);

impl From<&str> for NotebookError {
    fn from(m: &str) -> NotebookError {
        NotebookError(m.to_string())
    }
}

impl From<String> for NotebookError {
    fn from(m: String) -> NotebookError {
        NotebookError(m)
    }
}

/// What joins two Markdown cells in the Markdown view: a blank line, so that the end of one
/// cell never continues a paragraph, list or heading of the next one.
pub const CELL_SEPARATOR: &str = "\n\n";

/// How a cell's `source` was written, so a translated one is written the same way.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Shape {
    /// One JSON string.
    Text,
    /// A list of lines (each but the last ending in `\n`, as nbformat writes them). `item`
    /// is the indentation before each line and `close` before the `]`; `None` for a list
    /// written on one line.
    Lines(Option<(String, String)>),
}

/// One Markdown cell of a notebook.
#[derive(Debug, Clone, PartialEq, Eq)]
struct MarkdownCell {
    /// Byte range of the cell's `source` value in the notebook's JSON text.
    json: Range<usize>,
    /// The decoded source (the lines joined).
    source: String,
    shape: Shape,
}

/// A notebook read from its JSON text, with its Markdown view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notebook {
    /// The file's exact JSON text.
    raw: String,
    cells: Vec<MarkdownCell>,
    /// The Markdown view (see the module docs).
    view: String,
    /// Byte range of each Markdown cell's source in [`Notebook::view`], in cell order.
    ranges: Vec<Range<usize>>,
    /// Number of cells of every type.
    total_cells: usize,
}

#[derive(Deserialize)]
struct Top<'a> {
    nbformat: Option<serde_json::Value>,
    #[serde(borrow)]
    cells: Option<Vec<&'a RawValue>>,
}

#[derive(Deserialize)]
struct CellHead<'a> {
    cell_type: Option<String>,
    #[serde(borrow)]
    source: Option<&'a RawValue>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Source {
    Text(String),
    Lines(Vec<String>),
}

/// Byte offset of `part` (a slice borrowed from `whole`) in `whole`.
fn offset_in(whole: &str, part: &str) -> usize {
    part.as_ptr() as usize - whole.as_ptr() as usize
}

impl Notebook {
    /// Reads a notebook from its JSON text.
    ///
    /// Errors (a message saying what to do; the caller names the file): not JSON (with line and
    /// column), not an nbformat 4 notebook (no `nbformat` 4, no `cells` list), a Markdown cell
    /// whose `source` is neither a string nor a list of strings.
    pub fn parse(text: &str) -> Result<Notebook, NotebookError> {
        let top: Top = serde_json::from_str(text).map_err(|e| {
            format!("is not a valid notebook (JSON error: {e}); open and save it in Jupyter, or fix the JSON")
        })?;
        let version = top.nbformat.as_ref().and_then(|v| v.as_u64());
        if version != Some(4) {
            return Err(NotebookError(format!(
                "is not an nbformat 4 notebook (nbformat = {}); booktr reads nbformat 4: convert it with `jupyter nbconvert --to notebook --nbformat 4`",
                top.nbformat
                    .map_or("missing".to_string(), |v| v.to_string())
            )));
        }
        let Some(cells) = top.cells else {
            return Err("is a notebook without a `cells` list; save it again in Jupyter".into());
        };
        let mut md = Vec::new();
        for (i, cell) in cells.iter().enumerate() {
            let head: CellHead = serde_json::from_str(cell.get())
                .map_err(|e| NotebookError(format!("cell {}: not a notebook cell ({e})", i + 1)))?;
            if head.cell_type.as_deref() != Some("markdown") {
                continue;
            }
            let Some(src) = head.source else {
                return Err(NotebookError(format!(
                    "Markdown cell {} has no `source`; save the notebook again in Jupyter",
                    i + 1
                )));
            };
            let raw = src.get();
            let start = offset_in(text, raw);
            let (source, shape) = match serde_json::from_str::<Source>(raw) {
                Ok(Source::Text(s)) => (s, Shape::Text),
                Ok(Source::Lines(lines)) => (lines.concat(), Shape::Lines(list_indent(raw))),
                Err(_) => {
                    return Err(NotebookError(format!(
                        "Markdown cell {}: `source` is neither a string nor a list of strings; save the notebook again in Jupyter",
                        i + 1
                    )));
                }
            };
            md.push(MarkdownCell {
                json: start..start + raw.len(),
                source,
                shape,
            });
        }
        let (view, ranges) = view_of(md.iter().map(|c| c.source.as_str()));
        Ok(Notebook {
            raw: text.to_string(),
            cells: md,
            view,
            ranges,
            total_cells: cells.len(),
        })
    }

    /// The Markdown view: the Markdown cells' sources joined by [`CELL_SEPARATOR`].
    pub fn view(&self) -> &str {
        &self.view
    }

    /// Byte range of each Markdown cell in [`Notebook::view`], in cell order.
    pub fn cell_ranges(&self) -> &[Range<usize>] {
        &self.ranges
    }

    /// Number of cells of every type (code, raw and Markdown).
    pub fn total_cells(&self) -> usize {
        self.total_cells
    }

    /// The notebook's JSON text with Markdown cell `i`'s source replaced by `sources[i]` (one
    /// per Markdown cell, in order). A cell whose new source equals its old one keeps its bytes;
    /// a changed one is written in its old shape (string, or list of lines with the file's
    /// indentation). Nothing else changes.
    ///
    /// Panics if `sources` does not have one text per Markdown cell (a caller bug).
    pub fn render(&self, sources: &[String]) -> String {
        assert_eq!(
            sources.len(),
            self.cells.len(),
            "one source per Markdown cell"
        );
        let mut out = String::with_capacity(self.raw.len() * 2);
        let mut pos = 0;
        for (cell, new) in self.cells.iter().zip(sources) {
            out.push_str(&self.raw[pos..cell.json.start]);
            if *new == cell.source {
                out.push_str(&self.raw[cell.json.clone()]);
            } else {
                out.push_str(&source_json(new, &cell.shape));
            }
            pos = cell.json.end;
        }
        out.push_str(&self.raw[pos..]);
        out
    }

    /// The Markdown cell sources of a chapter given its units' ranges in the view and final
    /// texts (in order): each cell gets the texts of the units inside its range, joined;
    /// separator units are left out.
    pub fn cell_texts<'a>(
        &self,
        units: impl IntoIterator<Item = (Range<usize>, &'a str)>,
    ) -> Vec<String> {
        let mut out = vec![String::new(); self.ranges.len()];
        for (r, text) in units {
            // Notebooks have tens or hundreds of cells: a scan per unit is cheap.
            let cell = self
                .ranges
                .iter()
                .position(|c| !r.is_empty() && c.start <= r.start && r.end <= c.end);
            if let Some(k) = cell {
                out[k].push_str(text);
            }
        }
        out
    }
}

/// The view of cell sources joined by [`CELL_SEPARATOR`], and each source's range in it.
fn view_of<'a>(sources: impl Iterator<Item = &'a str>) -> (String, Vec<Range<usize>>) {
    let mut view = String::new();
    let mut ranges = Vec::new();
    for (i, s) in sources.enumerate() {
        if i > 0 {
            view.push_str(CELL_SEPARATOR);
        }
        ranges.push(view.len()..view.len() + s.len());
        view.push_str(s);
    }
    (view, ranges)
}

/// The indentation of a multi-line JSON list (before its first item, before its `]`), `None`
/// for a list on one line.
fn list_indent(raw: &str) -> Option<(String, String)> {
    let first_nl = raw.find('\n')?;
    let after = &raw[first_nl + 1..];
    let item: String = after
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect();
    let last_nl = raw.rfind('\n')?;
    let close: String = raw[last_nl + 1..]
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect();
    Some((item, close))
}

/// A source as a JSON value of `shape`.
fn source_json(text: &str, shape: &Shape) -> String {
    let quote = |s: &str| serde_json::to_string(s).expect("a string always serialises");
    match shape {
        Shape::Text => quote(text),
        Shape::Lines(indent) => {
            let items: Vec<String> = text.split_inclusive('\n').map(quote).collect();
            if items.is_empty() {
                return "[]".into();
            }
            match indent {
                None => format!("[{}]", items.join(", ")),
                Some((item, close)) => {
                    let sep = format!(",\n{item}");
                    format!("[\n{item}{}\n{close}]", items.join(&sep))
                }
            }
        }
    }
}

/// The Markdown view of a notebook's JSON text (see [`Notebook::view`]): what an output
/// notebook, perhaps edited in Jupyter, says its Markdown cells are.
///
/// Errors: as [`Notebook::parse`].
pub fn view_of_json(text: &str) -> Result<String, NotebookError> {
    Notebook::parse(text).map(|n| n.view)
}

/// The units of a notebook chapter `key` whose Markdown view is `view`: every cell of
/// `cells` (ranges in `view`) and every gap between them (the separators) is segmented on its
/// own with [`segment`] and `max_unit_chars`, then the units are numbered in order. Joined,
/// the units give `view` back, and none spans two cells.
pub fn segment_cells(
    key: &str,
    view: &str,
    cells: &[Range<usize>],
    max_unit_chars: usize,
) -> Vec<Unit> {
    let mut parts = Vec::new();
    let mut pos = 0;
    for c in cells {
        if c.start > pos {
            parts.push(pos..c.start);
        }
        parts.push(c.clone());
        pos = c.end;
    }
    if pos < view.len() {
        parts.push(pos..view.len());
    }
    let mut units: Vec<Unit> = Vec::new();
    for p in parts {
        for mut u in segment(key, &view[p.clone()], max_unit_chars) {
            u.range = u.range.start + p.start..u.range.end + p.start;
            u.index = units.len();
            u.id = unit_id(key, u.index);
            units.push(u);
        }
    }
    units
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A notebook as Jupyter writes it: keys sorted, one-space indentation, a final newline.
    fn jupyter(nb: &serde_json::Value) -> String {
        let mut buf = Vec::new();
        let fmt = serde_json::ser::PrettyFormatter::with_indent(b" ");
        let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
        serde::Serialize::serialize(nb, &mut ser).unwrap();
        String::from_utf8(buf).unwrap() + "\n"
    }

    fn lines(s: &str) -> serde_json::Value {
        serde_json::Value::Array(
            s.split_inclusive('\n')
                .map(|l| serde_json::Value::String(l.into()))
                .collect(),
        )
    }

    fn sample() -> serde_json::Value {
        serde_json::json!({
            "cells": [
                {"cell_type": "markdown", "id": "a1", "metadata": {}, "source": lines("# Agents\n\nAn agent *decides*.")},
                {"cell_type": "code", "execution_count": 1, "id": "c1", "metadata": {}, "outputs": [
                    {"name": "stdout", "output_type": "stream", "text": ["# not a heading\n"]}
                ], "source": lines("print('# not a heading')")},
                {"cell_type": "markdown", "id": "a2", "metadata": {}, "source": "One string\nwith `code`."},
                {"attachments": {"x.png": {"image/png": "iVBORw0KGgo="}}, "cell_type": "markdown", "id": "a3", "metadata": {}, "source": []},
            ],
            "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
            "nbformat": 4,
            "nbformat_minor": 5
        })
    }

    #[test]
    fn markdown_cells_make_the_view() {
        let nb = Notebook::parse(&jupyter(&sample())).unwrap();
        assert_eq!(
            nb.view(),
            "# Agents\n\nAn agent *decides*.\n\nOne string\nwith `code`.\n\n"
        );
        assert_eq!(nb.cell_ranges().len(), 3);
        assert_eq!(nb.total_cells(), 4);
        let units = segment_cells("nb", nb.view(), nb.cell_ranges(), 12_000);
        let joined: String = units.iter().map(|u| u.text(nb.view())).collect();
        assert_eq!(joined, nb.view());
        // No unit spans two cells; the separators are verbatim.
        for u in &units {
            let inside = nb
                .cell_ranges()
                .iter()
                .any(|c| c.start <= u.range.start && u.range.end <= c.end);
            assert!(inside || u.text(nb.view()) == CELL_SEPARATOR, "{u:?}");
            assert_eq!(u.id, unit_id("nb", u.index));
        }
    }

    #[test]
    fn translated_cells_keep_shape_and_everything_else() {
        let text = jupyter(&sample());
        let nb = Notebook::parse(&text).unwrap();
        let out = nb.render(&[
            "# 智能体\n\n智能体会*决定*。".into(),
            "一个字符串\n带有 `code`。".into(),
            String::new(),
        ]);
        let mut want = sample();
        want["cells"][0]["source"] = lines("# 智能体\n\n智能体会*决定*。");
        want["cells"][2]["source"] = "一个字符串\n带有 `code`。".into();
        // Same bytes as Jupyter would write for the translated notebook.
        assert_eq!(out, jupyter(&want));
    }

    #[test]
    fn not_nbformat_4_is_refused_with_a_remedy() {
        let e = Notebook::parse(r#"{"nbformat": 3, "worksheets": []}"#)
            .unwrap_err()
            .0;
        assert!(e.contains("nbconvert"), "{e}");
        let e = Notebook::parse("{\"cells\": [").unwrap_err().0;
        assert!(e.contains("JSON"), "{e}");
        let e = Notebook::parse(
            r#"{"nbformat": 4, "cells": [{"cell_type": "markdown", "source": 7}]}"#,
        )
        .unwrap_err()
        .0;
        assert!(e.contains("cell 1"), "{e}");
    }

    proptest! {
        /// An untranslated notebook written back is its input, byte for byte, and a translated
        /// one reads back with the new sources.
        #[test]
        fn render_is_lossless(
            cells in proptest::collection::vec(("(\\PC|[\\r\\n\\t\\u{1}\"\\\\])*", any::<bool>(), any::<bool>()), 0..6),
            new in "(\\PC|[\\r\\n\\u{1b}\"\\\\])*",
        ) {
            let cells_json: Vec<serde_json::Value> = cells.iter().enumerate().map(|(i, (s, md, as_lines))| {
                let source = if *as_lines { lines(s) } else { serde_json::Value::String(s.clone()) };
                if *md {
                    serde_json::json!({"cell_type": "markdown", "id": format!("m{i}"), "metadata": {}, "source": source})
                } else {
                    serde_json::json!({"cell_type": "code", "execution_count": null, "id": format!("c{i}"), "metadata": {}, "outputs": [], "source": source})
                }
            }).collect();
            let doc = serde_json::json!({"cells": cells_json, "metadata": {}, "nbformat": 4, "nbformat_minor": 5});
            let text = jupyter(&doc);
            let nb = Notebook::parse(&text).unwrap();
            let units = segment_cells("nb", nb.view(), nb.cell_ranges(), 40);
            let texts = nb.cell_texts(units.iter().map(|u| (u.range.clone(), u.text(nb.view()))));
            prop_assert_eq!(nb.render(&texts), text.clone());
            // Every Markdown cell replaced: the JSON reads back with the new sources.
            let n = nb.cell_ranges().len();
            let out = nb.render(&vec![new.clone(); n]);
            let back: serde_json::Value = serde_json::from_str(&out).unwrap();
            let mut want = doc.clone();
            for (i, (_, md, as_lines)) in cells.iter().enumerate() {
                if *md {
                    want["cells"][i]["source"] = if *as_lines { lines(&new) } else { new.clone().into() };
                }
            }
            prop_assert_eq!(back, want);
            prop_assert_eq!(view_of_json(&out).unwrap(), vec![new.as_str(); n].join(CELL_SEPARATOR));
        }
    }
}
