//! `booktr init`: writes a campaign file for a book a new user already has. Owns layout
//! detection for a path given on the command line (which of the layouts
//! [`crate::book::site`] and [`crate::config::ChapterEntry`] read it is), the choice of the
//! campaign file's name and place, its commented text, and the source-language detection of a
//! new campaign. `booktr run BOOK --to LANG` uses the same steps ([`campaign_for_run`]).
//!
//! The file names only what differs from the defaults (`name`, the languages, `book` or
//! `chapters`, and `[provider]` when a preset is given); every other key is left to its
//! default and shown in a comment. It is resolved as `run` would resolve it before it is
//! written, so a file `init` writes always loads. An existing file is never overwritten.

use std::path::{Path, PathBuf};

use crate::cli::{BookArgs, InitArgs};
use crate::config::{Overrides, Plan, RawCampaign};
use crate::exit::{ExitCode, UsageError};
use crate::lang::Lang;

/// The book layouts `init` recognises, in the order it looks for them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// `book.toml` with its `src/SUMMARY.md`, or a folder holding `SUMMARY.md`.
    MdBook,
    /// `mkdocs.yml` (or `.yaml`).
    MkDocs,
    /// A folder with `docusaurus.config.*` and `docs/`.
    Docusaurus,
    /// A Jupyter Book 1: a folder with `_toc.yml` (and `_config.yml`).
    JupyterBook,
    /// A folder of Markdown files (`.md`, `.markdown`, `.mdx`) or notebooks (`.ipynb`).
    Folder,
    /// One Markdown file or notebook.
    File,
}

impl Layout {
    /// How the layout is named to the user.
    pub fn describe(self) -> &'static str {
        match self {
            Layout::MdBook => "mdBook",
            Layout::MkDocs => "MkDocs site",
            Layout::Docusaurus => "Docusaurus site",
            Layout::JupyterBook => "Jupyter Book",
            Layout::Folder => "folder of chapters",
            Layout::File => "single chapter",
        }
    }
}

/// A book found at a path: its layout, the folder (or file) that is "the book", and the
/// campaign keys that name its chapters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detected {
    pub layout: Layout,
    /// The book's root: the project folder of an mdBook, MkDocs or Docusaurus site, the
    /// folder of chapters, or the chapter file itself. Absolute.
    pub root: PathBuf,
    /// The campaign's `book` value (an absolute path, made relative to the campaign file when
    /// written), for a site layout.
    pub book: Option<PathBuf>,
    /// The campaign's `chapters` entries (absolute paths or glob patterns), for a folder or a
    /// file.
    pub chapters: Vec<String>,
    /// mdBook's `[book] language`, when `book.toml` gives one.
    pub declared_lang: Option<String>,
    /// Markdown files in subfolders of a folder of chapters that its folder entry does not
    /// take (it takes the files directly inside): said when the campaign is written.
    pub left_out: usize,
}

/// Extensions of chapter files a folder is scanned for: Markdown (as in `chapters`) and
/// Jupyter notebooks.
const NOTEBOOK_EXTENSION: &str = "ipynb";

fn has_ext(p: &Path, exts: &[&str]) -> bool {
    p.extension().is_some_and(|e| {
        exts.iter()
            .any(|x| e.to_string_lossy().eq_ignore_ascii_case(x))
    })
}

fn is_markdown(p: &Path) -> bool {
    has_ext(p, crate::config::MARKDOWN_EXTENSIONS)
}

fn is_notebook(p: &Path) -> bool {
    has_ext(p, &[NOTEBOOK_EXTENSION])
}

fn file_named(p: &Path, names: &[&str]) -> bool {
    p.file_name().is_some_and(|n| {
        names
            .iter()
            .any(|x| n.to_string_lossy().eq_ignore_ascii_case(x))
    })
}

/// Absolute and without `.`/`..` components (symbolic links are not resolved).
fn absolute(p: &Path) -> PathBuf {
    let p = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(p)
    };
    crate::util::normalize(&p)
}

/// The `[book] src` and `[book] language` of an mdBook's `book.toml` (defaults `src` and none).
///
/// Errors: the file cannot be read or is not TOML (naming it).
fn mdbook_toml(book_toml: &Path) -> Result<(String, Option<String>), UsageError> {
    let text = std::fs::read_to_string(book_toml)
        .map_err(|e| UsageError::new(format!("cannot read {}: {e}", book_toml.display())))?;
    let table: toml::Table = toml::from_str(&text).map_err(|e| {
        UsageError::new(format!(
            "{} is not valid TOML: {}",
            book_toml.display(),
            e.to_string().trim_end()
        ))
    })?;
    let book = table.get("book").and_then(|b| b.as_table());
    let src = book
        .and_then(|b| b.get("src"))
        .and_then(|v| v.as_str())
        .unwrap_or("src")
        .to_string();
    let lang = book
        .and_then(|b| b.get("language"))
        .and_then(|v| v.as_str())
        .map(str::to_string);
    Ok((src, lang))
}

