//! `tessel run`: JIT-compile a module for the host CPU and call a function
//! on host arrays (`.npy` files, random or zero fills).

use crate::{DriverError, source::parse_file};
use clap::Args;
use melior::ir::{
    BlockLike, Module, RegionLike, TypeLike, ValueLike,
    operation::{OperationLike, OperationMutLike},
    r#type::ShapedTypeLike,
};
use std::{path::PathBuf, time::Instant};
use tessel_lowering::cpu::{self, Padding};
use tessel_runtime::{ElementType, HostArray, Jit, format_numpy, interpret::interpret};

/// LLVM optimization level of the emulated GPU's JIT (see `run`).
const EMULATOR_OPTIMIZATION: usize = 0;

#[derive(Args, Debug)]
pub struct RunOptions {
    /// The module (`.mlir`).
    file: PathBuf,
    /// The function to call; all its arguments are memrefs.
    #[arg(long)]
    entry: String,
    /// `N=PATH.npy`, `N=random:SEED` or `N=zeros` for argument N (default zeros).
    #[arg(long = "arg", value_name = "N=SOURCE")]
    args: Vec<String>,
    /// Write every argument after the call as DIR/arg<N>.npy.
    #[arg(long, value_name = "DIR")]
    dump: Option<PathBuf>,
    #[arg(long, help = tessel_dialects::knobs::POISON.help)]
    poison: bool,
    /// Run the reference interpreter instead of compiled code.
    #[arg(long, conflicts_with_all = ["check", "bench"])]
    interpret: bool,
    /// Run compiled code (with --poison padding) and the interpreter, and
    /// compare every argument afterwards.
    #[arg(long)]
    check: bool,
    /// Time repeated calls; the last line is {"median_s", "min_s", "runs"}.
    #[arg(long)]
    bench: bool,
    /// Check every load and store of the CPU code (the host code, on the
    /// emulated GPU, whose kernels are always checked) against the memory
    /// it addresses: one outside is skipped and fails the run, naming it.
    #[arg(long, conflicts_with = "interpret")]
    bounds_checks: bool,
    /// Where compiled code runs.
    #[arg(long, value_enum, default_value = "cpu")]
    device: Device,
    #[command(flatten)]
    schedule: crate::ScheduleOptions,
    #[command(flatten)]
    gpu: crate::GpuOptions,
    #[command(flatten)]
    jit_cpu: crate::JitCpuOption,
}

/// Devices `tessel run` can run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Device {
    /// The host CPU, all cores (the tessel-to-cpu pipeline).
    Cpu,
    /// The ROCm pipeline's GPU kernels, emulated on the CPU (workgroups,
    /// work-items, LDS and barriers).
    RocmEmulated,
    /// An AMD GPU through HIP (needs the `hip` build feature and a GPU;
    /// --chip must name it).
    Hip,
}

/// Where an argument's initial contents come from.
enum ArgSource {
    Zeros,
    Random(u64),
    Npy(PathBuf),
}

fn parse_arg(text: &str) -> Result<(usize, ArgSource), DriverError> {
    let usage = |why: String| DriverError::Usage(format!("--arg '{text}': {why}"));
    let (index, source) = text.split_once('=').ok_or_else(|| usage("expected N=SOURCE".into()))?;
    let index = index.parse().map_err(|_| usage(format!("'{index}' is not an argument number")))?;
    let source = match source {
        "zeros" => ArgSource::Zeros,
        _ if source.starts_with("random:") => ArgSource::Random(
            source["random:".len()..].parse().map_err(|_| usage("the seed must be an unsigned integer".into()))?,
        ),
        path => ArgSource::Npy(PathBuf::from(path)),
    };
    Ok((index, source))
}

pub fn run(options: RunOptions) -> Result<(), DriverError> {
    options.jit_cpu.select()?;
    let sources = options.args.iter().map(|text| parse_arg(text)).collect::<Result<Vec<_>, _>>()?;
    run_checked(&options, sources)
}

