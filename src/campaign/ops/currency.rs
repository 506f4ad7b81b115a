//! Whether a campaign's translation is current, from the saved state alone: the CI gate
//! `booktr status --check`. A source block is current when the unit holding it has a final
//! text under its current fingerprint (a kept translation or an editor's text), or, for a unit
//! whose source changed, when block memory holds a current translation of the block
//! ([`crate::campaign::core::blocks`]). No model call, no key, no write.

use crate::campaign::core::Campaign;
use crate::campaign::core::state::State;

/// A unit that keeps the campaign from being current, and why (one sentence).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct NotCurrent {
    pub unit: String,
    /// The chapter's path as the campaign names it.
    pub chapter: String,
    pub why: String,
}

/// The answer of [`check`].
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Currency {
    /// [`Currency::is_current`]: the gate's answer (exit 0 when true).
    pub current: bool,
    /// Source blocks with something to translate.
    pub blocks: usize,
    /// Of them, blocks with a current translation.
    pub current_blocks: usize,
    /// Error findings on the final texts (after editors' marks).
    pub errors: usize,
    /// Stale edits still to decide ([`crate::campaign::core::blocks::Stale`]).
    pub stale_edits: usize,
    /// Whether the output chapters were written after the last recorded change.
    pub outputs_written: bool,
    /// The units that are not current, in book order.
    pub units: Vec<NotCurrent>,
}

impl Currency {
    /// Whether every source block has a current translation, the outputs are written and no
    /// error finding remains.
    pub fn is_current(&self) -> bool {
        self.current_blocks == self.blocks && self.errors == 0 && self.outputs_written
    }
}

/// Checks every prose unit of `c` against `s` (see the module doc).
pub fn check(c: &Campaign, s: &State) -> Currency {
    let mut out = Currency {
        outputs_written: s.outputs_current(),
        ..Default::default()
    };
    let fq = crate::campaign::core::verdict::final_qa(c, s);
    let is_error = |f: &&crate::qa::Finding| f.severity == crate::qa::Severity::Error;
    out.errors = fq.chapter.iter().filter(is_error).count();
    for (i, u) in c.units.iter().enumerate() {
        if !u.kind.needs_translation() {
            continue;
        }
        let source = c.source_text(u);
        let n = crate::campaign::core::blocks::cores(source)
            .into_iter()
            .filter(|b| crate::campaign::core::pieces::needs_model(b))
            .count()
            .max(1);
        out.blocks += n;
        let chapter = c.chapter(&u.chapter).rel_path.clone();
        let finished =
            s.human_edit(&u.id).is_some() || s.kept_translation(&u.id, u32::MAX).is_some();
        if finished {
            out.current_blocks += n;
            let errors = fq
                .units
                .get(i)
                .map_or(0, |f| f.iter().filter(is_error).count());
            out.errors += errors;
            let stale = s.stale_edits(&u.id).len();
            out.stale_edits += stale;
            if stale > 0 {
                out.units.push(NotCurrent {
                    unit: u.id.clone(),
                    chapter,
                    why: format!(
                        "{stale} stale edit(s): a paragraph an editor translated has a new source; decide with `booktr approve {} --stale {} --keep editor` (or `--keep model`)",
                        c.plan.show(&c.plan.campaign_file),
                        u.id
                    ),
                });
            } else if errors > 0 {
                out.units.push(NotCurrent {
                    unit: u.id.clone(),
                    chapter,
                    why: format!("{errors} error finding(s) on its final text (see the report)"),
                });
            }
            continue;
        }
        let found = s.reuse_plan(c, i).map_or(0, |p| p.found());
        out.current_blocks += found.min(n);
        out.units.push(NotCurrent {
            unit: u.id.clone(),
            chapter,
            why: format!(
                "{} of its {n} block(s) have no current translation",
                n - found.min(n)
            ),
        });
    }
    out.current = out.is_current();
    out
}
