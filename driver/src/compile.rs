//! `tessel compile`: lower a module for a target and write an artifact.

use crate::source::{SourceError, parse_file};
use clap::{Args, ValueEnum};
use std::{path::PathBuf, process::ExitCode};
use tessel_lowering::{
    cpu::{self, Padding},
    emit::{Artifact, emit},
};

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Target {
    Cpu,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Emit {
    /// The module lowered to the LLVM dialect.
    Mlir,
    /// LLVM IR, optimized for the host.
    Llvm,
    /// Host assembly.
    Asm,
    /// A relocatable object file.
    Obj,
    /// A shared library exporting `_mlir_ciface_<function>` per public function.
    So,
}

#[derive(Args, Debug)]
pub struct CompileOptions {
    /// The module (`.mlir`).
    file: PathBuf,
    #[arg(long, value_enum)]
    target: Target,
    #[arg(long, value_enum, default_value = "obj")]
    emit: Emit,
    /// Output file.
    #[arg(short = 'o', value_name = "OUT")]
    output: PathBuf,
    /// Pad partial blocks with NaN / the integer minimum instead of zeros.
    #[arg(long)]
    poison: bool,
    #[command(flatten)]
    schedule: crate::ScheduleOptions,
}

pub fn compile(options: CompileOptions) -> ExitCode {
    match compile_checked(&options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(SourceError::Reported) => ExitCode::from(1),
        Err(SourceError::Message(message)) => {
            eprintln!("{message}");
            ExitCode::from(1)
        }
    }
}

fn compile_checked(options: &CompileOptions) -> Result<(), SourceError> {
    let Target::Cpu = options.target;
    tessel_lowering::register_everything();
    let context = tessel_dialects::create_context();
    let (mut module, _diagnostics) = parse_file(&context, &options.file)?;
    let padding = if options.poison { Padding::Poison } else { Padding::Zero };
    options.schedule.get().apply(&context, &mut module);
    cpu::lower(&context, &mut module, padding).map_err(|_| SourceError::Reported)?;
    let failed = |e: &dyn std::fmt::Display| SourceError::Message(format!("tessel: error: {e}"));
    let artifact = match options.emit {
        Emit::Mlir => {
            let text = format!("{}\n", module.as_operation());
            return std::fs::write(&options.output, text).map_err(|e| failed(&e));
        }
        Emit::Llvm => Artifact::LlvmIr,
        Emit::Asm => Artifact::Assembly,
        Emit::Obj => Artifact::Object,
        Emit::So => Artifact::SharedLibrary,
    };
    emit(&module, artifact, &options.output).map_err(|e| failed(&e))
}
