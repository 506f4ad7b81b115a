//! Loading chapter files.
//!
//! A chapter is read once, checked to be UTF-8 text, and kept as one `String` whose bytes are
//! exactly the file's bytes (a BOM and CRLF line endings included). Its key, derived from the
//! file name, names its units and its output file.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// Errors while reading a chapter. Each names the file and says what to do.
#[derive(Debug, thiserror::Error)]
pub enum ChapterError {
    #[error(
        "cannot read chapter {path}: {source}. Check the path in the campaign file (paths are relative to it)."
    )]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "chapter {path} is a directory, not a file. In `chapters` a directory is read as its Markdown files; elsewhere name the chapter file itself."
    )]
    Directory { path: String },
    #[error(
        "chapter {path} is not UTF-8 text: invalid byte at line {line}, byte offset {offset}. Convert it to UTF-8 (e.g. `iconv -t UTF-8`) and run again."
    )]
    NotUtf8 {
        path: String,
        line: usize,
        offset: usize,
    },
    #[error(
        "chapter {path} looks binary (NUL byte at line {line}, byte offset {offset}). Only Markdown text can be translated; remove it from `chapters`."
    )]
    Binary {
        path: String,
        line: usize,
        offset: usize,
    },
    /// A `*.ipynb` chapter that is not an nbformat 4 notebook.
    #[error("chapter {path} {message}")]
    Notebook { path: String, message: String },
}

/// One chapter of the book, as read from disk.
#[derive(Debug, Clone)]
pub struct Chapter {
    /// Stable key derived from the file stem (`chapter01.md` → `chapter01`), restricted to
    /// `[A-Za-z0-9._-]` so it is safe inside file names and unit ids.
    pub key: String,
    /// The path as written in the campaign file (relative to it, `/`-separated).
    pub rel_path: String,
    /// Where the translated chapter goes, relative to `out_dir`: the file name alone
    /// (`chapter01.md`) for a `chapters` list; the path inside the translated site for a
    /// campaign's `book` (`src/part1/intro.md`, see [`super::site::Page::out`]).
    pub file_name: String,
    /// The file's exact content; for a notebook, its Markdown view
    /// ([`super::notebook::Notebook::view`]), the text its units are cut from. Shared, not
    /// copied, by what reads the source after the run (the HTML report's side-by-side texts: a
    /// copy of the book was a tenth of a long book's peak memory).
    pub text: std::sync::Arc<str>,
    /// Hex sha256 of the file's bytes.
    pub sha256: String,
    /// The notebook, for a `*.ipynb` chapter (its JSON is what the translated chapter is
    /// written back into).
    pub notebook: Option<std::sync::Arc<super::notebook::Notebook>>,
}

impl Chapter {
    /// Reads `base/rel_path`. `rel_path` is kept as given for messages and state.
    ///
    /// Errors: [`ChapterError::Directory`] for a directory, [`ChapterError::Io`] when unreadable, [`ChapterError::NotUtf8`] with the line and
    /// byte offset of the first invalid sequence, [`ChapterError::Binary`] when a NUL byte occurs.
    pub fn load(base: &Path, rel_path: &str) -> Result<Chapter, ChapterError> {
        let full: PathBuf = base.join(rel_path);
        if full.is_dir() {
            return Err(ChapterError::Directory {
                path: rel_path.to_string(),
            });
        }
        let bytes = std::fs::read(&full).map_err(|source| ChapterError::Io {
            path: rel_path.to_string(),
            source,
        })?;
        Self::from_bytes(rel_path, bytes)
    }

