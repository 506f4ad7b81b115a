//! The layer check of issue 13: every file under `src/` imports only modules of its own layer or
//! of a lower one, in the order of `../shared/ARCHITECTURE.md` ("Layering"):
//!
//! ```text
//! 1 book termbase lang tokens util exit
//! 2 llm
//! 3 config interchange
//! 4 agents
//! 5 qa
//! 6 repair              (mechanical repair of translations: reads QA's alignment)
//! 7 campaign
//! 8 report experiment   (report does not import experiment; experiment may import report)
//! 9 commands cli
//! ```
//!
//! "Imports" counts three kinds of arrows, all read from the text (no compiler, no
//! `cargo modules`): `use crate::x…` items (also grouped, `use crate::{x::A, y::B}`, and over
//! several lines), `crate::x::…` paths in code, and intra-doc links in `///` and `//!` comments
//! (``[`crate::x::Y`]``, `[text](crate::x::Y)`, `[text]: crate::x::Y`), since rustdoc resolves a
//! link as an import. Plain `//` comments and `"…"` strings draw no arrow. `src/lib.rs` and
//! `src/main.rs` stand above every layer and are not checked. Two modules of one layer may import
//! each other in one direction only (both directions is a circle); `report` → `experiment` is
//! named as forbidden by the issue. A failure lists every arrow as `file:line: from (layer n) →
//! to (layer m) in <what>`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The layer of each top-level module of the crate, lowest first (issue 13's target).
const LAYERS: &[(&str, u8)] = &[
    ("book", 1),
    ("termbase", 1),
    ("lang", 1),
    ("tokens", 1),
    ("util", 1),
    ("term", 1),
    ("exit", 1),
    ("llm", 2),
    ("config", 3),
    ("interchange", 3),
    ("agents", 4),
    ("qa", 5),
    ("repair", 6),
    ("campaign", 7),
    ("report", 8),
    ("experiment", 8),
    ("commands", 9),
    ("cli", 9),
];

/// Same-layer arrows the issue forbids explicitly.
const FORBIDDEN: &[(&str, &str)] = &[("report", "experiment")];

fn layer(module: &str) -> Option<u8> {
    LAYERS.iter().find(|(m, _)| *m == module).map(|&(_, l)| l)
}

/// How an arrow was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A `use crate::…` item (its first line is reported).
    Use,
    /// A `crate::x::…` path in code.
    Path,
    /// An intra-doc link in a `///` or `//!` comment.
    DocLink,
}

/// One reference from a file to a top-level module: 1-based line, the module, the kind.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Arrow {
    line: usize,
    module: String,
    kind: Kind,
}

/// The top-level module a file under `src/` belongs to (`src/llm/types.rs` → `llm`,
/// `src/lang.rs` → `lang`); `None` for `lib.rs` and `main.rs`.
fn module_of(rel: &Path) -> Option<String> {
    let mut parts = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned());
    let first = parts.next()?;
    match parts.next() {
        Some(_) => Some(first),
        None => {
            let stem = first.strip_suffix(".rs")?;
            (stem != "lib" && stem != "main").then(|| stem.to_string())
        }
    }
}

