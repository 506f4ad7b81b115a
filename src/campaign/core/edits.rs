//! Human edits: editors fix translations by hand in the output chapters. Before anything is
//! written again, booktr compares each output file with the hash it recorded when it wrote it;
//! a changed file is split back into per-unit texts ([`split_output`]) and every unit whose
//! text changed is recorded as a human edit (a result file plus a journal line). Human edits
//! win over any model translation and are never sent for revision, so a later `run` keeps them.

use super::Campaign;
use super::state::State;
use crate::book::segment::top_level_blocks;

/// A unit whose text in an edited output differs from the recorded one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditedUnit {
    pub unit: String,
    pub text: String,
}

/// Splits `output` (an output chapter, possibly edited) into one text per unit, given the texts
/// the units had when booktr wrote it (`known`, in order).
///
/// Units whose known text still occurs, in order, keep exactly that text (anchors). The text
/// between two anchors belongs to the units between them: all of it to a single unit, or,
/// for several units, cut at top-level Markdown blocks in proportion to the number of blocks
/// each unit had (the last one takes the rest). Joining the result always gives `output` back.
pub fn split_output(output: &str, known: &[&str]) -> Vec<String> {
    let n = known.len();
    let mut out: Vec<String> = vec![String::new(); n];
    if n == 0 {
        return out;
    }
    let mut pos = 0usize;
    let mut i = 0usize;
    while i < n {
        if !known[i].is_empty() && output[pos..].starts_with(known[i]) {
            out[i] = known[i].to_string();
            pos += known[i].len();
            i += 1;
            continue;
        }
        // Unit i was edited: find the next anchor after it.
        let mut next: Option<(usize, usize)> = None; // (unit index, byte offset)
        for (j, k) in known.iter().enumerate().skip(i + 1) {
            if k.trim().len() < 8 {
                continue; // too short to be a reliable anchor
            }
            if let Some(off) = output[pos..].find(k) {
                next = Some((j, pos + off));
                break;
            }
        }
        let (j, end) = next.unwrap_or((n, output.len()));
        let region = &output[pos..end];
        let parts = split_region(region, &known[i..j]);
        for (k, p) in parts.into_iter().enumerate() {
            out[i + k] = p;
        }
        pos = end;
        i = j;
    }
    if pos < output.len() {
        out[n - 1].push_str(&output[pos..]);
    }
    out
}

/// Cuts `region` among `units.len()` units at top-level block starts, giving each unit as many
/// blocks as its known text had (at least one), the last unit the rest.
fn split_region(region: &str, units: &[&str]) -> Vec<String> {
    if units.len() == 1 {
        return vec![region.to_string()];
    }
    let starts: Vec<usize> = top_level_blocks(region)
        .iter()
        .map(|b| b.range.start)
        .skip(1)
        .collect();
    let mut cuts = Vec::new();
    let mut taken = 0usize;
    for k in units.iter().take(units.len() - 1) {
        taken += top_level_blocks(k).len().max(1);
        match starts.get(taken - 1) {
            Some(&c) => cuts.push(c),
            None => cuts.push(region.len()),
        }
    }
    let mut parts = Vec::new();
    let mut last = 0;
    for c in cuts {
        let c = c.max(last);
        parts.push(region[last..c].to_string());
        last = c;
    }
    parts.push(region[last..].to_string());
    parts
}

