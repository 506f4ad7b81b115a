//! `untranslated` and `untranslated_word`: text of the translation left in the source language.
//! Owns the judging of the translation's blocks, sentences and words by language (the
//! identification itself is [`crate::lang::detect`]), and the book-wide tally of words a
//! translation keeps in the source language ([`KeptWords`]).
//!
//! Units whose source has fewer than [`MIN_SOURCE_LETTERS`] prose letters (pure code, a lone
//! figure) are skipped, and so are same-language pairs (`en` → `en-GB`).
//!
//! ## What is judged
//! The translation is cut into its text blocks ([`BlockKind`]: paragraphs, list items, table
//! cells, headings, image captions, footnotes) with pulldown-cmark, and each into sentences.
//! Only the words that say what language a text is in are judged. Left out are code, inline
//! code, math, HTML, URLs; identifiers (a digit, `_`, `.`, `/`, `:`, `@`, `#`, `=` inside, a
//! call such as `cos(θ)`,
//! camelCase, or a word the source writes as inline code, such as `numpy`); single letters
//! (variables); acronyms (`LLM`, `APIs`); names the source also writes that way (a capitalised
//! word of the source's running text, or of the whole source book when `booktr validate` has
//! tallied it, `Anthropic` for `Anthropic's`, and a name with a capital inside in any casing,
//! `numpy` for `NumPy`); admonition types
//! (`!!! tip`); glossary terms (any word of a termbase entry for
//! `untranslated_word`; for blocks of same-script pairs, the entries kept in the source
//! language); quotations (`"…"`, `'…'`, `“…”`, `‘…’`, `«…»`, `„…“`, `「…」`, `『…』`, and
//! titles in `《…》`); placeholders and attributes in `{…}` (`{#id}`); and glosses: a parenthetical of at most [`GLOSS_WORDS`] words (the
//! source term a translator puts after its rendering, `上下文窗口（context window）`), or the
//! start of a longer one up to its first separator (`预训练（Pre-training，即…）`), and a term
//! glossed the other way round, followed by its rendering in parentheses (`mode-seeking（寻峰）`). A footnote with a year in it is a bibliography
//! entry (authors, title, venue stay as the source writes them) and is not judged at all.
//!
//! ## `untranslated` (errors, then a warning)
//! 1. **Echo**: the translation equals the source after collapsing whitespace → error.
//! 2. **A block left in the source language** → error, one per block: a block with at least
//!    [`MIN_BLOCK_WORDS`] judged words identified as the source language
//!    ([`PairIdentifier::side`]: no letter of the target's script when the scripts differ;
//!    whatlang between the two languages, with confidence at least [`MIN_CONFIDENCE`], when
//!    they share one).
//! 3. **A sentence left in the source language** (in a block not reported whole) → error: the
//!    same test on a sentence with at least [`MIN_SENTENCE_WORDS`] judged words.
//! 4. **A share** of source-language text under that → warning: the judged letters in
//!    source-language sentences of any length and in stray source words (below), over all
//!    judged letters, above [`SHARE_WARNING`].
//!
//! A finding carries the span of the block or sentence in the translation.
//!
//! ## `untranslated_word` (targets in another script than the source)
//! A run of source-script words inside a sentence that is otherwise translated
//! (`unlike聊天机器人`, `旨在 rehearse翻译活动`) is a finding with its span, unless every word
//! of it is left out as above (glossary term, identifier, acronym, a name the source also
//! writes that way, a quotation or a gloss in parentheses), or it is one word that the
//! source's code blocks use as an identifier (`code_identifiers`: `system 消息`, `bash 工具`),
//! or it is followed by its rendering in parentheses. Error, except for a word the whole
//! translation keeps: when [`QaContext::kept_words`] is set (`booktr validate` tallies the
//! book first) and the word stands in at least [`KEPT_BLOCKS`] blocks of the book and in at
//! least [`KEPT_SHARE`] of the source blocks that use it ([`KeptWords::is_convention`]), it is
//! the translation's convention (the human zh edition of the corpus keeps `token`, `prompt`,
//! `schema`, `rollout`…), so a warning that says to put it in the glossary or translate it.
//!
//! The thresholds are measured on the labelled sets (`cargo bench --bench qa_labelled`, which
//! prints the figures; see the constants).

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use pulldown_cmark::{Event, LinkType, Tag, TagEnd};
use whatlang::Script as WScript;

use crate::book::markdown;
use crate::lang::detect::{PairIdentifier, Side, letter_script};
use crate::qa::view::doc::Doc;
use crate::qa::{Finding, QaContext, Severity};

/// The check name of leftover blocks, sentences and shares.
pub const CHECK: &str = "untranslated";
/// The check name of stray source-language words in a target sentence.
pub const WORD_CHECK: &str = "untranslated_word";

/// Units whose source prose has fewer letters are not judged.
pub const MIN_SOURCE_LETTERS: usize = 20;
/// Judged words a block needs before it is identified as a whole.
pub const MIN_BLOCK_WORDS: usize = 3;
/// Judged words a sentence needs before it is identified on its own.
pub const MIN_SENTENCE_WORDS: usize = 4;
/// The least whatlang confidence for a same-script block or sentence to count as the source
/// language.
pub const MIN_CONFIDENCE: f64 = 0.5;
/// The highest share of judged letters in the source language a translation may show without
/// a warning ([`source_share`]). Measured (`cargo bench --bench qa_labelled`, "source-language
/// share"): the human zh edition's 268 judged sections reach p99 0.106 and at most 0.158; the
/// 1.5B answers without a labelled leftover block or sentence (63 units) p95 0.201, p99 0.271;
/// the 3 units with one 0.99 at the median; the synthetic faithful pairs 0.0. 0.25 is above
/// every human section and 95 % of the model's clean units.
pub const SHARE_WARNING: f64 = 0.25;
/// Judged letters a translation needs before its share is judged.
pub const MIN_SHARE_LETTERS: usize = 40;
/// Blocks of the book a stray word must stand in to be the translation's convention (a
/// warning) rather than a slip (an error); see [`KeptWords::is_convention`]. Measured: the
/// recorded 1.5B answers repeat a slip of an echoed prompt line ("never") in 3 blocks, while
/// the words the human zh edition keeps as its convention stand in 4 blocks or more (`token`
/// 149, `schema` 19, `rollout` 11; `cargo bench --bench qa_labelled` prints these counts).
pub const KEPT_BLOCKS: usize = 4;
/// The least share of the source blocks using a word in which the translation keeps it, for
/// the word to be the translation's convention.
pub const KEPT_SHARE: f64 = 0.5;
/// Blocks of the book in which a translation that keeps a word has chosen to keep it, however
/// often it translates it elsewhere: measured on published human translations in 13 languages
/// (`cargo bench --bench qa_labelled`, multilingual part), terms such as `state`, `props` or
/// `effect` stand untranslated in dozens of blocks of one edition and translated in others,
/// which readers of those editions read as a term; a slip repeats in at most 3 blocks.
pub const KEPT_ALWAYS: usize = 10;
/// Blocks of the book in which a translation keeps a word that it keeps in every block whose
/// source uses it: a rare term (`daemon`, `nightly`, `lambda` in three blocks of a course) kept
/// wherever it occurs is the translation's choice, not a slip (a slip echoes a word the source
/// does not use, or keeps a word in some of its blocks and translates it in others).
pub const KEPT_EVERYWHERE: usize = 2;
/// The least share of target-script letters ([`crate::qa::view::doc::script_share`]) a unit of a
/// non-Latin target needs to count as translated evidence for the campaign-level drift check
/// (`qa::book`). Measured on the Chinese original of the reference corpus cut into
/// 1,500-character units: median 0.84, 5th percentile 0.69, 1st percentile 0.55 (it keeps
/// English names, acronyms and identifiers), while an echoed English unit shows ~0.
pub const SCRIPT_FLOOR: f64 = 0.20;
/// Words a parenthetical may have and still be a gloss left out of judging.
pub const GLOSS_WORDS: usize = 6;

/// The kind of a text block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlockKind {
    Paragraph,
    ListItem,
    TableCell,
    Heading,
    /// An image's alt text.
    Caption,
    /// A paragraph of a footnote definition.
    Footnote,
}

impl BlockKind {
    fn noun(self) -> &'static str {
        match self {
            BlockKind::Paragraph => "paragraph",
            BlockKind::ListItem => "list item",
            BlockKind::TableCell => "table cell",
            BlockKind::Heading => "heading",
            BlockKind::Caption => "image caption",
            BlockKind::Footnote => "footnote",
        }
    }
}

/// A text block: its prose (code, math and HTML replaced by a space) and where each piece of
/// it came from in the text.
#[derive(Debug, Clone)]
struct TextBlock {
    kind: BlockKind,
    text: String,
    /// `(offset in text, byte offset in the parsed text, piece length if copied verbatim)`.
    pieces: Vec<(usize, usize, Option<usize>)>,
}

impl TextBlock {
    /// The byte offset in the parsed text of byte `off` of the block's text (the start of its
    /// piece when the piece was unescaped by the parser).
    fn to_text(&self, off: usize) -> usize {
        let i = self
            .pieces
            .partition_point(|p| p.0 <= off)
            .saturating_sub(1);
        match self.pieces.get(i) {
            Some(&(at, src, Some(len))) => src + (off - at).min(len),
            Some(&(_, src, None)) => src,
            None => 0,
        }
    }

    fn push(&mut self, piece: &str, src: Option<(usize, bool)>) {
        if let Some((at, exact)) = src {
            self.pieces
                .push((self.text.len(), at, exact.then_some(piece.len())));
        }
        self.text.push_str(piece);
    }
}

/// The text blocks of `text` in document order. Hand-rolled over pulldown-cmark events: QA's
/// [`Doc`] keeps the prose as one string, without block boundaries or offsets.
/// `t` with its emoji and icon shortcodes (`:smile:`, `:material-bug:`: names a site's
/// emoji extension renders, kept as written by a translation) blanked with as many spaces, so
/// they are not read as words and offsets stay the same.
fn blank_shortcodes(t: &str) -> std::borrow::Cow<'_, str> {
    let codes = markdown::shortcodes(t);
    if codes.is_empty() {
        return std::borrow::Cow::Borrowed(t);
    }
    let mut out = t.to_string();
    for r in codes {
        let n = r.len();
        out.replace_range(r, &" ".repeat(n));
    }
    std::borrow::Cow::Owned(out)
}

