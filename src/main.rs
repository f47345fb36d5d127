//! The `lab-runner` binary: parse the command line, resolve it, run the command, map the outcome to an exit code.

use std::process::ExitCode;

use lab_runner::{cli, commands};

/// mimalloc instead of glibc's malloc: the simulator at cluster scale is allocation-bound (JSON
/// parsed and written per object change), and glibc kept the peak of loading a 1,000-node store
/// as resident memory long after it was freed (issue #17).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let parsed = cli::parse();
    let lang = cli::lang_of(&parsed, cli::locale().as_deref());
    commands::finish(cli::resolve(parsed).and_then(commands::run), lang)
}
