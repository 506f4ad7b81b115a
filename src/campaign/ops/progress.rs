//! The progress display of a run, on stderr. On a terminal, indicatif draws a live line: units
//! done/total, ETA, stage, tokens and cost so far (when `[pricing]` is set), and one line per
//! call in flight named by what it works on (`translate chapter01-007`, not its call key). The
//! lines fit 80 columns (`{wide_msg}` is cut to the width left). Without a terminal nothing is
//! drawn and no ANSI code is written: a plain line with the same facts is printed every
//! `every` seconds (default [`DEFAULT_EVERY`], `booktr run --progress-every`).
//!
//! It owns no campaign fact: the runner tells it what started, finished and what the status
//! text is; it never reads state.

use std::collections::BTreeMap;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::campaign::core::Campaign;
use crate::campaign::core::manager::Action;

/// Seconds between two plain progress lines when stderr is not a terminal.
pub const DEFAULT_EVERY: Duration = Duration::from_secs(30);

/// What the plain line tells, shared with its printing thread.
#[derive(Debug, Default)]
struct Snapshot {
    prefix: &'static str,
    total: u64,
    done: u64,
    /// Units done when the run started (they say nothing of this run's rate).
    done_at_start: u64,
    status: String,
    /// Call key → label of the calls in flight.
    in_flight: BTreeMap<String, String>,
}

impl Snapshot {
    /// `booktr: 12/40 units · ETA 3m 10s · 120.3k tokens · $0.42 · Translate · in flight:
    /// translate ch01-007, translate ch01-008`.
    fn line(&self, elapsed: Duration) -> String {
        let mut s = format!("{}: {}/{} units", self.prefix, self.done, self.total);
        if let Some(eta) = eta(
            self.done.saturating_sub(self.done_at_start),
            self.total.saturating_sub(self.done),
            elapsed,
        ) {
            s.push_str(&format!(" · ETA {}", fmt_duration(eta)));
        }
        if !self.status.is_empty() {
            s.push_str(" · ");
            s.push_str(&self.status);
        }
        if !self.in_flight.is_empty() {
            let labels: Vec<&str> = self.in_flight.values().map(String::as_str).collect();
            s.push_str(" · in flight: ");
            s.push_str(&labels.join(", "));
        }
        s
    }
}

/// Remaining time at this run's rate: `done_here` units in `elapsed`, `left` to go; `None`
/// before the first unit of this run (no rate yet) or when nothing is left.
fn eta(done_here: u64, left: u64, elapsed: Duration) -> Option<Duration> {
    (done_here > 0 && left > 0)
        .then(|| Duration::from_secs_f64(elapsed.as_secs_f64() * left as f64 / done_here as f64))
}

/// `45s`, `3m 10s`, `2h 05m`.
fn fmt_duration(d: Duration) -> String {
    let s = d.as_secs();
    if s < 60 {
        format!("{s}s")
    } else if s < 3600 {
        format!("{}m {:02}s", s / 60, s % 60)
    } else {
        format!("{}h {:02}m", s / 3600, (s % 3600) / 60)
    }
}

/// What a call in flight works on, for people: the unit id (which starts with its chapter's
/// key), the chapter of a proofreading call, the batch of a glossary call. The call key (a
/// fingerprint hash) says nothing to an editor.
pub fn label(c: &Campaign, action: &Action) -> String {
    match action {
        Action::Translate { unit, round, .. } => {
            let id = &c.units[*unit].id;
            if *round == 0 {
                format!("translate {id}")
            } else {
                format!("revise {id} (round {round})")
            }
        }
        Action::TranslatePart { part, .. } => format!("translate {part}"),
        Action::Proofread {
            chapter,
            units,
            round,
            ..
        } => format!("proofread {chapter} ({} units, round {round})", units.len()),
        Action::GlossaryBatch { n, .. } => format!("glossary batch {}", n + 1),
        Action::Brief { .. } => "book brief".into(),
        Action::Reconcile { round, .. } => format!("reconcile a term (round {round})"),
        Action::Decide { round, .. } => format!("manager decision (round {round})"),
        Action::DecideForced { round, .. } => {
            format!("manager decision (round {round}, QA errors only)")
        }
        other => format!("{other:?}")
            .split([' ', '{'])
            .next()
            .unwrap_or("")
            .to_lowercase(),
    }
}

/// The cost so far for the status text (`$0.42`, `0.42 EUR`), when `[pricing]` is set.
pub fn cost_text(c: &Campaign, prompt: u64, cached: u64, completion: u64) -> Option<String> {
    let p = c.plan.pricing.as_ref()?;
    let cost = p.cost(prompt, cached, completion);
    Some(if p.currency == "USD" {
        format!("${cost:.2}")
    } else {
        format!("{cost:.2} {}", p.currency)
    })
}

/// The plain-line printer of a run without a terminal.
struct Ticker {
    stop: mpsc::Sender<()>,
    thread: JoinHandle<()>,
}

/// Progress for one run.
pub struct Progress {
    multi: MultiProgress,
    main: ProgressBar,
    lines: BTreeMap<String, ProgressBar>,
    snapshot: Arc<Mutex<Snapshot>>,
    ticker: Option<Ticker>,
}

impl Progress {
    /// `total` units to translate, `done` already translated; plain lines every
    /// [`DEFAULT_EVERY`] without a terminal.
    pub fn new(total: u64, done: u64, rehearsal: bool) -> Progress {
        Progress::with_every(total, done, rehearsal, DEFAULT_EVERY)
    }

