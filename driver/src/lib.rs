#![doc = include_str!("../../docs/library.md")]
#![deny(clippy::undocumented_unsafe_blocks)]
// The `tessel-opt` and `tessel` command-line tools, as thin shells over the
// Tessel crates; docs/library.md (above) is the crate's documentation, and
// its library example a doctest.

pub mod compile;
pub mod error;
mod knob_flags;
pub mod opt;
pub mod run;
pub mod source;
pub mod tune;

pub use error::DriverError;
use tessel_dialects::knobs::{self, Knob, Settings, Target};

/// Schedule knobs shared by `tessel run` and `tessel compile`: a flag per
/// CPU (and shared) knob of the table (`knob_flags`), and `--no-cache`.
#[derive(Debug, Default)]
pub struct ScheduleOptions {
    explicit: Settings,
    no_cache: bool,
}

impl ScheduleOptions {
    /// The value the command line gives knob `knob`, if any.
    pub fn explicit_integer(&self, knob: &Knob) -> Option<i64> {
        self.explicit.integer(knob)
    }
}

fn cpu_knob(knob: &Knob) -> bool {
    knob.target != Target::Gpu
}

fn gpu_knob(knob: &Knob) -> bool {
    knob.target == Target::Gpu
}

impl clap::Args for ScheduleOptions {
    fn augment_args(command: clap::Command) -> clap::Command {
        knob_flags::add(command, cpu_knob).arg(
            clap::Arg::new("no_cache")
                .long("no-cache")
                .action(clap::ArgAction::SetTrue)
                .help("Ignore schedules `tessel tune` cached for this kernel"),
        )
    }

    fn augment_args_for_update(command: clap::Command) -> clap::Command {
        Self::augment_args(command)
    }
}

impl clap::FromArgMatches for ScheduleOptions {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<Self, clap::Error> {
        Ok(ScheduleOptions { explicit: knob_flags::read(matches, cpu_knob), no_cache: matches.get_flag("no_cache") })
    }

    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

/// The GPU knobs' flags (`--num-warps`, `--matrix-cores`), from the table.
#[derive(Debug, Default)]
pub struct GpuKnobs(Settings);

impl clap::Args for GpuKnobs {
    fn augment_args(command: clap::Command) -> clap::Command {
        knob_flags::add(command, gpu_knob)
    }

