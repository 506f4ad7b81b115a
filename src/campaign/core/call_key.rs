//! Call keys: the name of one call (model or local) of a campaign. A key names the call's
//! result file ([`super::store::result_rel_path`]) and its journal records, so its text form
//! ([`CallKey`]'s `Display`) is part of the state format and never changes:
//!
//! | kind | text |
//! |---|---|
//! | glossary batch | `glossary/<hash16>` (hash over the batch's candidate terms) |
//! | book brief | `brief/<hash16>` (hash over the request's messages) |
//! | translation | `translate/<unit fingerprint or part id>/r<round>` |
//! | proofreading | `proofread/r<round>/<chapter key>/<hash16>` |
//! | reconciliation | `reconcile/r<round>/<hash16>` (hash over term and renderings) |
//! | decision | `decide/r<round>/<hash16>` (hash over batch keys and forced units) |
//! | local steps | `local/merge-glossary`, `local/write-desk`, `local/write-outputs`, `local/join/<unit id>`, `local/reuse/<unit id>` |
//!
//! `<hash16>` is the first 16 hex digits of a sha256 ([`short_hash`]). Keys of other owners
//! (the experiment's `single/…` calls, say) parse as [`CallKey::Other`] and print unchanged.

use std::fmt;

/// One call's key. Build it with the constructors, print it with `Display` (the journal and
/// result-file form), read it back with [`CallKey::parse`] (total: `parse(k).to_string() == k`
/// for every string `k`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CallKey {
    /// `glossary/<hash>`.
    Glossary { hash: String },
    /// `brief/<hash>`.
    Brief { hash: String },
    /// `translate/<key>/r<round>`: `key` is a unit fingerprint, or a part id (`<fp>.p1`, …)
    /// of a split unit.
    Translate { key: String, round: u32 },
    /// `proofread/r<round>/<chapter>/<hash>`.
    Proofread {
        round: u32,
        chapter: String,
        hash: String,
    },
    /// `reconcile/r<round>/<hash>`.
    Reconcile { round: u32, hash: String },
    /// `decide/r<round>/<hash>`.
    Decide { round: u32, hash: String },
    /// `local/merge-glossary`.
    MergeGlossary,
    /// `local/write-desk`.
    WriteDesk,
    /// `local/write-outputs`.
    WriteOutputs,
    /// `local/join/<unit id>`.
    JoinParts { unit: String },
    /// `local/pieces/<unit id>`: the decision to translate a stuck unit again in smaller
    /// pieces (never journaled under this key; it names the action).
    SplitStuck { unit: String },
    /// `local/reuse/<unit id>`: the first translation of a unit from block memory, whole or
    /// as parts ([`super::blocks`]; names the action, never journaled under this key).
    ReuseBlocks { unit: String },
    /// `single/<unit id>-<link>`: one turn of `booktr experiment`'s single-agent baseline;
    /// `link` is the first 16 hex digits of the conversation chain's hash after this unit.
    SingleAgent { unit: String, link: String },
    /// Any other key, kept as written.
    Other(String),
}

/// The first 16 hex digits of the sha256 of `bytes`: the hash part of a call key.
pub fn short_hash(bytes: impl AsRef<[u8]>) -> String {
    crate::util::sha256_hex(bytes)[..16].to_string()
}

impl CallKey {
    /// A glossary batch over `terms` (in batch order): `glossary/<hash of the terms' JSON>`.
    pub fn glossary(terms: &[&str]) -> CallKey {
        CallKey::Glossary {
            hash: short_hash(serde_json::to_vec(terms).expect("json")),
        }
    }

    /// The book brief whose request carries `messages` (any serialisable value):
    /// `brief/<hash of their JSON>`.
    pub fn brief(messages: &impl serde::Serialize) -> CallKey {
        CallKey::Brief {
            hash: short_hash(serde_json::to_vec(messages).expect("json")),
        }
    }

    /// The translation of unit fingerprint (or part id) `key` at `round`.
    pub fn translate(key: &str, round: u32) -> CallKey {
        CallKey::Translate {
            key: key.to_string(),
            round,
        }
    }

    /// A proofreading batch of `chapter` after `round`, `hash` its 16 hex digits.
    pub fn proofread(round: u32, chapter: &str, hash: String) -> CallKey {
        CallKey::Proofread {
            round,
            chapter: chapter.to_string(),
            hash,
        }
    }

