//! The rest of a translated site, beside the translated chapters that [`super::outputs`]
//! writes: for a campaign whose `book` is an mdBook, an MkDocs site or a Docusaurus tree, this
//! copies the files of the docs folder that are not chapters (images, data, includes), writes
//! the site's configuration for the target language (`book.toml` with `language`, `mkdocs.yml`
//! with translated nav titles) and Docusaurus `_category_.json` labels, so that `out_dir` builds
//! with the tool. The synthetic chapter that carries navigation titles to the translator is
//! built when the campaign is loaded ([`crate::campaign::core::Campaign`]). Chapters themselves are never
//! written here.

use std::path::{Path, PathBuf};

use anyhow::Context;
use saphyr::{LoadableYamlNode, Mapping, Scalar, Yaml, YamlEmitter};

use crate::book::site::{self, Site, SiteKind};
use crate::campaign::core::Campaign;
use crate::campaign::core::state::State;

/// What [`write_site`] did.
#[derive(Debug, Default)]
pub struct SiteWritten {
    /// Files copied unchanged from the docs folder (those already identical are not counted).
    pub copied: usize,
    /// The configuration file written, relative to `out_dir` (`book.toml`, `mkdocs.yml`).
    pub config: Option<String>,
    /// Sentences for the terminal about what could not be done as asked.
    pub notes: Vec<String>,
}

