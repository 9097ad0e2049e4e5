//! `tessel`: compile and run Pallas-style kernels.
use clap::{Parser, Subcommand};
use std::process::ExitCode;
use tessel_driver::{
    DriverError,
    compile::{CompileOptions, compile},
    run::{RunOptions, run},
    tune::{TuneOptions, tune},
};

#[derive(Parser)]
#[command(name = "tessel", about = "Compile and run Pallas-style block kernels")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// JIT-compile for the host CPU and call a function on host arrays.
    Run(RunOptions),
    /// Compile for a target and write an artifact.
    Compile(CompileOptions),
    /// Search the kernel's CPU schedules by measurement (BEAM); cache the best.
    Tune(TuneOptions),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            return ExitCode::from(if error.use_stderr() { 2 } else { 0 });
        }
    };
    let result = match cli.command {
        Command::Run(options) => run(options),
        Command::Compile(options) => compile(options),
        Command::Tune(options) => tune(options),
    };
    report(result)
}

/// The one place a command's failure is printed and becomes an exit code.
fn report(result: Result<(), DriverError>) -> ExitCode {
    let Err(error) = result else { return ExitCode::SUCCESS };
    match &error {
        DriverError::Reported => {}
        DriverError::Located(message) => eprintln!("{message}"),
        other => eprintln!("tessel: error: {other}"),
    }
    ExitCode::from(error.exit_code())
}