/// The element type and shape of each argument of `entry`.
/// The memref arguments of `entry`: (type text, element type, shape).
pub fn signature(
    module: &Module,
    entry: &str,
    file: &str,
) -> Result<Vec<(String, ElementType, Vec<usize>)>, DriverError> {
    let body = module.body();
    let mut op = body.first_operation();
    while let Some(function) = op {
        let is_entry = function.name().as_string_ref().as_str() == Ok("func.func")
            && function.attribute("sym_name").is_ok_and(|name| name.to_string() == format!("\"{entry}\""));
        if is_entry {
            let region =
                function.region(0).map_err(|_| DriverError::Located(format!("{file}: error: @{entry} has no body")))?;
            let block = region
                .first_block()
                .ok_or_else(|| DriverError::Located(format!("{file}: error: @{entry} has no body")))?;
            return (0..block.argument_count())
                .map(|i| {
                    let r#type = block.argument(i).unwrap().r#type();
                    let text = r#type.to_string();
                    let located = |why: &str| {
                        tessel_passes::emit_error(
                            function.location(),
                            &format!("argument #{i} of @{entry} {why}, got {text}"),
                        );
                        DriverError::Reported
                    };
                    if !r#type.is_mem_ref() {
                        return Err(located("must be a memref"));
                    }
                    let memref = melior::ir::r#type::MemRefType::try_from(r#type).unwrap();
                    let element = ElementType::from_mlir(&memref.element().to_string())
                        .ok_or_else(|| located("has an unsupported element type"))?;
                    let shape: Option<Vec<usize>> = (0..memref.rank())
                        .map(|d| match memref.dim_size(d) {
                            Ok(melior::ir::r#type::DimSize::Static(size)) => Some(size as usize),
                            _ => None,
                        })
                        .collect();
                    let shape = shape.ok_or_else(|| located("must have a static shape"))?;
                    if HostArray::byte_size(element, &shape).is_none() {
                        return Err(located("is too large to allocate"));
                    }
                    Ok((text, element, shape))
                })
                .collect();
        }
        op = function.next_in_block();
    }
    Err(DriverError::Located(format!("{file}: error: no function @{entry}")))
}

