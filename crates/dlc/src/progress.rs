//! The progress line on standard error for evaluations that run longer than a second.

use std::io::Write;
use std::time::{Duration, Instant};

/// Clears the status line when the evaluation that drew it is over.
struct Line {
    drawn: bool,
}

impl Line {
    /// Calling a method makes the closure capture the whole `Line`, so it is dropped (and
    /// the line cleared) together with the closure rather than at once.
    fn mark_drawn(&mut self) {
        self.drawn = true;
    }
}

impl Drop for Line {
    fn drop(&mut self) {
        if self.drawn {
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
        }
    }
}

/// A progress callback that stays silent for the first second and then redraws one
/// status line at most twice a second; `None` when standard error is not a terminal.
pub fn reporter(terminal: bool) -> Option<Box<dyn FnMut(exec::Progress)>> {
    if !terminal {
        return None;
    }
    let start = Instant::now();
    let mut last = start;
    let mut line = Line { drawn: false };
    Some(Box::new(move |p: exec::Progress| {
        let now = Instant::now();
        if now.duration_since(start) < Duration::from_secs(1) || now.duration_since(last) < Duration::from_millis(500) {
            return;
        }
        last = now;
        line.mark_drawn();
        let mut err = std::io::stderr();
        let elapsed = now.duration_since(start).as_secs_f64();
        let _ = write!(err, "\r\x1b[2Kiteration {} · {} facts · {elapsed:.1} s", p.iteration, p.facts);
        let _ = err.flush();
    }))
}