    fn augment_args_for_update(command: clap::Command) -> clap::Command {
        Self::augment_args(command)
    }
}

impl clap::FromArgMatches for GpuKnobs {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<Self, clap::Error> {
        Ok(GpuKnobs(knob_flags::read(matches, gpu_knob)))
    }

    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl ScheduleOptions {
    /// The knobs given on the command line, else the schedule `tessel tune`
    /// cached for `module_text` (the module as parsed and printed), else
    /// the defaults. Says on stderr when it uses the cache (or ignores a
    /// corrupt entry).
    pub fn resolve(&self, module_text: &str) -> tessel_lowering::cpu::Schedule {
        let explicit = self.explicit.clone();
        if !explicit.is_empty() || self.no_cache {
            return explicit;
        }
        match tessel_tuner::cached_schedule(module_text, &tessel_tuner::cache::default_dir()) {
            Ok(Some(tuned)) => {
                let [rows, columns] = tuned.register_tile;
                eprintln!(
                    "tessel: note: using the tuned schedule from the cache: register tile {rows}x{columns}, \
                     num_stages {}, k chunk {}, k unroll {}, threads {}, vector bits {}, padded tiles {}, {} grid, \
                     reductions {}",
                    tuned.num_stages,
                    if tuned.k_chunk > 0 { tuned.k_chunk.to_string() } else { "the caches' choice".into() },
                    tuned.k_unroll,
                    if tuned.num_threads > 0 { tuned.num_threads.to_string() } else { "all".into() },
                    tuned.bits(),
                    if tuned.pad_tiles { "on" } else { "off" },
                    tessel_lowering::grid_order_name(tuned.column_major),
                    match (tuned.group, tuned.group_top) {
                        (0, _) => "unsplit".to_string(),
                        (p, false) => format!("in {p} interleaved partials (group)"),
                        (p, true) => format!("in {p} contiguous partials (group top)"),
                    }
                );
                tuned.to_lowering()
            }
            Ok(None) => explicit,
            Err(warning) => {
                eprintln!("tessel: warning: {warning}");
                explicit
            }
        }
    }
}

/// The AMD GPU to compile for (`--target rocm`, `--device rocm-emulated`).
#[derive(Clone, Copy, Debug, Default, clap::ValueEnum)]
pub enum ChipOption {
    #[default]
    Gfx90a,
    Gfx942,
    Gfx1100,
}

/// `--cpu CPU` of `run` and `tune`: code compiled in process for a CPU the
/// host runs (as `TESSEL_CPU`, which it sets).
#[derive(clap::Args, Debug, Default)]
pub struct JitCpuOption {
    /// Generate code for this CPU instead of the host's: an x86-64 level
    /// (x86-64-v3: AVX2, x86-64-v4: AVX-512) or an LLVM CPU name (haswell,
    /// znver3, ...) whose every feature the host has (default: TESSEL_CPU,
    /// else the host).
    #[arg(long, value_name = "CPU")]
    cpu: Option<String>,
}

impl JitCpuOption {
    /// Checks the CPU and makes it the JIT's for this process. Call it
    /// first in a command, while the process has one thread.
    pub fn select(&self) -> Result<(), DriverError> {
        use tessel_dialects::jit_cpu;
        let Some(name) = self.cpu.as_deref() else { return Ok(()) };
        let cpu = jit_cpu::check(name).map_err(|error| {
            DriverError::Usage(match error {
                jit_cpu::CpuError::Unknown => format!(
                    "--cpu {name}: run and tune generate code for {} (tessel compile --cpu takes any CPU)",
                    jit_cpu::choices()
                ),
                error => format!("--cpu {name}: {error}"),
            })
        })?;
        // SAFETY: commands call this before they start any thread (the
        // JIT, OpenMP and the tuner's workers come later), so nothing reads
        // the environment concurrently.
        unsafe { std::env::set_var(jit_cpu::VARIABLE, cpu) };
        Ok(())
    }
}

/// Options of the ROCm path.
#[derive(clap::Args, Debug, Default)]
pub struct GpuOptions {
    #[arg(long, help = knobs::CHIP.help, value_enum, default_value = knobs::CHIP.default)]
    chip: ChipOption,
    /// Code object version of the HSACO.
    #[arg(long, value_name = "4|5|6", default_value = "5", value_parser = clap::value_parser!(u32).range(4..=6))]
    code_object: u32,
    #[command(flatten)]
    knobs: GpuKnobs,
}

impl GpuOptions {
    pub fn chip(&self) -> tessel_lowering::rocm::Chip {
        use tessel_lowering::rocm::Chip;
        match self.chip {
            ChipOption::Gfx90a => Chip::Gfx90a,
            ChipOption::Gfx942 => Chip::Gfx942,
            ChipOption::Gfx1100 => Chip::Gfx1100,
        }
    }

    /// The ROCm options: the knobs given (`num_stages` from the schedule
    /// knobs), else the schedule `tessel tune --target rocm` cached for
    /// `module_text` on this chip (said on stderr), else the defaults.
    pub fn resolve(&self, schedule: &ScheduleOptions, module_text: &str) -> tessel_lowering::rocm::RocmOptions {
        let chip = self.chip();
        // The GPU knobs and the shared ones (--num-stages, --grid-order).
        let mut knobs = self.knobs.0.clone();
        for (knob, value) in schedule.explicit.iter().filter(|(knob, _)| knob.target == Target::Both) {
            knobs.set(knob, value);
        }
        let given = !knobs.is_empty();
        let explicit = tessel_lowering::rocm::RocmOptions { chip, code_object: self.code_object, knobs };
        if given || schedule.no_cache {
            return explicit;
        }
        match tessel_tuner::gpu::cached_schedule(module_text, chip, &tessel_tuner::cache::default_dir()) {
            Ok(Some(tuned)) => {
                eprintln!(
                    "tessel: note: using the tuned schedule from the cache: num_warps {}, num_stages {}, lds_chunk {}, \
                     matrix cores {}, {} grid, register tile {}",
                    tuned.num_warps,
                    tuned.num_stages,
                    tuned.lds_chunk,
                    if tuned.matrix_cores { "on" } else { "off" },
                    tessel_lowering::grid_order_name(tuned.column_major),
                    tessel_tuner::gpu::tile_name(tuned.register_tile)
                );
                tessel_lowering::rocm::RocmOptions { code_object: self.code_object, ..tuned.options(chip) }
            }
            Ok(None) => explicit,
            Err(warning) => {
                eprintln!("tessel: warning: {warning}");
                explicit
            }
        }
    }
}

/// Writes to stdout; a closed pipe (`tessel ... | head`) is not an error
/// worth a panic, the output is simply no longer wanted.
pub fn write_stdout(text: &str) {
    use std::io::Write;
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}
