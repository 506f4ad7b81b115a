//! Reassembling translated chapters: each chapter is the concatenation of its units' final
//! texts in order (the newest translation of a prose unit; the source of a verbatim or
//! front-matter unit), written atomically to `<out_dir>/<chapter file name>`.

use super::Campaign;
use super::state::State;

/// The final text of every unit of `chapter`, or `None` if some prose unit has no translation.
pub fn chapter_text(c: &Campaign, s: &State, chapter: &str) -> Option<String> {
    let ch = c.chapter(chapter);
    let mut out = String::with_capacity(ch.text.len() * 2);
    for u in c.units_of(chapter) {
        if u.kind.needs_translation()
            && s.human_edit(&u.id).is_none()
            && s.latest_translation(&u.id, u32::MAX).is_none()
        {
            return None;
        }
        out.push_str(&super::edits::final_text(c, s, u));
    }
    Some(out)
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
    for ch in &c.chapters {
        match chapter_text(c, s, &ch.key) {
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
