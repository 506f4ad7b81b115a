//! The remedy `booktr` gives when a campaign file cannot be read: a folder given where a
//! campaign file was expected names the campaign files beside it or inside it (or the
//! `booktr init` command that writes one), and a misspelled file names the closest `.toml` in
//! its folder.

use std::path::{Path, PathBuf};

/// The message for `campaign_file`, which `std::fs::read_to_string` refused with `err`: the
/// file, what went wrong, and what to do instead.
pub fn message(campaign_file: &Path, err: &std::io::Error) -> String {
    let shown = campaign_file.display().to_string();
    if campaign_file.is_dir() {
        let found = campaigns_for_folder(campaign_file);
        let remedy = if found.is_empty() {
            format!(
                "to translate the book in it, write a campaign file with `booktr init {shown} --to LANG` (or run `booktr run {shown} --to LANG` to do both)"
            )
        } else {
            let names: Vec<String> = found.iter().map(|p| p.display().to_string()).collect();
            format!(
                "give the campaign file instead: {} (a book folder goes to `booktr init {shown} --to LANG`)",
                names.join(", ")
            )
        };
        return format!("{shown} is a folder, not a campaign file; {remedy}");
    }
    if err.kind() == std::io::ErrorKind::NotFound {
        let remedy = match closest_toml(campaign_file) {
            Some(p) => format!("did you mean {}?", p.display()),
            None => format!(
                "give the path of a campaign file (`booktr init BOOK --to LANG` writes one{})",
                dir_hint(campaign_file)
            ),
        };
        return format!("cannot read campaign file {shown}: no such file; {remedy}");
    }
    format!("cannot read campaign file {shown}: {err}")
}

/// `; DIR is not a folder either` when `file` names a folder that does not exist, else nothing.
fn dir_hint(file: &Path) -> String {
    match file.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(p) if !p.is_dir() => format!("; {} is not a folder either", p.display()),
        _ => String::new(),
    }
}

/// Whether `p` is a `.toml` file that reads as a booktr campaign (it sets `target_lang`).
fn looks_like_campaign(p: &Path) -> bool {
    p.is_file()
        && p.extension().is_some_and(|e| e == "toml")
        && std::fs::read_to_string(p)
            .is_ok_and(|t| t.lines().any(|l| l.trim_start().starts_with("target_lang")))
}

/// The `.toml` files (sorted) in `dir` that satisfy `keep`.
fn tomls_in(dir: &Path, keep: &dyn Fn(&Path) -> bool) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = rd.flatten().map(|e| e.path()).filter(|p| keep(p)).collect();
    v.sort();
    v
}

/// The campaign files for the book folder `folder`: those `booktr init` writes beside it
/// (`<folder>-<lang>.toml`), then any campaign file inside it.
pub fn campaigns_for_folder(folder: &Path) -> Vec<PathBuf> {
    let name = crate::util::normalize(&std::env::current_dir().unwrap_or_default().join(folder));
    let name = name
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let parent = match folder.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ if folder == Path::new(".") || folder == Path::new("./") => PathBuf::from(".."),
        _ => PathBuf::new(),
    };
    let beside_dir = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent.as_path()
    };
    let prefix = format!("{name}-");
    let mut found = tomls_in(beside_dir, &|p| {
        p.file_name()
            .is_some_and(|f| f.to_string_lossy().starts_with(&prefix))
            && looks_like_campaign(p)
    });
    if parent.as_os_str().is_empty() {
        // Shown as the user would type them from here, without a leading `./`.
        found = found
            .into_iter()
            .map(|p| p.strip_prefix(".").map(Path::to_path_buf).unwrap_or(p))
            .collect();
    }
    found.extend(tomls_in(folder, &looks_like_campaign));
    found
}

/// The `.toml` file in `file`'s folder whose name is closest to `file`'s (normalised
/// Levenshtein similarity of at least 0.5), shown with the same folder as `file`.
fn closest_toml(file: &Path) -> Option<PathBuf> {
    let wanted = file.file_name()?.to_string_lossy().into_owned();
    let dir = file.parent().filter(|p| !p.as_os_str().is_empty());
    let candidates = tomls_in(dir.unwrap_or(Path::new(".")), &|p| {
        p.is_file() && p.extension().is_some_and(|e| e == "toml")
    });
    let (score, best) = candidates
        .iter()
        .filter_map(|p| {
            let n = p.file_name()?.to_string_lossy().into_owned();
            Some((strsim::normalized_levenshtein(&wanted, &n), n))
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))?;
    (score >= 0.5).then(|| match dir {
        Some(d) => d.join(best),
        None => PathBuf::from(best),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A misspelled extension finds the campaign file; a far name finds none.
    #[test]
    fn a_misspelled_campaign_file_said_only_no_such_file() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("book-zh.toml"), "target_lang = \"zh\"\n").unwrap();
        std::fs::write(d.path().join("other.txt"), "").unwrap();
        assert_eq!(
            closest_toml(&d.path().join("book-zh.tml")),
            Some(d.path().join("book-zh.toml"))
        );
        assert_eq!(
            closest_toml(&d.path().join("completely-different.toml")),
            None
        );
    }
}