    /// The reconciliation of one term after `round`, `hash` its 16 hex digits.
    pub fn reconcile(round: u32, hash: String) -> CallKey {
        CallKey::Reconcile { round, hash }
    }

    /// The decision of `round`, `hash` its 16 hex digits.
    pub fn decide(round: u32, hash: String) -> CallKey {
        CallKey::Decide { round, hash }
    }

    /// The local join of the parts of unit `unit` (id).
    pub fn join_parts(unit: &str) -> CallKey {
        CallKey::JoinParts {
            unit: unit.to_string(),
        }
    }

    /// Reads a key as journaled. Never fails: a string that is none of the known shapes
    /// (or whose round is not a number) is [`CallKey::Other`].
    pub fn parse(s: &str) -> CallKey {
        Self::parse_known(s).unwrap_or_else(|| CallKey::Other(s.to_string()))
    }

    fn parse_known(s: &str) -> Option<CallKey> {
        let round = |r: &str| -> Option<u32> {
            let n = r.strip_prefix('r')?;
            // Only the canonical form (`r0`, `r12`), so that printing gives the text back.
            (n == "0" || !n.starts_with('0')).then_some(())?;
            n.bytes().all(|b| b.is_ascii_digit()).then_some(())?;
            n.parse().ok()
        };
        let (kind, rest) = s.split_once('/')?;
        let key = match kind {
            "glossary" => CallKey::Glossary { hash: rest.into() },
            "brief" => CallKey::Brief { hash: rest.into() },
            "translate" => {
                let (key, r) = rest.rsplit_once('/')?;
                CallKey::Translate {
                    key: key.into(),
                    round: round(r)?,
                }
            }
            "proofread" => {
                let (r, rest) = rest.split_once('/')?;
                let (chapter, hash) = rest.rsplit_once('/')?;
                CallKey::Proofread {
                    round: round(r)?,
                    chapter: chapter.into(),
                    hash: hash.into(),
                }
            }
            "reconcile" | "decide" => {
                let (r, hash) = rest.split_once('/')?;
                let round = round(r)?;
                let hash = hash.to_string();
                if kind == "reconcile" {
                    CallKey::Reconcile { round, hash }
                } else {
                    CallKey::Decide { round, hash }
                }
            }
            "local" => match rest {
                "merge-glossary" => CallKey::MergeGlossary,
                "write-desk" => CallKey::WriteDesk,
                "write-outputs" => CallKey::WriteOutputs,
                _ => {
                    if let Some(unit) = rest.strip_prefix("pieces/") {
                        CallKey::SplitStuck { unit: unit.into() }
                    } else if let Some(unit) = rest.strip_prefix("reuse/") {
                        CallKey::ReuseBlocks { unit: unit.into() }
                    } else {
                        CallKey::JoinParts {
                            unit: rest.strip_prefix("join/")?.into(),
                        }
                    }
                }
            },
            "single" => {
                let (unit, link) = rest.rsplit_once('-')?;
                let hex = |b: u8| b.is_ascii_digit() || (b'a'..=b'f').contains(&b);
                (link.len() == 16 && link.bytes().all(hex)).then_some(())?;
                CallKey::SingleAgent {
                    unit: unit.into(),
                    link: link.into(),
                }
            }
            _ => return None,
        };
        Some(key)
    }

    /// `(unit fingerprint or part id, round)` of a translation key.
    pub fn translation(&self) -> Option<(&str, u32)> {
        match self {
            CallKey::Translate { key, round } => Some((key, *round)),
            _ => None,
        }
    }

    /// Whether this is a glossary batch key.
    pub fn is_glossary(&self) -> bool {
        matches!(self, CallKey::Glossary { .. })
    }
}

