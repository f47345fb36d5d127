//! The `lab-runner` binary: parse the command line, resolve it, run the command, map the outcome to an exit code.

use std::process::ExitCode;

use lab_runner::{cli, commands};

/// mimalloc instead of glibc's malloc: the simulator at cluster scale is allocation-bound (JSON
/// parsed and written per object change), and glibc kept the peak of loading a 1,000-node store
/// as resident memory long after it was freed (issue #17).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let locale = cli::locale();
    // The help and a usage error are in the learner's language too: it is read before parsing.
    let parsed = cli::parse(args.clone(), cli::lang_before_parsing(&args, locale.as_deref()));
    let lang = cli::lang_of(&parsed, locale.as_deref());
    commands::finish(cli::resolve(parsed).and_then(commands::run), lang)
}
