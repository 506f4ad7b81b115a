//! Comments in code blocks, for the campaign key `code_comments` ([`CodeComments`]): under
//! `translate`, the `code_blocks` check compares code blocks with their comments removed
//! ([`code_without_comments`]), so a translated comment is not an error while every other
//! code token (identifiers, operators, string literals, indentation) must stay identical.
//!
//! The comment syntax is chosen from the fence's language (the first word of its info string),
//! per [`syntax_for`]: `#` (Python, shells, Ruby, YAML, TOML, R…), `//` and `/* */` (C family,
//! Rust, Go, Java, JavaScript, TypeScript…), `--` (SQL, Lua, Haskell), `<!-- -->` (HTML, XML,
//! Markdown), `;` (Lisp family, INI, assembly), `%` (TeX, Erlang, MATLAB). An unknown or empty
//! language uses a generic set (`#`, `//`, `/* */`, `<!-- -->`). String literals (`"…"`, `'…'`,
//! and backquotes for JavaScript-like and shell languages), within one line, are skipped so a
//! `#` inside a string is code. A line comment marker counts only at the start of a line or
//! after whitespace (so `$#`, `${#x}` and `http://` stay code). Not a full lexer: a comment
//! marker this misses is compared as code, which errs towards reporting.

pub use crate::config::CodeComments;

/// The comment syntax of one language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Syntax {
    /// Line comment markers.
    pub line: &'static [&'static str],
    /// Block comment `(open, close)` pairs.
    pub block: &'static [(&'static str, &'static str)],
    /// Whether backquotes delimit strings (JavaScript template literals, shell substitutions).
    pub backquote_strings: bool,
    /// Whether `'` delimits strings (not in Lisp, where it quotes a form, nor in Rust/OCaml,
    /// where it starts lifetimes and type variables).
    pub single_quote_strings: bool,
    /// Whether a triple-quoted string standing as a statement of its own (`"""…"""` or
    /// `'''…'''` on its own lines: a Python docstring, PEP 257) is documentation, removed
    /// like a comment. A triple-quoted string that is part of an expression stays code.
    pub docstrings: bool,
}

const C_BLOCK: &[(&str, &str)] = &[("/*", "*/")];
const HTML_BLOCK: &[(&str, &str)] = &[("<!--", "-->")];

/// The comment syntax for a fence's language (`lang` is its info string; only the first word,
/// lower-cased, is used); the generic set for an unknown or empty one.
pub fn syntax_for(lang: &str) -> Syntax {
    let word = lang
        .split(|c: char| c.is_whitespace() || c == ',' || c == '{')
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    let s = |line, block, backquote_strings| Syntax {
        line,
        block,
        backquote_strings,
        single_quote_strings: true,
        docstrings: false,
    };
    match word.as_str() {
        "python" | "py" | "python3" => Syntax {
            docstrings: true,
            ..s(&["#"], &[], false)
        },
        "ruby" | "rb" | "yaml" | "yml" | "toml" | "r" | "perl" | "pl" | "dockerfile" | "docker"
        | "makefile" | "make" | "cmake" | "conf" | "nginx" | "julia" | "elixir" | "ex" | "nim"
        | "gitignore" | "properties" | "tcl" => s(&["#"], &[], false),
        "sh" | "bash" | "shell" | "zsh" | "fish" | "console" | "shell-session" | "ksh" => {
            s(&["#"], &[], true)
        }
        "powershell" | "ps1" | "pwsh" => s(&["#"], &[("<#", "#>")], false),
        "c" | "h" | "cpp" | "c++" | "cc" | "hpp" | "cxx" | "java" | "go" | "golang" | "swift"
        | "kotlin" | "kt" | "scala" | "csharp" | "cs" | "c#" | "dart" | "jsonc" | "json5"
        | "groovy" | "gradle" | "proto" | "protobuf" | "solidity" | "sol" | "zig" | "objc"
        | "objective-c" | "hcl" | "terraform" | "tf" => s(&["//"], C_BLOCK, false),
        "js" | "javascript" | "jsx" | "ts" | "typescript" | "tsx" | "mjs" | "cjs" => {
            s(&["//"], C_BLOCK, true)
        }
        "rust" | "rs" => Syntax {
            line: &["//"],
            block: C_BLOCK,
            backquote_strings: false,
            single_quote_strings: false,
            docstrings: false,
        },
        "php" => s(&["//", "#"], C_BLOCK, true),
        "css" | "scss" | "less" => s(&["//"], C_BLOCK, false),
        "sql" | "mysql" | "postgresql" | "psql" | "sqlite" | "plsql" | "ada" => {
            s(&["--"], C_BLOCK, false)
        }
        "lua" => s(&["--"], &[("--[[", "]]")], false),
        "haskell" | "hs" | "elm" => s(&["--"], &[("{-", "-}")], false),
        "html" | "xml" | "markdown" | "md" | "svg" | "vue" | "xhtml" | "jinja" | "handlebars" => {
            s(&[], HTML_BLOCK, false)
        }
        "lisp" | "clojure" | "clj" | "scheme" | "racket" | "elisp" | "emacs-lisp" => Syntax {
            line: &[";"],
            block: &[],
            backquote_strings: false,
            single_quote_strings: false,
            docstrings: false,
        },
        "ini" | "asm" | "nasm" | "assembly" => s(&[";", "#"], &[], false),
        "tex" | "latex" | "erlang" | "erl" | "matlab" | "octave" | "prolog" => {
            s(&["%"], &[], false)
        }
        "ocaml" | "ml" | "fsharp" | "f#" => Syntax {
            line: &[],
            block: &[("(*", "*)")],
            backquote_strings: false,
            single_quote_strings: false,
            docstrings: false,
        },
        "vim" | "viml" => s(&["\""], &[], false),
        // JSON has no comments; text and output blocks have no syntax: nothing is a comment.
        "json" | "text" | "txt" | "plain" | "plaintext" | "output" | "log" | "csv" | "diff" => {
            s(&[], &[], false)
        }
        _ => s(&["#", "//"], &[("/*", "*/"), ("<!--", "-->")], false),
    }
}