/// Writes the site around the translated chapters (see the module docs). Does nothing for a
/// campaign without `book`. Safe to call on every run: a file already there with the same
/// bytes is left alone.
///
/// Errors: I/O while reading the source site or writing into `out_dir` (naming the file).
pub fn write_site(c: &Campaign, s: &State) -> anyhow::Result<SiteWritten> {
    let Some(site) = &c.plan.site else {
        return Ok(SiteWritten::default());
    };
    let plan = &c.plan;
    let root = crate::util::normalize(&plan.campaign_dir.join(&site.root));
    let docs = crate::util::normalize(&root.join(&site.docs_dir));
    let out_docs = plan.out_dir.join(&site.out_docs_dir);
    let mut done = SiteWritten::default();
    let (titles, meta) = translated_titles(c, s, site, &mut done.notes);
    let meta: Vec<(&str, &str)> = site
        .meta
        .iter()
        .zip(&meta)
        .map(|(m, t)| (m.key.as_str(), t.as_str()))
        .collect();
    let pages: std::collections::HashSet<PathBuf> = site
        .pages
        .iter()
        .map(|p| crate::util::normalize(&plan.campaign_dir.join(&p.source)))
        .collect();
    let own: Vec<PathBuf> = [&plan.out_dir, &plan.state_dir, &plan.report_dir]
        .iter()
        .map(|d| crate::util::normalize(d))
        .collect();
    let mut untranslated = Vec::new();
    let mut skip = own.clone();
    if site.kind == SiteKind::JupyterBook {
        // Written below from the source's; `_build` is Jupyter Book's output.
        skip.extend(["_toc.yml", "_config.yml", "_build"].map(|f| root.join(f)));
    }
    for file in site_files(&docs, &skip)? {
        if pages.contains(&file) {
            continue;
        }
        let rel = file.strip_prefix(&docs).unwrap_or(&file);
        let mut bytes =
            std::fs::read(&file).with_context(|| format!("reading {}", file.display()))?;
        if site.kind == SiteKind::Docusaurus
            && rel.file_name().is_some_and(|n| n == "_category_.json")
        {
            bytes = category_json(&bytes, site, &titles);
        }
        if crate::book::includes::is_markdown(&file) {
            untranslated.push(crate::util::relative_to(&file, &root));
        }
        if copy_if_changed(&out_docs.join(rel), &bytes)? {
            done.copied += 1;
        }
    }
    // mdBook and MkDocs build from the site's root: its other files (an mdBook theme and
    // extra CSS, MkDocs hooks and Python modules its configuration imports, a theme's
    // custom_dir, snippet folders) go to the same places beside the docs folder. The
    // configuration is written below; the tool's build folder is output, not source.
    if matches!(site.kind, SiteKind::MdBook | SiteKind::MkDocs) {
        let mut skip = own.clone();
        skip.push(docs.clone());
        skip.extend(
            ["book", "site", "mkdocs.yml", "mkdocs.yaml", "book.toml"].map(|f| root.join(f)),
        );
        for file in site_files(&root, &skip)? {
            if pages.contains(&file) {
                continue;
            }
            let rel = file.strip_prefix(&root).unwrap_or(&file);
            let bytes =
                std::fs::read(&file).with_context(|| format!("reading {}", file.display()))?;
            if crate::book::includes::is_markdown(&file) {
                untranslated.push(crate::util::relative_to(&file, &root));
            }
            if copy_if_changed(&plan.out_dir.join(rel), &bytes)? {
                done.copied += 1;
            }
        }
    }
    if !untranslated.is_empty() {
        untranslated.sort();
        let n = untranslated.len();
        let shown: Vec<&str> = untranslated.iter().take(8).map(String::as_str).collect();
        done.notes.push(format!(
            "{n} Markdown file(s) copied to the output in the source language, as neither a chapter nor included by one: {}{}",
            shown.join(", "),
            if n > shown.len() { ", …" } else { "" }
        ));
    }
    match site.kind {
        SiteKind::MdBook => {
            let from = root.join("book.toml");
            if let Ok(text) = std::fs::read_to_string(&from) {
                let mut keys = vec![("language", plan.target_lang.code.as_str())];
                keys.extend(&meta);
                let text = book_toml(&text, &keys).with_context(|| {
                    format!(
                        "setting `language` and the translated title in a copy of {}",
                        from.display()
                    )
                })?;
                copy_if_changed(&plan.out_dir.join("book.toml"), text.as_bytes())?;
                done.config = Some("book.toml".into());
            }
        }
        SiteKind::MkDocs => {
            let from = root.join("mkdocs.yml");
            let from = if from.is_file() {
                from
            } else {
                root.join("mkdocs.yaml")
            };
            let text = std::fs::read_to_string(&from)
                .with_context(|| format!("reading {}", from.display()))?;
            let cfg = site::mkdocs_config(&from).map_err(anyhow::Error::msg)?;
            let out = match cfg.as_mapping_get("nav") {
                Some(nav) => {
                    let items = site::mkdocs_nav(nav).map_err(anyhow::Error::msg)?;
                    let items = site::retitle(&items, &mut titles.clone().into_iter());
                    splice_nav(&text, &site::nav_yaml(&items))?
                }
                None => text,
            };
            let theme = theme_language(&cfg, &plan.target_lang.code);
            if theme.is_none() {
                done.notes.push(format!(
                    "the MkDocs theme of {} has no translations for `{}`: its language is left as it is",
                    from.display(),
                    plan.target_lang.code
                ));
            }
            let out = mkdocs_settings(&out, &meta, theme)
                .with_context(|| format!("setting the language in a copy of {}", from.display()))?;
            let name = from.file_name().unwrap_or_default().to_string_lossy();
            copy_if_changed(&plan.out_dir.join(&*name), out.as_bytes())?;
            done.config = Some(name.into_owned());
        }
        SiteKind::Docusaurus if !site.titles.is_empty() => {
            // Docusaurus reads translated category labels from `current.json` (the file
            // `docusaurus write-translations` makes), keyed by sidebar id and source label.
            let ids = sidebar_ids(&root);
            let mut map = serde_json::Map::new();
            for id in &ids {
                for (src, tgt) in site.titles.iter().zip(&titles) {
                    map.insert(
                        format!("sidebar.{id}.category.{src}"),
                        serde_json::json!({
                            "message": tgt,
                            "description": format!("The label for category {src} in sidebar {id}"),
                        }),
                    );
                }
            }
            let out = plan.out_dir.join(format!(
                "i18n/{}/docusaurus-plugin-content-docs/current.json",
                plan.target_lang.code
            ));
            let mut bytes = serde_json::to_vec_pretty(&serde_json::Value::Object(map))?;
            bytes.push(b'\n');
            copy_if_changed(&out, &bytes)?;
            done.config = Some(crate::util::relative_to(&out, &plan.out_dir));
        }
        SiteKind::Docusaurus => {}
        SiteKind::JupyterBook => {
            let toc = std::fs::read_to_string(root.join("_toc.yml"))
                .with_context(|| format!("reading {}", root.join("_toc.yml").display()))?;
            copy_if_changed(
                &plan.out_dir.join("_toc.yml"),
                toc_retitled(&toc, &titles).as_bytes(),
            )?;
            let from = root.join("_config.yml");
            let config = std::fs::read_to_string(&from).unwrap_or_default();
            let title = meta.iter().find(|(k, _)| *k == "title").map(|(_, t)| *t);
            copy_if_changed(
                &plan.out_dir.join("_config.yml"),
                jupyter_book_config(&config, title, &sphinx_language(&plan.target_lang.code))
                    .as_bytes(),
            )?;
            done.config = Some("_config.yml".into());
        }
    }
    if site.kind == SiteKind::Docusaurus {
        let written = docusaurus_theme_json(&root, &plan.out_dir, &plan.target_lang.code, &meta)?;
        if written == 0 {
            done.notes.push(format!(
                "the navbar, footer and the site's own <Translate> texts are not translated: booktr reads them from i18n/{0}/ (code.json, docusaurus-theme-classic/navbar.json and footer.json), which is not there; run `npx docusaurus write-translations --locale {0}` in {1} and run booktr again",
                site::docusaurus_default_locale(&root),
                root.display()
            ));
        }
        let config = [
            "docusaurus.config.js",
            "docusaurus.config.ts",
            "docusaurus.config.mjs",
        ]
        .iter()
        .find_map(|f| std::fs::read_to_string(root.join(f)).ok().map(|t| (f, t)));
        if let Some((name, text)) = config
            && !lists_locale(&text, &plan.target_lang.code)
        {
            done.notes.push(format!(
                "{name} does not list the locale `{0}` in `i18n.locales`: add it there and copy the output's i18n/{0}/ into the project, then `docusaurus build --locale {0}`",
                plan.target_lang.code
            ));
        }
    }
    Ok(done)
}