    /// Builds a chapter from bytes already read; see [`Chapter::load`] for the checks.
    pub fn from_bytes(rel_path: &str, bytes: Vec<u8>) -> Result<Chapter, ChapterError> {
        let line_of = |offset: usize, bytes: &[u8]| {
            bytes[..offset].iter().filter(|&&b| b == b'\n').count() + 1
        };
        if let Some(offset) = memchr_nul(&bytes) {
            return Err(ChapterError::Binary {
                path: rel_path.to_string(),
                line: line_of(offset, &bytes),
                offset,
            });
        }
        let sha256 = hex::encode(Sha256::digest(&bytes));
        let text = String::from_utf8(bytes).map_err(|e| {
            let offset = e.utf8_error().valid_up_to();
            ChapterError::NotUtf8 {
                path: rel_path.to_string(),
                line: line_of(offset, e.as_bytes()),
                offset,
            }
        })?;
        let file_name = Path::new(rel_path)
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| rel_path.to_string());
        let mut chapter = Chapter {
            key: chapter_key(&file_name),
            rel_path: rel_path.to_string(),
            file_name,
            text: text.into(),
            sha256,
            notebook: None,
        };
        if is_notebook(rel_path) {
            let nb = super::notebook::Notebook::parse(&chapter.text).map_err(|message| {
                ChapterError::Notebook {
                    path: rel_path.to_string(),
                    message: message.0,
                }
            })?;
            chapter.text = nb.view().into();
            chapter.notebook = Some(std::sync::Arc::new(nb));
        }
        Ok(chapter)
    }

    /// The chapter's units with `max_unit_chars` ([`super::segment::segment`]; a notebook's
    /// cells are cut one by one, [`super::notebook::segment_cells`]).
    pub fn segment(&self, max_unit_chars: usize) -> Vec<super::Unit> {
        match &self.notebook {
            Some(nb) => super::notebook::segment_cells(
                &self.key,
                &self.text,
                nb.cell_ranges(),
                max_unit_chars,
            ),
            None if super::mdx::is_mdx(&self.rel_path) => {
                super::segment::segment_mdx(&self.key, &self.text, max_unit_chars)
            }
            None => super::segment(&self.key, &self.text, max_unit_chars),
        }
    }

    /// The translated chapter file from its units' ranges and final texts, in order: their
    /// concatenation for Markdown; for a notebook, the notebook with each Markdown cell's
    /// source replaced by the texts of its units ([`super::notebook::Notebook::render`]).
    pub fn assemble<'a>(
        &self,
        units: impl IntoIterator<Item = (std::ops::Range<usize>, &'a str)>,
    ) -> String {
        match &self.notebook {
            Some(nb) => nb.render(&nb.cell_texts(units)),
            None => units.into_iter().map(|(_, t)| t).collect(),
        }
    }

    /// What an output file of this chapter (perhaps edited by hand) says the chapter's text is,
    /// comparable with its units' texts: the file itself for Markdown, the Markdown view of a
    /// notebook.
    ///
    /// Errors: an output notebook that no longer parses (the message says what to fix).
    pub fn output_view(&self, output: &str) -> Result<String, super::notebook::NotebookError> {
        match self.notebook {
            Some(_) => super::notebook::view_of_json(output),
            None => Ok(output.to_string()),
        }
    }

    /// An output file of this chapter (perhaps edited by hand) cut into parts to compare with
    /// the units: `(range of the chapter text, the output's text for it)`. For Markdown, the
    /// whole file for the whole chapter. For a notebook with as many Markdown cells as the
    /// source, each cell's output source for the cell's range (so an edit stays inside its
    /// cell's units); with another number of cells, the whole Markdown view.
    ///
    /// Errors: an output notebook that no longer parses.
    pub fn output_parts(
        &self,
        output: &str,
    ) -> Result<Vec<(std::ops::Range<usize>, String)>, super::notebook::NotebookError> {
        let Some(nb) = &self.notebook else {
            return Ok(vec![(0..self.text.len(), output.to_string())]);
        };
        let out = super::notebook::Notebook::parse(output)?;
        if out.cell_ranges().len() != nb.cell_ranges().len() {
            return Ok(vec![(0..self.text.len(), out.view().to_string())]);
        }
        Ok(nb
            .cell_ranges()
            .iter()
            .zip(out.cell_ranges())
            .map(|(src, o)| (src.clone(), out.view()[o.clone()].to_string()))
            .collect())
    }

    /// Whether `u` is one of a notebook's separators between Markdown cells (a verbatim unit
    /// that is no part of any cell, see [`super::notebook::CELL_SEPARATOR`]).
    pub fn is_cell_separator(&self, u: &super::Unit) -> bool {
        self.notebook.as_ref().is_some_and(|nb| {
            !nb.cell_ranges()
                .iter()
                .any(|c| c.start <= u.range.start && u.range.end <= c.end)
        })
    }

    /// The name of this chapter's file in a Markdown-only view (the bilingual chapters): the
    /// file name, with `.md` added for a notebook.
    pub fn markdown_file_name(&self) -> String {
        match self.notebook {
            Some(_) => format!("{}.md", self.file_name),
            None => self.file_name.clone(),
        }
    }

    /// Size of the chapter in bytes.
    pub fn len(&self) -> usize {
        self.text.len()
    }

    /// True for an empty file.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }
}

/// Whether `path` names a Jupyter notebook (`.ipynb`, any case).
pub fn is_notebook(path: &str) -> bool {
    Path::new(path)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("ipynb"))
}

fn memchr_nul(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == 0)
}

/// The chapter key for a file name: its stem with every character outside `[A-Za-z0-9._-]`
/// replaced by `_`, and leading dots removed, so it can never name a parent directory.
pub fn chapter_key(file_name: &str) -> String {
    let stem = Path::new(file_name)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let key: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let key = key.trim_start_matches('.').to_string();
    if key.is_empty() {
        "chapter".into()
    } else {
        key
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_bom_and_crlf_bytes() {
        let bytes = b"\xEF\xBB\xBF# Title\r\n\r\nText\r\n".to_vec();
        let ch = Chapter::from_bytes("book/ch1.md", bytes.clone()).unwrap();
        assert_eq!(ch.text.as_bytes(), &bytes[..]);
        assert_eq!(ch.key, "ch1");
        assert_eq!(ch.file_name, "ch1.md");
    }

    #[test]
    fn rejects_latin1_with_line() {
        let err = Chapter::from_bytes("a.md", b"ok\nline two \xE9t\xE9\n".to_vec()).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("a.md") && msg.contains("line 2"), "{msg}");
    }

    #[test]
    fn rejects_binary() {
        let err = Chapter::from_bytes("img.md", b"PNG\0\0".to_vec()).unwrap_err();
        assert!(matches!(err, ChapterError::Binary { offset: 3, .. }));
    }

    #[test]
    fn directory_as_chapter_failed_with_os_error_21() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("book")).unwrap();
        let msg = Chapter::load(d.path(), "book").unwrap_err().to_string();
        assert!(msg.contains("book is a directory"), "{msg}");
        assert!(!msg.contains("os error"), "{msg}");
    }

    #[test]
    fn keys_are_path_safe() {
        assert_eq!(chapter_key("../../etc/passwd"), "passwd");
        assert_eq!(chapter_key("..md"), "chapter");
        assert_eq!(chapter_key("Kapitel 1 (neu).md"), "Kapitel_1__neu_");
    }
}