fn ident_at(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The code part of a line: the text before a `//` comment, with `"…"` string literals blanked
/// (a naive scan: escapes are honoured, raw strings and `/* */` comments are not special).
fn code_part(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    let mut in_str = false;
    while let Some(c) = chars.next() {
        if in_str {
            match c {
                '\\' => {
                    chars.next();
                }
                '"' => {
                    in_str = false;
                    out.push('"');
                }
                _ => out.push(' '),
            }
            continue;
        }
        match c {
            '"' => {
                in_str = true;
                out.push('"');
            }
            '/' if chars.peek() == Some(&'/') => break,
            _ => out.push(c),
        }
    }
    out
}

/// The top-level modules named right after each `crate::` in `s`: `crate::x` gives `x`,
/// `crate::{x::A, y}` gives `x` and `y` (nested groups are not descended: their first segment is
/// below a module already named). `self` and `super` inside a group are skipped.
fn modules_after_crate(s: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = s;
    while let Some(i) = rest.find("crate::") {
        // `foo_crate::x` or `booktr_crate::x` is not the crate root.
        let before = rest[..i].chars().next_back();
        let after = &rest[i + "crate::".len()..];
        rest = after;
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let after = after.trim_start();
        if let Some(group) = after.strip_prefix('{') {
            let mut depth = 0usize;
            let mut start = true;
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => start = true,
                    c if c.is_whitespace() => {}
                    _ if start && depth == 0 => {
                        start = false;
                        let id = ident_at(&group[j..]);
                        if !id.is_empty() && id != "self" && id != "super" {
                            found.push(id.to_string());
                        }
                    }
                    _ => {}
                }
            }
        } else {
            let id = ident_at(after);
            if !id.is_empty() {
                found.push(id.to_string());
            }
        }
    }
    found
}

/// The intra-doc link targets of a doc-comment line that start with `crate::`:
/// ``[`crate::x::Y`]``, `[crate::x::Y]`, `[text](crate::x::Y)`, `[text][crate::x::Y]` and the
/// reference form `[text]: crate::x::Y`.
fn doc_link_modules(doc: &str) -> Vec<String> {
    let mut found = Vec::new();
    let bytes = doc.as_bytes();
    for (i, _) in doc.match_indices("crate::") {
        // Walk back over the link target's own characters to the character that opens it.
        let mut j = i;
        while j > 0 && matches!(bytes[j - 1], b'`' | b' ') {
            j -= 1;
        }
        let opener = if j > 0 { bytes[j - 1] } else { 0 };
        let is_link = match opener {
            b'[' | b'(' => true,
            b':' => doc[..j - 1].trim_end().ends_with(']'),
            _ => false,
        };
        if is_link {
            let id = ident_at(&doc[i + "crate::".len()..]);
            if !id.is_empty() {
                found.push(id.to_string());
            }
        }
    }
    found
}

