//! A translation memory: unit sources mapped to stored translations, loaded from TMX files.
//!
//! A match is exact on the unit's source text after whitespace normalisation (every run of
//! whitespace, line breaks included, counts as one space; leading and trailing whitespace is
//! ignored), so a memory written from a campaign on the same book matches every unchanged unit
//! even if line endings or wrapping changed. No fuzzy matching: a reused translation must be
//! the translation of exactly this text.
//!
//! A memory remembers which of its files carry the rehearsal mark and which stored translations
//! look like pseudo text ([`super::rehearsal`]); the campaign refuses or warns about them.

use std::collections::HashMap;
use std::path::Path;

use super::{FileError, tmx};
use crate::lang::Lang;

/// A stored translation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    pub target: String,
    /// The memory file it came from (as the user named it).
    pub file: String,
    /// The `tuid` (or `line N`) of its translation unit.
    pub id: String,
}

/// Normalised source text → stored translation. The first entry of a source wins.
#[derive(Debug, Clone, Default)]
pub struct Memory {
    map: HashMap<String, Hit>,
    /// Files loaded that carry the rehearsal mark ([`super::rehearsal`]), as the user named
    /// them.
    rehearsal_files: Vec<String>,
}

/// The key a source text is matched under: whitespace runs collapsed to one space, trimmed.
pub fn normalize(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl Memory {
    /// Loads TMX files `(path, display name)` for `source` → `target`.
    ///
    /// Errors: unreadable, non-UTF-8 or malformed file, naming the file and line.
    pub fn load(
        files: &[(&Path, &str)],
        source: &Lang,
        target: &Lang,
    ) -> Result<Memory, FileError> {
        let mut m = Memory::default();
        for (path, display) in files {
            let bytes = std::fs::read(path).map_err(|e| {
                FileError::new(
                    display,
                    None,
                    format!("cannot read translation memory: {e}"),
                )
            })?;
            let text = super::utf8(&bytes, display)?;
            m.add(tmx::read(text, display, source, target)?, display);
            if super::rehearsal::is_marked(super::Format::Tmx, &bytes) {
                m.rehearsal_files.push(display.to_string());
            }
        }
        Ok(m)
    }

    /// Adds pairs read from `file`; sources already present keep their first translation.
    pub fn add(&mut self, pairs: Vec<tmx::ReadPair>, file: &str) {
        for p in pairs {
            let key = normalize(&p.source);
            if key.is_empty() || p.target.trim().is_empty() {
                continue;
            }
            self.map.entry(key).or_insert(Hit {
                target: p.target,
                file: file.to_string(),
                id: p.id,
            });
        }
    }

    /// The stored translation of `source`, if any.
    pub fn lookup(&self, source: &str) -> Option<&Hit> {
        if self.map.is_empty() {
            return None;
        }
        self.map.get(&normalize(source))
    }

    /// The files loaded by [`Memory::load`] that carry the rehearsal mark (exports of a pseudo
    /// campaign), in load order.
    pub fn rehearsal_files(&self) -> &[String] {
        &self.rehearsal_files
    }

    /// The stored translations that look like the pseudo generator's text
    /// ([`super::rehearsal::looks_pseudo`]) although their file carries no rehearsal mark,
    /// sorted by file and id.
    pub fn pseudo_looking(&self) -> Vec<&Hit> {
        let mut v: Vec<&Hit> = self
            .map
            .values()
            .filter(|h| !self.rehearsal_files.contains(&h.file))
            .filter(|h| super::rehearsal::looks_pseudo(&h.target))
            .collect();
        v.sort_by(|a, b| (&a.file, &a.id).cmp(&(&b.file, &b.id)));
        v
    }

    /// Number of distinct sources.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(id: &str, s: &str, t: &str) -> tmx::ReadPair {
        tmx::ReadPair {
            id: id.into(),
            source: s.into(),
            target: t.into(),
        }
    }

    #[test]
    fn exact_match_after_whitespace_normalisation() {
        let mut m = Memory::default();
        m.add(
            vec![
                pair(
                    "a",
                    "An Agent\r\n  calls a tool.\n\n",
                    "智能体调用工具。\n\n",
                ),
                pair("b", "An Agent calls a tool.", "第二个不覆盖第一个"),
                pair("c", "   ", "空"),
                pair("d", "Empty target.", " "),
            ],
            "m.tmx",
        );
        assert_eq!(m.len(), 1);
        let hit = m.lookup("An Agent calls\na tool.").unwrap();
        assert_eq!((hit.id.as_str(), hit.file.as_str()), ("a", "m.tmx"));
        assert!(
            m.lookup("An Agent calls a tool").is_none(),
            "no fuzzy match"
        );
        assert!(m.lookup("Empty target.").is_none());
    }
}
