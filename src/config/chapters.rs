//! Expanding the campaign's `chapters` entries into chapter files: an entry is a file, a
//! directory (its Markdown files, in natural order) or a glob pattern (the `glob` crate's
//! syntax, `**` included; matches in natural order). The expansion is recorded entry by entry
//! so `plan` and `run` can say which files they took. Nothing here reads a chapter's content.

use std::path::Path;

use serde::Serialize;

use crate::exit::UsageError;

/// File extensions taken from a directory given in `chapters` (case-insensitive).
pub const MARKDOWN_EXTENSIONS: &[&str] = &["md", "markdown", "mdx"];

/// How one `chapters` entry was read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    /// A file, taken as it is.
    File,
    /// A directory: the Markdown files directly inside it.
    Directory,
    /// A glob pattern.
    Glob,
    /// The campaign's `book`: the chapters its table of contents lists.
    Book,
}

/// One `chapters` entry and the chapter files it gave, in book order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChapterEntry {
    /// The entry as written in the campaign file.
    pub entry: String,
    pub kind: EntryKind,
    /// Chapter paths relative to the campaign file, `/`-separated, in the order taken. A file
    /// already given by an earlier entry is not repeated.
    pub files: Vec<String>,
}

impl ChapterEntry {
    /// One line for the terminal: `book/ (directory): 3 files: a.md, b.md, c.md` (at most
    /// `max_names` names, then `…`).
    pub fn describe(&self, max_names: usize) -> String {
        let kind = match self.kind {
            EntryKind::File => "file",
            EntryKind::Directory => "directory",
            EntryKind::Glob => "glob",
            EntryKind::Book => "book",
        };
        let mut names: Vec<&str> = self
            .files
            .iter()
            .take(max_names)
            .map(|s| s.as_str())
            .collect();
        if self.files.len() > max_names {
            names.push("…");
        }
        // A book's entry already names its kind (`book.toml (mdBook)`).
        let kind = if self.kind == EntryKind::Book {
            String::new()
        } else {
            format!(" ({kind})")
        };
        format!(
            "{}{kind}: {} file(s): {}",
            self.entry,
            self.files.len(),
            names.join(", ")
        )
    }
}

/// Whether `entry` is a glob pattern rather than a path (it holds `*`, `?` or `[`).
pub fn is_glob(entry: &str) -> bool {
    entry.contains(['*', '?', '['])
}

/// Natural order of two paths: digit runs compare as numbers, so `ch2.md` sorts before
/// `ch10.md` (the `natord` crate).
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    natord::compare(a, b)
}

/// Expands `entries` (relative to `campaign_dir`) into chapter files in book order.
///
/// Errors ([`UsageError`], exit 2), each naming `campaign_file`, the entry and the remedy: an
/// invalid glob pattern, a glob or a directory that gives no Markdown file, an unreadable
/// directory.
pub fn expand(
    campaign_dir: &Path,
    entries: &[String],
    campaign_file: &str,
) -> Result<Vec<ChapterEntry>, UsageError> {
    let err = |msg: String| UsageError::new(format!("{campaign_file}: `chapters` {msg}"));
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for entry in entries {
        let (kind, mut files) = if is_glob(entry) {
            let pattern = if Path::new(entry).is_absolute() {
                entry.clone()
            } else {
                format!(
                    "{}/{}",
                    glob::Pattern::escape(&campaign_dir.to_string_lossy()),
                    entry.trim_start_matches("./")
                )
            };
            let paths = glob::glob(&pattern).map_err(|e| {
                err(format!(
                    "has the glob pattern `{entry}`, which is invalid: {e}. Fix the pattern (`*` any name, `**` any folders, `?` one character)"
                ))
            })?;
            let mut files = Vec::new();
            for p in paths.flatten() {
                if p.is_file() {
                    files.push(as_written(entry, &p, campaign_dir));
                }
            }
            if files.is_empty() {
                return Err(err(format!(
                    "has the glob pattern `{entry}`, which matches no file (relative to {}). Fix the pattern or the folder",
                    campaign_dir.display()
                )));
            }
            files.sort_by(|a, b| natural_cmp(a, b));
            (EntryKind::Glob, files)
        } else if campaign_dir.join(entry).is_dir() {
            let dir = campaign_dir.join(entry);
            let read = std::fs::read_dir(&dir).map_err(|e| {
                err(format!(
                    "names the directory {entry}, which cannot be read: {e}"
                ))
            })?;
            let mut files: Vec<String> = read
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.is_file() && is_markdown(p))
                .filter(|p| {
                    !p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with('.'))
                })
                .map(|p| as_written(entry, &p, campaign_dir))
                .collect();
            if files.is_empty() {
                return Err(err(format!(
                    "names the directory {entry}, which holds no Markdown file (.md, .markdown, .mdx) directly inside. Name the files, or use a glob such as \"{}/**/*.md\"",
                    entry.trim_end_matches('/')
                )));
            }
            files.sort_by(|a, b| natural_cmp(a, b));
            (EntryKind::Directory, files)
        } else {
            (EntryKind::File, vec![entry.clone()])
        };
        files.retain(|f| seen.insert(crate::util::normalize(&campaign_dir.join(f))));
        out.push(ChapterEntry {
            entry: entry.clone(),
            kind,
            files,
        });
    }
    Ok(out)
}

