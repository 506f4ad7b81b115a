//! Property tests for MDX chapters (issue 16): over generated `.mdx` chapters mixing prose
//! (with inline `{expressions}`, `<Component />` tags and code spans), `import`/`export` lines,
//! JSX blocks (components with attributes, fragments, `{/* comments */}`) and fenced code,
//! `segment_mdx` stays lossless, and no ESM line, JSX block, expression or component tag is
//! ever in the text a unit sends to the model (the masked text of a prose unit; verbatim units
//! send nothing), while the mask restores each unit byte for byte.

use booktr::agents::mask;
use booktr::book::segment::{UnitKind, segment_mdx};
use proptest::prelude::*;

fn word() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "agent", "the", "loop", "calls", "tools", "plans", "steps", "and", "checks", "work",
    ])
    .prop_map(str::to_string)
}

fn sentence() -> impl Strategy<Value = String> {
    prop::collection::vec(word(), 3..9).prop_map(|w| {
        let mut s = w.join(" ");
        s.push('.');
        s
    })
}

/// Prose with inline JSX: `(text, protected pieces it holds)`.
fn prose() -> impl Strategy<Value = (String, Vec<String>)> {
    (sentence(), prop::option::of(0..4usize), sentence()).prop_map(|(a, inline, b)| {
        let piece = inline.map(|i| {
            [
                "{props.name}",
                "<Badge color=\"red\" />",
                "{`x > ${y}`}",
                "<Highlight>",
            ][i]
                .to_string()
        });
        match piece {
            Some(p) => (format!("{a} {p} {b} Use `{{code}}` here.\n"), vec![p]),
            None => (format!("{a} {b}\n"), vec![]),
        }
    })
}

/// A protected block: `(text, the pieces that must never be sent)`.
fn protected() -> impl Strategy<Value = (String, Vec<String>)> {
    prop::sample::select(vec![
        "import Tabs from '@theme/Tabs';\nimport TabItem from '@theme/TabItem';\n",
        "export const meta = {title: 'Agents'};\n",
        "<Tabs groupId=\"lang\">\n  <TabItem value=\"py\" label=\"Python > 3\">\n",
        "  </TabItem>\n</Tabs>\n",
        "<>\n<Note type=\"tip\" />\n</>\n",
        "{/* a JSX comment that says agents plan */}\n",
        "<Admonition type=\"note\" title={`Agents`}>\n",
    ])
    .prop_map(|b| {
        let pieces = b
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect();
        (b.to_string(), pieces)
    })
}

fn block() -> impl Strategy<Value = (String, Vec<String>)> {
    prop_oneof![
        4 => prose(),
        3 => protected(),
        1 => sentence().prop_map(|s| (format!("## {s}\n"), vec![])),
        1 => Just(("```js\nimport x from 'y';\nconst a = {b: 1};\n```\n".to_string(), vec![])),
    ]
}

proptest! {
    #[test]
    fn mdx_segmentation_is_lossless_and_jsx_is_never_sent(
        blocks in prop::collection::vec(block(), 1..14),
        max in prop::sample::select(vec![200usize, 400, 12_000]),
    ) {
        let text: String = blocks.iter().map(|(b, _)| b.as_str()).collect::<Vec<_>>().join("\n");
        let units = segment_mdx("ch", &text, max);
        let joined: String = units.iter().map(|u| u.text(&text)).collect();
        prop_assert_eq!(&joined, &text);
        let protected: Vec<&String> = blocks.iter().flat_map(|(_, p)| p).collect();
        for u in &units {
            let src = u.text(&text);
            let m = mask::mask_mdx(src);
            prop_assert_eq!(m.restore(&m.text).unwrap(), src);
            if u.kind != UnitKind::Prose {
                continue;
            }
            for p in &protected {
                prop_assert!(
                    !m.text.contains(p.as_str()),
                    "unit {} sends {:?}:\n{}", u.id, p, m.text
                );
            }
            prop_assert!(!m.text.contains("import ") || m.text.contains("```"), "{}", m.text);
        }
    }
}

/// A fixed chapter: the ESM lines and the JSX block are verbatim units, the prose between
/// them is translated, and its inline expression is a placeholder.
#[test]
fn mdx_chapter_units_and_mask() {
    let text = "import Tabs from '@theme/Tabs';\n\n# Agents\n\nAn agent greets {props.name} politely.\n\n<Tabs>\n  <TabItem value=\"a\">\n\nPlans are revised when a step fails.\n\n  </TabItem>\n</Tabs>\n";
    let units = segment_mdx("ch", text, 12_000);
    let kinds: Vec<(UnitKind, &str)> = units.iter().map(|u| (u.kind, u.text(text))).collect();
    assert_eq!(
        kinds[0],
        (UnitKind::Verbatim, "import Tabs from '@theme/Tabs';\n\n")
    );
    assert_eq!(kinds[1].0, UnitKind::Prose);
    assert!(kinds[1].1.starts_with("# Agents"));
    assert_eq!(
        kinds[2],
        (UnitKind::Verbatim, "<Tabs>\n  <TabItem value=\"a\">\n\n")
    );
    assert_eq!(
        kinds[3],
        (UnitKind::Prose, "Plans are revised when a step fails.\n\n")
    );
    assert_eq!(kinds[4], (UnitKind::Verbatim, "  </TabItem>\n</Tabs>\n"));
    let m = mask::mask_mdx(kinds[1].1);
    assert!(
        !m.text.contains("{props.name}") && m.originals == ["{props.name}"],
        "{m:?}"
    );
}
