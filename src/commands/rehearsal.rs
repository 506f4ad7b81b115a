//! The offline rehearsal responder, the `pseudo` provider of the campaign file, for
//! rehearsals, demos and tests. It reads its prompt the way a model would (the unit is the last
//! user message, glossary lines come before it) and answers deterministically:
//!
//! - **Translation**: the unit is pseudo-translated ([`pseudo_translate`]: pseudo-words in the
//!   target script, glossary terms get their glossary targets, code, URLs, math and all
//!   Markdown syntax byte-identical).
//! - **Glossary**: one entry per candidate (acronyms kept, other terms pseudo-translated);
//!   a terminology reconciliation takes the first listed rendering.
//! - **Proofreading** and **Manager**: valid JSON that reports nothing, saying REHEARSAL.
//! - **Judge** (`booktr experiment`): valid verdicts, see
//!   [`crate::experiment::judge::pseudo_answer`]; the single-agent conversation is translated
//!   like a unit (its last user message, with the house glossary of its system prompt).
//!
//! Usage is computed with `o200k_base`: prompt tokens as [`Request::prompt_tokens_estimate`],
//! completion tokens of the answer text.
//!
//! It lives in the commands layer because it reads every agent's prompt, the experiment's
//! included; the providers' layer only offers the seam ([`Responder`], [`Provider::Local`]).
//! [`provider`] turns a plan's provider kind into a provider.

use std::sync::Arc;

use crate::agents::{Agent, glossary, translation};
use crate::config::{CjkLatinSpace, QuoteStyle, Style};
use crate::lang::Lang;
use crate::llm::pseudo::{Typography, pseudo_translate, pseudo_translate_with};
use crate::llm::{
    Answer, LlmError, Provider, ProviderKind, ProviderPlan, Request, Responder, Role, Usage,
};

/// The rehearsal responder for one target language (the `pseudo` provider).
#[derive(Debug, Clone)]
pub struct Rehearsal {
    target: Lang,
    /// The house style's quotes and spacing the unit translations are set in.
    typography: Typography,
}

/// The typography of house style `style` for pseudo-translations: its quotes, its CJK–Latin
/// spacing and French spacing, each only when its rule is on (a rule that is off checks
/// nothing, so the pseudo-words are left as they fall).
pub fn typography(style: &Style) -> Typography {
    if !style.enabled {
        return Typography::default();
    }
    Typography {
        quotes: style.quotes.map(|q| match q {
            QuoteStyle::Curly => ("“", "”"),
            QuoteStyle::Corner => ("「", "」"),
            QuoteStyle::Guillemets => ("«\u{202F}", "\u{202F}»"),
            QuoteStyle::LowHigh => ("„", "“"),
            QuoteStyle::Chevrons => ("»", "«"),
        }),
        cjk_latin_space: style
            .cjk_latin_space
            .map(|p| matches!(p, CjkLatinSpace::One)),
        fr_spacing: style.fr_spacing,
        cjk_ellipsis: style.cjk_punctuation,
    }
}

/// Model name reported by the rehearsal responder.
pub const PSEUDO_MODEL: &str = "pseudo";

impl Rehearsal {
    /// A responder whose translations are pseudo-translations into `target`'s script, set in
    /// the target's default house style ([`Style::for_target`]).
    pub fn new(target: Lang) -> Self {
        let style = Style::for_target(&target);
        Rehearsal::with_style(target, &style)
    }

    /// A responder whose translations follow the campaign's house style `style` (its
    /// `[style]` table resolved): quotes and spacing as [`typography`] maps them.
    pub fn with_style(target: Lang, style: &Style) -> Self {
        Rehearsal {
            typography: typography(style),
            target,
        }
    }