fn run_checked(options: &RunOptions, sources: Vec<(usize, ArgSource)>) -> Result<(), DriverError> {
    tessel_lowering::register_everything();
    let context = tessel_dialects::create_context();
    let file = options.file.display().to_string();
    let (mut module, diagnostics) = parse_file(&context, &options.file)?;
    // What the tuner's cache knows the kernel by: the module as parsed.
    let module_text = module.as_operation().to_string();
    let signature = signature(&module, &options.entry, &file)?;

    let allocation = |index: usize| move |source| DriverError::Argument { index, source };
    let mut arrays: Vec<HostArray> = signature
        .iter()
        .enumerate()
        .map(|(index, (_, element, shape))| HostArray::zeros(*element, shape).map_err(allocation(index)))
        .collect::<Result<_, _>>()?;
    for (index, source) in sources {
        let Some((_, element, shape)) = signature.get(index) else {
            return Err(DriverError::Located(format!(
                "{file}: error: --arg {index}: @{} has {} arguments",
                options.entry,
                signature.len()
            )));
        };
        arrays[index] = match source {
            ArgSource::Zeros => HostArray::zeros(*element, shape).map_err(allocation(index))?,
            ArgSource::Random(seed) => {
                HostArray::random(*element, shape, seed.wrapping_add(index as u64)).map_err(allocation(index))?
            }
            ArgSource::Npy(path) => HostArray::read_npy(&path, *element, shape).map_err(allocation(index))?,
        };
    }

    // The interpreter runs on the dialect-level IR, before lowering, with
    // the DMA mode the run asks for (it changes when copies happen).
    if let Some(mode) = options.schedule.explicit_integer(&tessel_dialects::knobs::DMA_MODE) {
        tessel_dialects::knobs::DMA_MODE.set_integer_on(&context, &mut module, mode);
    }
    let races = options.schedule.explicit_integer(&tessel_dialects::knobs::DETECT_RACES) == Some(1);
    if races && options.interpret {
        return Err(DriverError::Usage(
            "--detect-races instruments compiled code; the interpreter (--interpret) does not detect races".into(),
        ));
    }
    let interpreted = if options.interpret || options.check {
        let mut copies = arrays.clone();
        let printed = interpret(&module, &options.entry, &mut copies)?;
        if options.interpret {
            printed.iter().for_each(|line| crate::write_stdout(&format!("{line}\n")));
        }
        Some(copies)
    } else {
        None
    };
    let mut jit = None;
    match (options.interpret, interpreted) {
        (true, Some(copies)) => arrays = copies,
        (_, reference) => {
            let padding = if options.poison || options.check { Padding::Poison } else { Padding::Zero };
            if options.device == Device::Hip {
                if options.bench {
                    return Err(DriverError::Failed("--bench times the CPU devices only".into()));
                }
                // No GPU, no compile: say so first.
                tessel_runtime::hip::device_count()?;
                cpu::prepare(&context, &mut module, padding);
                let gpu = options.gpu.resolve(&options.schedule, &module_text);
                let lowered = tessel_lowering::rocm::compile_for_launch(&context, &mut module, &gpu, &options.entry);
                let (object, program) = lowered?;
                tessel_runtime::hip::run(&object, &program, &mut arrays)?;
            } else {
                if options.bounds_checks {
                    let unit = melior::ir::Attribute::unit(&context);
                    module.as_operation_mut().set_attribute(tessel_dialects::BOUNDS_CHECKS, unit);
                }
                match options.device {
                    Device::RocmEmulated => {
                        cpu::prepare(&context, &mut module, padding);
                        tessel_lowering::rocm::lower_emulated(
                            &context,
                            &mut module,
                            &options.gpu.resolve(&options.schedule, &module_text),
                        )
                    }
                    _ => {
                        options.schedule.resolve(&module_text).apply(&context, &mut module);
                        cpu::lower(&context, &mut module, padding)
                    }
                }
                .map_err(DriverError::from)?;
                // The emulated GPU's kernels unroll into blocks so large that
                // LLVM's machine scheduler (quadratic in a block) takes most
                // of a run at -O3; an emulator needs its results, not speed.
                let optimization = if options.device == Device::RocmEmulated { EMULATOR_OPTIMIZATION } else { 3 };
                let compiled = Jit::new(&module, optimization)?;
                compiled.call(&options.entry, &mut arrays)?;
                report_races(&compiled);
                jit = Some(compiled);
            }
            if let Some(reference) = reference {
                tessel_runtime::compare(&arrays, &reference, "compiled", "interpreter").map_err(DriverError::Check)?;
            }
        }
    }
    drop(diagnostics);

    let mut printed = String::new();
    for (index, ((r#type, _, _), array)) in signature.iter().zip(&arrays).enumerate() {
        printed.push_str(&format!("arg{index}: {type}\n{}\n", format_numpy(array)));
    }
    crate::write_stdout(&printed);
    if let Some(dir) = &options.dump {
        std::fs::create_dir_all(dir)
            .map_err(|source| DriverError::CreateDir { path: dir.display().to_string(), source })?;
        for (index, array) in arrays.iter().enumerate() {
            array.write_npy(&dir.join(format!("arg{index}.npy")))?;
        }
    }
    if options.check {
        crate::write_stdout("check: compiled code matches the interpreter\n");
    }
    if let (true, Some(jit)) = (options.bench, &jit) {
        bench(jit, &options.entry, &mut arrays)?;
    }
    Ok(())
}

/// Under `--detect-races`, says on stderr whether the call raced (races
/// are reported, not errors, as JAX's interpreter reports them).
fn report_races(compiled: &Jit) {
    if compiled.detects_races() {
        match tessel_runtime::race_detection::take_race() {
            Some(race) => eprintln!("tessel: race detected: {}", compiled.describe_race(&race)),
            None => eprintln!("tessel: no race detected"),
        }
    }
}

/// Times calls (one warm-up, then at least 5 and up to 1000 runs or about
/// one second) and prints the JSON summary line.
fn bench(jit: &Jit, entry: &str, arrays: &mut [HostArray]) -> Result<(), DriverError> {
    let call = |arrays: &mut [HostArray]| jit.call(entry, arrays);
    call(arrays)?;
    let mut times = Vec::new();
    let started = Instant::now();
    while times.len() < 5 || (times.len() < 1000 && started.elapsed().as_secs_f64() < 1.0) {
        let start = Instant::now();
        call(arrays)?;
        times.push(start.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    crate::write_stdout(&format!(
        "{{\"median_s\": {:e}, \"min_s\": {:e}, \"runs\": {}}}\n",
        times[times.len() / 2],
        times[0],
        times.len()
    ));
    Ok(())
}