/// The units of `c` whose text in the current output files differs from what booktr last
/// wrote. Only files whose hash differs from the recorded one are read and split.
pub fn detect(c: &Campaign, s: &State) -> anyhow::Result<Vec<EditedUnit>> {
    let mut edited = Vec::new();
    let retarget = c.retarget(s);
    for ch in &c.chapters {
        let path = c.plan.out_dir.join(&ch.file_name);
        let rel = c.plan.rel(&path);
        let Some((_, recorded)) = s.outputs().iter().find(|(p, _)| *p == rel) else {
            continue;
        };
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        // The hash is the file booktr last wrote. It stands for the chapter's final texts
        // only while no hand edit of the chapter was recorded after that write (`validate`
        // records edits without writing): an editor who then restores the written file byte
        // for byte has undone the edit, which only a unit-by-unit comparison sees
        // (regression test `an_undone_hand_edit_was_ignored_and_run_wrote_it_back`).
        let edited_here = c.units_of(&ch.key).any(|u| s.human_edit(&u.id).is_some());
        if crate::util::sha256_hex(&bytes) == *recorded && !edited_here {
            continue;
        }
        let text = String::from_utf8(bytes)
            .map_err(|_| anyhow::anyhow!("output {} is no longer UTF-8 text; fix its encoding so its hand edits can be recorded", c.plan.show(&path)))?;
        // What booktr changed on writing (an mdBook's includes from outside the book, links
        // pointed at translated heading ids) is not an edit.
        let text = if ch.notebook.is_some() {
            text
        } else {
            c.read_back(ch, text, retarget.as_ref())
        };
        // A notebook's hand edits are in its Markdown cells: each cell is split among its own
        // units (the separators between cells are never edits).
        let parts = ch.output_parts(&text).map_err(|e| {
            anyhow::anyhow!(
                "output {} {e}; fix it so its hand edits can be recorded (or run with --force to overwrite it)",
                c.plan.show(&path)
            )
        })?;
        for (range, text) in parts {
            let units: Vec<&crate::book::Unit> = c
                .units_of(&ch.key)
                .filter(|u| range.start <= u.range.start && u.range.end <= range.end)
                .filter(|u| !u.range.is_empty() && !ch.is_cell_separator(u))
                .collect();
            let known: Vec<String> = units.iter().map(|u| final_text(c, s, u)).collect();
            let known_refs: Vec<&str> = known.iter().map(String::as_str).collect();
            for (u, (new, old)) in units.iter().zip(
                split_output(&text, &known_refs)
                    .into_iter()
                    .zip(known.iter()),
            ) {
                if new != *old {
                    edited.push(EditedUnit {
                        unit: u.id.clone(),
                        text: new,
                    });
                }
            }
        }
    }
    Ok(edited)
}

/// The text a unit contributes to its output chapter: a human edit, else the kept translation
/// ([`State::kept_translation`]: the candidate with the fewest QA errors, not blindly the
/// newest), else (verbatim units) the source. Outputs, reports and exports all read it here.
pub fn final_text(c: &Campaign, s: &State, u: &crate::book::Unit) -> String {
    final_str(c, s, u).to_string()
}

/// [`final_text`], borrowed from the state (a translation or a hand edit) or the campaign (a
/// copied unit): the report reads every unit's, and a copy of each was 13 MB at ten times
/// the corpus.
pub fn final_str<'a>(c: &'a Campaign, s: &'a State, u: &crate::book::Unit) -> &'a str {
    if let Some(t) = s.human_edit(&u.id) {
        return t;
    }
    if u.kind.needs_translation() {
        s.kept_translation(&u.id, u32::MAX).map_or("", |t| t.1)
    } else {
        c.source_text(u)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unchanged_output_maps_back_exactly() {
        let known = [
            "# 一\n\n段落一。\n\n",
            "段落二。\n\n",
            "## 二\n\n段落三。\n",
        ];
        let out: String = known.concat();
        assert_eq!(split_output(&out, &known), known.map(String::from).to_vec());
    }

    #[test]
    fn one_edited_unit_takes_its_region() {
        let known = [
            "# 一\n\n段落一。\n\n",
            "段落二很长的一段。\n\n",
            "## 二\n\n段落三。\n",
        ];
        let out = "# 一\n\n段落一。\n\n段落二，已由编辑修改。\n\n## 二\n\n段落三。\n";
        let parts = split_output(out, &known);
        assert_eq!(parts[1], "段落二，已由编辑修改。\n\n");
        assert_eq!(parts[0], known[0]);
        assert_eq!(parts[2], known[2]);
        assert_eq!(parts.concat(), out);
    }

    #[test]
    fn adjacent_edited_units_split_by_blocks() {
        let known = [
            "# 标题一\n\n第一段原文。\n\n",
            "第二段原文。\n\n第三段原文。\n\n",
            "## 结尾标题\n\n最后一段。\n",
        ];
        let out = "# 标题一（改）\n\n第一段已改。\n\n第二段已改。\n\n第三段已改。\n\n## 结尾标题\n\n最后一段。\n";
        let parts = split_output(out, &known);
        assert_eq!(parts[0], "# 标题一（改）\n\n第一段已改。\n\n");
        assert_eq!(parts[1], "第二段已改。\n\n第三段已改。\n\n");
        assert_eq!(parts[2], known[2]);
        assert_eq!(parts.concat(), out);
    }

    #[test]
    fn appended_text_goes_to_the_last_unit() {
        let known = ["段落一。\n\n", "段落二。\n"];
        let out = "段落一。\n\n段落二。\n\n编辑新增的一段。\n";
        let parts = split_output(out, &known);
        assert_eq!(parts[1], "段落二。\n\n编辑新增的一段。\n");
        assert_eq!(parts.concat(), out);
    }
}
