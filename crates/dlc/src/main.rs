//! The `dlc` executable: a thin shell that hands the process's arguments and standard
//! streams to the library.

use std::io::Write;

fn main() {
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut out = std::io::stdout().lock();
    let mut err = std::io::stderr().lock();
    let code = dlc::run(std::env::args_os(), &mut input, &mut out, &mut err);
    let _ = out.flush();
    let _ = err.flush();
    std::process::exit(code);
}