fn text_blocks(text: &str) -> Vec<TextBlock> {
    #[derive(PartialEq)]
    enum Open {
        Item,
        Footnote,
        Heading,
        Cell,
        Image,
        Other,
    }
    let (bom, body) = markdown::split_bom(text);
    let mut out: Vec<TextBlock> = Vec::new();
    let mut stack: Vec<Open> = Vec::new();
    let mut cur: Option<TextBlock> = None;
    let mut saved: Vec<Option<TextBlock>> = Vec::new(); // blocks an image interrupted
    let (mut code, mut html, mut meta) = (0usize, 0usize, 0usize);
    let mut links: Vec<bool> = Vec::new(); // autolink?
    let kind_of = |stack: &[Open]| {
        match stack.iter().rev().find(|o| **o != Open::Other) {
            Some(Open::Heading) => return BlockKind::Heading,
            Some(Open::Cell) => return BlockKind::TableCell,
            Some(Open::Image) => return BlockKind::Caption,
            _ => {}
        }
        if stack.contains(&Open::Footnote) {
            BlockKind::Footnote
        } else if stack.contains(&Open::Item) {
            BlockKind::ListItem
        } else {
            BlockKind::Paragraph
        }
    };
    let close = |cur: &mut Option<TextBlock>, out: &mut Vec<TextBlock>| {
        if let Some(b) = cur.take()
            && b.text.chars().any(char::is_alphabetic)
            && !crate::book::mdx::reads_as_esm(&b.text)
        {
            out.push(b);
        }
    };
    // The labels of full references defined in another unit are names, never shown: not text
    // (see `Doc::parse`).
    let labels: Vec<std::ops::Range<usize>> = markdown::reference_links(body)
        .into_iter()
        .filter(|l| l.form == markdown::RefForm::Full && !l.defined)
        .map(|l| l.label.start.saturating_sub(1)..l.label.end + 1)
        .collect();
    for (ev, range) in markdown::parser(body).into_offset_iter() {
        let at = bom + range.start;
        if matches!(ev, Event::Text(_))
            && labels
                .iter()
                .any(|l| l.start <= range.start && range.end <= l.end)
        {
            if let Some(b) = cur.as_mut() {
                b.push(" ", None);
            }
            continue;
        }
        match ev {
            Event::Start(tag) => {
                let open = match tag {
                    Tag::Item => Open::Item,
                    Tag::FootnoteDefinition(_) => Open::Footnote,
                    Tag::Heading { .. } => Open::Heading,
                    Tag::TableCell => Open::Cell,
                    Tag::Image { .. } => Open::Image,
                    Tag::CodeBlock(_) => {
                        code += 1;
                        Open::Other
                    }
                    Tag::HtmlBlock => {
                        html += 1;
                        Open::Other
                    }
                    Tag::MetadataBlock(_) => {
                        meta += 1;
                        Open::Other
                    }
                    Tag::Link { link_type, .. } => {
                        links.push(matches!(link_type, LinkType::Autolink | LinkType::Email));
                        Open::Other
                    }
                    _ => Open::Other,
                };
                let inline = matches!(
                    tag,
                    Tag::Emphasis | Tag::Strong | Tag::Strikethrough | Tag::Link { .. }
                );
                if matches!(tag, Tag::Image { .. }) {
                    saved.push(cur.take());
                } else if !inline {
                    close(&mut cur, &mut out);
                }
                stack.push(open);
            }
            Event::End(end) => {
                match end {
                    TagEnd::CodeBlock => code = code.saturating_sub(1),
                    TagEnd::HtmlBlock => html = html.saturating_sub(1),
                    TagEnd::MetadataBlock(_) => meta = meta.saturating_sub(1),
                    TagEnd::Link => {
                        links.pop();
                    }
                    _ => {}
                }
                let inline = matches!(
                    end,
                    TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough | TagEnd::Link
                );
                if matches!(end, TagEnd::Image) {
                    close(&mut cur, &mut out);
                    cur = saved.pop().flatten();
                } else if !inline {
                    close(&mut cur, &mut out);
                }
                stack.pop();
            }
            Event::Text(t) if code == 0 && html == 0 && meta == 0 && !links.contains(&true) => {
                let kind = kind_of(&stack);
                let b = cur.get_or_insert_with(|| TextBlock {
                    kind,
                    text: String::new(),
                    pieces: Vec::new(),
                });
                let exact = body.get(range.clone()) == Some(&*t);
                b.push(&blank_shortcodes(&t), Some((at, exact)));
            }
            Event::Code(_)
            | Event::InlineMath(_)
            | Event::InlineHtml(_)
            | Event::FootnoteReference(_)
            | Event::SoftBreak
            | Event::HardBreak => {
                if let Some(b) = cur.as_mut() {
                    b.push(" ", None);
                }
            }
            _ => {}
        }
    }
    close(&mut cur, &mut out);
    out
}

/// A word of a block's text.
#[derive(Debug, Clone)]
struct Tok {
    range: Range<usize>,
    letters: usize,
    /// A name of the whole source book (left out of stray words only: identifying a block
    /// uses the unit's own names, so that an echoed title-case heading is not all names).
    name: bool,
    /// Left out of judging (see the module docs).
    out: bool,
    /// A capitalised word the source writes only at sentence starts, which a dictionary
    /// lists and the translation glues to the target's letters (see `Judge::initial_vocab`):
    /// judged, but as a warning, since it may still be a name (`Anthropic的`).
    initial: bool,
}

/// Whether `c` may join two parts of one word (`don't`, `mode-seeking`, `snake_case`,
/// `file.py`, `a/b`, `std::io`, `version=4`).
fn joiner(c: char) -> bool {
    matches!(
        c,
        '\'' | '’' | '-' | '_' | '.' | '/' | ':' | '@' | '#' | '+' | '='
    )
}

/// Whether a letter of script `next` ends a word of script `word`: both known and different,
/// and neither Greek (Greek letters prefix names as symbols: `τ-bench`, `α-test`).
fn script_change(word: Option<WScript>, next: Option<WScript>) -> bool {
    match (word, next) {
        (Some(a), Some(b)) => a != b && a != WScript::Greek && b != WScript::Greek,
        _ => false,
    }
}

/// One word of [`words`]: (byte range, script, letters, identifier, acronym, capitalised).
type Word = (Range<usize>, Option<WScript>, usize, bool, bool, bool);

/// The words of `text`: runs of letters and digits of one script with inner joiners; each
/// CJK character is a word of its own. A letter of another script ends a word: Korean and
/// Japanese write particles and endings straight after a name (`Rust로`, `Reactは`), and the
/// name is the word a reader sees, as it is with a space before the particle.
fn words(text: &str) -> Vec<Word> {
    let mut out = Vec::new();
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut i = 0;
    while i < chars.len() {
        let (start, c) = chars[i];
        if !c.is_alphanumeric() {
            i += 1;
            continue;
        }
        let script = letter_script(c);
        if script == Some(WScript::Mandarin) {
            out.push((start..start + c.len_utf8(), script, 1, false, false, false));
            i += 1;
            continue;
        }
        let same = |c: char| c.is_alphanumeric() && letter_script(c) != Some(WScript::Mandarin);
        let mut j = i;
        let (mut letters, mut upper, mut digit, mut special, mut camel) =
            (0usize, 0usize, false, false, false);
        let mut word_script = script;
        let mut prev_lower = false;
        while j < chars.len() {
            let c = chars[j].1;
            let other_script = c.is_alphabetic() && script_change(word_script, letter_script(c));
            if other_script {
                break;
            }
            if same(c) {
                if c.is_alphabetic() {
                    letters += 1;
                    if word_script.is_none() {
                        word_script = letter_script(c);
                    }
                    if c.is_uppercase() {
                        upper += 1;
                        camel |= prev_lower;
                    }
                    prev_lower = c.is_lowercase();
                } else {
                    digit = true;
                    prev_lower = false;
                }
                j += 1;
            } else if joiner(c)
                && chars.get(j + 1).is_some_and(|n| {
                    same(n.1)
                        && !(n.1.is_alphabetic() && script_change(word_script, letter_script(n.1)))
                })
            {
                special |= !matches!(c, '\'' | '’' | '-');
                prev_lower = false;
                j += 1;
            } else if c == ':' && chars.get(j + 1).is_some_and(|n| n.1 == ':') {
                special = true;
                j += 1;
            } else {
                break;
            }
        }
        let end = chars.get(j).map_or(text.len(), |x| x.0);
        let first_upper = text[start..end]
            .chars()
            .find(|c| c.is_alphabetic())
            .is_some_and(char::is_uppercase);
        let trailing_s = text[start..end].ends_with('s');
        let acronym =
            upper >= 2 && (upper == letters || (trailing_s && upper + 1 == letters && !camel));
        let ident = digit || special || (camel && !acronym);
        out.push((
            start..end,
            word_script,
            letters,
            ident,
            acronym,
            first_upper,
        ));
        i = j.max(i + 1);
    }
    out
}

/// Byte ranges of `text` left out of judging besides words: URLs and entities, site and
/// extension syntax (`crate::book::syntax`: a MyST option line `:class: tip`), quotations and
/// short parentheticals.
fn left_out(text: &str) -> Vec<Range<usize>> {
    let mut spans = markdown::protected_spans(text);
    spans.extend(crate::book::syntax::site_syntax(text));
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let pairs: &[(char, &[char])] = &[
        ('“', &['”']),
        ('‘', &['’']),
        ('«', &['»']),
        ('„', &['“', '”']),
        ('「', &['」']),
        ('『', &['』']),
        ('"', &['"']),
        ('\'', &['\'']),
        ('《', &['》']),
        ('(', &[')']),
        ('（', &['）']),
        ('{', &['}']),
    ];
    let mut i = 0;
    while i < chars.len() {
        let (at, c) = chars[i];
        let Some((_, closers)) = pairs.iter().find(|(o, _)| *o == c) else {
            i += 1;
            continue;
        };
        // An opening `‘`, `"` or `'` starts a word (not an apostrophe or a closing mark), and
        // a closing `'` ends one.
        if matches!(c, '‘' | '"' | '\'') && i > 0 && chars[i - 1].1.is_alphanumeric() {
            i += 1;
            continue;
        }
        let Some(k) = (i + 1..chars.len()).find(|&k| {
            closers.contains(&chars[k].1)
                && (c != '\'' || chars.get(k + 1).is_none_or(|n| !n.1.is_alphanumeric()))
        }) else {
            i += 1;
            continue;
        };
        let end = chars[k].0 + chars[k].1.len_utf8();
        if matches!(c, '(' | '（') {
            let inner = &text[at..end];
            if words(inner).len() > GLOSS_WORDS {
                // A gloss that leads a longer parenthetical: `（Precision，精确率——…）`, the
                // source term up to the first separator.
                let lead_end = inner
                    .char_indices()
                    .skip(1)
                    .find(|(_, c)| matches!(c, '，' | ',' | '：' | ':' | '；' | ';' | '—' | '、'))
                    .map(|(j, _)| at + j);
                if let Some(e) = lead_end
                    && words(&text[at..e]).len() <= GLOSS_WORDS
                {
                    spans.push(at..e);
                }
                i += 1;
                continue;
            }
        }
        spans.push(at..end);
        i = k + 1;
    }
    spans.sort_by_key(|r| r.start);
    spans
}

/// Lower-case forms of the `names` with a capital inside one of their hyphen-separated parts
/// (`NumPy` → `numpy`, `GitHub` → `github`, `FFmpeg` → `ffmpeg`; not `Token-Level`, a title's
/// casing of two words); see `Judge::camel_names`.
fn camel_names(names: &HashSet<String>) -> HashSet<String> {
    names
        .iter()
        .filter(|n| {
            n.split('-')
                .any(|part| part.chars().skip(1).any(char::is_uppercase))
        })
        .map(|n| n.to_lowercase())
        .collect()
}

/// The names of source texts: the capitalised words of their running text that are names,
/// not sentence starts: a word capitalised inside a sentence (`OpenAI` in "calls OpenAI"), or
/// one never written in lower case (`Rafailov` at the start of a citation), but not `Beyond`
/// at the start of a sentence when "beyond" occurs elsewhere. Headings are left out: a
/// title-case heading capitalises every word, and would make an echoed heading a string of
/// names. `Anthropic's` names `Anthropic`. Returns `(names, initial_vocab)`: the second set
/// holds the words seen only at sentence starts that an English dictionary lists, when
/// `english` (the source is English); see `Judge::initial_vocab`.
fn source_names<'t>(
    sources: impl IntoIterator<Item = &'t str>,
    english: bool,
) -> (HashSet<String>, HashSet<String>) {
    let mut inside = HashSet::new();
    let mut initial = HashSet::new();
    let mut lower = HashSet::new();
    for source in sources {
        for b in text_blocks(source) {
            if b.kind == BlockKind::Heading {
                continue;
            }
            let ws = words(&b.text);
            for r in sentences(&b.text) {
                let mut first = true;
                for w in ws
                    .iter()
                    .filter(|w| w.0.start >= r.start && w.0.end <= r.end)
                {
                    let word = &b.text[w.0.clone()];
                    let word = word
                        .strip_suffix("'s")
                        .or(word.strip_suffix("’s"))
                        .unwrap_or(word);
                    // `document-to-Markdown` names Markdown.
                    for part in word.split('-').skip(1) {
                        if part.starts_with(char::is_uppercase) {
                            inside.insert(part.to_string());
                        }
                    }
                    if w.5 && !w.4 {
                        if first {
                            initial.insert(word.to_string());
                        } else {
                            inside.insert(word.to_string());
                        }
                    } else if w.2 > 0 {
                        lower.insert(word.to_string());
                    }
                    first = false;
                }
            }
        }
    }
    // A capitalised word seen only at sentence starts is a name unless the source also writes
    // it in lower case. When an English dictionary lists it (`Unlike`, `Beyond`, but also
    // `Anthropic`), it is set apart: a name only where the translation writes it apart from
    // the target's letters (see `Judge::initial_vocab`).
    let mut vocab = HashSet::new();
    for w in initial {
        if lower.contains(&w.to_lowercase()) || inside.contains(&w) {
            continue;
        }
        if english && crate::lang::dictionary::lists(&w) {
            vocab.insert(w);
        } else {
            inside.insert(w);
        }
    }
    (inside, vocab)
}