    /// Answers `req`, an agent's request, by reading its prompt (see the module docs).
    ///
    /// # Errors
    /// [`LlmError::Empty`] for a request whose task tag names no agent ([`Agent::of_task`]):
    /// the responder only knows the agents' prompts. Agents' requests never fail.
    pub fn complete(&self, req: &Request) -> Result<Answer, LlmError> {
        let Some(agent) = Agent::of_task(req.task) else {
            return Err(LlmError::Empty(format!(
                ": the rehearsal responder answers the agents' requests only, not a `{}` task",
                req.task
            )));
        };
        let content = match agent {
            // The single-agent baseline: the unit is the last user message, the house-style
            // glossary sits in the system prompt.
            Agent::Translation if crate::experiment::single_agent::is_conversation(req) => {
                let glossary = crate::experiment::single_agent::glossary_of(req);
                let source = req
                    .messages
                    .last()
                    .filter(|m| m.role == Role::User)
                    .map_or("", |m| m.content.as_str());
                pseudo_translate_with(source, &self.target, &glossary, &self.typography)
            }
            Agent::Judge => crate::experiment::judge::pseudo_answer(req),
            Agent::Translation => {
                let glossary = translation::glossary_message_of(req)
                    .map(translation::parse_glossary_message)
                    .unwrap_or_default();
                let source = translation::source_of(req).unwrap_or("");
                pseudo_translate_with(source, &self.target, &glossary, &self.typography)
            }
            Agent::Glossary if crate::agents::brief::is_brief(req) => pseudo_brief(req),
            Agent::Glossary if crate::agents::reconcile::is_reconciliation(req) => {
                let (term, renderings) = crate::agents::reconcile::term_of(req).unwrap_or_default();
                let choice = renderings
                    .iter()
                    .find(|r| *r != "(kept)")
                    .cloned()
                    .unwrap_or(term);
                serde_json::json!({"rendering": choice, "note": "REHEARSAL: pseudo reconciliation takes the first listed rendering"}).to_string()
            }
            Agent::Glossary => {
                let entries: Vec<serde_json::Value> = glossary::candidates_in(req)
                    .into_iter()
                    .map(|term| {
                        let target = if term.chars().any(|c| c.is_ascii_lowercase()) {
                            pseudo_translate(&term, &self.target, &[])
                        } else {
                            term.clone()
                        };
                        serde_json::json!({"source": term, "target": target, "note": "REHEARSAL: pseudo entry"})
                    })
                    .collect();
                serde_json::json!({ "entries": entries }).to_string()
            }
            Agent::Proofreading => {
                let units = req.messages.last().map_or(0, |m| {
                    m.content
                        .matches(crate::agents::proofreading::UNIT_OPEN)
                        .count()
                });
                serde_json::json!({
                    "issues": [],
                    "units_need_revision": [],
                    "summary": format!("REHEARSAL: the pseudo provider does not review translations ({units} units passed through).")
                })
                .to_string()
            }
            Agent::Manager => serde_json::json!({
                "revise": [],
                "summary": "REHEARSAL: the pseudo manager orders no advisory revisions."
            })
            .to_string(),
        };
        let usage = Usage {
            prompt_tokens: req.prompt_tokens_estimate() as u64,
            completion_tokens: crate::tokens::count(&content) as u64,
            cached_tokens: 0,
            reasoning_tokens: 0,
            cache_creation_tokens: 0,
        };
        Ok(Answer {
            content,
            reasoning: String::new(),
            tool_calls: Vec::new(),
            usage,
            finish_reason: Some("stop".into()),
            model: Some(PSEUDO_MODEL.into()),
            attempts: 1,
        })
    }
}

impl Responder for Rehearsal {
    fn answer(&self, req: &Request) -> Result<Answer, LlmError> {
        self.complete(req)
    }

    fn is_rehearsal(&self) -> bool {
        true
    }
}

/// The provider of `plan`: the rehearsal responder (into `target`) for `kind = "pseudo"`, else
/// the network client ([`Provider::connect`]). This is where the campaign file's provider kind
/// becomes a provider; `run`, `experiment` and tests that drive campaigns through the library
/// call it.
///
/// # Errors
/// As [`Provider::connect`] (a missing API key, an HTTP client that cannot be built).
pub fn provider(plan: &ProviderPlan, target: &Lang) -> Result<Provider, LlmError> {
    provider_styled(plan, target, &Style::for_target(target))
}

/// [`provider`] for a campaign: a rehearsal's translations follow the campaign's house style
/// (`[style]`), as a careful translator's would.
///
/// # Errors
/// As [`provider`].
pub fn campaign_provider(plan: &crate::config::Plan) -> Result<Provider, LlmError> {
    provider_styled(&plan.provider, &plan.target_lang, &plan.style)
}

fn provider_styled(
    plan: &ProviderPlan,
    target: &Lang,
    style: &Style,
) -> Result<Provider, LlmError> {
    match plan.kind {
        ProviderKind::Pseudo => Ok(Provider::Local(Arc::new(Rehearsal::with_style(
            target.clone(),
            style,
        )))),
        ProviderKind::Openai | ProviderKind::Anthropic => Provider::connect(plan),
    }
}