/// The chapter files directly inside `dir`, split into Markdown files and notebooks (hidden
/// files left out).
fn chapter_files(dir: &Path) -> (usize, usize) {
    let mut md = 0;
    let mut nb = 0;
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if !p.is_file() || file_named_hidden(&p) {
            continue;
        }
        if is_markdown(&p) {
            md += 1;
        } else if is_notebook(&p) {
            nb += 1;
        }
    }
    (md, nb)
}

fn file_named_hidden(p: &Path) -> bool {
    p.file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with('.'))
}

/// Whether some folder under `dir` (not `dir` itself, hidden folders and `node_modules` left
/// out) holds a file with one of `exts`.
fn nested(dir: &Path, exts: &[&str]) -> bool {
    nested_count(dir, exts) > 0
}

/// How many files with one of `exts` are in subfolders of `dir` (hidden folders and
/// `node_modules` left out).
fn nested_count(dir: &Path, exts: &[&str]) -> usize {
    walkdir::WalkDir::new(dir)
        .min_depth(2)
        .into_iter()
        .filter_entry(|e| {
            let n = e.file_name().to_string_lossy();
            !(n.starts_with('.') && e.depth() > 0) && n != "node_modules"
        })
        .flatten()
        .filter(|e| e.file_type().is_file() && has_ext(e.path(), exts))
        .count()
}

/// Detects the book at `path` (see [`Layout`]).
///
/// Errors ([`UsageError`], exit 2), naming the path and the remedy: it does not exist, is a file
/// that is neither a chapter nor a table of contents, an mdBook whose `SUMMARY.md` is missing,
/// or a folder with no Markdown file or notebook at any depth.
pub fn detect(path: &Path) -> Result<Detected, UsageError> {
    let abs = absolute(path);
    let shown = path.display();
    if !abs.exists() {
        return Err(UsageError::new(format!(
            "{shown} does not exist: give the book's folder (an mdBook, MkDocs or Docusaurus project, or a folder of Markdown files) or one Markdown file"
        )));
    }
    let site = |layout, root: &Path, book: PathBuf, declared_lang| Detected {
        layout,
        root: root.to_path_buf(),
        book: Some(book),
        chapters: Vec::new(),
        declared_lang,
        left_out: 0,
    };
    if abs.is_file() {
        let parent = abs.parent().unwrap_or(Path::new("/")).to_path_buf();
        if file_named(&abs, &["book.toml"]) {
            return detect(&parent);
        }
        if file_named(&abs, &["SUMMARY.md"]) {
            let root = match parent.parent() {
                Some(p) if p.join("book.toml").is_file() => p.to_path_buf(),
                _ => parent.clone(),
            };
            let lang = match root.join("book.toml") {
                t if t.is_file() => mdbook_toml(&t)?.1,
                _ => None,
            };
            return Ok(site(Layout::MdBook, &root, abs.clone(), lang));
        }
        if file_named(&abs, &["mkdocs.yml", "mkdocs.yaml"]) {
            return Ok(site(Layout::MkDocs, &parent, abs.clone(), None));
        }
        if file_named(&abs, &["_toc.yml"]) {
            return Ok(site(Layout::JupyterBook, &parent, abs.clone(), None));
        }
        if is_markdown(&abs) || is_notebook(&abs) {
            return Ok(Detected {
                layout: Layout::File,
                root: abs.clone(),
                book: None,
                chapters: vec![abs.to_string_lossy().into_owned()],
                declared_lang: None,
                left_out: 0,
            });
        }
        return Err(UsageError::new(format!(
            "{shown} is neither a chapter (.md, .markdown, .mdx, .ipynb) nor a book's table of contents (book.toml, SUMMARY.md, mkdocs.yml): give the book's folder or one chapter file"
        )));
    }
    let dir = abs;
    if dir.join("book.toml").is_file() {
        let (src, lang) = mdbook_toml(&dir.join("book.toml"))?;
        let summary = dir.join(&src).join("SUMMARY.md");
        if !summary.is_file() {
            return Err(UsageError::new(format!(
                "{shown} is an mdBook (book.toml) but {} does not exist: mdBook lists the chapters there; create it (see https://rust-lang.github.io/mdBook/format/summary.html)",
                summary.display()
            )));
        }
        return Ok(site(Layout::MdBook, &dir, summary, lang));
    }
    for name in ["mkdocs.yml", "mkdocs.yaml"] {
        if dir.join(name).is_file() {
            return Ok(site(Layout::MkDocs, &dir, dir.join(name), None));
        }
    }
    let docusaurus = ["js", "ts", "mjs", "cjs", "mts", "cts"]
        .iter()
        .any(|e| dir.join(format!("docusaurus.config.{e}")).is_file());
    if docusaurus && dir.join("docs").is_dir() {
        return Ok(site(Layout::Docusaurus, &dir, dir.clone(), None));
    }
    if dir.join("_toc.yml").is_file() {
        return Ok(site(Layout::JupyterBook, &dir, dir.join("_toc.yml"), None));
    }
    if dir.join("SUMMARY.md").is_file() {
        return detect(&dir.join("SUMMARY.md"));
    }
    let (md, nb) = chapter_files(&dir);
    let mut chapters = Vec::new();
    let mut left_out = 0;
    let dir_s = dir.to_string_lossy().into_owned();
    let escaped = glob::Pattern::escape(&dir_s);
    // A folder entry takes the Markdown files directly inside, as `chapters` reads a folder;
    // notebooks need a pattern (a folder entry takes Markdown only).
    if md > 0 {
        chapters.push(dir_s.clone());
        left_out = nested_count(&dir, crate::config::MARKDOWN_EXTENSIONS);
    }
    if nb > 0 {
        chapters.push(format!("{escaped}/*.{NOTEBOOK_EXTENSION}"));
    }
    if chapters.is_empty() {
        if nested(&dir, crate::config::MARKDOWN_EXTENSIONS) {
            chapters.push(format!("{escaped}/**/*.md"));
        }
        if nested(&dir, &[NOTEBOOK_EXTENSION]) {
            chapters.push(format!("{escaped}/**/*.{NOTEBOOK_EXTENSION}"));
        }
    }
    if chapters.is_empty() {
        return Err(UsageError::new(format!(
            "{shown} holds no Markdown file (.md, .markdown, .mdx) or notebook (.ipynb), and no book.toml, mkdocs.yml or docusaurus.config.*: give the folder that holds the chapters"
        )));
    }
    Ok(Detected {
        layout: Layout::Folder,
        root: dir,
        book: None,
        chapters,
        declared_lang: None,
        left_out,
    })
}

