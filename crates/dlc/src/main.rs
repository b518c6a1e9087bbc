//! The `dlc` executable: a thin shell that hands the process's arguments and standard
//! streams to the library.

use std::io::{IsTerminal, Write};

fn main() {
    let stdin = std::io::stdin();
    let interactive = match stdin.is_terminal() && std::io::stdout().is_terminal() {
        true => dlc::Interactive::Yes,
        false => dlc::Interactive::No,
    };
    let mut input = stdin.lock();
    let mut out = std::io::stdout().lock();
    let mut err = std::io::stderr().lock();
    let code = dlc::run_with(std::env::args_os(), &mut input, &mut out, &mut err, interactive);
    let _ = out.flush();
    let _ = err.flush();
    std::process::exit(code);
}