/// The files under `dir` a site's build reads, in a stable order: hidden ones included (a
/// snippets folder `.snippets/`), the version-control folder `.git` and whatever the site's
/// `.gitignore` files exclude (build output, virtual environments, `node_modules`) left out,
/// and nothing under a path of `skip` (booktr's own folders, the docs folder when walking the
/// root).
///
/// Errors: a folder that cannot be read.
fn site_files(dir: &Path, skip: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let skip = skip.to_vec();
    let walk = ignore::WalkBuilder::new(dir)
        .hidden(false)
        .parents(false)
        .require_git(false)
        .git_global(false)
        .sort_by_file_path(|a, b| a.cmp(b))
        .filter_entry(move |e| {
            e.file_name() != ".git" && !skip.iter().any(|s| e.path().starts_with(s))
        })
        .build();
    let mut out = Vec::new();
    for e in walk {
        let e = e.with_context(|| format!("reading {}", dir.display()))?;
        if e.file_type().is_some_and(|t| t.is_file()) {
            out.push(crate::util::normalize(e.path()));
        }
    }
    Ok(out)
}

/// Writes `i18n/<lang>/<file>` under `out_dir` for each of [`site::DOCUSAURUS_THEME_FILES`]
/// that the project at `root` has in its default locale's folder: the same entries with each
/// message replaced by its translation from `meta` (`(<file>#<id>, translated text)`, see
/// [`site::docusaurus_theme_strings`]), an entry without one kept as it is; `code.json` without
/// the theme's own `theme.` ids, which Docusaurus ships translated. Returns how many files it
/// wrote.
///
/// Errors: writing into `out_dir`.
fn docusaurus_theme_json(
    root: &Path,
    out_dir: &Path,
    lang: &str,
    meta: &[(&str, &str)],
) -> anyhow::Result<usize> {
    let from = root
        .join("i18n")
        .join(site::docusaurus_default_locale(root));
    let mut written = 0;
    for file in site::DOCUSAURUS_THEME_FILES {
        let Some(serde_json::Value::Object(mut entries)) = std::fs::read_to_string(from.join(file))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
        else {
            continue;
        };
        if file == "code.json" {
            entries.retain(|id, _| !id.starts_with("theme."));
        }
        for (id, entry) in entries.iter_mut() {
            let key = format!("{file}#{id}");
            if let Some((_, t)) = meta.iter().find(|(k, _)| *k == key)
                && let Some(obj) = entry.as_object_mut()
            {
                obj.insert("message".into(), serde_json::Value::String(t.to_string()));
            }
        }
        let mut bytes = serde_json::to_vec_pretty(&serde_json::Value::Object(entries))?;
        bytes.push(b'\n');
        copy_if_changed(&out_dir.join("i18n").join(lang).join(file), &bytes)?;
        written += 1;
    }
    Ok(written)
}

/// A Jupyter Book `_toc.yml` (`text`) with its titles ([`site::toc_titles`]) replaced by
/// `titles` in order, each written as a double-quoted YAML string; the rest as written. With
/// another number of titles, `text` unchanged.
pub fn toc_retitled(text: &str, titles: &[String]) -> String {
    let found = site::toc_titles(text);
    if found.len() != titles.len() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for ((range, _), t) in found.iter().zip(titles) {
        out.push_str(&text[last..range.start]);
        out.push_str(&serde_json::to_string(t).unwrap_or_default());
        last = range.end;
    }
    out.push_str(&text[last..]);
    out
}

/// Sphinx's name of BCP 47 language `code` (`zh` and `zh-Hans` → `zh_CN`, `zh-Hant` →
/// `zh_TW`, `pt-BR` → `pt_BR`, `de` → `de`): the `language` Sphinx reads to localize the
/// theme's texts and search.
pub fn sphinx_language(code: &str) -> String {
    let lower = code.to_ascii_lowercase();
    match lower.as_str() {
        "zh" | "zh-hans" | "zh-cn" | "zh-sg" | "zh-hans-cn" => "zh_CN".into(),
        "zh-hant" | "zh-tw" | "zh-hk" | "zh-hant-tw" => "zh_TW".into(),
        _ => match code.split_once('-') {
            Some((lang, region)) if region.len() == 2 => {
                format!(
                    "{}_{}",
                    lang.to_ascii_lowercase(),
                    region.to_ascii_uppercase()
                )
            }
            Some((lang, _)) => lang.to_ascii_lowercase(),
            None => lower,
        },
    }
}