/// A language tag made safe for a file name (`pt-BR` stays, `zh_CN/x` → `zh-CN-x`).
fn file_safe(s: &str) -> String {
    let mut out: String = s
        .trim()
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect();
    while out.starts_with('.') || out.starts_with('-') {
        out.remove(0);
    }
    if out.is_empty() {
        out.push_str("book");
    }
    out
}

/// The campaign's name and its default file for a book at `root` translated into `to`:
/// `<book>-<to>` (the folder's name, or a chapter file's stem) and `<book>-<to>.toml` in the
/// folder that holds the book, so that its outputs (`<name>/out`, `<name>/state`,
/// `<name>/validation`) go beside the book, not into it.
pub fn default_file(d: &Detected, to: &str) -> (String, PathBuf) {
    let stem = if d.layout == Layout::File {
        d.root.file_stem()
    } else {
        d.root.file_name()
    }
    .map(|s| s.to_string_lossy().into_owned())
    .unwrap_or_else(|| "book".into());
    let name = format!("{}-{}", file_safe(&stem), file_safe(to));
    let parent = d.root.parent().unwrap_or(Path::new("/")).to_path_buf();
    let file = parent.join(format!("{name}.toml"));
    (name, file)
}

/// The source language of a book from the prose of its chapters (`texts`: whole Markdown
/// chapters, or their Markdown views for notebooks): their prose without code, links or
/// markup ([`crate::qa::Doc::clean_prose`]) identified by [`crate::lang::detect::detect`]
/// (whatlang). `None` when the chapters have no prose or the identifier's confidence is under
/// [`MIN_DETECT_CONFIDENCE`]; the caller then falls back to `en` and says so.
pub fn detect_source_lang(texts: &[&str]) -> Option<Lang> {
    let prose: String = texts
        .iter()
        .map(|t| crate::qa::Doc::parse(t).clean_prose())
        .collect::<Vec<_>>()
        .join("\n");
    let (lang, confidence) = crate::lang::detect::detect(&prose)?;
    (confidence >= MIN_DETECT_CONFIDENCE).then_some(lang)
}

/// The confidence (whatlang's, 0.0–1.0) under which `init` does not trust a detected source
/// language. A judgment, not a measurement: one-paragraph chapters in English, German, French
/// and Chinese are told correctly above it (`tests::the_source_language_is_detected_from_the_chapters_prose`),
/// and under it `init` falls back to `en` and says so in the campaign file and on the screen.
pub const MIN_DETECT_CONFIDENCE: f64 = 0.5;

