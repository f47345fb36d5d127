//! The `lab-runner` binary: parse the command line, run, map the outcome to an exit code.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = lab_runner::cli::Cli::parse();
    lab_runner::run::main(cli)
}
