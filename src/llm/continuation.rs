//! Continuing a reply cut at its completion limit (`finish_reason = length`): a long answer is
//! finished, not discarded.
//!
//! The request is sent again with the part received as a final assistant message
//! ([`Request::prefill`]); a server that continues such a message (Anthropic's prefill,
//! llama.cpp's server, Ollama, OpenRouter, vLLM with `continue_final_message`: the provider's
//! [`super::presets::Continuation`]) writes only what follows, and the two are joined byte for
//! byte: `prefix as sent + continuation`. Each continuation costs its prompt again (the
//! question plus the part received) and only the new completion tokens.
//!
//! **Verify, don't trust.** A server that ignores the prefill starts a new reply. [`join`]
//! recognises that (the piece begins with the reply's own first [`RESTART_PROBE_CHARS`]
//! characters without repeating all of it): the new reply is taken as the answer, and the caller
//! turns continuation off for the run ([`super::Provider::stop_continuing`]). A piece that
//! repeats the whole prefix first (a server that echoes the prefill, as llama.cpp's
//! non-streaming answer does) is taken as the whole reply.
//!
//! [`Continuer`] holds one reply across its continuations; the caller sends the requests (so
//! that it can journal a checkpoint of the part received before each one, and apply its own
//! runaway retries). Pure: no I/O.

use super::types::{Answer, Request, Usage};

/// Most continuation requests for one reply. Eight continuations of a reply cut at a learned
/// bound (a high quantile of the campaign's own replies, with headroom) would mean the reply is
/// nine times longer than that bound: past this, the caller treats the reply as cut.
pub const MAX_CONTINUATIONS: u32 = 8;

/// Characters of the reply's start that a piece must repeat to count as a new reply rather
/// than a continuation: 32 characters (about 8 English words or 20 Chinese characters) do not
/// recur at the start of a continuation by chance.
pub const RESTART_PROBE_CHARS: usize = 32;

/// How a continuation's piece relates to the part sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Joined {
    /// The piece goes on from the prefix: the reply is `prefix + piece`.
    Continued(String),
    /// The piece repeats the whole prefix and goes on (a server that echoes the prefill): the
    /// reply is the piece.
    Echoed(String),
    /// The piece is a new reply (it begins like the prefix without repeating all of it): the
    /// server does not continue; the reply is the piece.
    Restarted(String),
}

/// Joins the `prefix` as sent and a continuation's `piece` (see [`Joined`]).
pub fn join(prefix: &str, piece: &str) -> Joined {
    if !prefix.is_empty() && piece.starts_with(prefix) {
        return Joined::Echoed(piece.to_string());
    }
    let head = |s: &str| -> String { s.trim_start().chars().take(RESTART_PROBE_CHARS).collect() };
    let probe = head(prefix);
    if probe.chars().count() == RESTART_PROBE_CHARS && head(piece) == probe {
        return Joined::Restarted(piece.to_string());
    }
    Joined::Continued(format!("{prefix}{piece}"))
}

/// What finishing one reply took, for the result file and the report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LongStats {
    /// Continuation requests made.
    pub continuations: u32,
    /// What they cost (prompt and completion tokens); part of the reply's usage.
    pub usage: Usage,
    /// A continuation came back as a new reply, which was taken instead (the server does not
    /// continue; continuation was turned off for the run).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub restarted: bool,
    /// A reply cut before anything of it could be kept, asked again with this larger
    /// `max_tokens` (the provider could not continue it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retried_with: Option<u32>,
    /// What the replies not kept cost (part of the result's usage): the cut reply asked again
    /// with more room.
    #[serde(default, skip_serializing_if = "is_zero_usage")]
    pub discarded: Usage,
    /// A continuation repeated itself (a runaway, see [`super::runaway`]): the reply was ended
    /// there and kept as received before it, without the passage it was repeating.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ended_by_runaway: bool,
}

fn is_zero_usage(u: &Usage) -> bool {
    *u == Usage::default()
}

/// One reply across its continuations.
#[derive(Debug, Clone)]
pub struct Continuer {
    answer: Answer,
    stats: LongStats,
}

/// What [`Continuer::absorb`] made of a piece.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Joined; continue again if still cut.
    Joined,
    /// The server started a new reply (or sent the same cut reply again), taken as the
    /// answer: stop continuing (for the run).
    Restarted,
    /// The piece added nothing while still cut: stop (no progress).
    Stalled,
}