/// Identifiers: the words a source writes as inline code, such as `numpy` or `grep`, are
/// identifiers wherever the translation writes them. (Not the words of code blocks: those hold
/// prompts and comments in plain English.) Lower-case.
fn code_words(src: &Doc) -> HashSet<String> {
    let mut code = HashSet::new();
    for c in &src.inline_code {
        for w in words(c) {
            code.insert(c[w.0].to_lowercase());
        }
    }
    code
}

/// Every lower-case word of `src`'s fenced code blocks: what a one-word stray run may name
/// (see `stray_runs`). Unlike [`code_identifiers`], the unit's own blocks only: a book's code
/// holds most English words somewhere.
fn fence_words(src: &Doc) -> HashSet<String> {
    src.fences
        .iter()
        .flat_map(|f| {
            words(&f.body)
                .into_iter()
                .map(|w| f.body[w.0].to_lowercase())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Lower-case words the source's code blocks use as identifiers a text may name in prose: the
/// language of a fence (```` ```bash ```` → `bash`), a one-word string value
/// (`"role": "user"`, `role='tool'`: the chat roles, statuses, modes), and the program a shell
/// block runs (the first word of a line in a `bash`/`sh`/`shell`/`console`/`zsh` fence, after a
/// `$ ` prompt). Keys (`"prompt":`) are left out: a key is often the term itself. Measured on
/// the human zh edition (`cargo bench --bench qa_labelled`): 28 false alarms gone (chat roles,
/// programs), no fault lost; adding the whole book's inline code words as well took 11 more
/// false alarms and 15 faults (terms the book writes as code elsewhere), so they are not.
fn code_identifiers(srcs: &[&Doc]) -> HashSet<String> {
    static VALUE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r#"[:=]\s*["']([A-Za-z][A-Za-z0-9_-]{0,30})["']"#)
            .expect("the pattern is valid")
    });
    let mut out = HashSet::new();
    for src in srcs {
        for f in &src.fences {
            let lang = f
                .info
                .split_whitespace()
                .next()
                .unwrap_or("")
                .to_lowercase();
            if !lang.is_empty() {
                out.insert(lang.clone());
            }
            for c in VALUE.captures_iter(&f.body) {
                out.insert(c[1].to_lowercase());
            }
            if matches!(lang.as_str(), "bash" | "sh" | "shell" | "console" | "zsh") {
                for line in f.body.lines() {
                    let line = line.trim_start();
                    let line = line.strip_prefix("$ ").unwrap_or(line);
                    if let Some(w) = line.split_whitespace().next()
                        && w.chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
                        && !w.is_empty()
                    {
                        out.insert(w.to_lowercase());
                    }
                }
            }
        }
    }
    out
}

/// What the check knows about the pair besides the texts: the identifier, the source's names
/// and the glossary's words.
struct Judge {
    id: PairIdentifier,
    /// The unit source's names ([`source_names`]).
    local_names: std::sync::Arc<HashSet<String>>,
    /// Lower-case forms of the source's names with a capital inside (`MarkItDown`, `GitHub`,
    /// `NumPy`): a translation that changes their casing (`Markitdown`, `numpy`) still writes
    /// the name. The unit's, or the whole book's when [`QaContext::kept_words`] is set.
    camel_names: std::sync::Arc<HashSet<String>>,
    /// The unit source's names, or the whole book's when
    /// [`QaContext::kept_words`] is set (shared, not copied per unit).
    names: std::sync::Arc<HashSet<String>>,
    /// Capitalised words the source writes only at sentence starts and an English dictionary
    /// lists (`Unlike`, `Beyond`, `Anthropic`): names where the translation sets them apart
    /// (`Anthropic 训练模型`), stray words where it glues them to the target's letters
    /// (`Unlike聊天机器人`, the real 1.5B model's half translation). The unit's, or the whole
    /// book's when [`QaContext::kept_words`] is set.
    initial_vocab: std::sync::Arc<HashSet<String>>,
    /// Lower-case words the unit's source writes as inline code.
    code: std::sync::Arc<HashSet<String>>,
    /// Lower-case identifiers of the source's code blocks ([`code_identifiers`]): the unit's,
    /// or the whole book's when [`QaContext::kept_words`] is set.
    idents: std::sync::Arc<HashSet<String>>,
    /// Lower-case words of the unit source's code blocks, every word of them
    /// ([`fence_words`]).
    fence_words: HashSet<String>,
    /// Lower-case words of every termbase entry (source, target, variants).
    glossary: HashSet<String>,
    /// Lower-case words of the entries kept in the source language (target contains source).
    kept: HashSet<String>,
    /// A rehearsal into a target of the source's script ([`QaContext::pseudo_targets`]): a
    /// text whose judged words are mostly pseudo-words counts as the target's.
    pseudo: bool,
    /// The source is English, so that [`crate::lang::dictionary`] can tell its vocabulary
    /// from identifiers.
    english_source: bool,
}

impl Judge {
    fn new(ctx: &QaContext, source: &str, src: &Doc) -> Option<Judge> {
        let id = PairIdentifier::new(&ctx.source_lang, &ctx.target_lang)?;
        let id_differ = id.scripts_differ();
        // With the book tallied, its names decide (a sentence start is told from a name by
        // the whole book's lower-case words); else the unit's own.
        let english = ctx.source_lang.primary() == "en";
        let (local_names, local_vocab) = source_names([source], english);
        let local_names = std::sync::Arc::new(local_names);
        let (names, camel_names, initial_vocab) = match &ctx.kept_words {
            Some(k) if !k.names.is_empty() => {
                (k.names.clone(), k.camel.clone(), k.initial_vocab.clone())
            }
            _ => (
                local_names.clone(),
                std::sync::Arc::new(camel_names(&local_names)),
                std::sync::Arc::new(local_vocab),
            ),
        };
        // The unit's own inline code only: a word the book writes as code somewhere (`session`)
        // is often a plain term elsewhere (measured on the human zh edition: the whole book's
        // code words passed 69 kept terms and caught 6 more names of programs).
        let code = std::sync::Arc::new(code_words(src));
        let idents = match &ctx.kept_words {
            Some(k) if !k.names.is_empty() => k.idents.clone(),
            _ => std::sync::Arc::new(code_identifiers(&[src])),
        };
        // Cut as the judged text is cut ([`words`]), so that a target such as `=cmd|x` gives
        // the word `cmd` the text has, not `=cmd`.
        let lower_words = |s: &str| -> Vec<String> {
            words(s)
                .into_iter()
                .map(|w| s[w.0].to_lowercase())
                .collect()
        };
        let mut glossary = HashSet::new();
        let mut kept = HashSet::new();
        for e in &ctx.termbase.entries {
            for t in [&e.source, &e.target].into_iter().chain(&e.variants) {
                glossary.extend(lower_words(t));
            }
            if e.target.to_lowercase().contains(&e.source.to_lowercase()) {
                kept.extend(lower_words(&e.source));
            }
        }
        Some(Judge {
            fence_words: fence_words(src),
            id,
            local_names,
            initial_vocab,
            camel_names,
            code,
            idents,
            names,
            glossary,
            kept,
            pseudo: ctx.pseudo_targets && !id_differ,
            english_source: english,
        })
    }

    /// The words of a block's text, each marked whether it is left out of judging.
    fn tokens(&self, b: &TextBlock, raw: &str) -> Vec<Tok> {
        let text = b.text.as_str();
        let spans = left_out(text);
        let differ = self.id.scripts_differ();
        words(text)
            .into_iter()
            .map(|(range, script, letters, ident, acronym, capital)| {
                let w = &text[range.clone()];
                let inside = spans
                    .iter()
                    .any(|s| s.start <= range.start && range.end <= s.end);
                let lower = w.to_lowercase();
                let stem = lower.strip_suffix('s').unwrap_or(&lower);
                let glossary = if differ {
                    self.glossary.contains(&lower) || self.glossary.contains(stem)
                } else {
                    self.kept.contains(&lower) || self.kept.contains(stem)
                };
                // A name with a capital inside is the name in any casing (`numpy` for `NumPy`:
                // no English word is spelt like one).
                // A sentence-initial dictionary word glued to the target's letters is no name.
                let glued = text[..range.start]
                    .chars()
                    .next_back()
                    .into_iter()
                    .chain(text[range.end..].chars().next())
                    .any(|c| self.id.is_target_letter(c));
                let vocab = capital && self.initial_vocab.contains(w);
                let vocab_name = vocab && !glued;
                let name = (capital && self.local_names.contains(w))
                    || vocab_name
                    || self.camel_names.contains(&lower);
                let book_name = (capital && self.names.contains(w)) || vocab_name;
                let code = self.code.contains(&lower);
                // An admonition's type (`!!! tip "…"`, `:::warning`) is markup, not prose:
                // looked up in the raw line, where the parser may have taken the colons.
                let at = b.to_text(range.start);
                let line = raw
                    .get(..at)
                    .map_or("", |r| &r[r.rfind('\n').map_or(0, |i| i + 1)..]);
                let marker = ["!!!", "???", ":::"]
                    .iter()
                    .any(|m| line.trim_end().ends_with(m));
                // A URL scheme (`https://` right after a CJK colon, where the URL scanner does
                // not see a word start) and a call (`cos(θ)`, `wait()`) are code.
                let after = &text[range.end..];
                let call = after.starts_with("://") || after.starts_with('(');
                Tok {
                    // A single letter is a variable or a label (`k`, `x`, `B`), not a word (a
                    // CJK character is a word of one letter).
                    out: (letters < 2 && script != Some(WScript::Mandarin))
                        || inside
                        || ident
                        || acronym
                        || glossary
                        || name
                        || code
                        || marker
                        || call,
                    range,
                    letters,
                    name: book_name,
                    initial: vocab && glued,
                }
            })
            .collect()
    }

    /// Which language the judged words of `toks` are in, and how many there are.
    fn side(&self, text: &str, toks: &[Tok]) -> (usize, Option<(Side, f64)>) {
        let judged: Vec<&str> = toks
            .iter()
            .filter(|t| !t.out)
            .map(|t| &text[t.range.clone()])
            .collect();
        if self.pseudo
            && 2 * judged
                .iter()
                .filter(|w| crate::llm::pseudo::is_pseudo_latin_word(w))
                .count()
                > judged.len()
        {
            return (judged.len(), Some((Side::Target, 1.0)));
        }
        (judged.len(), self.id.side(&judged.join(" ")))
    }

    /// Whether judged words identified as `side` count as left in the source language.
    fn is_source(&self, n: usize, min: usize, side: Option<(Side, f64)>) -> bool {
        n >= min && matches!(side, Some((Side::Source, c)) if c >= MIN_CONFIDENCE)
    }
}

/// Whether a block is a bibliography entry: a footnote with a year (1900–2099) in it. Its
/// authors, title and venue stay as the source writes them, so it is not judged.
fn is_citation(b: &TextBlock) -> bool {
    b.kind == BlockKind::Footnote
        && b.text.as_bytes().windows(4).enumerate().any(|(i, w)| {
            (w.starts_with(b"19") || w.starts_with(b"20"))
                && w.iter().all(u8::is_ascii_digit)
                && !b.text.as_bytes().get(i + 4).is_some_and(u8::is_ascii_digit)
                && (i == 0 || !b.text.as_bytes()[i - 1].is_ascii_digit())
        })
}

/// Sentence ranges of a block's text: a sentence ends at `.`, `!`, `?` or `…` followed by
/// whitespace or the end, and at `。！？` (as [`crate::qa::unit::sentences`] counts them).
fn sentences(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut it = text.char_indices().peekable();
    while let Some((i, c)) = it.next() {
        let next_space = it.peek().is_none_or(|(_, n)| n.is_whitespace());
        let ends = match c {
            '。' | '！' | '？' | '।' | '؟' | '۔' => true,
            '.' | '!' | '?' | '…' => next_space,
            _ => false,
        };
        if ends {
            let end = i + c.len_utf8();
            if !text[start..end].trim().is_empty() {
                out.push(start..end);
            }
            start = end;
        }
    }
    if !text[start..].trim().is_empty() {
        out.push(start..text.len());
    }
    out
}

/// A run of stray source-language words in a target sentence: its byte range in the block's
/// text and its words.
fn stray_runs(judge: &Judge, text: &str, toks: &[Tok], within: &Range<usize>) -> Vec<Range<usize>> {
    let mut runs: Vec<Range<usize>> = Vec::new();
    let mut last: Option<usize> = None; // end of the open run
    for t in toks {
        if t.range.start < within.start || t.range.end > within.end {
            continue;
        }
        let source_word = !t.out
            && !t.name
            && text[t.range.clone()]
                .chars()
                .find(|c| c.is_alphabetic())
                .is_some_and(|c| judge.id.is_source_letter(c));
        if !source_word {
            last = None;
            continue;
        }
        // Words joined by spaces or hyphens only make one run (`seemingly unrelated`).
        let joined =
            last.is_some_and(|l| text[l..t.range.start].chars().all(|c| c == ' ' || c == '-'));
        match runs.last_mut() {
            Some(r) if joined => r.end = t.range.end,
            _ => runs.push(t.range.clone()),
        }
        last = Some(t.range.end);
    }
    // A source term followed by its rendering in parentheses (`mode-seeking（寻峰）`) is glossed:
    // the translation is right beside it (the mirror of the gloss `left_out` passes).
    // So is the first word of a title-case phrase whose other words are names
    // (`Overlong Reward Shaping（惩罚冗长回答）`): the gloss follows the phrase.
    runs.retain(|r| !glossed_after(judge, after_title_words(&text[r.end..])));
    // A run that is one identifier of the source's code (`system 消息`, `bash 工具`) names it;
    // inside a longer run (`tool result`) the word is the term's.
    runs.retain(|r| !judge.idents.contains(&text[r.clone()].to_lowercase()));
    // So is a run of one word that the unit's own code blocks use (`while` beside a Python
    // loop, `df` beside `df=3`, `channel` beside a JSON event): the translation names what
    // the code shows. Measured on the real set (`cargo bench --bench qa_labelled`): 9 false
    // alarms gone, 1 fault lost (a `token` the code block's diagram also writes).
    runs.retain(|r| {
        let run = &text[r.clone()];
        words(run).len() > 1 || !judge.fence_words.contains(&run.to_lowercase())
    });
    // A short lower-case word between two capitalised words that are left out as names
    // (`User as Code`, `World of Bits`) is part of one title-case name. Measured on the human
    // zh edition (`cargo bench --bench qa_labelled`): 6 false alarms gone, no fault lost.
    runs.retain(|r| !inside_a_name(text, toks, r));
    // A run of three letters or more none of whose words an English dictionary lists
    // (`scipy`, `printk`, `venv`, `Bonferroni`) is an identifier or a name, not English prose
    // left untranslated. Two-letter runs stay judged (`vs`). Measured on the real set
    // (`cargo bench --bench qa_labelled`): see docs/src/qa-checks.md.
    if judge.english_source {
        runs.retain(|r| {
            let run = &text[r.clone()];
            run.chars().filter(char::is_ascii_alphabetic).count() < 3
                || crate::lang::dictionary::lists_any_word(run)
        });
    }
    runs
}

/// `rest` (the text after a stray run) past the capitalised ASCII words that continue it,
/// each one space apart (` Reward Shaping（…）` → `（…）`).
fn after_title_words(rest: &str) -> &str {
    let mut rest = rest;
    while let Some(r) = rest.strip_prefix(' ') {
        let end = r
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .unwrap_or(r.len());
        if end == 0 || !r.starts_with(|c: char| c.is_ascii_uppercase()) {
            break;
        }
        rest = &r[end..];
    }
    rest
}

/// Whether `run` is one lower-case word of at most 4 letters with a capitalised word that is
/// not judged (a name) right before and right after it, a single space apart.
fn inside_a_name(text: &str, toks: &[Tok], run: &Range<usize>) -> bool {
    let word = &text[run.clone()];
    if word.chars().count() > 4 || !word.chars().all(|c| c.is_lowercase()) {
        return false;
    }
    let Some(i) = toks.iter().position(|t| t.range == *run) else {
        return false;
    };
    let is_name =
        |t: &Tok| (t.out || t.name) && text[t.range.clone()].starts_with(char::is_uppercase);
    let before = i.checked_sub(1).and_then(|j| toks.get(j));
    let after = toks.get(i + 1);
    before.is_some_and(|t| is_name(t) && &text[t.range.end..run.start] == " ")
        && after.is_some_and(|t| is_name(t) && &text[run.end..t.range.start] == " ")
}

/// Whether `rest` (the text after a stray run) opens with a parenthetical whose first letter
/// is of the target's script, or with `=` right before a letter of it (`reasoning=思考`, the
/// notation of a glossary line): the run's rendering, given beside it.
fn glossed_after(judge: &Judge, rest: &str) -> bool {
    if let Some(r) = rest.strip_prefix('=').or_else(|| rest.strip_prefix('＝')) {
        return r
            .chars()
            .next()
            .is_some_and(|c| judge.id.is_target_letter(c));
    }
    let Some(inner) = rest.strip_prefix('（').or_else(|| rest.strip_prefix('(')) else {
        return false;
    };
    inner
        .chars()
        .take_while(|c| *c != '）' && *c != ')')
        .find(|c| c.is_alphabetic())
        .is_some_and(|c| judge.id.is_target_letter(c))
}

/// Words a whole translation keeps in the source language: for each stray word (lower-case),
/// in how many blocks of the book it stands. Built by [`KeptWords::tally`] before the per-unit
/// checks run, and read through [`QaContext::kept_words`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeptWords {
    blocks: HashMap<String, usize>,
    /// For each word, in how many blocks of the source it stands (lower-case).
    source_blocks: HashMap<String, usize>,
    /// The names of the whole source book (see `Judge::names`): a name the source writes in
    /// another chapter or section is a name in this one too.
    names: std::sync::Arc<HashSet<String>>,
    /// Lower-case forms of those names with a capital inside (see `Judge::camel_names`).
    camel: std::sync::Arc<HashSet<String>>,
    /// The whole source book's sentence-initial dictionary words (see `Judge::initial_vocab`).
    initial_vocab: std::sync::Arc<HashSet<String>>,
    /// The identifiers of the whole source book's code blocks ([`code_identifiers`]).
    idents: std::sync::Arc<HashSet<String>>,
}

