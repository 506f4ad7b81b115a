//! `tables` (error): the translation keeps every GFM table with the same shape (prompt rule 2):
//! the same number of tables and, table by table, the same number of rows (header included)
//! and columns (from the delimiter row). A merged, split or dropped row, or a lost column,
//! changes what the table says; a table turned into a list loses the table.
//!
//! No thresholds: a shape is either kept or not. Cell text is translated, so it is not compared.

use crate::qa::view::doc::Doc;
use crate::qa::{Finding, QaContext, Severity};

const CHECK: &str = "tables";

/// Runs the check (see the module docs).
pub fn check(_ctx: &QaContext, src: &Doc, tgt: &Doc, source: &str, target: &str) -> Vec<Finding> {
    let (s, t) = (&src.tables, &tgt.tables);
    let (st, tt) = (table_texts(source, s.len()), table_texts(target, t.len()));
    let text = |texts: &[String], i: usize| texts.get(i).cloned().unwrap_or_default();
    let mut out = Vec::new();
    if s.len() != t.len() {
        out.push(Finding::new(
            CHECK,
            Severity::Error,
            format!(
                "the source has {} tables but the translation {}; keep every table as a Markdown table and add none",
                s.len(),
                t.len()
            ),
            &st.join("\n"),
            &tt.join("\n"),
        ));
        return out;
    }
    for (i, (a, b)) in s.iter().zip(t).enumerate() {
        if (a.rows, a.cols) == (b.rows, b.cols) && a.max_row_cells != b.max_row_cells {
            out.push(Finding::new(
                CHECK,
                Severity::Error,
                format!(
                    "a row of table {} has {} cells in the translation where the source's rows have at most {} ({} columns); Markdown drops cells beyond the header's columns, so that text would vanish: keep each row's cells as in the source",
                    i + 1,
                    b.max_row_cells,
                    a.max_row_cells,
                    a.cols
                ),
                &text(&st, i),
                &text(&tt, i),
            ));
        } else if a != b {
            out.push(Finding::new(
                CHECK,
                Severity::Error,
                format!(
                    "table {} has {} rows × {} columns in the source but {} × {} in the translation; keep every row and column (header row included)",
                    i + 1,
                    a.rows,
                    a.cols,
                    b.rows,
                    b.cols
                ),
                &text(&st, i),
                &text(&tt, i),
            ));
        }
    }
    out
}

/// The text of each table for excerpts: runs of lines starting with `|`. Empty when their
/// number differs from the parsed `count` (tables without leading pipes), so that an excerpt
/// never shows the wrong table.
fn table_texts(text: &str, count: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut open = false;
    for line in text.lines() {
        if line.trim_start().starts_with('|') {
            if !open {
                out.push(String::new());
                open = true;
            }
            let t = out.last_mut().expect("pushed");
            t.push_str(line);
            t.push('\n');
        } else {
            open = false;
        }
    }
    if out.len() == count { out } else { Vec::new() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::Lang;
    use crate::termbase::Termbase;

    fn run(s: &str, t: &str) -> Vec<Finding> {
        let ctx = QaContext::new(&Lang::parse("en"), &Lang::parse("zh"), &Termbase::default());
        check(&ctx, &Doc::parse(s), &Doc::parse(t), s, t)
    }

    const SRC: &str = "| Tool | Purpose |\n|------|---------|\n| `a` | Find |\n| `b` | Read |\n";

    #[test]
    fn an_extra_cell_in_a_row_fails() {
        let tgt = "| 工具 | 用途 |\n|:---|:---|\n| `a` | 查找 | 多余 |\n| `b` | 读取 |\n";
        let f = run(SRC, tgt);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(f[0].message.contains("has 3 cells"), "{}", f[0].message);
        // Escaped pipes and pipes in inline code are not cell separators.
        let tgt = "| 工具 | 用途 |\n|:---|:---|\n| `a|b` | 查\\|找 |\n| `b` | 读取 |\n";
        assert_eq!(run(SRC, tgt), vec![]);
    }

    #[test]
    fn same_shape_passes() {
        let tgt = "| 工具 | 用途 |\n|:---|:---|\n| `a` | 查找 |\n| `b` | 读取 |\n";
        assert_eq!(run(SRC, tgt), vec![]);
    }

    #[test]
    fn lost_row_or_column_or_table_fails() {
        let tgt = "| 工具 | 用途 |\n|------|---------|\n| `a`、`b` | 查找、读取 |\n";
        let f = run(SRC, tgt);
        assert_eq!(f.len(), 1);
        assert_eq!(
            (f[0].check.as_str(), f[0].severity),
            (CHECK, Severity::Error)
        );
        assert_eq!(
            f[0].message,
            "table 1 has 3 rows × 2 columns in the source but 2 × 2 in the translation; keep every row and column (header row included)"
        );
        assert_eq!(f[0].source_excerpt, SRC);
        assert_eq!(f[0].target_excerpt, tgt);
        let tgt = "| 工具 |\n|------|\n| `a` |\n| `b` |\n";
        assert!(
            run(SRC, tgt)[0]
                .message
                .contains("3 rows × 2 columns in the source but 3 × 1")
        );
        let f = run(SRC, "- `a`：查找\n- `b`：读取\n");
        assert_eq!(
            f[0].message,
            "the source has 1 tables but the translation 0; keep every table as a Markdown table and add none"
        );
    }
}
