//! The `lab-runner` binary: parse the command line, run, map the outcome to an exit code.

use std::process::ExitCode;

use clap::Parser;

/// mimalloc instead of glibc's malloc: the simulator at cluster scale is allocation-bound (JSON
/// parsed and written per object change), and glibc kept the peak of loading a 1,000-node store
/// as resident memory long after it was freed (issue #17).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = lab_runner::cli::Cli::parse();
    lab_runner::run::main(cli)
}