    /// As [`Progress::new`], with a plain line every `every` (at least 100 ms) when stderr is
    /// not a terminal.
    pub fn with_every(total: u64, done: u64, rehearsal: bool, every: Duration) -> Progress {
        let prefix = if rehearsal { "REHEARSAL" } else { "booktr" };
        let live = crate::term::stderr_is_terminal();
        let target = if live {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        let multi = MultiProgress::with_draw_target(target);
        let main = multi.add(ProgressBar::new(total));
        // 9 + 1 + 16 + 1 + 15 (`1234/5678 units`) + 14 (` · ETA 12m 30s`) = 56 columns before the
        // message, which is cut to what is left of the terminal's width.
        main.set_style(
            ProgressStyle::with_template(
                "{prefix} {bar:10} {pos}/{len} units · ETA {eta} · {wide_msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        main.set_prefix(prefix);
        main.set_position(done);
        // The units done before this run say nothing of its rate.
        main.reset_eta();
        if live {
            main.enable_steady_tick(Duration::from_millis(250));
        }
        let snapshot = Arc::new(Mutex::new(Snapshot {
            prefix,
            total,
            done,
            done_at_start: done,
            ..Snapshot::default()
        }));
        let ticker = (!live).then(|| {
            let (stop, rx) = mpsc::channel::<()>();
            let shared = snapshot.clone();
            let every = every.max(Duration::from_millis(100));
            let started = Instant::now();
            let thread = std::thread::spawn(move || {
                while let Err(RecvTimeoutError::Timeout) = rx.recv_timeout(every) {
                    let line = shared
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .line(started.elapsed());
                    eprintln!("{line}");
                }
            });
            Ticker { stop, thread }
        });
        Progress {
            multi,
            main,
            lines: BTreeMap::new(),
            snapshot,
            ticker,
        }
    }

    fn snap(&self) -> std::sync::MutexGuard<'_, Snapshot> {
        self.snapshot.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Shows a call in flight under its call key.
    pub fn start(&mut self, call: &str) {
        self.start_labelled(call, call);
    }

    /// Shows a call in flight as `label` (see [`label`]); `call` (its key) identifies it for
    /// [`Progress::finish`].
    pub fn start_labelled(&mut self, call: &str, label: &str) {
        self.snap()
            .in_flight
            .insert(call.to_string(), label.to_string());
        if self.ticker.is_some() {
            return;
        }
        let pb = self.multi.add(ProgressBar::new_spinner());
        pb.set_style(
            ProgressStyle::with_template("  {spinner} [{elapsed:>4}] {wide_msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        pb.set_message(label.to_string());
        pb.enable_steady_tick(Duration::from_millis(120));
        self.lines.insert(call.to_string(), pb);
    }

    /// Removes a call's line; `unit_done` advances the units done.
    pub fn finish(&mut self, call: &str, unit_done: bool) {
        if let Some(pb) = self.lines.remove(call) {
            pb.finish_and_clear();
            self.multi.remove(&pb);
        }
        let mut s = self.snap();
        s.in_flight.remove(call);
        if unit_done {
            s.done += 1;
            drop(s);
            self.main.inc(1);
        }
    }

    /// Updates the status text (stage, tokens, cost).
    pub fn status(&self, msg: String) {
        self.snap().status = msg.clone();
        self.main.set_message(msg);
    }

    /// Prints a line above the live lines (or plainly to stderr without a terminal).
    pub fn println(&self, line: &str) {
        if self.main.is_hidden() {
            eprintln!("{line}");
        } else {
            let _ = self.multi.println(line);
        }
    }

    /// Clears everything and stops the plain lines.
    pub fn done(self) {
        if let Some(t) = self.ticker {
            let _ = t.stop.send(());
            let _ = t.thread.join();
        }
        for (_, pb) in self.lines {
            pb.finish_and_clear();
        }
        self.main.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_line_tells_units_eta_status_and_units_in_flight() {
        let mut s = Snapshot {
            prefix: "booktr",
            total: 40,
            done: 12,
            done_at_start: 2,
            status: "120.3k tokens · $0.42 · Translate".into(),
            ..Snapshot::default()
        };
        s.in_flight.insert(
            "translate/88cdc66f9720c011/r0".into(),
            "translate ch01-007".into(),
        );
        s.in_flight.insert(
            "translate/99cdc66f9720c011/r0".into(),
            "translate ch02-001".into(),
        );
        // 10 units in 100 s, 28 left: 280 s.
        assert_eq!(
            s.line(Duration::from_secs(100)),
            "booktr: 12/40 units · ETA 4m 40s · 120.3k tokens · $0.42 · Translate · in flight: translate ch01-007, translate ch02-001"
        );
        // No unit done in this run yet: no ETA.
        s.done = 2;
        assert!(!s.line(Duration::from_secs(5)).contains("ETA"));
    }

    #[test]
    fn durations_read_as_a_person_says_them() {
        assert_eq!(fmt_duration(Duration::from_secs(45)), "45s");
        assert_eq!(fmt_duration(Duration::from_secs(190)), "3m 10s");
        assert_eq!(fmt_duration(Duration::from_secs(7500)), "2h 05m");
        assert_eq!(eta(0, 5, Duration::from_secs(9)), None);
        assert_eq!(eta(3, 0, Duration::from_secs(9)), None);
        assert_eq!(
            eta(3, 6, Duration::from_secs(9)),
            Some(Duration::from_secs(18))
        );
    }
}