impl Continuer {
    /// Starts from the first answer (or a checkpoint of a reply already continued
    /// `stats.continuations` times).
    pub fn new(first: Answer, stats: LongStats) -> Continuer {
        Continuer {
            answer: first,
            stats,
        }
    }

    /// Whether the reply so far ends at the completion limit.
    pub fn is_cut(&self) -> bool {
        self.answer.finish_reason.as_deref() == Some("length")
    }

    /// The reply so far.
    pub fn answer(&self) -> &Answer {
        &self.answer
    }

    /// Continuation requests made so far and their cost.
    pub fn stats(&self) -> LongStats {
        self.stats
    }

    /// The continuation request of `req` for a provider that sends `sent` of the reply so far
    /// as the prefill ([`super::Provider::prefill_as_sent`]); `None` when the reply is not cut
    /// or [`MAX_CONTINUATIONS`] were made.
    pub fn next_request(&self, req: &Request, sent: &str) -> Option<Request> {
        if !self.is_cut() || self.stats.continuations >= MAX_CONTINUATIONS {
            return None;
        }
        let mut next = req.clone();
        next.prefill = Some(sent.to_string());
        Some(next)
    }

    /// Adds the answer `piece` of a continuation request whose prefill was `sent`.
    pub fn absorb(&mut self, sent: &str, piece: Answer) -> Step {
        self.stats.continuations += 1;
        self.stats.usage.add(&piece.usage);
        self.answer.usage.add(&piece.usage);
        self.answer.attempts += piece.attempts;
        if piece.model.is_some() {
            self.answer.model = piece.model.clone();
        }
        let still_cut = piece.finish_reason.as_deref() == Some("length");
        self.answer.finish_reason = piece.finish_reason.clone();
        self.answer.tool_calls.extend(piece.tool_calls);
        match join(sent, &piece.content) {
            Joined::Continued(text) => {
                let grew = !piece.content.is_empty();
                self.answer.content = text;
                self.answer.reasoning.push_str(&piece.reasoning);
                if still_cut && !grew {
                    Step::Stalled
                } else {
                    Step::Joined
                }
            }
            Joined::Echoed(text) => {
                let grew = text.len() > sent.len();
                self.answer.content = text;
                self.answer.reasoning.push_str(&piece.reasoning);
                if still_cut && !grew {
                    // The same cut reply again: a server that starts over and is cut at the
                    // same place (an echoing server that continues adds text).
                    self.stats.restarted = true;
                    Step::Restarted
                } else {
                    Step::Joined
                }
            }
            Joined::Restarted(text) => {
                self.answer.content = text;
                self.answer.reasoning = piece.reasoning;
                self.stats.restarted = true;
                Step::Restarted
            }
        }
    }

    /// Ends the reply after a continuation that repeated itself: its text is cut before the
    /// repetition it ended in ([`super::runaway::repeated_tail`]), and it stays cut
    /// (`finish_reason = length`), so callers keep what ends on a block boundary or a complete
    /// entry. The runaway's own tokens are not part of the answer.
    pub fn end_runaway(&mut self) {
        let keep = super::runaway::repeated_tail(&self.answer.content)
            .map_or(self.answer.content.len(), |t| t.start);
        self.answer.content.truncate(keep);
        self.answer.finish_reason = Some("length".into());
        self.stats.ended_by_runaway = true;
    }

    /// The reply and what finishing it took.
    pub fn finish(self) -> (Answer, LongStats) {
        (self.answer, self.stats)
    }
}

