//! The terminal and the two standard streams: how booktr writes to stdout and stderr when they
//! are closed pipes (`booktr plan … | head -1`), files or terminals, and whether it may colour
//! them. It owns the crate's `println!`/`eprintln!` (see the macros in `lib.rs`, which route
//! through [`out`] and [`err`]) and the colour policy; it does not draw progress (that is
//! `campaign::progress`).
//!
//! A closed pipe is not an error: the reader has what it wanted. Rust ignores `SIGPIPE`, so a
//! write to a closed pipe returns `EPIPE`, and std's `println!` panics on it (exit 101, "failed
//! printing to stdout: Broken pipe"). Here such a write is dropped, later writes to that stream
//! are skipped, and the command finishes and exits with its usual code (docs/src/reliability.md, "Status and exit codes").
//! Any other write error on stdout (a full disk behind `> file`) is remembered, and
//! [`stdout_failed`] lets `main` turn a successful exit into exit 1 naming it.

use std::fmt;
use std::io::{self, IsTerminal, Write};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once stdout turned out to be a closed pipe.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);
/// Set once stderr turned out to be a closed pipe (or failed otherwise: there is nowhere left
/// to report it).
static STDERR_CLOSED: AtomicBool = AtomicBool::new(false);
/// The first write error on stdout other than a closed pipe.
static STDOUT_ERROR: Mutex<Option<String>> = Mutex::new(None);

/// Writes formatted text to stdout (what the crate's `print!`/`println!` expand to). A closed
/// pipe drops it and every later write; another error is remembered for [`stdout_failed`].
pub fn out(args: fmt::Arguments<'_>) {
    if STDOUT_CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut o = io::stdout().lock();
    if let Err(e) = o.write_fmt(args) {
        stdout_error(e);
    }
}

/// Writes formatted text to stderr (what the crate's `eprint!`/`eprintln!` expand to). Any error
/// (a closed pipe above all) drops it and every later write to stderr.
pub fn err(args: fmt::Arguments<'_>) {
    if STDERR_CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut e = io::stderr().lock();
    if e.write_fmt(args).is_err() {
        STDERR_CLOSED.store(true, Ordering::Relaxed);
    }
}

/// Writes `bytes` to stdout and flushes (`export --out -`). A closed pipe is `Ok` (the rest is
/// dropped, as for [`out`]).
///
/// Errors: any other I/O error, unchanged.
pub fn write_stdout(bytes: &[u8]) -> io::Result<()> {
    if STDOUT_CLOSED.load(Ordering::Relaxed) {
        return Ok(());
    }
    let mut o = io::stdout().lock();
    match o.write_all(bytes).and_then(|()| o.flush()) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
            STDOUT_CLOSED.store(true, Ordering::Relaxed);
            Ok(())
        }
        r => r,
    }
}

fn stdout_error(e: io::Error) {
    STDOUT_CLOSED.store(true, Ordering::Relaxed);
    if e.kind() != io::ErrorKind::BrokenPipe {
        let mut first = STDOUT_ERROR.lock().unwrap_or_else(|p| p.into_inner());
        first.get_or_insert_with(|| e.to_string());
    }
}

/// The first error writing to stdout that was not a closed pipe (e.g. "No space left on
/// device"), if any: output the user asked for is missing, so `main` exits 1 naming it.
pub fn stdout_failed() -> Option<String> {
    STDOUT_ERROR
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone()
}

/// Whether stderr is a terminal (where the live progress line is drawn).
pub fn stderr_is_terminal() -> bool {
    io::stderr().is_terminal()
}

/// Whether `NO_COLOR` asks for no colour: set to a non-empty value (<https://no-color.org>).
pub fn no_color() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

/// Whether ANSI escape codes (colours, cursor moves) may be written to stderr: only when stderr
/// is a terminal and `NO_COLOR` is not set, so log lines sent to a file or a pipe carry none.
pub fn stderr_colour() -> bool {
    stderr_is_terminal() && !no_color()
}