/// A Jupyter Book `_config.yml` (`text`) with its top-level `title` set to `title` (when
/// given) and Sphinx's `language` (`sphinx: config: language:`) set to `lang`: the value
/// replaced where the key is written, else the key added under `config:` (or `sphinx:`, or
/// at the end). Line edits, not a YAML round trip, so comments and layout stay as written.
pub fn jupyter_book_config(text: &str, title: Option<&str>, lang: &str) -> String {
    use std::sync::LazyLock;
    static TITLE: LazyLock<regex::Regex> =
        LazyLock::new(|| regex::Regex::new(r"(?m)^title:[ \t]*([^\n]*)$").expect("valid"));
    static LANGUAGE: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(r"(?m)^([ \t]+language:[ \t]*)([^\s#][^\n#]*?)([ \t]*(?:#[^\n]*)?)$")
            .expect("valid")
    });
    let mut out = text.to_string();
    if let Some(t) = title {
        let quoted = serde_json::to_string(t).unwrap_or_default();
        out = match TITLE.captures(&out).and_then(|c| c.get(1)) {
            Some(v) => format!("{}{quoted}{}", &out[..v.start()], &out[v.end()..]),
            None => format!("title: {quoted}\n{out}"),
        };
    }
    // booktr's list of translated titles (`.booktr/nav-titles.md`) is not a page of the book.
    static EXCLUDE: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(r"(?m)^exclude_patterns:[ \t]*\[([^\]\n]*)\]").expect("valid")
    });
    let excluded = "\".booktr/*\"";
    out = match EXCLUDE.captures(&out).and_then(|c| c.get(1)) {
        Some(list) if list.as_str().trim().is_empty() => {
            format!("{}{excluded}{}", &out[..list.start()], &out[list.end()..])
        }
        Some(list) => format!("{}, {excluded}{}", &out[..list.end()], &out[list.end()..]),
        None if out.contains("\nexclude_patterns:") || out.starts_with("exclude_patterns:") => out,
        None => format!("exclude_patterns: [{excluded}]\n{out}"),
    };
    let sphinx = out
        .find("\nsphinx:")
        .map(|i| i + 1)
        .or_else(|| out.starts_with("sphinx:").then_some(0));
    if let Some(at) = sphinx
        && let Some(c) = LANGUAGE.captures(&out[at..])
    {
        let v = c.get(2).expect("group 2");
        return format!("{}{lang}{}", &out[..at + v.start()], &out[at + v.end()..]);
    }
    let line_end = |from: usize, s: &str| s[from..].find('\n').map_or(s.len(), |i| from + i + 1);
    match sphinx {
        Some(at) => match out[at..].find("\n  config:") {
            Some(i) => {
                let end = line_end(at + i + 1, &out);
                format!("{}    language: {lang}\n{}", &out[..end], &out[end..])
            }
            None => {
                let end = line_end(at, &out);
                format!(
                    "{}  config:\n    language: {lang}\n{}",
                    &out[..end],
                    &out[end..]
                )
            }
        },
        None => {
            let sep = if out.is_empty() || out.ends_with('\n') {
                ""
            } else {
                "\n"
            };
            format!("{out}{sep}sphinx:\n  config:\n    language: {lang}\n")
        }
    }
}

/// Whether the Docusaurus configuration `text` lists locale `code` in an `i18n.locales` array
/// (`locales: ['en', 'zh-Hans']`). A scan of the first `locales:` array, not a JavaScript
/// parser: a configuration that builds its list in code reads as not listing it, which only
/// adds a note.
fn lists_locale(text: &str, code: &str) -> bool {
    let Some(at) = text.find("locales:") else {
        return false;
    };
    let rest = &text[at..];
    let (Some(open), Some(close)) = (rest.find('['), rest.find(']')) else {
        return false;
    };
    open < close
        && rest[open + 1..close]
            .split(',')
            .any(|l| l.trim().trim_matches(['\'', '"', '`']) == code)
}

/// The sidebar ids of a Docusaurus project: every `name: [` in its `sidebars.js` (or `.ts`),
/// else Docusaurus' default `defaultSidebar`. A scan, not a JavaScript parser: sidebar files
/// are object literals of this shape, and a missed id only leaves labels untranslated.
pub fn sidebar_ids(root: &Path) -> Vec<String> {
    let text = ["sidebars.js", "sidebars.ts", "sidebars.cjs", "sidebars.mjs"]
        .iter()
        .find_map(|f| std::fs::read_to_string(root.join(f)).ok());
    let Some(text) = text else {
        return vec!["defaultSidebar".into()];
    };
    let mut ids = Vec::new();
    let b = text.as_bytes();
    for (i, _) in text.match_indices(':') {
        let after = text[i + 1..].trim_start();
        if !after.starts_with('[') {
            continue;
        }
        let before = text[..i].trim_end();
        let start = before
            .rfind(|c: char| {
                !(c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == '"' || c == '\'')
            })
            .map_or(0, |j| j + 1);
        let id = before[start..].trim_matches(['"', '\'']);
        if !id.is_empty() && !b[start].is_ascii_digit() && !ids.iter().any(|x| x == id) {
            ids.push(id.to_string());
        }
    }
    if ids.is_empty() {
        ids.push("defaultSidebar".into());
    }
    ids
}