/// A TOML basic string for `s` (quotes and escapes by the `toml` crate).
fn toml_str(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// What [`write_campaign`] decided, for the lines printed after it.
#[derive(Debug, Clone)]
pub struct Written {
    /// The campaign file, as it should be shown (relative to the current folder when the
    /// book was given so).
    pub shown: String,
    pub file: PathBuf,
    pub detected: Detected,
    pub source_lang: String,
    /// How the source language was found: `given`, `detected` or `default`.
    pub source_origin: &'static str,
    /// The chapter files the campaign resolves to, as shown (see [`Written::shown`]).
    pub chapters: Vec<String>,
}

impl Written {
    /// The lines to print: what was written, what was found, and the next two commands.
    pub fn lines(&self, target: &str) -> Vec<String> {
        let d = &self.detected;
        let root = show_path(&d.root);
        let from = match self.source_origin {
            "detected" => format!("{} (detected from the chapters)", self.source_lang),
            "given" => self.source_lang.clone(),
            _ => format!(
                "{} (the default: the language of the chapters could not be told; pass --from if the book is not in English)",
                self.source_lang
            ),
        };
        // An mdBook's first "chapter" is its SUMMARY.md, whose titles are translated like a
        // chapter's text but which is the table of contents, not a chapter.
        let (toc, chapters) = match self.chapters.split_first() {
            Some((first, rest)) if d.layout == Layout::MdBook && first.ends_with("SUMMARY.md") => {
                (Some(first), rest)
            }
            _ => (None, &self.chapters[..]),
        };
        let mut names: Vec<&str> = chapters.iter().take(6).map(String::as_str).collect();
        if chapters.len() > 6 {
            names.push("…");
        }
        let toc = toc
            .map(|t| format!(" and the table of contents {t} (its titles are translated too)"))
            .unwrap_or_default();
        let mut lines = vec![
            format!(
                "wrote {}: the {} at {root}, {} chapter file(s) ({}){toc}, {from} → {target}",
                self.shown,
                d.layout.describe(),
                chapters.len(),
                names.join(", ")
            ),
            "next:".into(),
        ];
        if d.left_out > 0 {
            lines.insert(
                1,
                format!(
                    "  note: {} more Markdown file(s) in subfolders of {root} are not chapters (a folder entry takes the files directly inside it); to take them too, set chapters = [\"{}/**/*.md\"] in {}",
                    d.left_out,
                    root,
                    self.shown
                ),
            );
        }
        lines.extend([
            format!(
                "  booktr plan {}   # offline: units, calls and cost per agent",
                shell_word(&self.shown)
            ),
            format!(
                "  booktr run {}    # translate (resumes where it stopped)",
                shell_word(&self.shown)
            ),
        ]);
        lines
    }
}

/// `p` relative to the current folder when that is shorter to read, else as it is.
fn show_path(p: &Path) -> String {
    let cwd = std::env::current_dir().unwrap_or_default();
    let rel = crate::util::relative_to(p, &cwd);
    if rel.starts_with("../..") {
        p.display().to_string()
    } else if rel.is_empty() {
        ".".into()
    } else {
        rel
    }
}

/// `s` quoted for a POSIX shell when it holds anything but safe characters.
fn shell_word(s: &str) -> String {
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_./+,:@".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// The `[provider]` table `init` writes for `--preset`, `--model` and `--base-url`.
struct Provider<'a> {
    preset: &'static crate::llm::presets::Preset,
    model: &'a str,
    /// `--base-url`; without it the preset's default is written as a commented line.
    base_url: Option<&'a str>,
}

/// The campaign file text for `d` (see the module docs). `file` is where it will be written
/// (paths in it are relative to it).
fn campaign_text(
    d: &Detected,
    file: &Path,
    name: &str,
    source: &str,
    source_origin: &str,
    target: &str,
    provider: Option<&Provider>,
) -> String {
    let dir = file.parent().unwrap_or(Path::new("/"));
    let rel = |p: &str| {
        // A glob keeps its pattern: only the folder part before the first wildcard moves.
        if crate::config::is_glob(p) {
            let cut = p.find(['*', '?', '[']).unwrap_or(p.len());
            let head = &p[..cut];
            let split = head.rfind('/').map_or(0, |i| i + 1);
            let folder = crate::util::relative_to(Path::new(&head[..split]), dir);
            let folder = if folder.is_empty() {
                ".".into()
            } else {
                folder
            };
            format!("{folder}/{}", &p[split..])
        } else {
            let r = crate::util::relative_to(Path::new(p), dir);
            if r.is_empty() { ".".into() } else { r }
        }
    };
    let mut t = String::new();
    t.push_str(&format!(
        "# booktr campaign: the {} at {}, translated into {target}. Written by `booktr init`.\n",
        d.layout.describe(),
        rel(&d.root.to_string_lossy())
    ));
    t.push_str("# Paths are relative to this file. Only what differs from booktr's defaults is set;\n# the commented lines show other keys you may want (docs/src/campaign-file.md lists every key).\n\n");
    t.push_str(&format!(
        "# Names the output folders: {name}/out (the translation), {name}/state (checkpoints),\n# {name}/validation (reports). Set out_dir, state_dir or report_dir to move them.\n"
    ));
    t.push_str(&format!("name = {}\n", toml_str(name)));
    let origin = match source_origin {
        "detected" => "  # detected from the chapters' prose; correct it if wrong",
        "default" => {
            "  # the default: the chapters' language could not be told; set the book's language"
        }
        _ => "",
    };
    t.push_str(&format!("source_lang = {}{origin}\n", toml_str(source)));
    t.push_str(&format!("target_lang = {}\n", toml_str(target)));
    match (&d.book, d.layout) {
        (Some(book), layout) => {
            let what = match layout {
                Layout::MdBook => "mdBook: the chapters and their order come from SUMMARY.md",
                Layout::MkDocs => "MkDocs: the chapters and their order come from the nav",
                Layout::JupyterBook => {
                    "Jupyter Book: the chapters and their order come from _toc.yml"
                }
                _ => "Docusaurus: the docs/ pages, in sidebar order; out_dir gets the i18n folders",
            };
            t.push_str(&format!(
                "# {what};\n# out_dir receives the translated site, ready to build.\n"
            ));
            t.push_str(&format!(
                "book = {}\n",
                toml_str(&rel(&book.to_string_lossy()))
            ));
        }
        (None, _) => {
            t.push_str("# A folder takes the Markdown files directly inside it, in natural order (ch2 before\n# ch10); a pattern such as \"book/**/*.md\" takes nested ones. List files to fix the order.\n");
            let list: Vec<String> = d.chapters.iter().map(|c| toml_str(&rel(c))).collect();
            t.push_str(&format!("chapters = [{}]\n", list.join(", ")));
        }
    }
    t.push_str(
        "\n# glossaries = [\"termbase.csv\"]   # your house-style termbase (CSV: source,target,note)\n# review = [\"glossary\"]            # stop for an editor's approval of the termbase\n# max_unit_chars = 12000           # the largest translation unit, in characters\n",
    );
    match provider {
        Some(&Provider {
            preset,
            model,
            base_url,
        }) => {
            t.push_str("\n# The model. The key is read from the environment variable the preset names (e.g.\n# OPENAI_API_KEY); it never goes in this file.\n[provider]\n");
            t.push_str(&format!("preset = {}\n", toml_str(preset.name)));
            t.push_str(&format!("model = {}\n", toml_str(model)));
            match base_url {
                Some(url) => t.push_str(&format!("base_url = {}\n", toml_str(url))),
                None => {
                    let change = if crate::llm::call::is_local(preset.base_url) {
                        "; change the port to your server's"
                    } else {
                        ""
                    };
                    t.push_str(&format!(
                        "# base_url = {}   # the {} preset's default{change}\n",
                        toml_str(preset.base_url),
                        preset.name
                    ));
                }
            }
        }
        None => {
            t.push_str("\n# The model. Without a [provider] table booktr rehearses offline with the pseudo\n# provider: no key, no cost, and every output says REHEARSAL. For a real model, e.g.:\n# [provider]\n# preset = \"openai\"       # or anthropic, deepseek, qwen, openrouter, ollama, vllm, llamacpp\n# model = \"gpt-4o-mini\"\n# (the key goes in the environment variable the preset names, e.g. OPENAI_API_KEY)\n");
        }
    }
    t.push_str("\n# Prices per million tokens, for `booktr plan`'s cost estimate and a budget cap:\n# [pricing]\n# input_per_million = 0.15\n# output_per_million = 0.60\n# max_cost = 5.0\n");
    t
}

/// The texts the source language is detected from: the chapters' Markdown (a notebook's
/// Markdown view), at most [`DETECT_BYTES`] in all, the table of contents left out.
fn sample_texts(plan: &Plan) -> Vec<String> {
    let mut out = Vec::new();
    let mut total = 0;
    let toc = plan.site.as_ref().map(|s| s.kind) == Some(crate::book::site::SiteKind::MdBook);
    for (i, rel) in plan.chapters.iter().enumerate() {
        if toc && i == 0 || total >= DETECT_BYTES {
            continue;
        }
        if let Ok(ch) = crate::book::Chapter::load(&plan.campaign_dir, rel) {
            total += ch.text.len();
            out.push(ch.text.to_string());
        }
    }
    out
}

/// How much chapter text (bytes) the source language is detected from: enough prose for a
/// clear answer, without reading a whole large book.
pub const DETECT_BYTES: usize = 200_000;

/// Writes the campaign file for the book at `path` (see the module docs) and returns what it
/// wrote.
///
/// Errors ([`UsageError`], exit 2): no `--to`; an invalid language tag; the file exists
/// (naming it: it is never overwritten); the book cannot be detected ([`detect`]); a preset
/// that does not exist; the campaign does not resolve (an error of the book's own table of
/// contents, two chapter files with one name), naming the file it would have written.
pub fn write_campaign(
    path: &Path,
    book: &BookArgs,
    model: Option<&str>,
    base_url: Option<&str>,
    file: Option<&Path>,
) -> Result<Written, UsageError> {
    let Some(to) = book.to.as_deref() else {
        return Err(UsageError::new(format!(
            "say which language to translate {} into with --to LANG (a BCP 47 tag such as zh, de or pt-BR)",
            path.display()
        )));
    };
    crate::lang::check_tag(to).map_err(|why| UsageError::new(format!("--to {why}")))?;
    if let Some(from) = &book.from {
        crate::lang::check_tag(from).map_err(|why| UsageError::new(format!("--from {why}")))?;
    }
    // Written as BCP 47 writes them (`ZH` → `zh`, `zh-cn` → `zh-CN`).
    let to_canonical = crate::lang::canonical_case(to);
    let to = to_canonical.as_str();
    let from_canonical = book.from.as_deref().map(crate::lang::canonical_case);
    let d = detect(path)?;
    let (name, default) = default_file(&d, to);
    // A campaign file named with --file names its campaign too: the campaign's name is the
    // folder of its outputs and state, so a second campaign for the same book and language
    // must not share the first one's.
    let name = match file.and_then(Path::file_stem) {
        Some(stem) => file_safe(&stem.to_string_lossy()),
        None => name,
    };
    let file_abs = file.map(absolute).unwrap_or(default);
    let shown = match file {
        Some(f) => f.display().to_string(),
        None => show_path(&file_abs),
    };
    if file_abs.exists() {
        return Err(UsageError::new(format!(
            "{shown} already exists, and booktr init never overwrites a file. Use it (`booktr plan {s}`, `booktr run {s}`), delete it, or write another with --file NEW.toml",
            s = shell_word(&shown)
        )));
    }
    let preset = match (&book.preset, model) {
        (Some(p), Some(m)) => {
            let preset = crate::llm::presets::find(p)
                .map_err(|m| UsageError::new(format!("--preset: {m}")))?;
            Some(Provider {
                preset,
                model: m,
                base_url,
            })
        }
        _ => None,
    };
    // Resolved twice: first with a provisional source language to find the chapters (and
    // read them for detection), then as written.
    let provisional = from_canonical.clone().unwrap_or_else(|| {
        if Lang::parse(to).primary() == "en" {
            "de".into()
        } else {
            "en".into()
        }
    });
    let resolve = |source: &str, origin: &str| -> Result<(String, Plan), UsageError> {
        let text = campaign_text(&d, &file_abs, &name, source, origin, to, preset.as_ref());
        let raw: RawCampaign = toml::from_str(&text).map_err(|e| {
            UsageError::new(format!(
                "the campaign for {} does not parse ({e}); this is a booktr bug",
                path.display()
            ))
        })?;
        let plan = Plan::resolve(&file_abs, raw, &Overrides::default()).map_err(|e| {
            UsageError::new(format!(
                "cannot write a campaign file for {}: {e}",
                path.display()
            ))
        })?;
        Ok((text, plan))
    };
    let (_, first) = resolve(&provisional, "given")?;
    let (source, origin) = match &from_canonical {
        Some(f) => (f.clone(), "given"),
        None => {
            let texts = sample_texts(&first);
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            match detect_source_lang(&refs) {
                Some(l) => (l.code, "detected"),
                None => ("en".to_string(), "default"),
            }
        }
    };
    if Lang::parse(&source).primary() == Lang::parse(to).primary() {
        return Err(UsageError::new(format!(
            "{} is in `{source}`{}, the language --to asks for: pick another target language{}",
            path.display(),
            if origin == "detected" {
                " (detected from its chapters)"
            } else {
                ""
            },
            if origin == "detected" {
                ", or pass --from if the detection is wrong"
            } else {
                ""
            }
        )));
    }
    let (text, plan) = resolve(&source, origin)?;
    if let Some(parent) = file_abs.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| UsageError::new(format!("cannot create the folder of {shown}: {e}")))?;
    }
    // `create_new`: a file that appeared since the check above is not overwritten either.
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&file_abs)
        .map_err(|e| UsageError::new(format!("cannot write {shown}: {e}")))?;
    f.write_all(text.as_bytes())
        .map_err(|e| UsageError::new(format!("cannot write {shown}: {e}")))?;
    Ok(Written {
        shown,
        file: file_abs,
        detected: d,
        source_lang: source,
        source_origin: origin,
        chapters: plan
            .chapters
            .iter()
            .map(|c| show_path(&crate::util::normalize(&plan.campaign_dir.join(c))))
            .collect(),
    })
}

