//! The terminal progress display, drawn with indicatif on stderr: one bar for units done out
//! of units to translate (with tokens and elapsed time) and one line per call in flight.
//! indicatif draws nothing when stderr is not a terminal, so logs and pipes stay clean.

use std::collections::HashMap;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Progress for one run.
pub struct Progress {
    multi: MultiProgress,
    main: ProgressBar,
    lines: HashMap<String, ProgressBar>,
}

impl Progress {
    /// `total` units to translate, `done` already translated.
    pub fn new(total: u64, done: u64, rehearsal: bool) -> Progress {
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
        let main = multi.add(ProgressBar::new(total));
        main.set_style(
            ProgressStyle::with_template(
                "{prefix} [{elapsed_precise}] {bar:30} {pos}/{len} units  {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        main.set_prefix(if rehearsal { "REHEARSAL" } else { "booktr" });
        main.set_position(done);
        main.enable_steady_tick(Duration::from_millis(250));
        Progress {
            multi,
            main,
            lines: HashMap::new(),
        }
    }

    /// Shows a call in flight.
    pub fn start(&mut self, call: &str) {
        let pb = self.multi.add(ProgressBar::new_spinner());
        pb.set_style(
            ProgressStyle::with_template("  {spinner} {msg} [{elapsed}]")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        pb.set_message(call.to_string());
        pb.enable_steady_tick(Duration::from_millis(120));
        self.lines.insert(call.to_string(), pb);
    }

    /// Removes a call's line; `unit_done` advances the main bar.
    pub fn finish(&mut self, call: &str, unit_done: bool) {
        if let Some(pb) = self.lines.remove(call) {
            pb.finish_and_clear();
            self.multi.remove(&pb);
        }
        if unit_done {
            self.main.inc(1);
        }
    }

    /// Updates the status text (stage and tokens).
    pub fn status(&self, msg: String) {
        self.main.set_message(msg);
    }

    /// Prints a line above the bars (or plainly to stderr when hidden).
    pub fn println(&self, line: &str) {
        if self.main.is_hidden() {
            eprintln!("{line}");
        } else {
            let _ = self.multi.println(line);
        }
    }

    /// Clears everything.
    pub fn done(self) {
        for (_, pb) in self.lines {
            pb.finish_and_clear();
        }
        self.main.finish_and_clear();
    }
}
