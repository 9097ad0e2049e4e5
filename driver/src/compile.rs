//! `tessel compile`: lower a module for a target and write an artifact.

use crate::{DriverError, source::parse_file};
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use tessel_dialects::knobs;
use tessel_lowering::{
    cpu::{self, Padding},
    emit::{Artifact, CodeTarget, emit},
    rocm,
};
use tessel_passes::CpuModel;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Target {
    /// The host CPU, all cores.
    Cpu,
    /// AMD GPUs (HSACO code objects).
    Rocm,
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
    /// An AMD GPU code object (`--target rocm`).
    Hsaco,
}

#[derive(Args, Debug)]
pub struct CompileOptions {
    /// The module (`.mlir`).
    file: PathBuf,
    #[arg(long, value_enum)]
    target: Target,
    /// What to write (default: obj for the CPU, hsaco for ROCm).
    #[arg(long, value_enum)]
    emit: Option<Emit>,
    /// Output file.
    #[arg(short = 'o', value_name = "OUT")]
    output: PathBuf,
    #[arg(long, help = tessel_dialects::knobs::POISON.help)]
    poison: bool,
    /// The CPU to generate code for, as LLVM names it (x86-64-v3, znver3,
    /// sapphirerapids, neoverse-v2, ...; default: the host). Register tiles
    /// follow its vector width and registers.
    #[arg(long, value_name = "NAME")]
    cpu: Option<String>,
    /// The target triple, for objects and assembly for another
    /// architecture (e.g. aarch64-linux-gnu; default: the host's).
    #[arg(long, value_name = "TRIPLE")]
    target_triple: Option<String>,
    #[command(flatten)]
    schedule: crate::ScheduleOptions,
    #[command(flatten)]
    gpu: crate::GpuOptions,
}

pub fn compile(options: CompileOptions) -> Result<(), DriverError> {
    let model = named_model(&options).map_err(DriverError::Usage)?;
    compile_checked(&options, model)
}

/// The model of the CPU `--cpu`/`--target-triple` name (`None`: the host);
/// an unknown CPU, or the flags without `--target cpu`, is a usage error.
fn named_model(options: &CompileOptions) -> Result<Option<CpuModel>, String> {
    if options.cpu.is_none() && options.target_triple.is_none() {
        return Ok(None);
    }
    if options.target != Target::Cpu {
        return Err("--cpu and --target-triple are for --target cpu".into());
    }
    let cpu = options.cpu.as_deref().unwrap_or("generic");
    CpuModel::named(options.target_triple.as_deref(), cpu).map(Some).ok_or_else(|| {
        format!(
            "unknown CPU '{cpu}' for {} (LLVM names such as x86-64-v3, znver3, sapphirerapids; any CPU on aarch64)",
            options.target_triple.as_deref().unwrap_or("x86_64")
        )
    })
}

fn compile_checked(options: &CompileOptions, model: Option<CpuModel>) -> Result<(), DriverError> {
    tessel_lowering::register_everything();
    let context = tessel_dialects::create_context();
    let (mut module, _diagnostics) = parse_file(&context, &options.file)?;
    // What the tuner's cache knows the kernel by: the module as parsed.
    let module_text = module.as_operation().to_string();
    let padding = if options.poison { Padding::Poison } else { Padding::Zero };
    if let Target::Rocm = options.target {
        let output = match options.emit.unwrap_or(Emit::Hsaco) {
            Emit::Mlir => rocm::Output::Mlir,
            Emit::Llvm => rocm::Output::LlvmIr,
            Emit::Asm => rocm::Output::Assembly,
            Emit::Hsaco => rocm::Output::CodeObject,
            other => {
                return Err(DriverError::Failed(format!("--emit {other:?} is for --target cpu").to_lowercase()));
            }
        };
        cpu::prepare(&context, &mut module, padding);
        let gpu = options.gpu.resolve(&options.schedule, &module_text);
        let bytes = rocm::compile(&context, &mut module, &gpu, output)?;
        return Ok(std::fs::write(&options.output, bytes)?);
    }
    options.schedule.resolve(&module_text).apply(&context, &mut module);
    let target = CodeTarget { triple: options.target_triple.as_deref(), cpu: options.cpu.as_deref() };
    if let Some(model) = model {
        record_model(&context, &mut module, model);
    }
    cpu::lower(&context, &mut module, padding)?;
    let artifact = match options.emit.unwrap_or(Emit::Obj) {
        Emit::Hsaco => return Err(DriverError::Failed("--emit hsaco needs --target rocm".into())),
        Emit::Mlir => {
            let text = format!("{}\n", module.as_operation());
            return Ok(std::fs::write(&options.output, text)?);
        }
        Emit::Llvm => Artifact::LlvmIr,
        Emit::Asm => Artifact::Assembly,
        Emit::Obj => Artifact::Object,
        Emit::So => Artifact::SharedLibrary,
    };
    Ok(emit(&module, artifact, &options.output, target)?)
}

/// Register tiles for the named CPU: its vector registers, its vector
/// width (or `--vector-bits`' or the module's, never wider than the CPU
/// runs), whether it has VNNI or vpmaddwd, the FMAs it needs in flight
/// at that width and its caches.
fn record_model(context: &melior::Context, module: &mut melior::ir::Module, model: CpuModel) {
    // The module's width (a schedule's), at most the CPU's widest.
    let bits =
        knobs::VECTOR_BITS.integer_on(&module.as_operation()).unwrap_or(model.vector_bits).min(model.vector_bits);
    knobs::VECTOR_BITS.set_integer_on(context, module, bits);
    knobs::VECTOR_REGISTERS.set_integer_on(context, module, model.vector_registers);
    knobs::VNNI.set_integer_on(context, module, i64::from(model.vnni));
    knobs::PMADDWD.set_integer_on(context, module, i64::from(model.pmaddwd));
    knobs::FMA_IN_FLIGHT.set_integer_on(context, module, model.fma_in_flight_at(bits));
    knobs::L2_BYTES.set_integer_on(context, module, model.caches.l2);
    knobs::L3_BYTES.set_integer_on(context, module, model.caches.l3);
}
