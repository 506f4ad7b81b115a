//! Campaign settings that the prompts (agents) and the QA checks both read: the
//! `code_comments` key ([`CodeComments`]) and the default review marker per target language
//! ([`default_review_marker`]). They live here, below agents and QA, so that neither of those
//! layers has to reach into the other for a setting; how a check applies a setting is the
//! check's business (the comment syntax per code language stays with the `code_blocks` check).

use serde::{Deserialize, Serialize};

use crate::lang::Lang;

/// What may change in code blocks (campaign key `code_comments`, default `keep`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CodeComments {
    /// Code blocks are copied byte for byte, comments included.
    #[default]
    Keep,
    /// Only comments may change (be translated); every code token stays identical.
    Translate,
}

impl std::str::FromStr for CodeComments {
    type Err = crate::util::UnknownValue;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "keep" => Ok(CodeComments::Keep),
            "translate" => Ok(CodeComments::Translate),
            other => Err(crate::util::UnknownValue {
                what: "code_comments value",
                value: other.to_string(),
                choices: "`keep` (code blocks copied byte for byte) or `translate` (only comments in code blocks may be translated)",
            }),
        }
    }
}

impl CodeComments {
    /// The name used in campaign files and flags.
    pub fn as_str(self) -> &'static str {
        match self {
            CodeComments::Keep => "keep",
            CodeComments::Translate => "translate",
        }
    }
}

/// The default review marker for a target language: `[待审]` for Chinese, `[要確認]` for
/// Japanese, `[검토]` for Korean, `[review]` otherwise.
pub fn default_review_marker(target: &Lang) -> &'static str {
    match target.primary().as_str() {
        "zh" => "[待审]",
        "ja" => "[要確認]",
        "ko" => "[검토]",
        _ => "[review]",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_comments_round_trip_through_their_names() {
        for c in [CodeComments::Keep, CodeComments::Translate] {
            assert_eq!(c.as_str().parse::<CodeComments>(), Ok(c));
            assert_eq!(
                serde_json::to_string(&c).unwrap(),
                format!("\"{}\"", c.as_str())
            );
        }
        assert!(
            "both"
                .parse::<CodeComments>()
                .unwrap_err()
                .to_string()
                .contains("`both`")
        );
    }

    #[test]
    fn review_markers_per_target_language() {
        assert_eq!(default_review_marker(&Lang::parse("zh-CN")), "[待审]");
        assert_eq!(default_review_marker(&Lang::parse("ja")), "[要確認]");
        assert_eq!(default_review_marker(&Lang::parse("ko")), "[검토]");
        assert_eq!(default_review_marker(&Lang::parse("de")), "[review]");
    }
}