/// A rehearsal brief: fixed sections, and one synopsis line per chapter of the outline (its
/// first heading).
fn pseudo_brief(req: &Request) -> String {
    let outline = req.messages.last().map_or("", |m| m.content.as_str());
    let mut synopses = Vec::new();
    let mut lines = outline.lines().peekable();
    while let Some(line) = lines.next() {
        if let Some(key) = line
            .strip_prefix("Chapter `")
            .and_then(|r| r.strip_suffix("`:"))
        {
            let title = lines
                .peek()
                .and_then(|l| l.strip_prefix('#'))
                .map(|l| l.trim_start_matches('#').trim().to_string())
                .unwrap_or_default();
            // As long as a real synopsis (about 40 tokens), so rehearsal costs are realistic.
            synopses.push(format!("- `{key}`: {title}. REHEARSAL synopsis: the pseudo provider does not read the book; a real brief sums up this chapter here in one or two sentences."));
        }
    }
    format!(
        "## Audience\nREHEARSAL brief from the offline pseudo provider: software engineers and technical readers who know the basics of programming and want working knowledge of the subject.\n\n\
         ## Register and tone\nNeutral, precise and instructional; address the reader directly; no marketing language; keep the author's examples and humour where they carry meaning.\n\n\
         ## Conventions\n- Keep the English term in parentheses on its first use in each chapter.\n- Use Arabic numerals and SI units; keep the source's number formats in code.\n- Use the target language's quotation marks in prose, straight quotes in code.\n- Keep code, commands, identifiers, file names and URLs unchanged.\n\n\
         ## Chapter synopses\n{}\n",
        synopses.join("\n")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{Message, Task};

    fn zh() -> Lang {
        Lang::parse("zh")
    }

    #[test]
    fn answers_each_agent_with_usage() {
        let p = Rehearsal::new(zh());
        let req = translation::build_request(
            &translation::Setup {
                source: Lang::parse("en"),
                target: zh(),
                guide: String::new(),
                review_marker: "[待审]".into(),
                brief: String::new(),
                code_comments: Default::default(),
                chapter_brief: String::new(),
                example: None,
            },
            &[],
            "Some text.\n",
            None,
        );
        let a = p.complete(&req).unwrap();
        assert!(a.usage.prompt_tokens > 10 && a.usage.completion_tokens > 0);
        assert!(!a.content.contains("Some"));
        let mreq = Request {
            task: Agent::Manager.into(),
            messages: vec![Message::user("x")],
            json_schema: None,
            max_tokens: None,
            ceiling_tokens: None,
            prefill: None,
        };
        let v: serde_json::Value =
            serde_json::from_str(&p.complete(&mreq).unwrap().content).unwrap();
        assert!(v["summary"].as_str().unwrap().contains("REHEARSAL"));
    }

    #[test]
    fn a_task_no_agent_names_is_refused_not_guessed() {
        let req = Request {
            task: Task::new("summarise"),
            messages: vec![Message::user("x")],
            json_schema: None,
            max_tokens: None,
            ceiling_tokens: None,
            prefill: None,
        };
        let e = Rehearsal::new(zh()).complete(&req).unwrap_err();
        assert!(e.to_string().contains("not a `summarise` task"), "{e}");
    }

    #[test]
    fn pseudo_plans_get_the_rehearsal_responder() {
        let plan = ProviderPlan {
            kind: ProviderKind::Pseudo,
            model: "pseudo".into(),
            base_url: "https://api.openai.com/v1".into(),
            api_key_env: "BOOKTR_TEST_NO_SUCH_KEY".into(),
            temperature: None,
            max_tokens: None,
            max_output_tokens: None,
            max_attempts: 1,
            max_requests_per_minute: None,
            max_tokens_per_minute: None,
            request_timeout_s: 1,
            stream_idle_timeout_s: 1,
            connect_timeout_s: 1,
            quirks: Default::default(),
            batch_poll_ms: 1,
        };
        let p = provider(&plan, &zh()).unwrap();
        assert!(p.is_rehearsal());
        assert!(matches!(p, Provider::Local(_)));
        assert!(
            Provider::connect(&plan).is_err(),
            "llm builds no pseudo provider itself"
        );
    }
}