/// The translated navigation titles and [`site::Meta`] texts, or the source ones (with a note)
/// while the titles chapter is untranslated or its list lost or gained items.
fn translated_titles(
    c: &Campaign,
    s: &State,
    site: &Site,
    notes: &mut Vec<String>,
) -> (Vec<String>, Vec<String>) {
    if !site.has_titles() {
        return (Vec::new(), Vec::new());
    }
    let source = || {
        (
            site.titles.clone(),
            site.meta.iter().map(|m| m.text.clone()).collect(),
        )
    };
    let text = super::outputs::chapter_text(c, s, site::TITLES_KEY, None);
    match text.as_deref().map(|t| site.parse_titles(t)) {
        Some(Some(t)) => t,
        Some(None) => {
            notes.push(format!(
                "the translated navigation titles ({}) do not have one item per title: the source titles are kept; fix that file and run again",
                site::TITLES_OUT
            ));
            source()
        }
        None => {
            notes.push(
                "the navigation titles are not translated yet: the source titles are kept".into(),
            );
            source()
        }
    }
}

/// Writes `bytes` to `to` unless it already holds them. Returns whether it wrote.
fn copy_if_changed(to: &Path, bytes: &[u8]) -> anyhow::Result<bool> {
    if std::fs::read(to).is_ok_and(|b| b == bytes) {
        return Ok(false);
    }
    crate::util::write_atomic(to, bytes)?;
    Ok(true)
}

/// A `_category_.json` with its `label` translated (by its place in [`Site::titles`]); the
/// bytes unchanged when it has no label or is not JSON.
fn category_json(bytes: &[u8], site: &Site, titles: &[String]) -> Vec<u8> {
    let Ok(mut v) = serde_json::from_slice::<serde_json::Value>(bytes) else {
        return bytes.to_vec();
    };
    let Some(label) = v.get("label").and_then(|l| l.as_str()).map(str::to_string) else {
        return bytes.to_vec();
    };
    let Some(i) = site.titles.iter().position(|t| *t == label) else {
        return bytes.to_vec();
    };
    v["label"] = serde_json::Value::String(titles.get(i).cloned().unwrap_or(label));
    let mut out = serde_json::to_vec_pretty(&v).unwrap_or_else(|_| bytes.to_vec());
    out.push(b'\n');
    out
}

/// `book.toml` text with each `(key, value)` of `keys` set in its `[book]` table (`language`,
/// the translated `title` and `description`), every other line kept as written (comments
/// included; the `toml` crate would drop them, hence the line edit). A value written over
/// several lines (a multi-line string) is replaced whole. The result is checked to parse as
/// TOML with the new values.
///
/// Errors: the edited text does not parse (a `book.toml` mdBook itself would refuse).
pub fn book_toml(text: &str, keys: &[(&str, &str)]) -> anyhow::Result<String> {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    if !lines.iter().any(|l| l.trim() == "[book]") {
        lines.splice(0..0, ["[book]".to_string(), String::new()]);
    }
    for (key, value) in keys {
        let line = format!("{key} = {}", toml::Value::String(value.to_string()));
        let b = lines
            .iter()
            .position(|l| l.trim() == "[book]")
            .expect("inserted above");
        let end = lines[b + 1..]
            .iter()
            .position(|l| l.trim_start().starts_with('['))
            .map_or(lines.len(), |i| b + 1 + i);
        let at = lines[b + 1..end].iter().position(|l| {
            l.trim_start()
                .strip_prefix(key)
                .is_some_and(|r| r.trim_start().starts_with('='))
        });
        match at {
            // The old value ends at the first line after which its lines parse on their own
            // (one line, or a multi-line string); it is replaced by the one-line new value.
            Some(i) => {
                let from = b + 1 + i;
                let to = (from..end)
                    .find(|&j| toml::from_str::<toml::Table>(&lines[from..=j].join("\n")).is_ok())
                    .unwrap_or(from);
                lines.splice(from..=to, [line]);
            }
            None => lines.insert(b + 1, line),
        }
    }
    let out = lines.join("\n") + "\n";
    let parsed: toml::Table = toml::from_str(&out)?;
    for (key, value) in keys {
        anyhow::ensure!(
            parsed
                .get("book")
                .and_then(|b| b.get(*key))
                .and_then(|l| l.as_str())
                == Some(value),
            "`[book] {key}` did not take the value {value:?}"
        );
    }
    Ok(out)
}

/// The `theme` key that sets the site's language and its value for `lang`: `language` for
/// Material (which takes the code as given), `locale` for MkDocs' built-in `mkdocs` and
/// `readthedocs` themes, which ship translations only for the locales listed here (MkDocs
/// 1.6.1, `mkdocs/themes/mkdocs/locales`; another one makes MkDocs warn, and fails a
/// `--strict` build). `None` for another theme or a locale the built-in themes lack.
pub fn theme_language(cfg: &saphyr::YamlOwned, lang: &str) -> Option<(&'static str, String)> {
    const BUILTIN: [&str; 17] = [
        "de", "es", "fa", "fr", "id", "it", "ja", "nb", "nl", "nn", "pl", "pt_BR", "ru", "tr",
        "uk", "zh_CN", "zh_TW",
    ];
    let theme = cfg.as_mapping_get("theme");
    let name = theme
        .and_then(|t| t.as_str().or_else(|| t.as_mapping_get("name")?.as_str()))
        .unwrap_or("mkdocs");
    match name {
        "material" => Some(("language", lang.to_string())),
        "mkdocs" | "readthedocs" => {
            let l = lang.replace('-', "_");
            let l = match l.to_ascii_lowercase().as_str() {
                "zh" | "zh_hans" | "zh_cn" => "zh_CN".to_string(),
                "zh_hant" | "zh_tw" | "zh_hk" => "zh_TW".to_string(),
                "pt_br" => "pt_BR".to_string(),
                _ => l,
            };
            BUILTIN.contains(&l.as_str()).then_some(("locale", l))
        }
        _ => None,
    }
}