impl KeptWords {
    /// Tallies the stray words of every `(source, target)` pair (units or whole chapters) with
    /// `ctx`'s languages and termbase. Cost: one pass over the texts, linear in their length.
    pub fn tally<'t>(
        ctx: &QaContext,
        pairs: impl IntoIterator<Item = (&'t str, &'t str)>,
    ) -> KeptWords {
        use rayon::prelude::*;
        let pairs: Vec<(&str, &str)> = pairs.into_iter().collect();
        // Only pairs of different scripts have stray words (the identifier depends on the
        // languages alone).
        let Some(id) = PairIdentifier::new(&ctx.source_lang, &ctx.target_lang) else {
            return KeptWords::default();
        };
        if !id.scripts_differ() {
            return KeptWords::default();
        }
        let (names, initial_vocab) =
            source_names(pairs.iter().map(|p| p.0), ctx.source_lang.primary() == "en");
        let (names, initial_vocab) = (
            std::sync::Arc::new(names),
            std::sync::Arc::new(initial_vocab),
        );
        let camel = std::sync::Arc::new(camel_names(&names));
        let docs: Vec<Doc> = pairs.par_iter().map(|p| Doc::parse(p.0)).collect();
        let idents = std::sync::Arc::new(code_identifiers(&docs.iter().collect::<Vec<_>>()));
        // Each pair is tallied on its own (on every core), and the counts are summed.
        let (blocks, source_blocks) = pairs
            .par_iter()
            .zip(&docs)
            .filter_map(|(&(source, target), doc)| {
                Self::tally_pair(
                    ctx,
                    (&names, &camel, &idents, &initial_vocab),
                    source,
                    doc,
                    target,
                )
            })
            .reduce(
                || (HashMap::new(), HashMap::new()),
                |(mut b, mut sb), (b2, sb2)| {
                    for (w, n) in b2 {
                        *b.entry(w).or_default() += n;
                    }
                    for (w, n) in sb2 {
                        *sb.entry(w).or_default() += n;
                    }
                    (b, sb)
                },
            );
        KeptWords {
            blocks,
            source_blocks,
            names,
            camel,
            idents,
            initial_vocab,
        }
    }

    /// One pair's counts for [`KeptWords::tally`]: (stray word → target blocks, word → source
    /// blocks), lower-case.
    #[allow(clippy::type_complexity)]
    fn tally_pair(
        ctx: &QaContext,
        (names, camel, idents, initial_vocab): (
            &std::sync::Arc<HashSet<String>>,
            &std::sync::Arc<HashSet<String>>,
            &std::sync::Arc<HashSet<String>>,
            &std::sync::Arc<HashSet<String>>,
        ),
        source: &str,
        doc: &Doc,
        target: &str,
    ) -> Option<(HashMap<String, usize>, HashMap<String, usize>)> {
        let mut blocks: HashMap<String, usize> = HashMap::new();
        let mut source_blocks: HashMap<String, usize> = HashMap::new();
        for b in text_blocks(source) {
            let ws: HashSet<String> = words(&b.text)
                .into_iter()
                .map(|w| b.text[w.0].to_lowercase())
                .collect();
            for w in ws {
                *source_blocks.entry(w).or_default() += 1;
            }
        }
        let mut judge = Judge::new(ctx, source, doc)?;
        judge.names = names.clone();
        judge.camel_names = camel.clone();
        judge.idents = idents.clone();
        judge.initial_vocab = initial_vocab.clone();
        for b in text_blocks(target).iter().filter(|b| !is_citation(b)) {
            let toks = judge.tokens(b, target);
            let mut seen: HashSet<String> = HashSet::new();
            for s in sentences(&b.text) {
                let (_, side) = judge.side(&b.text, &toks_in(&toks, &s));
                if !matches!(side, Some((Side::Target, _))) {
                    continue;
                }
                for r in stray_runs(&judge, &b.text, &toks, &s) {
                    let run = &b.text[r];
                    for w in words(run) {
                        seen.insert(run[w.0].to_lowercase());
                    }
                }
            }
            for w in seen {
                *blocks.entry(w).or_default() += 1;
            }
        }
        Some((blocks, source_blocks))
    }

    /// Blocks of the book in which `word` (any case) stands as a stray word.
    pub fn blocks(&self, word: &str) -> usize {
        self.blocks.get(&word.to_lowercase()).copied().unwrap_or(0)
    }

    /// Blocks of the source in which `word` (any case) stands.
    pub fn source_blocks(&self, word: &str) -> usize {
        self.source_blocks
            .get(&word.to_lowercase())
            .copied()
            .unwrap_or(0)
    }

    /// Whether the translation keeps `word` as its convention: in at least [`KEPT_BLOCKS`]
    /// blocks, and in at least [`KEPT_SHARE`] of the source blocks that use it or in
    /// [`KEPT_ALWAYS`] blocks (a word kept in a few places and translated in most is a slip, and
    /// so is a word the source does not use, such as a prompt's words echoed).
    pub fn is_convention(&self, word: &str) -> bool {
        let (kept, used) = (self.blocks(word), self.source_blocks(word));
        if used > 0 && kept >= KEPT_EVERYWHERE && kept >= used {
            return true;
        }
        kept >= KEPT_BLOCKS
            && used >= KEPT_BLOCKS
            && (kept as f64 >= KEPT_SHARE * used as f64 || kept >= KEPT_ALWAYS)
    }
}

