//! Small file-system and hashing helpers shared by state, outputs and reports.
//!
//! Atomic writes use `tempfile` for the temporary file and its rename; the fsync of the parent
//! directory after the rename is the one step tempfile does not do, so it is added here.

use std::io::Write;
use std::path::{Component, Path, PathBuf};

use sha2::{Digest, Sha256};

/// A word that is none of a setting's values (a campaign key, a flag): what it sets, the word
/// written, and the values to use instead. Displays as `unknown <what> `<value>`; use
/// <choices>`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} `{value}`; use {choices}")]
pub struct UnknownValue {
    /// What the word sets (`format`, `provider kind`).
    pub what: &'static str,
    /// The word as written.
    pub value: String,
    /// The values to use, as a sentence fragment.
    pub choices: &'static str,
}

/// Hex-encoded sha256 of `bytes` (64 lowercase hex characters).
pub fn sha256_hex(bytes: impl AsRef<[u8]>) -> String {
    hex::encode(Sha256::digest(bytes.as_ref()))
}

/// Writes `bytes` to `path` atomically: a temporary file in the same directory is written,
/// `sync_all`ed and renamed over `path`, then the directory itself is fsynced, so a crash
/// leaves either the old file or the new one, never a torn one. Parent directories are created.
///
/// Errors: any I/O error, with the path in its context.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    write_atomic_with(path, |w| w.write_all(bytes).map_err(Into::into))
}

/// [`write_atomic`] for content produced by a writer: `write` streams into the temporary file
/// through a buffer, so a large report (tens of MB on a long book) is never held in memory
/// whole (the rendered HTML report was the peak of a 10x book's memory).
///
/// Errors: any error of `write`, or an I/O error, with the path in its context.
pub fn write_atomic_with(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    use anyhow::Context;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)
        .with_context(|| format!("creating directory {}", dir.display()))?;
    let mut builder = tempfile::Builder::new();
    builder.prefix(".tmp-");
    // Output files are ordinary documents: readable by others, like any file an editor saves
    // (tempfile's default is 0600).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o644));
    }
    let mut tmp = builder
        .tempfile_in(dir)
        .with_context(|| format!("creating a temporary file in {}", dir.display()))?;
    {
        let mut buf = std::io::BufWriter::with_capacity(1 << 16, tmp.as_file_mut());
        write(&mut buf).with_context(|| format!("writing {}", path.display()))?;
        buf.flush()
            .with_context(|| format!("writing {}", path.display()))?;
    }
    tmp.as_file()
        .sync_all()
        .with_context(|| format!("writing {}", path.display()))?;
    tmp.persist(path)
        .with_context(|| format!("renaming into {}", path.display()))?;
    sync_dir(dir);
    Ok(())
}

