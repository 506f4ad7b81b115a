//! Lenient JSON extraction for structured agents, and the one schema-repair request.
//!
//! Models wrap JSON in code fences, put prose around it, or answer with an array where an
//! object was asked for. [`extract`] finds the first complete JSON value in the text (with
//! `serde_json`'s streaming deserializer, so strings containing braces are handled correctly);
//! the agent-specific parsers then repair shapes and count what they dropped.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::llm::Request;

/// What a parser did with a structured answer, for reports and the journal.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParseStats {
    /// Items taken as they were.
    pub accepted: usize,
    /// Items or shapes fixed up (alternative key names, array instead of object, trimmed…).
    pub repaired: usize,
    /// Items dropped (null, missing or empty required keys, unknown unit ids…).
    pub dropped: usize,
    /// Short descriptions of what was repaired or dropped (at most 20 kept).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl ParseStats {
    pub fn repair(&mut self, note: impl Into<String>) {
        self.repaired += 1;
        self.note(note);
    }
    pub fn drop_item(&mut self, note: impl Into<String>) {
        self.dropped += 1;
        self.note(note);
    }
    fn note(&mut self, n: impl Into<String>) {
        if self.notes.len() < 20 {
            self.notes.push(n.into());
        }
    }
}

/// Why an answer could not be read as JSON at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NotJson(pub String);

/// Finds the first JSON object or array in `text` (after stripping `<think>` blocks) and
/// parses it. Code fences and prose around it are ignored.
///
/// Errors: [`NotJson`] when no complete JSON value is found.
pub fn extract(text: &str) -> Result<Value, NotJson> {
    let (text, _) = crate::llm::stream::split_think(text);
    let trimmed = text.trim();
    if let Ok(v) = serde_json::from_str::<Value>(trimmed) {
        return Ok(v);
    }
    let mut last_err = String::from("no JSON object or array found");
    for (i, c) in text.char_indices() {
        if c != '{' && c != '[' {
            continue;
        }
        let mut de = serde_json::Deserializer::from_str(&text[i..]).into_iter::<Value>();
        match de.next() {
            Some(Ok(v)) => return Ok(v),
            Some(Err(e)) => last_err = e.to_string(),
            None => {}
        }
    }
    Err(NotJson(last_err))
}

/// The JSON value of a reply cut before it ended (`finish_reason = length`, or a reply ended
/// after a runaway continuation): the first object or array of `text`, cut after its last
/// complete element of a list and closed (`{"entries": [{…}, {…}, {"sou` gives the two
/// entries). Returns the value and the characters dropped after that element; `None` when the
/// value is complete (read it with [`extract`]) or no list element was completed.
///
/// Hand-rolled: a bracket scan that respects strings and escapes, a few lines; the JSON
/// "repair" crates guess at many faults, and only this one (a clean cut) is safe to mend.
pub fn extract_cut(text: &str) -> Option<(Value, usize)> {
    let (text, _) = crate::llm::stream::split_think(text);
    let start = text.find(['{', '['])?;
    let body = &text[start..];
    let mut stack: Vec<u8> = Vec::new();
    let (mut in_string, mut escaped) = (false, false);
    let mut safe: Option<(usize, Vec<u8>)> = None;
    for (i, b) in body.bytes().enumerate() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => stack.push(b),
            b'}' | b']' => {
                stack.pop();
                if stack.is_empty() {
                    // The value is complete: nothing was cut.
                    return None;
                }
                if stack.last() == Some(&b'[') {
                    safe = Some((i + 1, stack.clone()));
                }
            }
            _ => {}
        }
    }
    let (end, open) = safe?;
    let mut mended = body[..end].to_string();
    for b in open.iter().rev() {
        mended.push(if *b == b'[' { ']' } else { '}' });
    }
    let value = serde_json::from_str(&mended).ok()?;
    Some((value, body[end..].chars().count()))
}