/// Every arrow of one source file, in line order. A `use` item spanning several lines is read
/// whole and reported at its first line.
fn arrows(text: &str) -> Vec<Arrow> {
    let mut out = Vec::new();
    let mut pending_use: Option<(usize, String)> = None;
    for (n, raw) in text.lines().enumerate() {
        let line = n + 1;
        let trimmed = raw.trim_start();
        if let Some(doc) = trimmed
            .strip_prefix("///")
            .or_else(|| trimmed.strip_prefix("//!"))
        {
            for module in doc_link_modules(doc) {
                out.push(Arrow {
                    line,
                    module,
                    kind: Kind::DocLink,
                });
            }
            continue;
        }
        let code = code_part(raw);
        if let Some((start, mut item)) = pending_use.take() {
            item.push(' ');
            item.push_str(&code);
            if code.contains(';') {
                for module in modules_after_crate(&item) {
                    out.push(Arrow {
                        line: start,
                        module,
                        kind: Kind::Use,
                    });
                }
            } else {
                pending_use = Some((start, item));
            }
            continue;
        }
        let ct = code.trim_start();
        let body = ct
            .strip_prefix("pub ")
            .or_else(|| ct.strip_prefix("pub(crate) "))
            .or_else(|| ct.strip_prefix("pub(super) "))
            .unwrap_or(ct);
        if let Some(item) = body.strip_prefix("use ")
            && item.trim_start().starts_with("crate::")
        {
            if item.contains(';') {
                for module in modules_after_crate(item) {
                    out.push(Arrow {
                        line,
                        module,
                        kind: Kind::Use,
                    });
                }
            } else {
                pending_use = Some((line, item.to_string()));
            }
            continue;
        }
        for module in modules_after_crate(&code) {
            out.push(Arrow {
                line,
                module,
                kind: Kind::Path,
            });
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The violations of the whole `src/` tree, one line each, sorted by file and line.
fn violations(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut bad: Vec<(String, usize, String)> = Vec::new();
    let mut same_layer: BTreeSet<(String, String)> = BTreeSet::new();
    let mut same_layer_at: Vec<(String, String, (String, usize, String))> = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(src).unwrap();
        let Some(from) = module_of(rel) else { continue };
        let from_layer = layer(&from).unwrap_or_else(|| {
            panic!(
                "src/{}: module `{from}` has no layer in tests/it/layers.rs LAYERS; add it",
                rel.display()
            )
        });
        let text = std::fs::read_to_string(f).unwrap();
        for a in arrows(&text) {
            if a.module == from {
                continue;
            }
            // `crate::SomeReExport` or a macro name: not a module of the table.
            let Some(to_layer) = layer(&a.module) else {
                continue;
            };
            let what = match a.kind {
                Kind::Use => "a `use crate::` item",
                Kind::Path => "a `crate::` path in code",
                Kind::DocLink => "an intra-doc link",
            };
            let file = format!("src/{}", rel.display());
            let at = format!("{file}:{}", a.line);
            if to_layer > from_layer || FORBIDDEN.contains(&(from.as_str(), a.module.as_str())) {
                let msg = format!(
                    "{at}: {from} (layer {from_layer}) imports {} (layer {to_layer}) in {what}",
                    a.module
                );
                bad.push((file, a.line, msg));
            } else if to_layer == from_layer {
                same_layer.insert((from.clone(), a.module.clone()));
                let msg = format!(
                    "{at}: {from} (layer {from_layer}) imports {} of its own layer in {what}",
                    a.module
                );
                same_layer_at.push((from.clone(), a.module.clone(), (file, a.line, msg)));
            }
        }
    }
    for (from, to, (file, line, msg)) in same_layer_at {
        if same_layer.contains(&(to.clone(), from.clone())) {
            bad.push((
                file,
                line,
                format!("{msg}, and {to} imports {from} (a circle)"),
            ));
        }
    }
    // By file, then line as a number (`:9` before `:10`).
    bad.sort();
    bad.dedup();
    bad.into_iter().map(|(_, _, msg)| msg).collect()
}

#[test]
fn no_module_imports_a_higher_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(
        files.len() > 50,
        "only {} files under {}",
        files.len(),
        src.display()
    );
    let bad = violations(&src);
    assert!(
        bad.is_empty(),
        "{} upward import(s) (layering of issue 13, see tests/it/layers.rs):\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn layer_parser_reads_use_items_paths_and_doc_links() {
    let text = r#"//! Opens with [`crate::llm::Request`] and plain `crate::book` text.
use std::fmt;
use crate::agents::Agent;
pub use crate::{qa::Severity, termbase::{Entry, Origin}, self as root};
use crate::{
    config::Plan,
    report,
};
// use crate::commands::run; is a comment
fn f() {
    let s = "crate::campaign::x";
    let e = crate::experiment::judge::Judgment::default(); // crate::cli in a comment
    my_crate::interchange::y();
    $crate::util::z();
}
/// See [the runner](crate::campaign::runner), [`Plan`][crate::config::Plan] and
/// [`crate::qa`]; a mention of crate::commands without brackets is not a link.
/// [ref]: crate::report::html
"#;
    let all = arrows(text);
    let got: Vec<(usize, &str, Kind)> = all
        .iter()
        .map(|a| (a.line, a.module.as_str(), a.kind))
        .collect();
    assert_eq!(
        got,
        vec![
            (1, "llm", Kind::DocLink),
            (3, "agents", Kind::Use),
            (4, "qa", Kind::Use),
            (4, "termbase", Kind::Use),
            (5, "config", Kind::Use),
            (5, "report", Kind::Use),
            (12, "experiment", Kind::Path),
            (14, "util", Kind::Path),
            (16, "campaign", Kind::DocLink),
            (16, "config", Kind::DocLink),
            (17, "qa", Kind::DocLink),
            (18, "report", Kind::DocLink),
        ]
    );
    assert_eq!(module_of(Path::new("llm/types.rs")).as_deref(), Some("llm"));
    assert_eq!(module_of(Path::new("lang.rs")).as_deref(), Some("lang"));
    assert_eq!(
        module_of(Path::new("campaign/manager/steps.rs")).as_deref(),
        Some("campaign")
    );
    assert_eq!(module_of(Path::new("lib.rs")), None);
    assert_eq!(module_of(Path::new("main.rs")), None);
}

#[test]
fn layer_check_names_file_line_and_the_upward_import() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    let write = |rel: &str, text: &str| {
        let p = src.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write("lib.rs", "use crate::commands::run;\n");
    write("book/mod.rs", "//! Chapters.\n");
    write("llm/mod.rs", "//! Wire.\nuse crate::book::Unit;\n");
    write(
        "llm/types.rs",
        "//! Wire types.\nuse crate::book::Unit;\nuse crate::agents::Agent;\n",
    );
    write(
        "report/mod.rs",
        "//! Uses [`crate::experiment::evidence`].\n",
    );
    write("experiment/mod.rs", "//! Reads [`crate::report`].\n");
    write(
        "config/mod.rs",
        "//! x\nfn f() {\n    crate::interchange::g()\n}\n",
    );
    write("interchange/mod.rs", "//! x\nuse crate::config::Plan;\n");
    write("cli.rs", "//! x\nuse crate::commands::run;\n");
    write("commands/mod.rs", "//! x\nuse crate::cli::Cli;\n");
    assert_eq!(
        violations(src),
        vec![
            "src/cli.rs:2: cli (layer 9) imports commands of its own layer in a `use crate::` \
             item, and commands imports cli (a circle)",
            "src/commands/mod.rs:2: commands (layer 9) imports cli of its own layer in a `use \
             crate::` item, and cli imports commands (a circle)",
            "src/config/mod.rs:3: config (layer 3) imports interchange of its own layer in a \
             `crate::` path in code, and interchange imports config (a circle)",
            "src/interchange/mod.rs:2: interchange (layer 3) imports config of its own layer in \
             a `use crate::` item, and config imports interchange (a circle)",
            "src/llm/types.rs:3: llm (layer 2) imports agents (layer 4) in a `use crate::` item",
            "src/report/mod.rs:1: report (layer 8) imports experiment (layer 8) in an intra-doc \
             link",
        ]
    );
    // A module missing from LAYERS fails loudly instead of passing unchecked.
    write("newmod.rs", "//! x\n");
    let unknown = std::panic::catch_unwind(|| violations(src)).unwrap_err();
    let msg = unknown.downcast_ref::<String>().unwrap();
    assert!(
        msg.contains("src/newmod.rs: module `newmod` has no layer"),
        "{msg}"
    );
}

/// Inside `campaign`, the core (the campaign, its store and state, the Manager, the commit
/// protocol) never imports the operations (runner, batch, desk, exports, imports, memory…):
/// no `campaign::ops` path in code or in an intra-doc link under `src/campaign/core/`, tests
/// included (a core test that needs an operation belongs with the operation).
#[test]
fn campaign_core_never_imports_ops() {
    let core = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/campaign/core");
    let mut files = Vec::new();
    rust_files(&core, &mut files);
    assert!(
        files.len() >= 15,
        "expected the core's files under {}, found {}",
        core.display(),
        files.len()
    );
    let mut bad = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for (i, line) in text.lines().enumerate() {
            let t = line.trim_start();
            let plain_comment =
                t.starts_with("//") && !t.starts_with("///") && !t.starts_with("//!");
            if !plain_comment && line.contains("campaign::ops") {
                bad.push(format!("{}:{}: {}", f.display(), i + 1, t));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "the campaign core imports ops:\n{}",
        bad.join("\n")
    );
}