/// `mkdocs.yml` text with top-level `keys` set (`site_name`, `site_description`; only keys the
/// file has are replaced, with their continuation lines) and, when given, `theme.<key>` set to
/// the language ([`theme_language`]), every other line kept as written (comments and MkDocs'
/// `!!python/name:` tags would not survive re-serialising). Values are written as JSON strings,
/// which YAML reads as double-quoted scalars.
///
/// Errors: the result is not YAML, or does not hold the values (it is parsed back to check).
pub fn mkdocs_settings(
    text: &str,
    keys: &[(&str, &str)],
    theme: Option<(&str, String)>,
) -> anyhow::Result<String> {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let indented = |l: &str| l.starts_with([' ', '\t']) || l.trim().is_empty();
    let top = |lines: &[String], key: &str| {
        lines.iter().position(|l| {
            l.strip_prefix(key)
                .is_some_and(|r| r.starts_with(':') && (r.len() == 1 || r[1..].starts_with(' ')))
        })
    };
    // The lines after `at` that belong to its value (indented; blank lines inside count only
    // when an indented line follows them).
    let block_end = |lines: &[String], at: usize| {
        let mut end = at + 1;
        let mut i = at + 1;
        while i < lines.len() && indented(&lines[i]) {
            i += 1;
            if !lines[i - 1].trim().is_empty() {
                end = i;
            }
        }
        end
    };
    for (key, value) in keys {
        if let Some(at) = top(&lines, key) {
            let end = block_end(&lines, at);
            let json = serde_json::to_string(value)?;
            lines.splice(at..end, [format!("{key}: {json}")]);
        }
    }
    if let Some((key, value)) = &theme {
        match top(&lines, "theme") {
            None => lines.extend([
                "theme:".to_string(),
                "  name: mkdocs".to_string(),
                format!("  {key}: {value}"),
            ]),
            Some(at) => {
                let inline = lines[at]["theme:".len()..].trim().to_string();
                let inline = inline.split(" #").next().unwrap_or("").trim().to_string();
                if !inline.is_empty() {
                    lines.splice(
                        at..=at,
                        [
                            "theme:".to_string(),
                            format!("  name: {inline}"),
                            format!("  {key}: {value}"),
                        ],
                    );
                } else {
                    let end = block_end(&lines, at);
                    let child = lines[at + 1..end]
                        .iter()
                        .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
                        .map_or("  ".to_string(), |l| {
                            l[..l.len() - l.trim_start().len()].to_string()
                        });
                    let line = format!("{child}{key}: {value}");
                    let existing = (at + 1..end).find(|&i| {
                        lines[i]
                            .strip_prefix(child.as_str())
                            .and_then(|r| r.strip_prefix(key))
                            .is_some_and(|r| r.starts_with(':'))
                    });
                    match existing {
                        Some(i) => lines[i] = line,
                        None => lines.insert(at + 1, line),
                    }
                }
            }
        }
    }
    let out = lines.join("\n") + "\n";
    let doc = saphyr::YamlOwned::load_from_str(&out)
        .context("the mkdocs.yml with the translated settings is not valid YAML")?
        .into_iter()
        .next()
        .unwrap_or_else(|| saphyr::YamlOwned::Mapping(Default::default()));
    for (key, value) in keys {
        if let Some(v) = doc.as_mapping_get(key) {
            anyhow::ensure!(
                v.as_str() == Some(value),
                "`{key}` did not take the value {value:?}"
            );
        }
    }
    if let Some((key, value)) = &theme {
        anyhow::ensure!(
            doc.as_mapping_get("theme")
                .and_then(|t| t.as_mapping_get(key))
                .and_then(|v| v.as_str())
                == Some(value.as_str()),
            "`theme.{key}` did not take the value {value}"
        );
    }
    Ok(out)
}

