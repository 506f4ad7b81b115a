//! Reassembling translated chapters: each chapter is the concatenation of its units' final
//! texts in order (a notebook: its JSON with each Markdown cell's units' texts as the cell's
//! source, [`crate::book::Chapter::assemble`]) (the kept translation of a prose unit, see [`crate::campaign::core::edits::final_text`]; the source of a verbatim or
//! front-matter unit), written atomically to `<out_dir>/<chapter file name>`.

use crate::campaign::core::Campaign;
use crate::campaign::core::state::State;
use crate::campaign::core::store::{Event, Store};
use crate::interchange::bilingual;

/// The text written for `chapter` from the final text of every unit ([`Campaign::written_text`],
/// with `retarget` from [`Campaign::retarget`]), or `None` if some prose unit has no
/// translation.
pub fn chapter_text(
    c: &Campaign,
    s: &State,
    chapter: &str,
    retarget: Option<&crate::book::links::Retarget>,
) -> Option<String> {
    let ch = c.chapter(chapter);
    let mut texts = Vec::new();
    for u in c.units_of(chapter) {
        if u.kind.needs_translation()
            && s.human_edit(&u.id).is_none()
            && s.kept_translation(&u.id, u32::MAX).is_none()
        {
            return None;
        }
        texts.push((
            u.range.clone(),
            crate::campaign::core::edits::final_text(c, s, u),
        ));
    }
    // Markdown: the texts joined; a notebook: its JSON with the Markdown cells replaced.
    let text = ch.assemble(texts.iter().map(|(r, t)| (r.clone(), t.as_str())));
    Some(c.written_text(ch, text, retarget))
}

/// What [`write_all`] did.
pub struct Written {
    /// (path relative to the campaign file, sha256) of each chapter written.
    pub files: Vec<(String, String)>,
    /// Keys of chapters skipped because a unit has no translation.
    pub skipped: Vec<String>,
}

/// Writes every complete chapter atomically.
pub fn write_all(c: &Campaign, s: &State) -> anyhow::Result<Written> {
    let mut written = Vec::new();
    let mut skipped = Vec::new();
    let retarget = c.retarget(s);
    for ch in &c.chapters {
        match chapter_text(c, s, &ch.key, retarget.as_ref()) {
            Some(text) => {
                let path = c.plan.out_dir.join(&ch.file_name);
                crate::util::write_atomic(&path, text.as_bytes())?;
                written.push((c.plan.rel(&path), crate::util::sha256_hex(text.as_bytes())));
            }
            None => skipped.push(ch.key.clone()),
        }
    }
    Ok(Written {
        files: written,
        skipped,
    })
}

/// Writes the output chapters (and the bilingual ones when the campaign asks for them) and
/// journals `outputs_written`. Returns the keys of chapters not written for lack of a
/// translation.
pub fn record_outputs(
    c: &Campaign,
    store: &mut Store,
    state: &mut State,
) -> anyhow::Result<Vec<String>> {
    let written = write_all(c, state)?;
    crate::campaign::core::commit::record_event(
        c,
        store,
        state,
        Event::OutputsWritten {
            files: written.files,
        },
    )?;
    crate::campaign::core::reuse::record_blocks(c, store, state)?;
    if c.plan.bilingual {
        write_bilingual(c, state)?;
    }
    Ok(written.skipped)
}

/// The rows of chapter `chapter` of a campaign, from each unit's source and final text; `None`
/// when a prose unit has no translation yet (the chapter is not written either).
pub fn bilingual_rows(c: &Campaign, s: &State, chapter: &str) -> Option<Vec<bilingual::Row>> {
    let mut rows = Vec::new();
    for u in c.units_of(chapter) {
        let prose = u.kind.needs_translation();
        if prose && s.human_edit(&u.id).is_none() && s.kept_translation(&u.id, u32::MAX).is_none() {
            return None;
        }
        let target = crate::campaign::core::edits::final_text(c, s, u);
        rows.extend(bilingual::pair_unit(c.source_text(u), Some(&target), prose));
    }
    Some(rows)
}

/// Writes `<out_dir>/bilingual/<chapter file name>` for every complete chapter, atomically.
/// Returns the paths written. These files are a reading view: editors edit the normal output
/// chapters, and edits of bilingual files are not recorded. A rehearsal's files carry the
/// rehearsal mark ([`crate::interchange::rehearsal::mark_markdown`]).
pub fn write_bilingual(c: &Campaign, s: &State) -> anyhow::Result<Vec<std::path::PathBuf>> {
    let mut written = Vec::new();
    for ch in &c.chapters {
        if let Some(rows) = bilingual_rows(c, s, &ch.key) {
            let path = c
                .plan
                .out_dir
                .join("bilingual")
                .join(ch.markdown_file_name());
            let mut text = bilingual::markdown(&rows);
            if c.plan.is_rehearsal() {
                text = crate::interchange::rehearsal::mark_markdown(&text);
            }
            crate::util::write_atomic(&path, text.as_bytes())?;
            written.push(path);
        }
    }
    Ok(written)
}

/// Copies the local images the source chapters use (relative targets such as
/// `images/fig1-1.svg`, with no `..`, scheme or absolute path) from beside each source chapter
/// to the same place beside the translated chapters, so that the translated book renders.
/// Images that are missing, or already there with the same bytes, are left alone (a broken
/// image target is the source's problem; the `links` QA check compares targets, not files).
/// Returns how many files were copied.
///
/// Errors: I/O while copying (naming the file).
pub fn copy_images(c: &Campaign) -> anyhow::Result<usize> {
    use anyhow::Context;
    use pulldown_cmark::{Event, Parser, Tag};
    let mut copied = 0;
    for ch in &c.chapters {
        let source_file = c.plan.campaign_dir.join(&ch.rel_path);
        let Some(src_dir) = source_file.parent() else {
            continue;
        };
        for ev in Parser::new_ext(&ch.text, crate::book::markdown::options()) {
            let Event::Start(Tag::Image { dest_url, .. }) = ev else {
                continue;
            };
            let target = dest_url.split(['#', '?']).next().unwrap_or("");
            let rel = std::path::Path::new(target);
            let local = !target.is_empty()
                && !target.contains(':')
                && rel.is_relative()
                && rel
                    .components()
                    .all(|p| matches!(p, std::path::Component::Normal(_)));
            if !local {
                continue;
            }
            let from = src_dir.join(rel);
            // Beside the translated chapter, which sits in a subfolder in a site's output.
            let out_chapter = c.plan.out_dir.join(&ch.file_name);
            let to = out_chapter.parent().unwrap_or(&c.plan.out_dir).join(rel);
            let Ok(bytes) = std::fs::read(&from) else {
                continue;
            };
            if std::fs::read(&to).is_ok_and(|b| b == bytes) {
                continue;
            }
            crate::util::write_atomic(&to, &bytes)
                .with_context(|| format!("copying image {} to {}", from.display(), to.display()))?;
            copied += 1;
        }
    }
    Ok(copied)
}
