//! Missing local targets in the source: images and relative links of the chapters that point
//! at files that do not exist. They are the source's problems, not the translation's, so they
//! are warnings (never errors: the status does not change), reported once per target with the
//! chapter file that first uses it, in the final QA's chapter-level findings (hence in
//! report.json, report.md and report.html, and in the summary's warning count).

use std::collections::BTreeMap;
use std::path::Path;

use pulldown_cmark::{Event, Tag};

use super::Campaign;
use crate::qa::{Finding, Severity};

/// The check name of these findings.
pub const CHECK: &str = "source_targets";

/// One warning per missing local target of the source chapters, in book order. A target is
/// local when it has no scheme, is not absolute and is not only a `#fragment`; its path (with
/// `%20`-style escapes decoded, fragment and query cut) is resolved against the source
/// chapter's folder. A link `x.html` counts as present when `x.md` is (mdBook and MkDocs turn
/// chapter links into pages). The synthetic navigation-titles chapter is skipped.
pub fn missing_targets(c: &Campaign) -> Vec<Finding> {
    // target path → (chapter key, chapter file, kind, target as written, references)
    let mut found: BTreeMap<std::path::PathBuf, (usize, String, String, &str, String, usize)> =
        BTreeMap::new();
    let mut order = 0;
    for ch in &c.chapters {
        if ch.key == crate::book::site::TITLES_KEY {
            continue;
        }
        let file = c.plan.campaign_dir.join(&ch.rel_path);
        let dir = file.parent().unwrap_or(Path::new("."));
        for ev in crate::book::markdown::parser(&ch.text) {
            let (kind, dest) = match ev {
                Event::Start(Tag::Image { dest_url, .. }) => ("image", dest_url),
                Event::Start(Tag::Link { dest_url, .. }) => ("link", dest_url),
                _ => continue,
            };
            let t = dest.split(['#', '?']).next().unwrap_or("").trim();
            if t.is_empty() || t.contains(':') || t.starts_with('/') || t.starts_with('<') {
                continue;
            }
            let path = crate::util::normalize(&dir.join(crate::book::site::percent_decode(t)));
            if path.exists()
                || (path.extension().is_some_and(|e| e == "html")
                    && path.with_extension("md").exists())
            {
                continue;
            }
            order += 1;
            found.entry(path).and_modify(|e| e.5 += 1).or_insert((
                order,
                ch.key.clone(),
                ch.rel_path.clone(),
                kind,
                dest.to_string(),
                1,
            ));
        }
    }
    let mut rows: Vec<_> = found.into_values().collect();
    rows.sort_by_key(|r| r.0);
    rows.into_iter()
        .map(|(_, key, file, kind, dest, n)| {
            let more = if n > 1 {
                format!(" ({} references in all)", n)
            } else {
                String::new()
            };
            Finding {
                chapter: key,
                ..Finding::new(
                    CHECK,
                    Severity::Warning,
                    format!(
                        "{file}: {kind} target `{dest}` does not exist in the source{more}; the translation keeps the same target, so fix the source or add the file"
                    ),
                    &dest,
                    "",
                )
            }
        })
        .collect()
}