fn toks_in(toks: &[Tok], r: &Range<usize>) -> Vec<Tok> {
    toks.iter()
        .filter(|t| t.range.start >= r.start && t.range.end <= r.end)
        .cloned()
        .collect()
}

/// Char offset of byte `b` of `text`.
fn char_at(text: &str, b: usize) -> usize {
    text.get(..b).map_or(0, |s| s.chars().count())
}

/// Runs both checks (see the module docs).
pub fn check(ctx: &QaContext, src: &Doc, _tgt: &Doc, source: &str, target: &str) -> Vec<Finding> {
    check_and_share(ctx, src, source, target).0
}

/// The share of a translation's judged letters that are in the source language (letters of
/// source-language sentences and stray source words over all judged letters), as the check
/// measures it for its warning, or `None` when the pair is not judged (same language, too few
/// source letters, an echo) or has fewer than [`MIN_SHARE_LETTERS`] judged letters. For
/// measuring [`SHARE_WARNING`] (`cargo bench --bench qa_labelled`).
pub fn source_share(ctx: &QaContext, source: &str, target: &str) -> Option<f64> {
    check_and_share(ctx, &Doc::parse(source), source, target).1
}

/// [`check`]'s findings and the measured share ([`source_share`]).
fn check_and_share(
    ctx: &QaContext,
    src: &Doc,
    source: &str,
    target: &str,
) -> (Vec<Finding>, Option<f64>) {
    if !worth_judging(ctx, src) {
        return (Vec::new(), None);
    }
    if source.split_whitespace().eq(target.split_whitespace()) {
        return (vec![echo_finding(ctx, source, target)], None);
    }
    let Some(judge) = Judge::new(ctx, source, src) else {
        return (Vec::new(), None);
    };
    let mut scan = Scan {
        ctx,
        judge,
        source,
        target,
        out: Vec::new(),
        words_out: Vec::new(),
        source_letters: 0,
        letters: 0,
    };
    let mut counts: HashMap<BlockKind, usize> = HashMap::new();
    for b in text_blocks(target) {
        let n = {
            let c = counts.entry(b.kind).or_default();
            *c += 1;
            *c
        };
        if is_citation(&b) {
            continue;
        }
        scan.block(&b, n);
    }
    scan.finish()
}

/// Whether the pair is judged at all: the source has at least [`MIN_SOURCE_LETTERS`] prose
/// letters and the target's language differs from the source's.
fn worth_judging(ctx: &QaContext, src: &Doc) -> bool {
    let src_prose = src.clean_prose();
    if src_prose.chars().filter(|c| c.is_alphabetic()).count() < MIN_SOURCE_LETTERS {
        return false;
    }
    ctx.source_lang.primary() != ctx.target_lang.primary()
}

/// The finding for a translation identical to its source (whitespace aside): a warning for a
/// unit of definitions only (a bibliography), an error otherwise.
fn echo_finding(ctx: &QaContext, source: &str, target: &str) -> Finding {
    let severity = if only_definitions(source) {
        Severity::Warning
    } else {
        Severity::Error
    };
    // The span covers the whole text: candidate selection weighs an echo by it
    // (`campaign::core::state::rank`).
    Finding::new(
        CHECK,
        severity,
        format!(
            "the translation is identical to the source; translate the prose into {}",
            ctx.target_lang.name
        ),
        source.trim(),
        target.trim(),
    )
    .with_span(0, target.chars().count())
}

/// Letters of the judged (not left out) tokens.
fn judged_letters(ts: &[Tok]) -> usize {
    ts.iter()
        .filter(|t| !t.out)
        .map(|t| t.letters)
        .sum::<usize>()
}

/// Char span in `target` of the byte range `r` of block `b`'s text.
fn span(b: &TextBlock, target: &str, r: &Range<usize>) -> (usize, usize) {
    // The end maps through the last char of the range (its piece), not the next piece.
    let last = b.text[r.clone()]
        .chars()
        .next_back()
        .map_or(0, char::len_utf8);
    let (s, e) = (b.to_text(r.start), b.to_text(r.end - last) + last);
    (char_at(target, s), char_at(target, e.max(s)))
}

/// One judged pair's scan over the target's text blocks: the findings of both checks and the
/// letter counts of the share.
struct Scan<'a> {
    ctx: &'a QaContext,
    judge: Judge,
    source: &'a str,
    target: &'a str,
    /// [`CHECK`] findings (blocks and sentences in the source language).
    out: Vec<Finding>,
    /// [`WORD_CHECK`] findings, reported after [`CHECK`]'s.
    words_out: Vec<Finding>,
    /// Judged letters in the source language.
    source_letters: usize,
    /// All judged letters.
    letters: usize,
}

impl Scan<'_> {
    /// Judges block `b` (the `n`th of its kind): whole, then sentence by sentence.
    fn block(&mut self, b: &TextBlock, n: usize) {
        let toks = self.judge.tokens(b, self.target);
        let (count, side) = self.judge.side(&b.text, &toks);
        self.letters += judged_letters(&toks);
        if self.judge.is_source(count, MIN_BLOCK_WORDS, side) {
            self.source_letters += judged_letters(&toks);
            let whole = 0..b.text.len();
            let (s, e) = span(b, self.target, &whole);
            let from = &self.ctx.source_lang.name;
            self.out.push(
                Finding::new(
                    CHECK,
                    Severity::Error,
                    format!(
                        "{} {n} is still in {from}: \"{}\"; translate it into {}",
                        b.kind.noun(),
                        crate::util::excerpt(b.text.trim(), 80),
                        self.ctx.target_lang.name
                    ),
                    self.source.trim(),
                    b.text.trim(),
                )
                .with_span(s, e),
            );
            return;
        }
        for r in sentences(&b.text) {
            self.sentence(b, n, &toks, &r);
        }
    }

    /// Judges sentence `r` of block `b` (its tokens among the block's `toks`), then the stray
    /// source words of a target-language sentence.
    fn sentence(&mut self, b: &TextBlock, n: usize, toks: &[Tok], r: &Range<usize>) {
        let st = toks_in(toks, r);
        let (count, side) = self.judge.side(&b.text, &st);
        if matches!(side, Some((Side::Source, _))) && count >= 2 {
            self.source_letters += judged_letters(&st);
        }
        if self.judge.is_source(count, MIN_SENTENCE_WORDS, side) {
            let (s, e) = span(b, self.target, r);
            let from = &self.ctx.source_lang.name;
            self.out.push(
                Finding::new(
                    CHECK,
                    Severity::Error,
                    format!(
                        "a sentence of {} {n} is still in {from}: \"{}\"; translate it into {}",
                        b.kind.noun(),
                        crate::util::excerpt(b.text[r.clone()].trim(), 80),
                        self.ctx.target_lang.name
                    ),
                    self.source.trim(),
                    b.text[r.clone()].trim(),
                )
                .with_span(s, e),
            );
            return;
        }
        if !self.judge.id.scripts_differ() || !matches!(side, Some((Side::Target, _))) {
            return;
        }
        for run in stray_runs(&self.judge, &b.text, toks, r) {
            let initial = toks.iter().any(|t| t.initial && t.range == run);
            self.stray_word(b, n, r, &run, initial);
        }
    }

    /// Records the stray source word(s) at `run` of sentence `r` of block `b`; `initial` for
    /// one capitalised word the source writes only at sentence starts (a warning: it may be a
    /// name the dictionary also lists, `Anthropic的`, as well as a word, `Unlike聊天机器人`).
    fn stray_word(
        &mut self,
        b: &TextBlock,
        n: usize,
        r: &Range<usize>,
        run: &Range<usize>,
        initial: bool,
    ) {
        let word = &b.text[run.clone()];
        self.source_letters += word.chars().filter(|c| c.is_alphabetic()).count();
        let (severity, why) = if initial {
            (
                Severity::Warning,
                format!(
                    "; the source writes it only at a sentence start: translate it, or add it to the glossary with the target \"{word}\" if it is a name"
                ),
            )
        } else {
            self.stray_advice(word)
        };
        let (s, e) = span(b, self.target, run);
        let from = &self.ctx.source_lang.name;
        self.words_out.push(
            Finding::new(
                WORD_CHECK,
                severity,
                format!(
                    "\"{word}\" is {from} left in a {} sentence of {} {n}{why}",
                    self.ctx.target_lang.name,
                    b.kind.noun()
                ),
                self.source.trim(),
                b.text[r.clone()].trim(),
            )
            .with_span(s, e),
        );
    }

    /// A stray word's severity and the advice ending its message: a warning when the whole
    /// translation keeps the word as a convention ([`QaContext::kept_words`]) or was made
    /// elsewhere ([`QaContext::human_edition`]), an error otherwise.
    fn stray_advice(&self, word: &str) -> (Severity, String) {
        let from = &self.ctx.source_lang.name;
        let kept = self.ctx.kept_words.as_ref().filter(|k| {
            words(word)
                .iter()
                .all(|w| k.is_convention(&word[w.0.clone()]))
        });
        if let Some(k) = kept {
            let kept = words(word)
                .iter()
                .map(|w| k.blocks(&word[w.0.clone()]))
                .min()
                .unwrap_or(0);
            (
                Severity::Warning,
                format!(
                    "; the translation keeps it in {kept} blocks: if that is the book's term, add it to the glossary with the target \"{word}\", otherwise translate it"
                ),
            )
        } else if self.ctx.human_edition {
            // A word a translator left in a sentence they translated is kept on purpose (an
            // API name, a term of the trade: all 7 such errors read on the development half
            // of the published editions were): the editor's choice, not a lapse. A sentence
            // left whole is still an error of its own.
            (
                Severity::Warning,
                format!(
                    "; the translator kept it: if that is the book's term, add it to the glossary with the target \"{word}\", otherwise translate it"
                ),
            )
        } else {
            (
                Severity::Error,
                format!(
                    "; translate it, or add it to the glossary with the target \"{word}\" if the book keeps it in {from}"
                ),
            )
        }
    }

    /// The findings ([`CHECK`]'s, with the share warning when no block or sentence was
    /// reported, then [`WORD_CHECK`]'s) and the share.
    fn finish(mut self) -> (Vec<Finding>, Option<f64>) {
        let letters = self.letters;
        let from = &self.ctx.source_lang.name;
        let share =
            (letters >= MIN_SHARE_LETTERS).then(|| self.source_letters as f64 / letters as f64);
        if let Some(share) = share.filter(|s| self.out.is_empty() && *s > SHARE_WARNING) {
            self.out.push(Finding::new(
                CHECK,
                Severity::Warning,
                format!(
                    "{:.0}% of the {letters} letters of the translation's prose are in {from} (a translation stays under {:.0}%); translate the prose left in {from} into {}",
                    share * 100.0,
                    SHARE_WARNING * 100.0,
                    self.ctx.target_lang.name
                ),
                self.source.trim(),
                self.target.trim(),
            ));
        }
        self.out.extend(self.words_out);
        (self.out, share)
    }
}

