//! Test support shared by the integration tests: an in-repo fake OpenAI-compatible server
//! ([`fake_llm`]) speaking real HTTP and SSE, and helpers to build campaigns in temporary
//! folders and run the `booktr` binary.
#![allow(dead_code)]

pub mod corpus_replay;
pub mod fake_anthropic;
pub mod fake_batch;
pub mod fake_llm;
pub mod quality;
pub mod real_llm;
pub mod recorded;
pub mod word_for_word;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The switch that turns a missing corpus from a skip into a failure (`.ci/run` sets it to `1`).
pub const REQUIRE_CORPUS_VAR: &str = "BOOKTR_REQUIRE_CORPUS";

/// Panics, naming `p` and the remedy, when [`REQUIRE_CORPUS_VAR`] is `1`; a test whose corpus is
/// absent calls it before it skips, so CI cannot silently lose the test.
pub fn corpus_missing(p: &Path) {
    if std::env::var(REQUIRE_CORPUS_VAR).is_ok_and(|v| v == "1") {
        panic!(
            "{REQUIRE_CORPUS_VAR}=1 but the corpus is not at {} (expected its en/ and zh/ \
             chapters; put the ai-agent-book beside the checkout as ../shared/corpus/ai-agent-book)",
            p.display()
        );
    }
}

/// The shared corpus (a real Apache-2.0 book), or `None` with a printed reason when absent.
/// Panics instead when `BOOKTR_REQUIRE_CORPUS=1` ([`corpus_missing`]).
pub fn corpus_dir() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/ai-agent-book");
    if p.join("en").is_dir() {
        Some(p.canonicalize().unwrap())
    } else {
        corpus_missing(&p);
        eprintln!(
            "skipped: the corpus is not at {} (tests that need the real book are skipped)",
            p.display()
        );
        None
    }
}

/// Rust by Example in the shared sites (`../shared/sites/rust-by-example`, with its human PO
/// catalogs), or `None` with a printed reason when it is absent; absent with
/// [`REQUIRE_CORPUS_VAR`] `=1`, a panic naming the path and the remedy.
pub fn rust_by_example() -> Option<PathBuf> {
    shared_site("rust-by-example")
}

/// Shared site `name` (`../shared/sites/<name>`), or `None` with a printed reason when it is
/// absent; absent with [`REQUIRE_CORPUS_VAR`] `=1`, a panic naming the path and the remedy.
pub fn shared_site(name: &str) -> Option<PathBuf> {
    let site = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/sites")
        .join(name);
    if site.is_dir() {
        return Some(site);
    }
    if std::env::var(REQUIRE_CORPUS_VAR).is_ok_and(|v| v == "1") {
        panic!(
            "{REQUIRE_CORPUS_VAR}=1 but {} is absent (put the shared sites beside the checkout as ../shared/sites)",
            site.display()
        );
    }
    eprintln!("skipped: no {} (the shared sites)", site.display());
    None
}

/// A temporary campaign folder with a campaign file.
/// The absolute paths of the sample book's three chapters (`books/sample/`, as
/// `campaigns/sample.toml` lists them), for campaigns over the sample book written in a
/// temporary folder.
pub fn sample_book_chapters() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    ["01-agents.md", "02-tools.md", "03-memory.md"]
        .iter()
        .map(|f| {
            root.join("books/sample")
                .join(f)
                .to_string_lossy()
                .into_owned()
        })
        .collect()
}

pub struct TestCampaign {
    pub dir: tempfile::TempDir,
    pub file: PathBuf,
}

impl TestCampaign {
    /// Writes `campaign.toml` with `body` into a new temporary folder. Chapters named in `body`
    /// must be written with [`TestCampaign::write`] or be absolute paths.
    pub fn new(body: &str) -> TestCampaign {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("campaign.toml");
        std::fs::write(&file, body).unwrap();
        TestCampaign { dir, file }
    }

    /// A campaign over `chapters` (absolute paths or names of files written later), en → zh.
    pub fn with_chapters(name: &str, chapters: &[&str], extra: &str) -> TestCampaign {
        let list: Vec<String> = chapters.iter().map(|c| format!("{c:?}")).collect();
        TestCampaign::new(&format!(
            "name = \"{name}\"\nsource_lang = \"en\"\ntarget_lang = \"zh\"\nchapters = [{}]\n{extra}\n",
            list.join(", ")
        ))
    }

    pub fn write(&self, rel: &str, content: &str) -> PathBuf {
        let p = self.dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, content).unwrap();
        p
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).unwrap_or_else(|e| panic!("reading {rel}: {e}"))
    }

    /// `booktr <args…>` with the campaign file appended after the subcommand.
    pub fn cmd(&self, sub: &str, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_booktr"));
        c.arg(sub).arg(&self.file).args(args);
        c.env_remove("OPENAI_BASE_URL")
            .env_remove("OPENAI_API_KEY")
            .env("BOOKTR_RETRY_BASE_MS", "20");
        c
    }

    /// `booktr run --base-url <base_url> --json` with `OPENAI_API_KEY=<key>`, checked to exit 0:
    /// its `--json` summary.
    pub fn run_ok_against(&self, base_url: &str, key: &str) -> serde_json::Value {
        let out = self
            .cmd("run", &["--base-url", base_url, "--json"])
            .env("OPENAI_API_KEY", key)
            .output()
            .unwrap();
        assert_code(&out, 0);
        json_summary(&out)
    }

    /// Every file under the campaign folder, recursively.
    pub fn all_files(&self) -> Vec<PathBuf> {
        fn walk(p: &Path, out: &mut Vec<PathBuf>) {
            for e in std::fs::read_dir(p).unwrap().flatten() {
                let path = e.path();
                if path.is_dir() {
                    walk(&path, out);
                } else {
                    out.push(path);
                }
            }
        }
        let mut v = Vec::new();
        walk(self.dir.path(), &mut v);
        v.sort();
        v
    }
}

/// A reqwest client for tests (after installing the TLS crypto provider the library uses:
/// reqwest is built without one, see `booktr::llm::call::install_tls_provider`).
pub fn http_client() -> reqwest::Client {
    booktr::llm::call::install_tls_provider();
    reqwest::Client::new()
}

/// Parses the last line of stdout as JSON (the `--json` summary).
pub fn json_summary(out: &Output) -> serde_json::Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().last().unwrap_or_else(|| {
        panic!(
            "no stdout; stderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    serde_json::from_str(last)
        .unwrap_or_else(|e| panic!("last stdout line is not JSON ({e}): {last}"))
}

/// Asserts the exit code, printing stderr on mismatch.
pub fn assert_code(out: &Output, code: i32) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "exit code; stderr:\n{}\nstdout:\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
}