/// Fsyncs a directory so a rename or a new file in it survives a power loss. Best effort:
/// some file systems refuse to open directories for sync, which is not an error for us.
pub fn sync_dir(dir: &Path) {
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Serialises `value` as pretty JSON (and a final newline), streamed into the file by
/// [`write_atomic_with`].
pub fn write_json_atomic<T: serde::Serialize>(path: &Path, value: &T) -> anyhow::Result<()> {
    write_atomic_with(path, |w| {
        serde_json::to_writer_pretty(&mut *w, value)?;
        w.write_all(b"\n")?;
        Ok(())
    })
}

/// `path` expressed relative to `base`, with `/` separators, for storing in state and reports
/// (never an absolute path). Both paths are made absolute against the current directory first;
/// when they share no prefix the result climbs with `..`.
pub fn relative_to(path: &Path, base: &Path) -> String {
    let abs = |p: &Path| -> PathBuf {
        let p = if p.is_absolute() {
            p.to_path_buf()
        } else {
            std::env::current_dir().unwrap_or_default().join(p)
        };
        normalize(&p)
    };
    let (path, base) = (abs(path), abs(base));
    let pc: Vec<_> = path.components().collect();
    let bc: Vec<_> = base.components().collect();
    let common = pc.iter().zip(&bc).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = Vec::new();
    for _ in common..bc.len() {
        parts.push("..".into());
    }
    for c in &pc[common..] {
        parts.push(c.as_os_str().to_string_lossy().into_owned());
    }
    if parts.is_empty() {
        ".".into()
    } else {
        parts.join("/")
    }
}

/// Lexically removes `.` and `a/..` components (no file-system access, symlinks not followed).
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Shortens `text` to at most `max_chars` characters, appending `…` when cut.
pub fn excerpt(text: &str, max_chars: usize) -> String {
    let mut it = text.char_indices();
    match it.nth(max_chars) {
        None => text.to_string(),
        Some((cut, _)) => format!("{}…", &text[..cut]),
    }
}

/// `ms` since the Unix epoch as a UTC time: `YYYY-MM-DDTHH:MM:SSZ`, or `YYYYMMDDTHHMMSSZ` for
/// folder names when `extended` is false.
///
/// Hand-rolled (the days-to-civil-date conversion of Howard Hinnant's "chrono-Compatible
/// Low-Level Date Algorithms") rather than a date crate for one format.
pub fn utc_timestamp(ms: u64, extended: bool) -> String {
    let secs = ms / 1000;
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let (hh, mm, ss) = (rem / 3600, rem % 3600 / 60, rem % 60);
    if extended {
        format!("{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}Z")
    } else {
        format!("{y:04}{m:02}{d:02}T{hh:02}{mm:02}{ss:02}Z")
    }
}

/// The reference corpus (`../shared/corpus/ai-agent-book`), when present beside the repository.
#[cfg(test)]
pub(crate) fn test_corpus() -> Option<std::path::PathBuf> {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/ai-agent-book");
    let present = p.join("en").is_dir();
    // `BOOKTR_REQUIRE_CORPUS=1` (set by `.ci/run`) turns the skip into a failure.
    assert!(
        present || !std::env::var("BOOKTR_REQUIRE_CORPUS").is_ok_and(|v| v == "1"),
        "BOOKTR_REQUIRE_CORPUS=1 but the corpus is not at {} (put the ai-agent-book there)",
        p.display()
    );
    present.then_some(p)
}

/// Test support: a temporary folder holding `files` (path relative to it, text), with their
/// folders made.
#[cfg(test)]
pub(crate) fn test_tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for (f, text) in files {
        let p = d.path().join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_utc_civil_dates() {
        assert_eq!(utc_timestamp(0, true), "1970-01-01T00:00:00Z");
        // 2024-02-29 12:34:56 UTC (a leap day).
        assert_eq!(
            utc_timestamp(1_709_210_096_000, true),
            "2024-02-29T12:34:56Z"
        );
        assert_eq!(utc_timestamp(1_709_210_096_000, false), "20240229T123456Z");
        assert_eq!(
            utc_timestamp(4_102_444_800_000, true),
            "2100-01-01T00:00:00Z"
        );
    }

    #[test]
    fn relative_paths() {
        assert_eq!(
            relative_to(Path::new("/a/b/c.md"), Path::new("/a")),
            "b/c.md"
        );
        assert_eq!(
            relative_to(Path::new("/a/x/c.md"), Path::new("/a/b")),
            "../x/c.md"
        );
        assert_eq!(relative_to(Path::new("/a"), Path::new("/a")), ".");
    }

    #[test]
    fn atomic_write_replaces_content() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/f.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        let names: Vec<_> = std::fs::read_dir(dir.path().join("sub")).unwrap().collect();
        assert_eq!(names.len(), 1, "no temporary file left behind");
    }

    #[test]
    fn excerpt_cuts_on_chars() {
        assert_eq!(excerpt("智能体系统", 2), "智能…");
        assert_eq!(excerpt("abc", 3), "abc");
    }
}