/// A found file as the entry would name it: absolute under an absolute entry, else relative to
/// the campaign directory.
fn as_written(entry: &str, found: &Path, campaign_dir: &Path) -> String {
    if Path::new(entry).is_absolute() {
        found.to_string_lossy().into_owned()
    } else {
        crate::util::relative_to(found, campaign_dir)
    }
}

fn is_markdown(p: &Path) -> bool {
    p.extension().is_some_and(|e| {
        MARKDOWN_EXTENSIONS
            .iter()
            .any(|m| e.to_string_lossy().eq_ignore_ascii_case(m))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[&str]) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        for f in files {
            let p = d.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "# x\n").unwrap();
        }
        d
    }

    #[test]
    fn directory_gives_markdown_in_natural_order() {
        let d = tree(&[
            "book/ch10.md",
            "book/ch2.md",
            "book/ch1.md",
            "book/fig.png",
            "book/.x.md",
        ]);
        let e = expand(d.path(), &["book".into()], "c.toml").unwrap();
        assert_eq!(e[0].kind, EntryKind::Directory);
        assert_eq!(e[0].files, ["book/ch1.md", "book/ch2.md", "book/ch10.md"]);
    }

    #[test]
    fn glob_matches_recursively_in_natural_order_without_repeats() {
        let d = tree(&["b/p1/ch10.md", "b/p1/ch9.md", "b/p2/a.md", "b/notes.txt"]);
        let e = expand(
            d.path(),
            &["b/p1/ch9.md".into(), "b/**/*.md".into()],
            "c.toml",
        )
        .unwrap();
        assert_eq!(e[0].files, ["b/p1/ch9.md"]);
        assert_eq!(e[1].kind, EntryKind::Glob);
        assert_eq!(e[1].files, ["b/p1/ch10.md", "b/p2/a.md"]);
        assert!(e[1].describe(1).contains("2 file(s): b/p1/ch10.md, …"));
    }

    #[test]
    fn bad_or_empty_patterns_name_the_campaign_file() {
        let d = tree(&["b/a.md"]);
        let e = expand(d.path(), &["b/[.md".into()], "c.toml").unwrap_err();
        assert!(
            e.to_string().contains("c.toml") && e.to_string().contains("invalid"),
            "{e}"
        );
        let e = expand(d.path(), &["z/*.md".into()], "c.toml").unwrap_err();
        assert!(e.to_string().contains("matches no file"), "{e}");
        std::fs::create_dir_all(d.path().join("empty")).unwrap();
        let e = expand(d.path(), &["empty".into()], "c.toml").unwrap_err();
        assert!(e.to_string().contains("holds no Markdown"), "{e}");
    }
}