/// `mkdocs.yml` text with its top-level `nav:` block replaced by `nav` (emitted by `saphyr`),
/// every other line kept as written: re-serialising the whole file would drop comments and
/// rewrite MkDocs' `!!python/name:` tags.
///
/// Errors: the nav cannot be emitted, or the result is not YAML (it is parsed back to check).
pub fn splice_nav(text: &str, nav: &Yaml<'_>) -> anyhow::Result<String> {
    let lines: Vec<&str> = text.lines().collect();
    let Some(start) = lines.iter().position(|l| l.starts_with("nav:")) else {
        return Ok(text.to_string());
    };
    let end = lines[start + 1..]
        .iter()
        .position(|l| !l.is_empty() && !l.starts_with([' ', '\t', '#', '-']))
        .map_or(lines.len(), |i| start + 1 + i);
    let mut m = Mapping::new();
    m.insert(Yaml::Value(Scalar::String("nav".into())), nav.clone());
    let mut dumped = String::new();
    YamlEmitter::new(&mut dumped)
        .dump(&Yaml::Mapping(m))
        .map_err(|e| anyhow::anyhow!("cannot write the translated nav as YAML: {e}"))?;
    // The emitter opens a document with `---`; the block goes inside the existing one.
    let block = dumped.strip_prefix("---\n").unwrap_or(&dumped);
    let mut out = lines[..start].join("\n");
    if start > 0 {
        out.push('\n');
    }
    out.push_str(block);
    out.push('\n');
    if end < lines.len() {
        out.push_str(&lines[end..].join("\n"));
        out.push('\n');
    }
    Yaml::load_from_str(&out)
        .context("the mkdocs.yml with translated nav titles is not valid YAML")?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn language_is_set_and_comments_kept() {
        let t = book_toml(
            "# my book\n[book]\ntitle = \"T\"\nlanguage = \"en\"\n[output.html]\n",
            &[("language", "zh")],
        )
        .unwrap();
        assert_eq!(
            t,
            "# my book\n[book]\ntitle = \"T\"\nlanguage = \"zh\"\n[output.html]\n"
        );
        let t = book_toml("[output.html]\n", &[("language", "zh")]).unwrap();
        assert!(t.starts_with("[book]\nlanguage = \"zh\"\n"), "{t}");
    }

    #[test]
    fn the_books_title_and_description_are_written_translated() {
        let t = book_toml(
            "[book]\ntitle = \"The Cargo Book\" # name\ndescription = \"\"\"\nAll about\nCargo\"\"\"\n",
            &[
                ("language", "de"),
                ("title", "Das \"Cargo\"-Buch"),
                ("description", "Alles über Cargo"),
            ],
        )
        .unwrap();
        let parsed: toml::Table = toml::from_str(&t).unwrap();
        assert_eq!(parsed["book"]["title"].as_str(), Some("Das \"Cargo\"-Buch"));
        assert_eq!(
            parsed["book"]["description"].as_str(),
            Some("Alles über Cargo")
        );
        assert_eq!(parsed["book"]["language"].as_str(), Some("de"));
    }

    #[test]
    fn the_site_name_and_theme_language_are_set_in_mkdocs_yml() {
        let text = "site_name: My Docs # c\nsite_description: >\n  A long\n  text\ntheme:\n  name: material\n  features:\n    - a\nx: !!python/name:a.b\n";
        let cfg = saphyr::YamlOwned::load_from_str(text).unwrap().remove(0);
        let theme = theme_language(&cfg, "zh");
        assert_eq!(theme, Some(("language", "zh".to_string())));
        let out = mkdocs_settings(
            text,
            &[
                ("site_name", "我的文档"),
                ("site_description", "很长: 的文本"),
            ],
            theme,
        )
        .unwrap();
        assert_eq!(
            out,
            "site_name: \"我的文档\"\nsite_description: \"很长: 的文本\"\ntheme:\n  language: zh\n  name: material\n  features:\n    - a\nx: !!python/name:a.b\n"
        );
        // The built-in theme, written inline, takes a locale it ships translations for.
        let cfg = saphyr::YamlOwned::load_from_str("theme: readthedocs\n")
            .unwrap()
            .remove(0);
        let theme = theme_language(&cfg, "zh");
        assert_eq!(theme, Some(("locale", "zh_CN".to_string())));
        assert_eq!(
            mkdocs_settings("site_name: S\ntheme: readthedocs # rtd\n", &[], theme).unwrap(),
            "site_name: S\ntheme:\n  name: readthedocs\n  locale: zh_CN\n"
        );
        assert_eq!(theme_language(&cfg, "ko"), None);
    }

    #[test]
    fn a_docusaurus_locale_missing_from_the_configuration_is_told() {
        let config = "module.exports = {\n  i18n: {\n    defaultLocale: 'en',\n    locales: ['en', 'ja', \"zh-Hans\"],\n  },\n};\n";
        assert!(lists_locale(config, "zh-Hans"));
        assert!(lists_locale(config, "ja"));
        assert!(!lists_locale(config, "de"));
        assert!(!lists_locale("module.exports = {};\n", "en"));
    }

    #[test]
    fn docusaurus_theme_strings_are_written_translated_into_the_target_locale() {
        let d = crate::util::test_tree(&[
            (
                "web/docusaurus.config.js",
                "export default {\n  i18n: { defaultLocale: \"fr\", locales: ['fr', 'de'] },\n};\n",
            ),
            (
                "web/i18n/fr/docusaurus-theme-classic/footer.json",
                "{\"link.title.Docs\": {\"message\": \"Documentation\", \"description\": \"d\"}, \"copyright\": {\"message\": \"\"}}",
            ),
            (
                "web/i18n/fr/code.json",
                "{\"theme.x\": {\"message\": \"Suivant\"}, \"home.cta\": {\"message\": \"Commencer\"}}",
            ),
        ]);
        let root = d.path().join("web");
        let meta = site::docusaurus_theme_strings(&root);
        let keys: Vec<&str> = meta.iter().map(|m| m.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "docusaurus-theme-classic/footer.json#link.title.Docs",
                "code.json#home.cta"
            ]
        );
        let out = d.path().join("out");
        let n = docusaurus_theme_json(
            &root,
            &out,
            "de",
            &[
                (
                    "docusaurus-theme-classic/footer.json#link.title.Docs",
                    "Dokumentation",
                ),
                ("code.json#home.cta", "Loslegen"),
            ],
        )
        .unwrap();
        assert_eq!(n, 2);
        let read = |f: &str| -> serde_json::Value {
            serde_json::from_str(&std::fs::read_to_string(out.join("i18n/de").join(f)).unwrap())
                .unwrap()
        };
        let footer = read("docusaurus-theme-classic/footer.json");
        assert_eq!(footer["link.title.Docs"]["message"], "Dokumentation");
        assert_eq!(footer["link.title.Docs"]["description"], "d");
        assert_eq!(footer["copyright"]["message"], "");
        let code = read("code.json");
        assert_eq!(code["home.cta"]["message"], "Loslegen");
        assert!(code.get("theme.x").is_none());
        // Without the default locale's files there is nothing to translate (the run says so).
        assert_eq!(
            docusaurus_theme_json(&d.path().join("none"), &out, "de", &[]).unwrap(),
            0
        );
    }

    #[test]
    fn a_jupyter_books_titles_and_language_are_set_in_its_configuration() {
        let toc = "format: jb-book\nroot: intro\nparts:\n- caption: Tutorials # first\n  chapters:\n  - file: start/a\n  - url: https://x.org\n    title: 'Gallery'\n";
        let out = toc_retitled(toc, &["教程".into(), "画廊 \"x\"".into()]);
        assert_eq!(
            out,
            "format: jb-book\nroot: intro\nparts:\n- caption: \"教程\" # first\n  chapters:\n  - file: start/a\n  - url: https://x.org\n    title: \"画廊 \\\"x\\\"\"\n"
        );
        assert_eq!(toc_retitled(toc, &["one".into()]), toc);
        // A quoted title keeps its `#`; a comment after a plain one is not the title.
        let quoted =
            site::toc_titles("- caption: \"C# in practice\" # part\n  title: Plain # note\n");
        let texts: Vec<&str> = quoted.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(texts, ["C# in practice", "Plain"]);
        assert_eq!(sphinx_language("zh"), "zh_CN");
        assert_eq!(sphinx_language("zh-Hant"), "zh_TW");
        assert_eq!(sphinx_language("pt-BR"), "pt_BR");
        assert_eq!(sphinx_language("de"), "de");
        // The key where it is written.
        let cfg =
            "title: \"\"\nsphinx:\n  config:\n    bibtex: x # c\n    language: en # the site's\n";
        assert_eq!(
            jupyter_book_config(cfg, Some("书"), "zh_CN"),
            "exclude_patterns: [\".booktr/*\"]\ntitle: \"书\"\nsphinx:\n  config:\n    bibtex: x # c\n    language: zh_CN # the site's\n"
        );
        // Added under `config:`, under `sphinx:`, or at the end.
        assert_eq!(
            jupyter_book_config(
                "exclude_patterns: [a.rst]\nsphinx:\n  config:\n    a: 1\n",
                None,
                "de"
            ),
            "exclude_patterns: [a.rst, \".booktr/*\"]\nsphinx:\n  config:\n    language: de\n    a: 1\n"
        );
        assert_eq!(
            jupyter_book_config("sphinx:\n  extra_extensions: []\n", None, "de"),
            "exclude_patterns: [\".booktr/*\"]\nsphinx:\n  config:\n    language: de\n  extra_extensions: []\n"
        );
        assert_eq!(
            jupyter_book_config("title: Book", Some("Buch"), "de"),
            "exclude_patterns: [\".booktr/*\"]\ntitle: \"Buch\"\nsphinx:\n  config:\n    language: de\n"
        );
    }

    #[test]
    fn sidebar_ids_from_sidebars_js() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join("sidebars.js"),
            "const sidebars = {\n  tutorialSidebar: [{type: 'autogenerated', dirName: '.'}],\n  'api': [ 'intro' ],\n};\nmodule.exports = sidebars;\n",
        )
        .unwrap();
        assert_eq!(sidebar_ids(d.path()), ["tutorialSidebar", "api"]);
        assert_eq!(sidebar_ids(&d.path().join("none")), ["defaultSidebar"]);
    }

    #[test]
    fn nav_is_replaced_and_the_rest_kept() {
        let text = "site_name: S # name\nnav:\n  - Home: index.md\n# c\ntheme: material\nx: !!python/name:a.b\n";
        let nav = Yaml::load_from_str("[{Accueil: index.md}, {'oui: non': b.md}, {'1.0': c.md}]")
            .unwrap()
            .remove(0);
        let out = splice_nav(text, &nav).unwrap();
        assert_eq!(
            out,
            "site_name: S # name\nnav:\n  - Accueil: index.md\n  - \"oui: non\": b.md\n  - \"1.0\": c.md\ntheme: material\nx: !!python/name:a.b\n"
        );
    }
}
