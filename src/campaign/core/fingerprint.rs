//! Fingerprints, in three sizes:
//!
//! - the **configuration** ([`ConfigPrint`], its sha256 names the state directory): provider,
//!   model, prompt version, languages, guide and review marker, i.e. what every request depends
//!   on. A different configuration is refused (or started beside the old one with
//!   `--retranslate`), because answers from another model must not be mixed in;
//! - the **campaign** ([`Manifest`]): the configuration plus chapter and unit hashes, house-style
//!   glossary content and settings. It identifies one version of the book in reports and runs;
//!   when it changes between runs, work is reused wherever it still applies;
//! - each **unit** ([`unit_fingerprint`]): its source bytes, the glossary entries that apply to it,
//!   prompt version and model. Translations are stored under it, so they form a translation
//!   memory keyed by unit: editing one paragraph re-translates only the units whose
//!   fingerprint changed, and changing a glossary entry only the units containing that term.

use serde::{Deserialize, Serialize};

use crate::book::{Chapter, Unit};
use crate::config::Plan;
use crate::termbase::Termbase;

/// Version of the state layout; part of the fingerprint.
pub const STATE_SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChapterPrint {
    pub key: String,
    /// Path relative to the campaign file.
    pub path: String,
    pub sha256: String,
    /// sha256 of each unit, in order.
    pub units: Vec<String>,
}

/// What every request of a campaign depends on: its sha256 names the state directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfigPrint {
    pub schema_version: u32,
    pub prompt_version: String,
    pub source_lang: String,
    pub target_lang: String,
    pub provider: String,
    pub model: String,
    pub review_marker: String,
    pub guide_sha256: String,
    /// `relevant` or `full` (see `prompt_layout`).
    #[serde(default)]
    pub prompt_layout: String,
    /// Empty for the main (orchestration) mode; `single-agent` or `judge` for the states of
    /// `booktr experiment` (its arms and judge). Not serialised when empty, so the keys
    /// and fingerprints of main-mode states do not change.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub mode: String,
}

impl ConfigPrint {
    /// The configuration part of a manifest.
    pub fn of(m: &Manifest) -> ConfigPrint {
        ConfigPrint {
            schema_version: m.schema_version,
            prompt_version: m.prompt_version.clone(),
            source_lang: m.source_lang.clone(),
            target_lang: m.target_lang.clone(),
            provider: m.provider.clone(),
            model: m.model.clone(),
            review_marker: m.review_marker.clone(),
            guide_sha256: m.guide_sha256.clone(),
            prompt_layout: m.prompt_layout.clone(),
            mode: m.mode.clone(),
        }
    }

    /// Hex sha256 of the canonical JSON.
    pub fn key(&self) -> String {
        crate::util::sha256_hex(serde_json::to_vec(self).expect("config serialises"))
    }

    /// Human-readable differences from `old`.
    pub fn diff(&self, old: &ConfigPrint) -> Vec<String> {
        let mut d = Vec::new();
        for (name, a, b) in [
            ("provider", &old.provider, &self.provider),
            ("model", &old.model, &self.model),
            ("source language", &old.source_lang, &self.source_lang),
            ("target language", &old.target_lang, &self.target_lang),
            ("prompt version", &old.prompt_version, &self.prompt_version),
            ("review_marker", &old.review_marker, &self.review_marker),
            ("prompt_layout", &old.prompt_layout, &self.prompt_layout),
            ("mode", &old.mode, &self.mode),
        ] {
            if a != b {
                d.push(format!("{name} changed: {a} → {b}"));
            }
        }
        if old.guide_sha256 != self.guide_sha256 {
            d.push("the translation guide changed".into());
        }
        if old.schema_version != self.schema_version {
            d.push(format!(
                "state schema changed: {} → {}",
                old.schema_version, self.schema_version
            ));
        }
        d
    }
}

/// A unit's fingerprint (first 16 hex digits of a sha256): its source bytes, the glossary
/// entries that apply to it (source, target, note, forbidden, in termbase order), the book
/// brief's sha256, prompt version, provider, model, target language, guide and review marker. Translations are stored
/// under it.
pub fn unit_fingerprint(
    manifest: &Manifest,
    source_text: &str,
    entries: &[&crate::termbase::Entry],
    brief_sha256: &str,
) -> String {
    let entries: Vec<(&str, &str, &str, &Vec<String>)> = entries
        .iter()
        .map(|e| {
            (
                e.source.as_str(),
                e.target.as_str(),
                e.note.as_str(),
                &e.forbidden,
            )
        })
        .collect();
    let v = serde_json::json!([
        manifest.prompt_version,
        manifest.provider,
        manifest.model,
        manifest.target_lang,
        manifest.guide_sha256,
        manifest.review_marker,
        manifest.prompt_layout,
        brief_sha256,
        source_text,
        entries,
    ]);
    crate::util::sha256_hex(serde_json::to_vec(&v).expect("json"))[..16].to_string()
}