/// Whether every non-blank line of `source` belongs to a footnote definition or is a link
/// reference definition (a bibliography unit).
fn only_definitions(source: &str) -> bool {
    let mut any = false;
    for line in source.lines() {
        if line.trim().is_empty() {
            continue;
        }
        let starts_def = line.starts_with("[^") && line.contains("]:");
        let is_ref_def = line.trim_start().starts_with('[') && line.contains("]: ");
        // Continuation lines of a footnote definition are indented.
        let continuation = any && line.starts_with("    ");
        if !(starts_def || is_ref_def || continuation) {
            return false;
        }
        any = true;
    }
    any
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::Lang;
    use crate::termbase::{Entry, Origin, Termbase};

    fn ctx(src: &str, tgt: &str) -> QaContext {
        QaContext::new(&Lang::parse(src), &Lang::parse(tgt), &Termbase::default())
    }

    fn run(c: &QaContext, s: &str, t: &str) -> Vec<Finding> {
        check(c, &Doc::parse(s), &Doc::parse(t), s, t)
    }

    /// The messages of the `untranslated_word` findings.
    fn word_messages(c: &QaContext, s: &str, t: &str) -> Vec<String> {
        run(c, s, t)
            .into_iter()
            .filter(|f| f.check == WORD_CHECK)
            .map(|f| f.message)
            .collect()
    }

    #[test]
    fn mdx_import_lines_are_code_and_an_english_paragraph_beside_them_is_still_found() {
        let src = "import Tabs from '@theme/Tabs'\nimport TabItem from '@theme/TabItem'\n\nThe generic component takes a type parameter and renders every item it is given in turn.\n\nEach item is rendered once, in the order of the list that the caller passes in.\n";
        let kept = "import Tabs from '@theme/Tabs'\nimport TabItem from '@theme/TabItem'\n\n泛型组件接受一个类型参数，并依次渲染传给它的每一项。\n\n每一项按调用者传入的列表顺序渲染一次。\n";
        assert_eq!(run(&ctx("en", "zh"), src, kept), vec![]);
        let left = "import Tabs from '@theme/Tabs'\nimport TabItem from '@theme/TabItem'\n\nThe generic component takes a type parameter and renders every item it is given in turn.\n\n每一项按调用者传入的列表顺序渲染一次。\n";
        let f = run(&ctx("en", "zh"), src, left);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert!(
            f[0].message.contains("The generic component"),
            "{}",
            f[0].message
        );
        assert!(crate::book::mdx::reads_as_esm(
            "export const meta = { title: 'x' }"
        ));
        assert!(!crate::book::mdx::reads_as_esm(
            "import the data from a file first."
        ));
    }

    #[test]
    fn a_word_a_translator_kept_is_a_warning_and_a_sentence_left_an_error() {
        let mut c = ctx("en", "zh");
        let src = "The linter reads every file. It reports each problem with its line.\n";
        let tgt = "linter 会读取每个文件。它会报告每个问题及其行号。\n";
        let errors = |c: &QaContext, t: &str| {
            run(c, src, t)
                .into_iter()
                .filter(|f| f.severity == Severity::Error)
                .count()
        };
        assert_eq!(errors(&c, tgt), 1);
        c.human_edition = true;
        assert_eq!(errors(&c, tgt), 0);
        assert_eq!(word_messages(&c, src, tgt).len(), 1);
        let left = "linter 会读取每个文件。It reports each problem with its line.\n";
        assert!(errors(&c, left) >= 1);
    }

    /// Measured on the human zh edition: a library the source names `NumPy` is written
    /// `numpy` in a Chinese sentence (a name, any casing), and a term followed by its rendering
    /// in parentheses is glossed; a plain stray word beside them is still found.
    #[test]
    fn lower_cased_names_and_terms_glossed_after_are_not_stray_words() {
        let c = ctx("en", "zh");
        let src = "We install NumPy and use mode-seeking sampling, which is fundamentally simple.";
        let tgt = "我们安装 numpy，并使用 mode-seeking（寻峰）采样，这 fundamentally 很简单。";
        let words = word_messages(&c, src, tgt);
        assert_eq!(words.len(), 1, "{words:?}");
        assert!(words[0].starts_with("\"fundamentally\""), "{words:?}");
        // A glossary line's notation glosses too; a `=` before more English does not.
        let src = "This book renders reasoning as one word and inference as another.";
        let tgt = "本书采用 reasoning=思考、inference=推理这一约定，而 thinking= 不是。";
        let words = word_messages(&c, src, tgt);
        assert_eq!(words.len(), 1, "{words:?}");
        assert!(words[0].starts_with("\"thinking\""), "{words:?}");
        // Title casing of a hyphenated phrase is no name: `Token-Level` leaves `token-level`.
        let src = "## Token-Level Rewards\n\nRewards are given per token.";
        let tgt = "## token-level 奖励\n\n奖励按 token-level 给出。";
        assert!(
            run(&c, src, tgt).iter().any(|f| f.check == WORD_CHECK),
            "token-level is a stray word"
        );
    }

    /// A name with a Korean particle written straight after it (`Rust로`, `C++에서`) is the
    /// name, as `Rust 로` is; a stray English word keeps being one with its particle.
    #[test]
    fn a_name_with_a_korean_particle_attached_is_the_name() {
        let c = ctx("en", "ko");
        let src = "Programs written in Rust are fast, and then React renders them.";
        let tgt = "Rust로 작성한 빠른 프로그램을, React는 렌더링합니다.";
        assert_eq!(word_messages(&c, src, tgt), Vec::<String>::new());
        let tgt = "Rust로 작성한 fast 프로그램을, React는 렌더링합니다.";
        let words = word_messages(&c, src, tgt);
        assert_eq!(words.len(), 1, "{words:?}");
        assert!(words[0].starts_with("\"fast\""), "{words:?}");
        let tgt = "Rust로 작성한 fast를, React는 렌더링합니다.";
        let words = word_messages(&c, src, tgt);
        assert_eq!(words.len(), 1, "{words:?}");
        assert!(words[0].starts_with("\"fast\""), "{words:?}");
    }

    /// `React-компонент`: a name joined by a hyphen to a word of the target's script is the
    /// name.
    #[test]
    fn a_name_hyphenated_to_a_cyrillic_word_is_the_name() {
        let c = ctx("en", "uk");
        let src = "Every component in React returns markup, and React renders it.";
        let tgt = "Кожен React-компонент повертає розмітку, яку React рендерить.";
        assert_eq!(word_messages(&c, src, tgt), Vec::<String>::new());
    }

    #[test]
    fn a_sentence_initial_english_word_glued_to_chinese_was_taken_for_a_name() {
        // The real 1.5B model's answer on the sample book: "Unlike chatbots" half translated.
        // `Unlike` starts the source's only sentence, so it had passed as a name.
        let c = ctx("en", "zh");
        let words = word_messages(
            &c,
            "Unlike chatbots, agents act on the world.",
            "Unlike聊天机器人，智能体会作用于世界。",
        );
        assert_eq!(words.len(), 1, "{words:?}");
        assert!(words[0].starts_with("\"Unlike\" is English"), "{words:?}");
        assert!(words[0].contains("only at a sentence start"), "{words:?}");
        // A warning: a name the dictionary also lists reads the same (`Anthropic的`).
        let f = run(
            &c,
            "Anthropic trains models. The team publishes papers.",
            "Anthropic的团队训练模型。该团队发表论文。",
        );
        let words = of(&f, WORD_CHECK);
        assert_eq!(words.len(), 1, "{f:#?}");
        assert_eq!(words[0].severity, Severity::Warning);
        // Set apart from the Chinese, such a word is a name.
        let words = word_messages(
            &c,
            "Anthropic trains models. The team publishes papers.",
            "Anthropic 训练模型。该团队发表论文。",
        );
        assert!(words.is_empty(), "{words:?}");
    }

    #[test]
    fn identifiers_no_dictionary_lists_were_reported_as_stray_words() {
        // The human zh edition keeps library, program and kernel names as the source writes
        // them; an English word beside them is still reported.
        let c = ctx("en", "zh");
        let src = "Install scipy and matplotlib, add a printk call, then rebuild.";
        let tgt = "安装 scipy 和 matplotlib，加一个 printk 调用，然后 rebuild。";
        let words = word_messages(&c, src, tgt);
        assert_eq!(words.len(), 1, "{words:?}");
        assert!(words[0].starts_with("\"rebuild\""), "{words:?}");
        // Two-letter words stay judged (no dictionary lists `vs`, a translator writes 对比).
        let words = word_messages(
            &c,
            "Speed vs cost matters here.",
            "速度 vs 成本在这里很重要。",
        );
        assert_eq!(words.len(), 1, "{words:?}");
    }

    #[test]
    fn a_word_the_units_code_block_uses_was_reported_as_a_stray_word() {
        let c = ctx("en", "zh");
        let src = "The agent is one while loop around the model.\n\n```python\nwhile True:\n    step()\n```\n";
        let tgt = "智能体就是围绕模型的一个 while 循环，它会 iterate。\n\n```python\nwhile True:\n    step()\n```\n";
        let words = word_messages(&c, src, tgt);
        assert_eq!(words.len(), 1, "{words:?}");
        assert!(words[0].starts_with("\"iterate\""), "{words:?}");
    }

    #[test]
    fn a_title_case_phrase_glossed_after_its_last_word_was_reported() {
        let c = ctx("en", "zh");
        let src = "Useful tricks:\n\n- **Overlong Reward Shaping (penalising verbose answers)**: apply a soft penalty to answers that run long.\n";
        let tgt = "有用的技巧：\n\n- **Overlong Reward Shaping（惩罚冗长回答）**：对超长的回答施加软惩罚。\n";
        let words = word_messages(&c, src, tgt);
        assert!(words.is_empty(), "{words:?}");
    }

    /// A word the source's code uses as an identifier (a chat role's string value, a shell
    /// block's program) is not a stray word when it stands alone; inside a longer run it is
    /// part of the term (`tool result`).
    #[test]
    fn identifiers_of_the_source_code_standing_alone_are_not_stray_words() {
        let c = ctx("en", "zh");
        let src = "Send the user message, then the tool result.\n\n```json\n{\"role\": \"user\", \"content\": \"hi\"}\n```\n\n```bash\n$ grep -r key .\n```\n";
        let tgt = "发送 user 消息，再发送 tool result，用 grep 查找。\n\n```json\n{\"role\": \"user\", \"content\": \"hi\"}\n```\n\n```bash\n$ grep -r key .\n```\n";
        let words = word_messages(&c, src, tgt);
        assert_eq!(words.len(), 1, "{words:?}");
        assert!(words[0].starts_with("\"tool result\""), "{words:?}");
    }

    /// In a rehearsal into a target of the source's script, a pseudo-translated block counts
    /// as translated, and a block the pseudo provider left as it was is still found.
    #[test]
    fn a_rehearsal_pseudo_text_counts_as_translated_and_a_plain_block_does_not() {
        let mut c = ctx("de", "en");
        c.pseudo_targets = true;
        let src = "Ein Agent ist ein Programm, das mit einem Sprachmodell plant und Werkzeuge aufruft.\n\nDas Gedächtnis speichert Fakten über viele Sitzungen hinweg.\n";
        let pseudo = crate::llm::pseudo::pseudo_translate(src, &Lang::parse("en"), &[]);
        assert!(pseudo.starts_with("Éíñ Ågéñt íst"), "{pseudo}");
        let errors_in = |c: &QaContext, t: &str| -> Vec<String> {
            run(c, src, t)
                .into_iter()
                .filter(|f| f.severity == Severity::Error)
                .map(|f| f.message)
                .collect()
        };
        assert_eq!(errors_in(&c, &pseudo), Vec::<String>::new());
        let half = format!(
            "{}\n\nDas Gedächtnis speichert Fakten über viele Sitzungen hinweg.\n",
            pseudo.split("\n\n").next().unwrap()
        );
        let left = errors_in(&c, &half);
        assert_eq!(left.len(), 1, "{left:?}");
        assert!(left[0].contains("still in German"), "{left:?}");
        // Outside a rehearsal the same pseudo text is German with accents, and is found.
        c.pseudo_targets = false;
        assert!(!errors_in(&c, &pseudo).is_empty());
    }

    fn of<'a>(f: &'a [Finding], check: &str) -> Vec<&'a Finding> {
        f.iter().filter(|f| f.check == check).collect()
    }

    /// The chars of `t` at a finding's span.
    fn at(t: &str, f: &Finding) -> String {
        let (s, e) = f.span.unwrap();
        t.chars().skip(s).take(e - s).collect()
    }

    const EN: &str = "The context window limits how much the Agent can remember in one call. Long tasks therefore need memory, which the next chapter describes in detail.\n";

    /// Six English paragraphs, and the first three in six Latin-script languages.
    const CHAPTER: [&str; 6] = [
        "An agent is a program that uses a language model to decide which action to take next. It observes the result of each action and plans the following step.",
        "The context window limits how much text the model can read in one call. Long tasks therefore need a memory that keeps the important facts.",
        "Tools let the agent act on the world, for example by searching the web or running code. Each tool has a name, a description and a list of parameters.",
        "A good tool description tells the model when to use the tool and when not to use it. Without such guidance, the model often calls the wrong tool.",
        "Errors are part of every long task, and the agent must be able to recover from them. It should read the error message, change its plan and try again.",
        "Finally, every agent needs a way to decide that the task is finished. A clear stopping rule saves time and money.",
    ];
    const FIRST_THREE: [(&str, [&str; 3]); 6] = [
        (
            "de",
            [
                "Ein Agent ist ein Programm, das ein Sprachmodell verwendet, um zu entscheiden, welche Aktion als Nächstes ausgeführt wird. Er beobachtet das Ergebnis jeder Aktion und plant den folgenden Schritt.",
                "Das Kontextfenster begrenzt, wie viel Text das Modell in einem Aufruf lesen kann. Lange Aufgaben brauchen deshalb ein Gedächtnis, das die wichtigen Fakten bewahrt.",
                "Werkzeuge erlauben dem Agenten, in der Welt zu handeln, zum Beispiel indem er im Web sucht oder Code ausführt. Jedes Werkzeug hat einen Namen, eine Beschreibung und eine Liste von Parametern.",
            ],
        ),
        (
            "fr",
            [
                "Un agent est un programme qui utilise un modèle de langage pour décider quelle action entreprendre ensuite. Il observe le résultat de chaque action et planifie l'étape suivante.",
                "La fenêtre de contexte limite la quantité de texte que le modèle peut lire en un seul appel. Les tâches longues ont donc besoin d'une mémoire qui conserve les faits importants.",
                "Les outils permettent à l'agent d'agir sur le monde, par exemple en cherchant sur le Web ou en exécutant du code. Chaque outil a un nom, une description et une liste de paramètres.",
            ],
        ),
        (
            "es",
            [
                "Un agente es un programa que usa un modelo de lenguaje para decidir qué acción tomar a continuación. Observa el resultado de cada acción y planifica el paso siguiente.",
                "La ventana de contexto limita cuánto texto puede leer el modelo en una sola llamada. Por eso las tareas largas necesitan una memoria que conserve los datos importantes.",
                "Las herramientas permiten al agente actuar sobre el mundo, por ejemplo buscando en la web o ejecutando código. Cada herramienta tiene un nombre, una descripción y una lista de parámetros.",
            ],
        ),
        (
            "it",
            [
                "Un agente è un programma che usa un modello linguistico per decidere quale azione compiere dopo. Osserva il risultato di ogni azione e pianifica il passo successivo.",
                "La finestra di contesto limita quanto testo il modello può leggere in una sola chiamata. Per questo i compiti lunghi hanno bisogno di una memoria che conservi i fatti importanti.",
                "Gli strumenti permettono all'agente di agire sul mondo, per esempio cercando sul web o eseguendo codice. Ogni strumento ha un nome, una descrizione e un elenco di parametri.",
            ],
        ),
        (
            "pt",
            [
                "Um agente é um programa que usa um modelo de linguagem para decidir qual ação tomar em seguida. Ele observa o resultado de cada ação e planeja o passo seguinte.",
                "A janela de contexto limita quanto texto o modelo consegue ler em uma única chamada. Por isso, tarefas longas precisam de uma memória que guarde os fatos importantes.",
                "As ferramentas permitem que o agente aja sobre o mundo, por exemplo pesquisando na web ou executando código. Cada ferramenta tem um nome, uma descrição e uma lista de parâmetros.",
            ],
        ),
        (
            "nl",
            [
                "Een agent is een programma dat een taalmodel gebruikt om te beslissen welke actie het hierna uitvoert. Het bekijkt het resultaat van elke actie en plant de volgende stap.",
                "Het contextvenster beperkt hoeveel tekst het model in één aanroep kan lezen. Lange taken hebben daarom een geheugen nodig dat de belangrijke feiten bewaart.",
                "Met gereedschappen kan de agent in de wereld handelen, bijvoorbeeld door op het web te zoeken of code uit te voeren. Elk gereedschap heeft een naam, een beschrijving en een lijst met parameters.",
            ],
        ),
    ];

    #[test]
    fn faithful_chinese_passes() {
        let zh = "上下文窗口限制了 Agent 在一次调用中能记住多少内容。因此，长任务需要记忆，下一章将详细介绍。\n";
        assert_eq!(run(&ctx("en", "zh"), EN, zh), vec![]);
    }

    #[test]
    fn echo_is_an_error_even_with_other_whitespace() {
        let echoed = format!("  {}\n\n", EN.replace(". ", ".\n"));
        let f = run(&ctx("en", "zh"), EN, &echoed);
        assert_eq!(f.len(), 1);
        assert_eq!(
            (f[0].check.as_str(), f[0].severity),
            (CHECK, Severity::Error)
        );
        assert_eq!(
            f[0].message,
            "the translation is identical to the source; translate the prose into Simplified Chinese"
        );
        assert!(f[0].source_excerpt.starts_with("The context window"));
    }

    #[test]
    fn a_sentence_left_in_english_is_an_error_with_its_span() {
        let half = "The context window limits how much the Agent can remember in one call. 因此长任务 need memory, which the next chapter describes.\n";
        let f = run(&ctx("en", "zh"), EN, half);
        let errors = of(&f, CHECK);
        assert_eq!(errors.len(), 1, "{f:#?}");
        assert_eq!(errors[0].severity, Severity::Error);
        assert!(
            errors[0].message.starts_with(
                "a sentence of paragraph 1 is still in English: \"The context window limits"
            ),
            "{}",
            errors[0].message
        );
        assert_eq!(
            at(half, errors[0]),
            "The context window limits how much the Agent can remember in one call."
        );
        // The translated sentence keeps English words: each run is a stray word.
        let words: Vec<String> = of(&f, WORD_CHECK).iter().map(|w| at(half, w)).collect();
        assert_eq!(
            words,
            ["need memory", "which the next chapter describes"],
            "{f:#?}"
        );
    }

    #[test]
    fn citations_names_and_quotations_are_not_judged() {
        let cite_src = "[^agoric]: The idea is not new: Miller, M. S., Drexler, K. E. *Markets and Computation: Agoric Open Systems.* In Huberman, B. A. (ed.), *The Ecology of Computation*, North-Holland, 1988.\n";
        let citation = "[^agoric]: 这个构想并不新：Miller, M. S., Drexler, K. E. *Markets and Computation: Agoric Open Systems.* In Huberman, B. A. (ed.), *The Ecology of Computation*, North-Holland, 1988.\n";
        let f = run(&ctx("en", "zh"), cite_src, citation);
        assert!(of(&f, CHECK).is_empty(), "{f:#?}");
        // Name-heavy but translated, a quotation and a gloss in parentheses.
        let names_src = "The Agent calls tools through the OpenAI API, the Anthropic API and LangChain, asks \"Help me analyze last quarter's sales data\", and writes the results into its context window.\n";
        let names = "Agent 通过 OpenAI API、Anthropic API 和 LangChain 调用工具，询问“Help me analyze last quarter's sales data”，并把结果写入上下文窗口（context window）。\n";
        assert_eq!(run(&ctx("en", "zh"), names_src, names), vec![]);
    }

    #[test]
    fn short_or_code_only_sources_are_skipped() {
        let code = "```python\nprint('the same in every language')\n```\n";
        assert_eq!(run(&ctx("en", "zh"), code, code), vec![]);
        assert_eq!(run(&ctx("en", "zh"), "## Tools\n", "## Tools\n"), vec![]);
        assert_eq!(run(&ctx("en", "en-GB"), EN, EN), vec![]);
    }

    #[test]
    fn the_last_three_paragraphs_left_in_english_are_three_errors_in_every_latin_target() {
        let source = CHAPTER.join("\n\n") + "\n";
        for (lang, first) in FIRST_THREE {
            let c = ctx("en", lang);
            let faithful_src = CHAPTER[..3].join("\n\n") + "\n";
            let faithful = first.join("\n\n") + "\n";
            assert_eq!(run(&c, &faithful_src, &faithful), vec![], "{lang}");
            let target = format!("{}\n\n{}\n", first.join("\n\n"), CHAPTER[3..].join("\n\n"));
            let f = run(&c, &source, &target);
            assert_eq!(f.len(), 3, "{lang}: {f:#?}");
            for (i, f) in f.iter().enumerate() {
                assert_eq!(
                    (f.check.as_str(), f.severity),
                    (CHECK, Severity::Error),
                    "{lang}"
                );
                assert!(
                    f.message
                        .starts_with(&format!("paragraph {} is still in English", i + 4)),
                    "{lang}: {}",
                    f.message
                );
                assert_eq!(at(&target, f), CHAPTER[i + 3], "{lang}");
            }
        }
    }

    #[test]
    fn an_english_paragraph_after_a_code_fence_in_a_chinese_chapter_is_an_error() {
        let fence = "```python\nresult = agent.run(task)\n```";
        let source = format!(
            "{}\n\n{}\n\n{fence}\n\n{}\n",
            CHAPTER[0], CHAPTER[1], CHAPTER[2]
        );
        let target = format!(
            "智能体是一种使用语言模型来决定下一步采取什么行动的程序。它观察每个行动的结果，并规划下一步。\n\n上下文窗口限制了模型在一次调用中能读取多少文本。因此，长任务需要一种记忆来保存重要的事实。\n\n{fence}\n\n{}\n",
            CHAPTER[2]
        );
        let f = run(&ctx("en", "zh"), &source, &target);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(
            (f[0].check.as_str(), f[0].severity),
            (CHECK, Severity::Error)
        );
        assert!(
            f[0].message.starts_with("paragraph 3 is still in English"),
            "{}",
            f[0].message
        );
        assert_eq!(at(&target, &f[0]), CHAPTER[2]);
    }

    #[test]
    fn headings_items_cells_and_captions_left_in_english_are_errors() {
        let source = "## Planning the next action\n\n- The agent reads the result of every tool call.\n\n| Step | What happens |\n|---|---|\n| Observe | The agent reads the result of the last action |\n\n![The loop of an agent that plans and acts](loop.svg)\n";
        let target = "## Planning the next action\n\n- 智能体读取每次工具调用的结果。\n\n| 步骤 | 发生什么 |\n|---|---|\n| 观察 | The agent reads the result of the last action |\n\n![The loop of an agent that plans and acts](loop.svg)\n";
        let f = run(&ctx("en", "zh"), source, target);
        let kinds: Vec<&str> = f
            .iter()
            .map(|f| f.message.split(" is still").next().unwrap())
            .collect();
        assert_eq!(
            kinds,
            ["heading 1", "table cell 4", "image caption 1"],
            "{f:#?}"
        );
    }

    #[test]
    fn stray_english_words_in_a_chinese_sentence_are_errors_with_their_span() {
        let c = ctx("en", "zh");
        let src = "Unlike chatbots, agents act on the world. The sample book aims to rehearse translation activities.\n";
        let tgt = "unlike聊天机器人，智能体会对世界采取行动。示例书旨在 rehearse翻译活动。\n";
        let f = run(&c, src, tgt);
        let words = of(&f, WORD_CHECK);
        assert_eq!(words.len(), 2, "{f:#?}");
        assert_eq!(at(tgt, words[0]), "unlike");
        assert_eq!(at(tgt, words[1]), "rehearse");
        assert!(words.iter().all(|w| w.severity == Severity::Error));
        assert!(
            words[0]
                .message
                .starts_with("\"unlike\" is English left in a Simplified Chinese sentence of paragraph 1; translate it"),
            "{}",
            words[0].message
        );
        assert!(of(&f, CHECK).is_empty(), "{f:#?}");
        // The whole unit check does not also ask for a space at the same place.
        let all = crate::qa::check_unit(&c, "u", "ch", src, tgt);
        assert!(
            all.iter()
                .all(|f| f.check != crate::qa::unit::style::CJK_LATIN_SPACE),
            "{all:#?}"
        );
        assert_eq!(
            all.iter().filter(|f| f.check == WORD_CHECK).count(),
            2,
            "{all:#?}"
        );
    }

    #[test]
    fn a_short_word_inside_a_title_case_name_was_reported_as_a_stray_word() {
        let src =
            "User as Code moves memory into code, and World of Bits turned the web into a gym.\n";
        let tgt = "User as Code 把记忆移进代码，World of Bits 把网页变成了训练场。\n";
        assert_eq!(
            of(&run(&ctx("en", "zh"), src, tgt), WORD_CHECK),
            Vec::<&Finding>::new()
        );
        // The same short word left in a sentence beside no name is still a stray word.
        let tgt = "用户 as 代码把记忆移进代码。\n";
        let f = run(&ctx("en", "zh"), src, tgt);
        let words = of(&f, WORD_CHECK);
        assert_eq!(words.len(), 1, "{f:#?}");
        assert_eq!(at(tgt, words[0]), "as");
    }

    #[test]
    fn a_source_name_written_with_another_casing_was_reported_as_a_stray_word() {
        let src = "Microsoft's MarkItDown converts documents to Markdown.\n";
        let tgt = "微软的 Markitdown 可以把文档转换为 Markdown 格式。\n";
        assert_eq!(
            of(&run(&ctx("en", "zh"), src, tgt), WORD_CHECK),
            Vec::<&Finding>::new()
        );
        // A plain word with a capital is not made a name by this.
        let tgt = "微软的 MarkItDown 可以把文档 Converts 为 Markdown 格式。\n";
        let f = run(&ctx("en", "zh"), src, tgt);
        assert_eq!(
            of(&f, WORD_CHECK)
                .iter()
                .map(|f| at(tgt, f))
                .collect::<Vec<_>>(),
            ["Converts"]
        );
    }

    #[test]
    fn a_glossary_target_with_punctuation_at_a_word_edge_was_reported_as_a_stray_word() {
        let tb = Termbase::from_entries([Entry {
            source: "Agent".into(),
            target: "=cmd|' /C calc'!A0".into(),
            note: String::new(),
            origin: Origin::HouseStyle,
            forbidden: vec![],
            variants: vec![],
        }]);
        let c = QaContext::new(&Lang::parse("en"), &Lang::parse("zh"), &tb);
        // The rehearsal's pseudo translation of the hostile-input test's chapter.
        let (src, tgt) = (
            "# Agents\n\nAn Agent uses a tool.\n",
            "# =cmd|' /C calc'!A0\n\n伪=cmd|' /C calc'!A0 样演样工具。\n",
        );
        assert_eq!(run(&c, src, tgt), vec![]);
    }

    #[test]
    fn glossary_terms_identifiers_acronyms_and_the_sources_names_are_not_stray_words() {
        let tb = Termbase::from_entries([Entry {
            source: "token".into(),
            target: "token".into(),
            note: String::new(),
            origin: Origin::HouseStyle,
            forbidden: vec![],
            variants: vec![],
        }]);
        let c = QaContext::new(&Lang::parse("en"), &Lang::parse("zh"), &tb);
        let src = "Claude Code counts every token, calls search_web and the LLM through its API, and uses Poka-yoke.\n";
        let tgt =
            "Claude Code 统计每个 tokens，调用 search_web 和 LLM 的 API，并使用 Poka-yoke。\n";
        assert_eq!(run(&c, src, tgt), vec![]);
        // The same word without the glossary entry is a stray word.
        let f = run(&ctx("en", "zh"), src, tgt);
        assert_eq!(
            of(&f, WORD_CHECK)
                .iter()
                .map(|f| at(tgt, f))
                .collect::<Vec<_>>(),
            ["tokens"]
        );
    }

    /// A term kept with a Japanese particle attached (`futureの値`) is tallied as the term.
    #[test]
    fn a_term_kept_with_a_particle_attached_is_tallied_as_kept() {
        let c = ctx("en", "ja");
        let pairs: Vec<(String, String)> = (0..12)
            .map(|i| {
                (
                    format!("The returned future {i} is polled by the executor."),
                    format!("返されたfutureの値 {i} はエグゼキュータがポーリングします。"),
                )
            })
            .collect();
        let k = KeptWords::tally(&c, pairs.iter().map(|(s, t)| (s.as_str(), t.as_str())));
        assert_eq!((k.blocks("future"), k.source_blocks("future")), (12, 12));
        assert!(k.is_convention("future"));
    }

    /// An edition that keeps a term in ten blocks has chosen to, even where it translates it
    /// in more: a warning, not a slip.
    #[test]
    fn a_term_kept_in_ten_blocks_is_the_translations_choice() {
        let kept_in = |n: usize, translated: usize| {
            let c = ctx("en", "zh");
            let pairs: Vec<(String, String)> = (0..n)
                .map(|i| {
                    (
                        format!("The state {i} changes."),
                        format!("state {i} 会变化。"),
                    )
                })
                .chain((0..translated).map(|i| {
                    (
                        format!("The state {i} stays."),
                        format!("状态 {i} 保持不变。"),
                    )
                }))
                .collect();
            KeptWords::tally(&c, pairs.iter().map(|(s, t)| (s.as_str(), t.as_str())))
        };
        let ten = kept_in(KEPT_ALWAYS, 30);
        assert_eq!((ten.blocks("state"), ten.source_blocks("state")), (10, 40));
        assert!(ten.is_convention("state"));
        let nine = kept_in(KEPT_ALWAYS - 1, 30);
        assert!(!nine.is_convention("state"));
    }

    #[test]
    fn a_word_the_whole_translation_keeps_is_a_warning() {
        let mut c = ctx("en", "zh");
        let units = [
            ("Each token costs money.", "每个 token 都要花钱。"),
            ("The token count grows.", "token 数量不断增长。"),
            ("Count the token budget.", "计算 token 预算。"),
            ("A token is a word piece.", "一个 token 是一个词片。"),
        ];
        // `never` is kept in three blocks, and translated in four more that use it: a slip.
        let never = [
            ("It never stops.", "它 never 停止。"),
            ("Caches never shrink.", "缓存 never 缩小。"),
            ("Never guess.", "never 猜测。"),
            ("It never waits.", "它从不等待。"),
            ("Logs never lie.", "日志从不说谎。"),
            ("Never retry blindly.", "永远不要盲目重试。"),
            ("It never fails.", "它从不失败。"),
        ];
        let kept = KeptWords::tally(&c, units.into_iter().chain(never));
        assert_eq!((kept.blocks("token"), kept.blocks("Token")), (4, 4));
        assert!(kept.is_convention("token"));
        assert_eq!((kept.blocks("never"), kept.source_blocks("never")), (3, 7));
        assert!(!kept.is_convention("never"));
        c.kept_words = Some(std::sync::Arc::new(kept));
        let src = "A long answer uses many tokens, and every token costs money.\n";
        let tgt = "长回答会用掉很多 token，每个 token 都要花钱，这一点 never 变。\n";
        let f = run(&c, src, tgt);
        let words = of(&f, WORD_CHECK);
        assert_eq!(
            words
                .iter()
                .map(|f| (at(tgt, f), f.severity))
                .collect::<Vec<_>>(),
            [
                ("token".to_string(), Severity::Warning),
                ("token".to_string(), Severity::Warning),
                ("never".to_string(), Severity::Error)
            ]
        );
        assert!(
            words[0].message.contains("keeps it in 4 blocks"),
            "{}",
            words[0].message
        );
    }

    #[test]
    fn stray_words_in_a_bold_list_item_are_found() {
        let src = "1. **The prefix never changes**: it stays cached.\n2. **This is a conscious trade-off**: without compression the task fails outright.\n";
        let tgt = "1. **前缀始终不被修改**：它一直被缓存。\n2. **这是一个 conscious的权衡**：不压缩会导致上下文超出窗口限制，任务 outright失败。\n";
        let f = run(&ctx("en", "zh"), src, tgt);
        let words: Vec<String> = of(&f, WORD_CHECK).iter().map(|w| at(tgt, w)).collect();
        assert_eq!(words, ["conscious", "outright"], "{f:#?}");
    }

    #[test]
    fn a_share_of_short_english_fragments_is_a_warning() {
        let src = "Plan. Act. Observe. Repeat until the task is done, then report the result to the user.\n";
        let de = "Plan it. Act now. Observe it. Wiederhole, bis die Aufgabe erledigt ist, und berichte dann dem Nutzer das Ergebnis.\n";
        let f = run(&ctx("en", "de"), src, de);
        assert!(f.iter().all(|f| f.severity == Severity::Warning), "{f:#?}");
    }

    #[test]
    fn bibliography_echo_is_only_a_warning() {
        let refs = "[^ch1-1]: Sutton, Rich. \"The Bitter Lesson\", 2019. http://www.incompleteideas.net/IncIdeas/BitterLesson.html\n";
        let f = run(&ctx("en", "zh"), refs, refs);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Warning);
    }

    #[test]
    fn bibliography_lines_were_counted_by_untranslated() {
        // A section of Chinese prose followed by English bibliography footnote definitions
        // (authors, quoted titles, venues, years), as in the reference corpus: the citations
        // are left out, and the prose is translated.
        let src = "Preference optimisation trains a model on pairs of answers.[^a] Reward models can be over-optimised.[^b] Process supervision checks each step.[^c]\n\n[^a]: Rafailov, Rafael et al., “Direct Preference Optimization: Your Language Model is Secretly a Reward Model”, 2023.\n[^b]: Gao, Leo, John Schulman, and Jacob Hilton, “Scaling Laws for Reward Model Overoptimization”, OpenAI, 2023.\n[^c]: Lightman, Hunter et al., “Let's Verify Step by Step”, OpenAI, 2023.\n[^d]: Silver, David and Richard S. Sutton, “Welcome to the Era of Experience”, 2025.\n[^e]: Li, Bojie. *Models Take Notes at Prefill: KV Cache Can Be Editable and Composable.* arXiv:2606.17107, 2026.\n";
        let tgt = "偏好优化用成对的回答训练模型。[^a] 奖励模型可能被过度优化。[^b] 过程监督检查每一步。[^c]\n\n[^a]: Rafailov, Rafael et al., “Direct Preference Optimization: Your Language Model is Secretly a Reward Model”, 2023.\n[^b]: Gao, Leo, John Schulman, and Jacob Hilton, “Scaling Laws for Reward Model Overoptimization”, OpenAI, 2023.\n[^c]: Lightman, Hunter et al., “Let's Verify Step by Step”, OpenAI, 2023.\n[^d]: Silver, David and Richard S. Sutton, “Welcome to the Era of Experience”, 2025.\n[^e]: Li, Bojie. *Models Take Notes at Prefill: KV Cache Can Be Editable and Composable.* arXiv:2606.17107, 2026.\n";
        assert_eq!(run(&ctx("en", "zh"), src, tgt), vec![]);
    }

    #[test]
    fn a_paragraph_of_emoji_shortcodes_is_not_text_left_untranslated() {
        assert!(text_blocks(":smile: :heart: :thumbsup:\n").is_empty());
        let b = text_blocks("Click :material-bug: to report.\n");
        assert_eq!(
            b[0].text.split_whitespace().collect::<Vec<_>>(),
            ["Click", "to", "report."]
        );
    }

    #[test]
    fn text_blocks_map_back_to_the_text() {
        let t = "\u{feff}# Title\n\nSee `code` and **bold** [a link](http://x.io) &amp; more.\n\n- item *one*\n- item two\n\n> quoted text\n\n[^n]: A note.\n";
        let blocks = text_blocks(t);
        let kinds: Vec<_> = blocks.iter().map(|b| (b.kind, b.text.as_str())).collect();
        assert_eq!(
            kinds,
            [
                (BlockKind::Heading, "Title"),
                (BlockKind::Paragraph, "See   and bold a link & more."),
                (BlockKind::ListItem, "item one"),
                (BlockKind::ListItem, "item two"),
                (BlockKind::Paragraph, "quoted text"),
                (BlockKind::Footnote, "A note."),
            ]
        );
        let b = &blocks[1];
        let at = b.to_text(b.text.find("bold").unwrap());
        assert!(t[at..].starts_with("bold"));
    }
}