/// `booktr init`.
pub fn run(args: &InitArgs) -> anyhow::Result<ExitCode> {
    let w = write_campaign(
        &args.path,
        &args.book,
        args.model.as_deref(),
        args.base_url.as_deref(),
        args.file.as_deref(),
    )?;
    let to = crate::lang::canonical_case(args.book.to.as_deref().unwrap_or_default());
    for line in w.lines(&to) {
        println!("{line}");
    }
    Ok(ExitCode::Ok)
}

/// For `booktr run PATH`: the campaign file to run. `None` when PATH is a campaign file (then
/// `book` must be empty: its `--to`, `--from` and `--preset` belong to a book). For a book
/// folder or chapter file, the file `init` writes there: written now, or reused when an earlier
/// `init` or `run` wrote it (its `target_lang` must then be `--to`). Prints on stderr where
/// the campaign file is.
///
/// Errors ([`UsageError`], exit 2): a book without `--to`, book flags with a campaign file, a
/// reused file for another language, and [`write_campaign`]'s errors.
pub fn campaign_for_run(
    path: &Path,
    book: &BookArgs,
    model: Option<&str>,
) -> Result<Option<PathBuf>, UsageError> {
    // Anything but a book folder, a chapter or a book's table of contents is a campaign file
    // (whatever its extension), as before `run` took books.
    let is_book = path.is_dir()
        || path.is_file()
            && (is_markdown(path)
                || is_notebook(path)
                || file_named(
                    path,
                    &["book.toml", "SUMMARY.md", "mkdocs.yml", "mkdocs.yaml"],
                ));
    if !is_book && (path.exists() || book.to.is_none()) {
        if let Some(flag) = [
            ("--to", book.to.is_some()),
            ("--from", book.from.is_some()),
            ("--preset", book.preset.is_some()),
        ]
        .iter()
        .find(|f| f.1)
        {
            return Err(UsageError::new(format!(
                "{} is given with {}, which is for a book folder or chapter file; a campaign file names its languages and provider itself (edit it, or pass --model/--provider to override the model)",
                path.display(),
                flag.0
            )));
        }
        return Ok(None);
    }
    if book.to.is_none() {
        return Err(UsageError::new(format!(
            "{} is a book, not a campaign file: say which language to translate it into, e.g. `booktr run {} --to zh` (that writes the campaign file beside the book first), or write the campaign file with `booktr init {} --to LANG`",
            path.display(),
            shell_word(&path.display().to_string()),
            shell_word(&path.display().to_string())
        )));
    }
    let to = crate::lang::canonical_case(book.to.as_deref().unwrap_or_default());
    let to = to.as_str();
    let d = detect(path)?;
    let (_, file) = default_file(&d, to);
    if file.exists() {
        let shown = show_path(&file);
        let text = std::fs::read_to_string(&file)
            .map_err(|e| UsageError::new(format!("cannot read campaign file {shown}: {e}")))?;
        let raw: RawCampaign = toml::from_str(&text).map_err(|e| {
            UsageError::new(format!(
                "campaign file {shown} is invalid: {}",
                e.to_string().trim_end()
            ))
        })?;
        if Lang::parse(&raw.target_lang).code != Lang::parse(to).code {
            return Err(UsageError::new(format!(
                "{shown} (the campaign file for {}) translates into `{}`, not `{to}`: run it with `booktr run {}`, or move it aside",
                path.display(),
                raw.target_lang,
                shell_word(&shown)
            )));
        }
        eprintln!(
            "campaign file: {shown} (written earlier for this book; edit it to change the campaign)"
        );
        return Ok(Some(file));
    }
    let w = write_campaign(path, book, model, None, None)?;
    for line in w.lines(to).into_iter().take(1) {
        eprintln!("{line}");
    }
    eprintln!(
        "campaign file: {} (next time: `booktr run {}`; `booktr plan {}` estimates the cost)",
        w.shown,
        shell_word(&w.shown),
        shell_word(&w.shown)
    );
    Ok(Some(w.file))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::util::test_tree as tree;

    const CH: &str = "# Agents\n\nAn agent calls tools in a loop.\n";

    #[test]
    fn layouts_are_detected_from_their_marker_files() {
        let d = tree(&[
            ("md/book.toml", "[book]\ntitle = \"T\"\nlanguage = \"en\"\n"),
            ("md/src/SUMMARY.md", "# Summary\n\n- [A](a.md)\n"),
            ("md/src/a.md", CH),
            ("mk/mkdocs.yml", "site_name: T\nnav:\n  - A: a.md\n"),
            ("mk/docs/a.md", CH),
            ("du/docusaurus.config.js", "module.exports = {};\n"),
            ("du/docs/a.md", CH),
            ("flat/b.md", CH),
            ("flat/a.ipynb", "{}"),
            ("deep/part1/a.md", CH),
            ("mixed/index.md", CH),
            ("mixed/usage/a.md", CH),
            ("mixed/usage/b.md", CH),
            ("one/ch.md", CH),
            ("custom/book.toml", "[book]\nsrc = \"text\"\n"),
            ("custom/text/SUMMARY.md", "- [A](a.md)\n"),
        ]);
        let p = |s: &str| d.path().join(s);
        let md = detect(&p("md")).unwrap();
        assert_eq!(md.layout, Layout::MdBook);
        assert_eq!(md.book, Some(p("md/src/SUMMARY.md")));
        assert_eq!(md.declared_lang.as_deref(), Some("en"));
        assert_eq!(detect(&p("md/src")).unwrap().root, p("md"));
        assert_eq!(detect(&p("md/book.toml")).unwrap().layout, Layout::MdBook);
        assert_eq!(
            detect(&p("custom")).unwrap().book,
            Some(p("custom/text/SUMMARY.md"))
        );
        let mk = detect(&p("mk")).unwrap();
        assert_eq!(
            (mk.layout, mk.book),
            (Layout::MkDocs, Some(p("mk/mkdocs.yml")))
        );
        let du = detect(&p("du")).unwrap();
        assert_eq!((du.layout, du.book), (Layout::Docusaurus, Some(p("du"))));
        let flat = detect(&p("flat")).unwrap();
        assert_eq!(flat.layout, Layout::Folder);
        let f = p("flat").to_string_lossy().into_owned();
        assert_eq!(flat.chapters, [f.clone(), format!("{f}/*.ipynb")]);
        let deep = detect(&p("deep")).unwrap();
        assert_eq!(
            deep.chapters,
            [format!("{}/**/*.md", p("deep").to_string_lossy())]
        );
        assert_eq!(deep.left_out, 0);
        // Files directly inside and in subfolders: the folder entry takes the first, and the
        // written campaign's lines say how many it leaves and how to take them.
        let mixed = detect(&p("mixed")).unwrap();
        assert_eq!(mixed.left_out, 2);
        let w = Written {
            shown: "mixed-de.toml".into(),
            file: p("mixed-de.toml"),
            detected: mixed,
            source_lang: "en".into(),
            source_origin: "given",
            chapters: vec!["mixed/index.md".into()],
        };
        let lines = w.lines("de");
        assert!(
            lines[1].contains("2 more Markdown file(s) in subfolders")
                && lines[1].contains("/**/*.md"),
            "{lines:?}"
        );
        assert_eq!(lines[2], "next:");
        let one = detect(&p("one/ch.md")).unwrap();
        assert_eq!(one.layout, Layout::File);
        assert_eq!(
            default_file(&one, "zh"),
            ("ch-zh".into(), p("one/ch-zh.toml"))
        );
        assert_eq!(
            default_file(&md, "pt-BR"),
            ("md-pt-BR".into(), p("md-pt-BR.toml"))
        );
        std::fs::create_dir_all(p("empty")).unwrap();
        let e = detect(&p("empty")).unwrap_err().to_string();
        assert!(e.contains("holds no Markdown file"), "{e}");
        let e = detect(&p("nowhere")).unwrap_err().to_string();
        assert!(e.contains("does not exist"), "{e}");
        std::fs::create_dir_all(p("broken")).unwrap();
        std::fs::write(p("broken/book.toml"), "[book]\n").unwrap();
        let e = detect(&p("broken")).unwrap_err().to_string();
        assert!(e.contains("SUMMARY.md does not exist"), "{e}");
    }

    /// Regression (a new user): `init --file X.toml` kept the name `<book>-<lang>`, so a
    /// second campaign for the same book and language shared the first one's outputs and state.
    #[test]
    fn init_with_file_kept_the_default_campaign_name() {
        let d = tree(&[("book/a.md", CH)]);
        let book = BookArgs {
            to: Some("zh".into()),
            from: Some("en".into()),
            preset: None,
        };
        let first = write_campaign(&d.path().join("book"), &book, None, None, None).unwrap();
        let other = d.path().join("second try.toml");
        let second =
            write_campaign(&d.path().join("book"), &book, None, None, Some(&other)).unwrap();
        let name = |f: &Path| -> String {
            let raw: toml::Value = toml::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
            raw["name"].as_str().unwrap().to_string()
        };
        assert_eq!(name(&first.file), "book-zh");
        assert_eq!(name(&second.file), "second-try");
    }

    #[test]
    fn the_source_language_is_detected_from_the_chapters_prose() {
        let en = "# Agents\n\nAn agent reads its context window, plans the next step and calls a tool when the task needs one. The loop ends when the task is done.\n\n```python\nprint('hello world')\n```\n";
        let de = "# Agenten\n\nEin Agent liest sein Kontextfenster, plant den nächsten Schritt und ruft ein Werkzeug auf, wenn die Aufgabe es verlangt. Die Schleife endet, wenn die Aufgabe erledigt ist.\n";
        let zh = "# 智能体\n\n智能体读取它的上下文窗口，规划下一步，并在任务需要时调用工具。任务完成时循环结束。\n";
        let fr = "# Agents\n\nUn agent lit sa fenêtre de contexte, planifie l'étape suivante et appelle un outil lorsque la tâche l'exige. La boucle se termine lorsque la tâche est accomplie.\n";
        for (text, code) in [(en, "en"), (de, "de"), (zh, "zh"), (fr, "fr")] {
            assert_eq!(
                detect_source_lang(&[text]).map(|l| l.primary().to_string()),
                Some(code.to_string()),
                "{text}"
            );
        }
        assert_eq!(detect_source_lang(&["```\ncode only\n```\n"]), None);
    }

    #[test]
    fn shell_words_are_quoted_only_when_needed() {
        assert_eq!(shell_word("../my-book_zh.toml"), "../my-book_zh.toml");
        assert_eq!(shell_word("my book.toml"), "'my book.toml'");
        assert_eq!(shell_word("it's.toml"), r"'it'\''s.toml'");
        assert_eq!(file_safe("zh_CN/x"), "zh-CN-x");
        assert_eq!(file_safe(".hidden"), "hidden");
    }
}