/// `body` with every comment of `lang`'s syntax removed, then each line's trailing whitespace
/// removed and the lines left blank dropped (a translated comment may take more or fewer
/// lines). Leading indentation and everything else is kept byte for byte, so two bodies whose
/// results are equal differ only in comments and blank lines.
pub fn code_without_comments(lang: &str, body: &str) -> String {
    let syn = syntax_for(lang);
    let stripped = strip(&syn, body);
    let mut out = String::with_capacity(stripped.len());
    for line in stripped.lines() {
        let line = line.trim_end();
        if !line.trim().is_empty() {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// `body` with the comments of `syn` removed (a block comment's newlines are kept, so line
/// numbers of the code do not shift).
fn strip(syn: &Syntax, body: &str) -> String {
    let b = body.as_bytes();
    let mut out = String::with_capacity(body.len());
    let mut i = 0;
    // Start of the current run of code to copy.
    let mut run = 0;
    let at_word_start = |i: usize| i == 0 || b[i - 1].is_ascii_whitespace();
    'outer: while i < b.len() {
        let rest = &body[i..];
        for (open, close) in syn.block {
            if let Some(inner) = rest.strip_prefix(open) {
                out.push_str(&body[run..i]);
                let end = inner
                    .find(close)
                    .map_or(body.len(), |e| i + open.len() + e + close.len());
                out.extend(body[i..end].chars().filter(|&c| c == '\n'));
                i = end;
                run = i;
                continue 'outer;
            }
        }
        for m in syn.line {
            if rest.starts_with(m) && at_word_start(i) {
                out.push_str(&body[run..i]);
                let end = rest.find('\n').map_or(body.len(), |e| i + e);
                i = end;
                run = i;
                continue 'outer;
            }
        }
        if syn.docstrings
            && let Some(end) = triple_quoted(body, i)
        {
            let line_start = body[..i].rfind('\n').map_or(0, |n| n + 1);
            let line_end = body[end..].find('\n').map_or(body.len(), |n| end + n);
            let after = body[end..line_end].trim_start();
            if body[line_start..i].trim().is_empty() && (after.is_empty() || after.starts_with('#'))
            {
                // A string that is a statement of its own: documentation.
                out.push_str(&body[run..i]);
                out.extend(body[i..end].chars().filter(|&c| c == '\n'));
                run = end;
            }
            // Otherwise a string value: code, skipped whole (a `#` inside it is no comment).
            i = end;
            continue;
        }
        let c = b[i];
        let quote = c == b'"'
            || (c == b'\'' && syn.single_quote_strings)
            || (c == b'`' && syn.backquote_strings);
        if quote {
            // A string literal within the line, with backslash escapes.
            let mut j = i + 1;
            while j < b.len() && b[j] != b'\n' {
                if b[j] == b'\\' {
                    j += 2;
                    continue;
                }
                if b[j] == c {
                    break;
                }
                j += 1;
            }
            if j < b.len() && b[j] == c {
                i = j + 1;
                continue;
            }
        }
        // Advance one char.
        i += rest.chars().next().map_or(1, char::len_utf8);
    }
    out.push_str(&body[run.min(body.len())..]);
    out
}

/// The end (exclusive, in bytes) of a triple-quoted string starting at byte `i` of `body`
/// (`"""` or `'''`, after an optional `r`, `u` or `b` prefix, backslash escapes skipped), or
/// `None` when none starts there or it does not close.
fn triple_quoted(body: &str, i: usize) -> Option<usize> {
    let rest = &body[i..];
    let prefix = match rest.as_bytes().first()? {
        b'r' | b'R' | b'u' | b'U' | b'b' | b'B' => {
            let word_start = i == 0
                || !(body.as_bytes()[i - 1].is_ascii_alphanumeric()
                    || body.as_bytes()[i - 1] == b'_');
            if !word_start {
                return None;
            }
            1
        }
        _ => 0,
    };
    let q = rest.get(prefix..prefix + 3)?;
    if q != "\"\"\"" && q != "'''" {
        return None;
    }
    let open = i + prefix + 3;
    let bytes = body.as_bytes();
    let mut j = open;
    while j + 3 <= body.len() {
        if bytes[j] == b'\\' {
            j += 2;
            continue;
        }
        if &bytes[j..j + 3] == q.as_bytes() {
            return Some(j + 3);
        }
        j += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_comments_are_removed_but_strings_kept() {
        let src = "# start the loop\nx = \"# not a comment\"  # trailing\nrun(x)\n";
        assert_eq!(
            code_without_comments("python", src),
            "x = \"# not a comment\"\nrun(x)\n"
        );
        let zh = "# 启动循环\nx = \"# not a comment\"  # 末尾注释\n\nrun(x)\n";
        assert_eq!(
            code_without_comments("python", src),
            code_without_comments("python", zh)
        );
        // A translated string literal is a code change.
        let zh2 = "x = \"# 不是注释\"\nrun(x)\n";
        assert_ne!(
            code_without_comments("python", src),
            code_without_comments("python", zh2)
        );
    }

    #[test]
    fn a_python_docstring_was_compared_as_code_under_translate() {
        let src = "def cancel(r_id: str) -> dict:\n    \"\"\"\n    Cancel a reservation.\n\n    Rules:\n    - Rule 1: # not a comment\n    \"\"\"\n    x = r'''kept''' + \"\"\"# a value\"\"\"  # trailing\n    return x\n";
        let zh = "def cancel(r_id: str) -> dict:\n    \"\"\"取消一个预订。\n\n    规则：\n    - 规则 1：…\n    \"\"\"\n    x = r'''kept''' + \"\"\"# a value\"\"\"  # 末尾\n    return x\n";
        assert_eq!(
            code_without_comments("python", src),
            "def cancel(r_id: str) -> dict:\n    x = r'''kept''' + \"\"\"# a value\"\"\"\n    return x\n"
        );
        assert_eq!(
            code_without_comments("python", src),
            code_without_comments("python", zh)
        );
        // A triple-quoted string that is a value stays code: translating it is a change.
        let v = "PROMPT = \"\"\"\nYou are a helpful agent.\n\"\"\"\n";
        let v_zh = "PROMPT = \"\"\"\n你是一个乐于助人的智能体。\n\"\"\"\n";
        assert_ne!(
            code_without_comments("python", v),
            code_without_comments("python", v_zh)
        );
        // Other languages have no docstrings.
        assert_eq!(
            code_without_comments("ruby", "\"\"\"x\"\"\"\n"),
            "\"\"\"x\"\"\"\n"
        );
    }

    #[test]
    fn c_family_block_and_line_comments() {
        let src = "/* Set up\n   the agent */\nlet url = \"http://x\"; // go\nint a = b / c;\n";
        assert_eq!(
            code_without_comments("js", src),
            "let url = \"http://x\";\nint a = b / c;\n"
        );
        // Rust lifetimes are not strings.
        assert_eq!(
            code_without_comments("rust", "fn f<'a>(x: &'a str) {} // 注释\n"),
            "fn f<'a>(x: &'a str) {}\n"
        );
    }

    #[test]
    fn shell_hash_inside_a_word_is_code() {
        assert_eq!(
            code_without_comments("bash", "echo $# ${#x} # count\n"),
            "echo $# ${#x}\n"
        );
    }

    #[test]
    fn sql_html_and_generic() {
        assert_eq!(
            code_without_comments("sql", "SELECT 1; -- one\n"),
            "SELECT 1;\n"
        );
        assert_eq!(
            code_without_comments("html", "<p>x</p><!-- note -->\n"),
            "<p>x</p>\n"
        );
        assert_eq!(
            code_without_comments("", "a = 1 # c\nb // d\n"),
            "a = 1\nb\n"
        );
        // JSON has no comments: nothing is removed.
        assert_eq!(
            code_without_comments("json", "{\"a\": \"//\"} // x\n"),
            "{\"a\": \"//\"} // x\n"
        );
    }

    #[test]
    fn parse_code_comments() {
        assert_eq!("translate".parse(), Ok(CodeComments::Translate));
        assert_eq!("keep".parse(), Ok(CodeComments::Keep));
        assert!(
            "yes"
                .parse::<CodeComments>()
                .unwrap_err()
                .to_string()
                .contains("keep")
        );
    }
}
