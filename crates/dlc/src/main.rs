//! The `dlc` executable: a thin shell that hands the process's arguments and standard
//! streams to the library.

use std::io::{IsTerminal, Write};

fn main() {
    keep_large_blocks_mapped();
    flow::on_lost_peer(lost_peer);
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

/// Ends this process of a cluster that lost a peer, with the error and a non-zero
/// status. The dataflow calls it on the network thread that noticed, the moment the
/// peer goes: timely's workers then stop by panicking, and a second panic while they
/// unwind would abort the process. It writes to a handle of its own on standard error:
/// the pipeline's thread holds the usual one.
fn lost_peer(reason: &str) {
    use std::os::fd::AsFd;
    if let Ok(fd) = std::io::stderr().as_fd().try_clone_to_owned() {
        let _ = std::fs::File::from(fd).write_all(dlc::cluster_stopped_text(reason).as_bytes());
    }
    std::process::exit(dlc::EXIT_INPUT_ERROR);
}

/// Keeps glibc's threshold for serving a block by its own mapping at its initial
/// 128 KiB. By default glibc raises the threshold to the size of each mapped block freed
/// (up to 32 MiB), after which the vectors of a large relation grow inside the heap:
/// every reallocation copies, holding the old and the new buffer at once, and what is
/// freed stays in the process. In their own mappings they grow by remapping, without a
/// copy, and go back to the system when freed: the evaluation of forest10000x50's
/// closure peaks at 48 MiB rather than 58, in the same time.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn keep_large_blocks_mapped() {
    use std::ffi::c_int;
    extern "C" {
        fn mallopt(param: c_int, value: c_int) -> c_int;
    }
    const M_MMAP_THRESHOLD: c_int = -3;
    // SAFETY: mallopt only sets a tunable of the allocator; it is called before any
    // thread starts, and a refusal (a zero result) leaves the default in place.
    unsafe {
        mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn keep_large_blocks_mapped() {}