impl fmt::Display for CallKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallKey::Glossary { hash } => write!(f, "glossary/{hash}"),
            CallKey::Brief { hash } => write!(f, "brief/{hash}"),
            CallKey::Translate { key, round } => write!(f, "translate/{key}/r{round}"),
            CallKey::Proofread {
                round,
                chapter,
                hash,
            } => write!(f, "proofread/r{round}/{chapter}/{hash}"),
            CallKey::Reconcile { round, hash } => write!(f, "reconcile/r{round}/{hash}"),
            CallKey::Decide { round, hash } => write!(f, "decide/r{round}/{hash}"),
            CallKey::MergeGlossary => write!(f, "local/merge-glossary"),
            CallKey::WriteDesk => write!(f, "local/write-desk"),
            CallKey::WriteOutputs => write!(f, "local/write-outputs"),
            CallKey::JoinParts { unit } => write!(f, "local/join/{unit}"),
            CallKey::SplitStuck { unit } => write!(f, "local/pieces/{unit}"),
            CallKey::ReuseBlocks { unit } => write!(f, "local/reuse/{unit}"),
            CallKey::SingleAgent { unit, link } => write!(f, "single/{unit}-{link}"),
            CallKey::Other(s) => f.write_str(s),
        }
    }
}

impl std::str::FromStr for CallKey {
    type Err = std::convert::Infallible;

    /// [`CallKey::parse`].
    fn from_str(s: &str) -> Result<CallKey, Self::Err> {
        Ok(CallKey::parse(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn keys_print_as_journaled_before_the_type() {
        let cases = [
            (CallKey::translate("ab12", 0), "translate/ab12/r0"),
            (
                CallKey::translate("ab12.p1.p2", 3),
                "translate/ab12.p1.p2/r3",
            ),
            (
                CallKey::proofread(1, "chapter01", "0123456789abcdef".into()),
                "proofread/r1/chapter01/0123456789abcdef",
            ),
            (
                CallKey::reconcile(0, "0123456789abcdef".into()),
                "reconcile/r0/0123456789abcdef",
            ),
            (
                CallKey::decide(2, "0123456789abcdef".into()),
                "decide/r2/0123456789abcdef",
            ),
            (CallKey::MergeGlossary, "local/merge-glossary"),
            (CallKey::WriteDesk, "local/write-desk"),
            (CallKey::WriteOutputs, "local/write-outputs"),
            (CallKey::join_parts("ch1-003"), "local/join/ch1-003"),
            (CallKey::Other("single/ch1/x".into()), "single/ch1/x"),
            (
                CallKey::SplitStuck {
                    unit: "ch1-003".into(),
                },
                "local/pieces/ch1-003",
            ),
            (
                CallKey::SingleAgent {
                    unit: "ch01-003".into(),
                    link: "0123456789abcdef".into(),
                },
                "single/ch01-003-0123456789abcdef",
            ),
            // Not the canonical 16 hex digits: kept as written.
            (CallKey::Other("single/ch01-xyz".into()), "single/ch01-xyz"),
        ];
        for (key, text) in cases {
            assert_eq!(key.to_string(), text);
            assert_eq!(CallKey::parse(text), key, "{text}");
        }
    }

    #[test]
    fn hashed_keys_match_the_format_they_replace() {
        let terms = ["context window", "tool call"];
        let hash = crate::util::sha256_hex(serde_json::to_vec(&terms).unwrap());
        assert_eq!(
            CallKey::glossary(&terms).to_string(),
            format!("glossary/{}", &hash[..16])
        );
        let messages = vec!["system", "user"];
        let hash = crate::util::sha256_hex(serde_json::to_vec(&messages).unwrap());
        assert_eq!(
            CallKey::brief(&messages).to_string(),
            format!("brief/{}", &hash[..16])
        );
        assert_eq!(short_hash("abc").len(), 16);
    }

    #[test]
    fn non_canonical_rounds_stay_other_keys() {
        for k in [
            "translate/x/r01",
            "translate/x/r",
            "translate/x/rx",
            "decide/r1",
            "local/x",
        ] {
            assert_eq!(CallKey::parse(k), CallKey::Other(k.into()), "{k}");
        }
        assert_eq!(
            CallKey::parse("translate/a/b/r1").translation(),
            Some(("a/b", 1))
        );
    }

    proptest! {
        /// Parsing is lossless: whatever was journaled prints back byte for byte.
        #[test]
        fn parse_then_print_gives_the_key_back(s in "[a-z/0-9.r-]{0,24}") {
            prop_assert_eq!(CallKey::parse(&s).to_string(), s);
        }

        #[test]
        fn print_then_parse_gives_the_key_back(key in "[a-f0-9]{1,12}(\\.p[12]){0,2}", round in 0u32..1000) {
            let k = CallKey::translate(&key, round);
            prop_assert_eq!(CallKey::parse(&k.to_string()), k);
        }
    }
}
