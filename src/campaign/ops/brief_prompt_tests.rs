//! Tests of the brief's share of a Translation prompt (it stays flat whatever the book's length): a
//! campaign of 11 chapters and one of 110, each with a brief in the shape the brief request
//! asks for (one synopsis per chapter), give prompts whose brief part is the same size, with
//! the unit's own chapter's synopsis and no other chapter's.

use std::path::Path;

use crate::agents::translation;
use crate::campaign::core::Campaign;
use crate::config::{Overrides, Plan, RawCampaign};

/// The key of chapter `i` (1-based): `ch001`, …
fn key(i: usize) -> String {
    format!("ch{i:03}")
}

/// An in-memory campaign of `n` chapters, each a heading and two paragraphs (two units at
/// `max_unit_chars = 200`).
fn campaign(n: usize) -> Campaign {
    let names: Vec<String> = (1..=n).map(|i| format!("book/{}.md", key(i))).collect();
    let toml_text = format!(
        "name = \"scale\"\nsource_lang = \"en\"\ntarget_lang = \"zh\"\nchapters = {names:?}\nmax_unit_chars = 200\n"
    );
    let raw: RawCampaign = toml::from_str(&toml_text).unwrap();
    let plan = Plan::resolve(Path::new("/tmp/scale.toml"), raw, &Overrides::default()).unwrap();
    let chapters = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            (
                name.clone(),
                format!(
                    "# Topic {}\n\nAn agent reads the plan of chapter {}, keeps the context window small and makes a tool call when the language model asks for one.\n\nEvery tool call returns a result; the agent adds it to the context window before the next tool call.\n",
                    i + 1,
                    i + 1
                ),
            )
        })
        .collect();
    Campaign::in_memory(plan, chapters).unwrap()
}

/// A brief of `n` chapters in the rehearsal brief's shape: three book-level sections, then a
/// synopsis per chapter naming its key (about 40 tokens each).
fn brief(n: usize) -> String {
    let synopses: Vec<String> = (1..=n)
        .map(|i| {
            format!(
                "- `{}`: Topic {i}. Synopsis {i}: how an agent of this chapter plans, calls tools and keeps their results, in one or two sentences.",
                key(i)
            )
        })
        .collect();
    format!(
        "## Audience\nSoftware engineers who know the basics of programming.\n\n## Register and tone\nNeutral, precise and instructional.\n\n## Conventions\n- Keep the English term in parentheses on its first use in each chapter.\n- Use Arabic numerals and SI units.\n\n## Chapter synopses\n{}\n",
        synopses.join("\n")
    )
}

/// The Translation request of the second unit of chapter `chapter` (1-based), with the brief
/// `brief` in force (none when empty), as [`super::jobs::prepare`] builds it.
fn request(c: &Campaign, chapter: usize, brief: &str) -> crate::llm::Request {
    let k = key(chapter);
    let u = c.units_of(&k).nth(1).expect("a second unit");
    let text = c.source_text(u);
    translation::build_request_with_context(
        &c.translation_setup_for(brief, &u.chapter),
        &c.prompt_entries(&c.house, text),
        text,
        None,
        c.context_for(u).as_deref(),
    )
}

/// Tokens the brief adds to the request of chapter `chapter`'s second unit.
fn brief_tokens(c: &Campaign, chapter: usize, brief: &str) -> usize {
    request(c, chapter, brief).prompt_tokens_estimate()
        - request(c, chapter, "").prompt_tokens_estimate()
}

#[test]
fn the_brief_part_of_a_translation_prompt_does_not_grow_with_the_book() {
    let (small, large) = (campaign(11), campaign(110));
    let (b11, b110) = (brief(11), brief(110));
    let at_11 = brief_tokens(&small, 5, &b11);
    let at_110 = brief_tokens(&large, 5, &b110);
    // The book part and one synopsis: about 90 tokens, not 110 synopses (over 4,000).
    assert!(at_11 > 60 && at_11 < 200, "{at_11}");
    let ratio = at_110 as f64 / at_11 as f64;
    assert!((0.9..=1.1).contains(&ratio), "{at_110} / {at_11}");
    // The whole brief of 110 chapters would have cost many times as much.
    let whole = crate::tokens::count(&b110);
    assert!(whole > 20 * at_110, "{whole} vs {at_110}");
}

#[test]
fn a_unit_prompt_has_its_own_chapter_synopsis_and_no_other() {
    let c = campaign(110);
    let b = brief(110);
    let req = request(&c, 57, &b);
    let all: String = req.messages.iter().map(|m| m.content.as_str()).collect();
    assert!(
        all.contains("`ch057`: Topic 57. Synopsis 57: how an agent"),
        "{all}"
    );
    for other in (1..=110).filter(|&i| i != 57) {
        assert!(!all.contains(&format!("Synopsis {other}:")), "{other}");
        assert!(!all.contains(&format!("`{}`", key(other))), "{other}");
    }
    // The book-level part is in the stable prefix, the same for units of any chapter; the
    // synopsis opens the glossary message.
    let system = &req.messages[0].content;
    assert!(system.contains("Book brief:\n## Audience\nSoftware engineers"));
    assert!(system.contains("## Conventions\n- Keep the English term"));
    assert!(!system.contains("Synopsis"));
    assert_eq!(request(&c, 3, &b).messages[0], req.messages[0]);
    assert!(
        translation::glossary_message_of(&req)
            .unwrap()
            .starts_with(translation::CHAPTER_BRIEF_HEADER)
    );
    // No brief yet: no synopsis line either.
    let none = request(&c, 57, "");
    assert!(
        !translation::glossary_message_of(&none)
            .unwrap()
            .contains(translation::CHAPTER_BRIEF_HEADER)
    );
    assert!(!none.messages[0].content.contains("Book brief"));
}

#[test]
fn a_one_chapter_book_keeps_the_whole_brief_in_the_stable_prefix() {
    let c = campaign(1);
    let b = brief(1);
    let setup = c.translation_setup_for(&b, &key(1));
    assert_eq!(setup.brief, b);
    assert_eq!(setup.chapter_brief, "");
    let req = request(&c, 1, &b);
    assert!(req.messages[0].content.contains(b.trim_end()));
    assert!(
        !translation::glossary_message_of(&req)
            .unwrap()
            .contains(translation::CHAPTER_BRIEF_HEADER)
    );
}
