//! `booktr export`: a campaign's termbase (TBX, CSV, TSV), chapters and units (XLIFF 2.0,
//! XLIFF 1.2), Markdown blocks (gettext PO) or unit pairs (TMX 1.4b), from the saved state alone (no model call, no lock). A rehearsal's
//! exports carry the rehearsal mark of their format ([`crate::interchange::rehearsal`]).

use crate::campaign::Campaign;
use crate::campaign::core::state::State;
use crate::campaign::ops::exports as ic;
use crate::cli::ExportArgs;
use crate::exit::{ExitCode, UsageError};
use crate::interchange::po::MachineText;
use crate::interchange::{Format, delimited, tbx};

pub fn run(args: &ExportArgs) -> anyhow::Result<ExitCode> {
    if args.machine_text.is_some() && args.format != Format::Po {
        return Err(UsageError::new(
            "--machine-text is for `--format po` only (it says whether mdbook-gettext shows machine translations); the other formats have no fuzzy flag",
        )
        .into());
    }
    let plan = super::plan(&args.campaign, None)?;
    let campaign = Campaign::load(plan)?;
    let p = &campaign.plan;
    let dir = campaign.state_path();
    let state = if dir.exists() {
        Some(State::load(&campaign, &dir, "export")?)
    } else {
        None
    };
    let needs_state = matches!(
        args.format,
        Format::Xliff | Format::Tmx | Format::Po | Format::Xliff12
    );
    let Some(state) = state.as_ref().filter(|_| needs_state).or(state.as_ref()) else {
        if needs_state {
            return Err(UsageError::new(format!(
                "no saved state for this configuration of {}: run `booktr run {}` first (XLIFF, PO and TMX export the translations)",
                p.campaign_file.display(),
                p.campaign_file.display()
            ))
            .into());
        }
        return write_termbase(&campaign, None, args);
    };
    match args.format {
        Format::Xliff => {
            let doc = ic::xliff(&campaign, state);
            let units = campaign.units.len();
            emit(&campaign, args, doc.as_bytes(), &format!("{units} units"))
        }
        Format::Tmx => {
            let (doc, skipped) = ic::tmx(&campaign, state);
            let n = doc.matches("<tu ").count();
            let note = if skipped > 0 {
                format!(
                    "{n} pairs (sentence pairs where aligned, else block pairs); {skipped} left out (a character XML cannot carry, e.g. a control character)"
                )
            } else {
                format!("{n} pairs (sentence pairs where aligned, else block pairs)")
            };
            emit(&campaign, args, doc.as_bytes(), &note)
        }
        Format::Xliff12 => {
            let doc = ic::xliff12(&campaign, state);
            let units = campaign.units.len();
            emit(
                &campaign,
                args,
                doc.as_bytes(),
                &format!("{units} units (XLIFF 1.2)"),
            )
        }
        Format::Po => {
            let machine = args.machine_text.unwrap_or_default();
            let e = ic::po(&campaign, state, machine);
            emit(
                &campaign,
                args,
                e.doc.as_bytes(),
                &po_summary(e.messages, e.machine, machine),
            )
        }
        _ => write_termbase(&campaign, Some(state), args),
    }
}

/// The export summary of a PO catalog of `n` messages, `machine` of them machine translations,
/// written as `mode` says: what mdbook-gettext will do with them.
fn po_summary(n: usize, machine: usize, mode: MachineText) -> String {
    match mode {
        MachineText::Fuzzy => format!(
            "{n} PO messages ({machine} machine translations marked fuzzy: mdbook-gettext will not show them until an editor clears the flag; --machine-text final shows them unreviewed)"
        ),
        MachineText::Final => format!(
            "{n} PO messages ({machine} machine translations marked final, not fuzzy: mdbook-gettext shows them in the built book unreviewed)"
        ),
    }
}

fn write_termbase(c: &Campaign, s: Option<&State>, args: &ExportArgs) -> anyhow::Result<ExitCode> {
    let entries = ic::termbase_entries(c, s);
    if s.is_none_or(|s| s.termbase().is_none()) {
        eprintln!(
            "note: the campaign has no merged termbase yet; exporting its {} house-style entries",
            entries.len()
        );
    }
    // A rehearsal's termbase holds the pseudo provider's renderings: marked as such.
    let rehearsal = c.plan.is_rehearsal();
    let bytes = match args.format {
        Format::Tbx => tbx::write_marked(
            &entries,
            &c.plan.source_lang,
            &c.plan.target_lang,
            &format!("booktr termbase of campaign {}", c.plan.name),
            rehearsal,
        )
        .into_bytes(),
        Format::Tsv => delimited::write_marked(&entries, b'\t', rehearsal),
        _ => delimited::write_marked(&entries, b',', rehearsal),
    };
    emit(c, args, &bytes, &format!("{} entries", entries.len()))
}

/// Writes `bytes` to `--out` (stdout for `-`), else `<name>/export/<name>.<suffix>`
/// ([`Format::export_suffix`]).
fn emit(c: &Campaign, args: &ExportArgs, bytes: &[u8], what: &str) -> anyhow::Result<ExitCode> {
    let p = &c.plan;
    let path = match &args.out {
        Some(o) if o.as_os_str() == "-" => {
            // A closed pipe (`--out - | head -1`) is the reader's choice, not an error.
            crate::term::write_stdout(bytes)?;
            return Ok(ExitCode::Ok);
        }
        Some(o) => o.clone(),
        None => p.campaign_dir.join(&p.name).join("export").join(format!(
            "{}.{}",
            p.name,
            args.format.export_suffix()
        )),
    };
    crate::util::write_atomic(&path, bytes)?;
    eprintln!(
        "{}exported {what} to {}",
        if p.is_rehearsal() { "REHEARSAL " } else { "" },
        p.show(&path)
    );
    Ok(ExitCode::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The summary line says what mdbook-gettext will do with the machine translations.
    #[test]
    fn the_po_summary_says_whether_mdbook_gettext_shows_machine_text() {
        let fuzzy = po_summary(12, 9, MachineText::Fuzzy);
        assert_eq!(
            fuzzy,
            "12 PO messages (9 machine translations marked fuzzy: mdbook-gettext will not show them until an editor clears the flag; --machine-text final shows them unreviewed)"
        );
        let fin = po_summary(12, 9, MachineText::Final);
        assert!(fin.contains("9 machine translations marked final"), "{fin}");
        assert!(fin.contains("unreviewed"), "{fin}");
    }
}
