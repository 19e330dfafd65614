//! Writing to the terminal without panicking: `println!` panics when stdout is a closed pipe
//! (`switchyard audit | head -1`). [`outln!`] writes to stdout and end the process
//! quietly (exit 0) once the reader has gone: nothing is left to say to anyone. [`errln!`] and
//! [`err!`] write diagnostics to stderr and carry on when nobody reads them (a sync keeps
//! going; a value that must be seen checks its own write: `commands/first_secrets.rs`).
//!
//! Both escape every control character but the line feed (`crate::table::clean`), so text
//! from the control plane that a command did not clean itself still cannot drive the terminal
//! (escape sequences, carriage returns); the fields a line is made of are cleaned where they
//! are printed, which also escapes their line feeds. A progress line that redraws itself
//! writes its `\r` with [`progress`].

use std::fmt;
use std::io::Write;

/// Writes to stdout; a reader that went away ends the process with exit 0.
pub fn stdout(args: fmt::Arguments<'_>) {
    let text = crate::table::clean_lines(&fmt::format(args));
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        // Any other failure (a full disk behind a redirect) is the user's to see.
        let _ = writeln!(
            std::io::stderr(),
            "error: cannot write to standard output: {e}"
        );
        std::process::exit(1);
    }
}

/// Writes to stderr; a failure is ignored (diagnostics nobody can read).
pub fn stderr(args: fmt::Arguments<'_>) {
    let text = crate::table::clean_lines(&fmt::format(args));
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// Back to the start of a terminal's line on stderr (to write over a progress line).
pub fn line_start() {
    let _ = std::io::stderr().lock().write_all(b"\r");
}

/// Redraws a progress line on a terminal's stderr: `\r`, the line, padding, flushed.
pub fn progress(line: &str) {
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "\r{}   ", crate::table::clean(line));
    let _ = err.flush();
}

/// `println!` that ends the process quietly when stdout is closed.
macro_rules! outln {
    () => { $crate::output::stdout(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::output::stdout(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `eprintln!` that never panics.
macro_rules! errln {
    () => { $crate::output::stderr(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::output::stderr(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `eprint!` that never panics.
macro_rules! err {
    ($($arg:tt)*) => { $crate::output::stderr(format_args!($($arg)*)) };
}