/// Everything the campaign fingerprint covers. Field order is fixed, so `serde_json` output is canonical.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    pub schema_version: u32,
    pub prompt_version: String,
    pub source_lang: String,
    pub target_lang: String,
    pub provider: String,
    pub model: String,
    pub max_unit_chars: usize,
    pub revision_rounds: u32,
    pub max_context_tokens: usize,
    pub review_marker: String,
    pub guide_sha256: String,
    #[serde(default)]
    pub prompt_layout: String,
    /// (path, sha256) of each house-style glossary file.
    pub glossaries: Vec<(String, String)>,
    /// sha256 of the merged house-style entries.
    pub house_termbase_sha256: String,
    pub chapters: Vec<ChapterPrint>,
    /// Empty for the main (orchestration) mode; `single-agent` or `judge` for the states of
    /// `booktr experiment` (its arms and judge). Not serialised when empty, so the keys
    /// and fingerprints of main-mode states do not change.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub mode: String,
}

impl Manifest {
    pub fn new(
        plan: &Plan,
        chapters: &[Chapter],
        units: &[Unit],
        glossaries: &[(String, String)],
        house: &Termbase,
        guide: &str,
    ) -> Manifest {
        Manifest {
            schema_version: STATE_SCHEMA_VERSION,
            prompt_version: crate::agents::PROMPT_VERSION.into(),
            source_lang: plan.source_lang.code.clone(),
            target_lang: plan.target_lang.code.clone(),
            provider: plan.provider.kind.as_str().into(),
            model: plan.provider.model.clone(),
            max_unit_chars: plan.max_unit_chars,
            revision_rounds: plan.revision_rounds,
            max_context_tokens: plan.max_context_tokens,
            review_marker: plan.review_marker.clone(),
            prompt_layout: if plan.full_glossary_prompt {
                "full"
            } else {
                "relevant"
            }
            .into(),
            guide_sha256: crate::util::sha256_hex(guide),
            glossaries: glossaries.to_vec(),
            house_termbase_sha256: crate::util::sha256_hex(
                serde_json::to_vec(house).unwrap_or_default(),
            ),
            mode: String::new(),
            chapters: chapters
                .iter()
                .map(|c| ChapterPrint {
                    key: c.key.clone(),
                    path: c.rel_path.clone(),
                    sha256: c.sha256.clone(),
                    units: units
                        .iter()
                        .filter(|u| u.chapter == c.key)
                        .map(|u| u.sha256.clone())
                        .collect(),
                })
                .collect(),
        }
    }

    /// Hex sha256 of the canonical JSON serialisation.
    pub fn fingerprint(&self) -> String {
        crate::util::sha256_hex(serde_json::to_vec(self).expect("manifest serialises"))
    }

    /// Human-readable differences from `old` to `self`, most important first.
    pub fn diff(&self, old: &Manifest) -> Vec<String> {
        let mut d = Vec::new();
        let mut field = |name: &str, a: &dyn std::fmt::Display, b: &dyn std::fmt::Display| {
            let (a, b) = (a.to_string(), b.to_string());
            if a != b {
                d.push(format!("{name} changed: {a} → {b}"));
            }
        };
        field("provider", &old.provider, &self.provider);
        field("model", &old.model, &self.model);
        field("source language", &old.source_lang, &self.source_lang);
        field("target language", &old.target_lang, &self.target_lang);
        field("prompt version", &old.prompt_version, &self.prompt_version);
        field("state schema", &old.schema_version, &self.schema_version);
        field("max_unit_chars", &old.max_unit_chars, &self.max_unit_chars);
        field(
            "revision_rounds",
            &old.revision_rounds,
            &self.revision_rounds,
        );
        field(
            "max_context_tokens",
            &old.max_context_tokens,
            &self.max_context_tokens,
        );
        field("review_marker", &old.review_marker, &self.review_marker);
        field("mode", &old.mode, &self.mode);
        if old.guide_sha256 != self.guide_sha256 {
            d.push("the translation guide changed".into());
        }
        if old.glossaries != self.glossaries
            || old.house_termbase_sha256 != self.house_termbase_sha256
        {
            let changed: Vec<&str> = self
                .glossaries
                .iter()
                .filter(|g| !old.glossaries.contains(g))
                .map(|g| g.0.as_str())
                .collect();
            d.push(if changed.is_empty() {
                "the house-style glossary list changed".into()
            } else {
                format!("house-style glossary changed: {}", changed.join(", "))
            });
        }
        for ch in &self.chapters {
            match old.chapters.iter().find(|o| o.key == ch.key) {
                None => d.push(format!("chapter added: {}", ch.path)),
                Some(o) if o.sha256 != ch.sha256 => {
                    let changed = ch
                        .units
                        .iter()
                        .enumerate()
                        .filter(|(i, h)| o.units.get(*i) != Some(*h))
                        .count()
                        + o.units.len().saturating_sub(ch.units.len());
                    d.push(format!(
                        "source changed: {} ({} of {} units differ)",
                        ch.path,
                        changed,
                        ch.units.len()
                    ));
                }
                _ => {}
            }
        }
        for o in &old.chapters {
            if !self.chapters.iter().any(|c| c.key == o.key) {
                d.push(format!("chapter removed: {}", o.path));
            }
        }
        if d.is_empty() && old != self {
            d.push("the campaign settings changed".into());
        }
        d
    }
}