/// Sends `req` and continues its reply while it is cut and `provider` can continue it: the
/// whole loop for callers without checkpoints or runaway retries of their own (the
/// experiment's single-agent baseline and judge). The answer may still be cut
/// (`finish_reason = length`) when the provider cannot continue.
///
/// Errors: the provider's; a runaway continuation's [`LlmError::Runaway`] carries the usage of
/// the part received before it too (both were paid for and are not kept).
pub async fn complete_continued(
    provider: &super::Provider,
    req: &Request,
) -> Result<(Answer, LongStats), super::LlmError> {
    let first = provider.complete(req).await?;
    let mut c = Continuer::new(first, LongStats::default());
    while c.is_cut() && provider.continues() {
        let sent = provider.prefill_as_sent(&c.answer().content).to_string();
        let Some(next) = c.next_request(req, &sent) else {
            break;
        };
        let piece = match provider.complete(&next).await {
            Ok(p) => p,
            Err(super::LlmError::Runaway {
                reason, mut usage, ..
            }) => {
                usage.add(&c.answer().usage);
                // `before` would hold only the continuation's part: the caller keeps nothing.
                return Err(super::LlmError::Runaway {
                    reason,
                    usage,
                    before: String::new(),
                });
            }
            Err(e) => return Err(e),
        };
        match c.absorb(&sent, piece) {
            Step::Joined => {}
            Step::Restarted => provider.stop_continuing(),
            Step::Stalled => break,
        }
    }
    Ok(c.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(content: &str, completion: u64) -> Answer {
        Answer {
            content: content.into(),
            finish_reason: Some("length".into()),
            usage: Usage {
                prompt_tokens: 100,
                completion_tokens: completion,
                ..Default::default()
            },
            attempts: 1,
            ..Default::default()
        }
    }

    #[test]
    fn a_continuation_is_joined_byte_for_byte() {
        let first = "## 工具调用\n\n智能体通过编写请求来调用工具。运行时执行";
        let rest = "它并返回结果。\n\n模型随后读取结果。\n";
        let mut c = Continuer::new(cut(first, 30), LongStats::default());
        let req = Request::new(crate::llm::Task::new("translation"), vec![]);
        let next = c.next_request(&req, first).expect("cut");
        assert_eq!(next.prefill.as_deref(), Some(first));
        let mut piece = cut(rest, 12);
        piece.finish_reason = Some("stop".into());
        assert_eq!(c.absorb(first, piece), Step::Joined);
        assert!(!c.is_cut());
        let (a, stats) = c.finish();
        assert_eq!(a.content, format!("{first}{rest}"));
        assert_eq!(a.usage.completion_tokens, 42);
        assert_eq!(a.usage.prompt_tokens, 200);
        assert_eq!(stats.continuations, 1);
        assert_eq!(stats.usage.completion_tokens, 12);
        assert!(!stats.restarted);
    }

    #[test]
    fn a_server_that_starts_over_is_recognised() {
        let first = "Agents call tools by writing requests that the runtime executes for them";
        let again = "Agents call tools by writing requests that the runtime executes for them, then read the result.";
        // The whole prefix repeated: an echo, taken whole.
        assert_eq!(join(first, again), Joined::Echoed(again.into()));
        // The same start, then something else: a new reply.
        let other = "Agents call tools by writing requests; the runtime runs them.";
        assert_eq!(join(first, other), Joined::Restarted(other.into()));
        // A short prefix is never taken for a restart.
        assert_eq!(
            join("Agents", " call"),
            Joined::Continued("Agents call".into())
        );
        let mut c = Continuer::new(cut(first, 20), LongStats::default());
        let mut piece = cut(other, 15);
        piece.finish_reason = Some("stop".into());
        assert_eq!(c.absorb(first, piece), Step::Restarted);
        let (a, stats) = c.finish();
        assert_eq!(a.content, other);
        assert!(stats.restarted);
        // Both requests were paid for.
        assert_eq!(a.usage.completion_tokens, 35);
    }

    #[test]
    fn continuations_stop_at_the_limit_or_without_progress() {
        let req = Request::new(crate::llm::Task::new("translation"), vec![]);
        let mut c = Continuer::new(cut("a", 1), LongStats::default());
        let mut text = String::from("a");
        for i in 0..MAX_CONTINUATIONS {
            assert!(c.next_request(&req, &text).is_some(), "{i}");
            let piece = cut("b", 1);
            assert_eq!(c.absorb(&text, piece), Step::Joined);
            text.push('b');
        }
        assert!(c.next_request(&req, &text).is_none());
        let mut c = Continuer::new(cut("abc", 1), LongStats::default());
        assert_eq!(c.absorb("abc", cut("", 0)), Step::Stalled);
        // A server that sends the same cut reply again has started over.
        let mut c = Continuer::new(cut("截断的", 1), LongStats::default());
        assert_eq!(c.absorb("截断的", cut("截断的", 1)), Step::Restarted);
    }
}