/// Reads a string field under any of `keys`; returns it trimmed, or `None` when absent, not a
/// string (numbers are stringified), or empty. Sets `*alias_used` when a key other than the
/// first was used.
pub fn str_field(
    obj: &serde_json::Map<String, Value>,
    keys: &[&str],
    alias_used: &mut bool,
) -> Option<String> {
    for (i, k) in keys.iter().enumerate() {
        let v = match obj.get(*k) {
            Some(Value::String(s)) => s.trim().to_string(),
            Some(Value::Number(n)) => n.to_string(),
            _ => continue,
        };
        if v.is_empty() {
            continue;
        }
        if i > 0 {
            *alias_used = true;
        }
        return Some(v);
    }
    None
}

/// Finds the list of items in a structured answer: the value under the first of `keys` that
/// holds an array, or the value itself if it is an array (counted as a repair), or a single
/// object that looks like one item (also a repair). `null` gives an empty list (a drop).
pub fn item_list(v: &Value, keys: &[&str], stats: &mut ParseStats) -> Vec<Value> {
    match v {
        Value::Array(a) => {
            stats.repair("array instead of object");
            a.clone()
        }
        Value::Object(o) => {
            for k in keys {
                match o.get(*k) {
                    Some(Value::Array(a)) => return a.clone(),
                    Some(Value::Null) => {
                        stats.drop_item(format!("`{k}` was null"));
                        return Vec::new();
                    }
                    Some(Value::Object(inner)) => {
                        stats.repair(format!("`{k}` was an object, not an array"));
                        return vec![Value::Object(inner.clone())];
                    }
                    _ => {}
                }
            }
            Vec::new()
        }
        Value::Null => {
            stats.drop_item("answer was null");
            Vec::new()
        }
        _ => {
            stats.drop_item("answer was a scalar");
            Vec::new()
        }
    }
}

/// The schema-repair follow-up: the original conversation, the model's invalid answer, and a
/// request to answer again with JSON only. It asks to *reformat*, not to redo the work.
pub fn repair_request(original: &Request, invalid_answer: &str, problem: &str) -> Request {
    original.follow_up(
        &crate::util::excerpt(invalid_answer, 4000),
        format!(
            "Your previous answer could not be used: {problem}. Reply again with only the JSON value described in the instructions, with the same content, and nothing else: no prose, no code fence."
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_list_keeps_its_complete_entries() {
        let cut = "```json\n{\"entries\": [{\"source\": \"agent\", \"target\": \"智能体\"}, {\"source\": \"a \\\"}]\", \"target\": \"x\"}, {\"source\": \"tool\", \"tar";
        let (v, dropped) = extract_cut(cut).expect("mended");
        assert_eq!(v["entries"].as_array().map(Vec::len), Some(2));
        assert_eq!(v["entries"][1]["source"], "a \"}]");
        assert_eq!(dropped, "{\"source\": \"tool\", \"tar".chars().count() + 2);
        // A complete value is left to `extract`; a cut before any entry gives nothing.
        assert_eq!(extract_cut("{\"entries\": []}"), None);
        assert_eq!(extract_cut("{\"entries\": [{\"source\": \"ag"), None);
    }

    #[test]
    fn extracts_from_fences_and_prose() {
        assert_eq!(extract("```json\n{\"a\":1}\n```").unwrap()["a"], 1);
        assert_eq!(
            extract("Sure! Here: {\"a\": \"}{\"} hope it helps").unwrap()["a"],
            "}{"
        );
        assert_eq!(extract("<think>{bad</think>[1,2]").unwrap()[1], 2);
        assert!(extract("no json here").is_err());
        assert!(extract("{\"a\": ").is_err());
    }

    #[test]
    fn item_lists_are_repaired() {
        let mut s = ParseStats::default();
        assert_eq!(
            item_list(&serde_json::json!([1, 2]), &["entries"], &mut s).len(),
            2
        );
        assert_eq!(s.repaired, 1);
        assert_eq!(
            item_list(&serde_json::json!({"entries": null}), &["entries"], &mut s).len(),
            0
        );
        assert_eq!(s.dropped, 1);
        assert_eq!(
            item_list(
                &serde_json::json!({"terms": [1]}),
                &["entries", "terms"],
                &mut s
            )
            .len(),
            1
        );
    }
}
