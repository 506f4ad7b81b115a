//! `booktr import` commits through the campaign's one write protocol, adoption included: a
//! result file left without its journal line (a crash between the two) is journaled
//! (`adopted: true`) when the import opens the state, as `run` and the experiment's arms do.
//! Before the protocol was one, the import adopted such a file in memory only and left the
//! journal without it.
//!
//! Offline: the pseudo provider translates, so no server is needed.

use std::path::Path;
use std::process::{Command, Output};

fn booktr(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_booktr"))
        .current_dir(dir)
        .args(args)
        .env_remove("OPENAI_BASE_URL")
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap()
}

fn journal_of(dir: &Path) -> std::path::PathBuf {
    std::fs::read_dir(dir.join("t/state"))
        .unwrap()
        .flatten()
        .map(|e| e.path().join("journal.jsonl"))
        .find(|p| p.exists())
        .expect("a state directory with a journal")
}

#[test]
fn import_journals_a_result_adopted_without_its_journal_line() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(
        dir.join("campaign.toml"),
        "name = \"t\"\nsource_lang = \"en\"\ntarget_lang = \"zh\"\nchapters = [\"a.md\"]\nmax_unit_chars = 200\n[provider]\nkind = \"pseudo\"\n",
    )
    .unwrap();
    let mut book = String::from("# Agents\n\n");
    for i in 0..4 {
        book.push_str(&format!(
            "## Part {i}\n\nThe agent {i} reads its context window and calls a tool to look up the answer.\n\n"
        ));
    }
    std::fs::write(dir.join("a.md"), book).unwrap();
    let run = booktr(dir, &["run", "campaign.toml"]);
    assert!(
        run.status.code() == Some(0) || run.status.code() == Some(1),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let export = booktr(dir, &["export", "campaign.toml", "--format", "tmx"]);
    assert_eq!(
        export.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&export.stderr)
    );
    let tmx = dir.join("t/export/t.tmx");
    assert!(tmx.exists(), "the export wrote {}", tmx.display());

    // A crash between a translation's result file and its journal line: drop the line.
    let journal = journal_of(dir);
    let text = std::fs::read_to_string(&journal).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let cut = lines
        .iter()
        .rposition(|l| l.contains("\"call_finished\"") && l.contains("\"translation\""))
        .expect("a translation was journaled");
    let dropped: serde_json::Value = serde_json::from_str(lines[cut]).unwrap();
    let mut kept: Vec<&str> = lines.clone();
    kept.remove(cut);
    std::fs::write(&journal, format!("{}\n", kept.join("\n"))).unwrap();

    let import = booktr(dir, &["import", "campaign.toml", tmx.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&import.stderr);
    assert!(
        import.status.code() == Some(0) || import.status.code() == Some(1),
        "{err}"
    );
    assert!(err.contains("adopted result"), "{err}");
    let after: Vec<serde_json::Value> = std::fs::read_to_string(&journal)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let adopted: Vec<&serde_json::Value> = after
        .iter()
        .filter(|r| r["event"] == "call_finished" && r["call"] == dropped["call"])
        .collect();
    assert_eq!(adopted.len(), 1, "journaled once: {adopted:?}");
    assert_eq!(adopted[0]["adopted"], true);
    assert_eq!(adopted[0]["file"], dropped["file"]);
    assert_eq!(adopted[0]["sha256"], dropped["sha256"]);
    // The next writer finds nothing left to adopt (`run` prints the load warnings too).
    let again = booktr(dir, &["run", "campaign.toml"]);
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(
        again.status.code() == Some(0) || again.status.code() == Some(1),
        "{err}"
    );
    assert!(!err.contains("adopted result"), "{err}");
}
