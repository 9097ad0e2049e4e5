#![doc = include_str!("../../README.md")]
#![deny(clippy::undocumented_unsafe_blocks)]
// The `tessel-opt` and `tessel` command-line tools, as thin shells over the
// Tessel crates; the README (above) is the crate's documentation, and its
// library example a doctest.

pub mod compile;
pub mod error;
pub mod opt;
pub mod run;
pub mod source;
pub mod tune;

pub use error::DriverError;
use tessel_dialects::knobs::{self, Knob};

/// A flag's parser for an integer knob: the table's legal range.
fn in_range(knob: &Knob) -> clap::builder::RangedI64ValueParser<i64> {
    let (min, max) = knob.range();
    clap::value_parser!(i64).range(min..=max)
}

/// Schedule knobs shared by `tessel run` and `tessel compile`; help texts
/// and ranges come from the knob table (`tessel_dialects::knobs`).
#[derive(clap::Args, Debug, Default)]
pub struct ScheduleOptions {
    #[arg(long, help = knobs::REGISTER_TILE.help, value_name = "ROWSxCOLUMNS",
          value_parser = tessel_lowering::cpu::parse_register_tile)]
    register_tile: Option<(i64, i64)>,
    #[arg(long, help = knobs::NUM_STAGES.help, value_name = "N", value_parser = in_range(&knobs::NUM_STAGES))]
    num_stages: Option<i64>,
    #[arg(long, help = knobs::K_CHUNK.help, value_name = "N", value_parser = in_range(&knobs::K_CHUNK))]
    k_chunk: Option<i64>,
    #[arg(long, help = knobs::K_UNROLL.help, value_name = "U", value_parser = in_range(&knobs::K_UNROLL))]
    k_unroll: Option<i64>,
    #[arg(long, help = knobs::NUM_THREADS.help, value_name = "N", value_parser = in_range(&knobs::NUM_THREADS))]
    num_threads: Option<i64>,
    #[arg(long, help = knobs::GRID_ORDER.help, value_name = "ORDER", value_enum)]
    grid_order: Option<GridOrder>,
    #[arg(long, help = knobs::PAD_TILES.help)]
    pad_tiles: bool,
    #[arg(long, help = knobs::VECTOR_BITS.help, value_name = "128|256|512", value_enum)]
    vector_bits: Option<VectorBits>,
    #[arg(long, help = knobs::GROUP.help, value_name = "P", value_parser = in_range(&knobs::GROUP),
          conflicts_with = "group_top")]
    group: Option<i64>,
    #[arg(long, help = knobs::GROUP_TOP.help, value_name = "P", value_parser = in_range(&knobs::GROUP))]
    group_top: Option<i64>,
    /// Ignore schedules `tessel tune` cached for this kernel.
    #[arg(long)]
    no_cache: bool,
}

/// `--grid-order` (names as `tessel_lowering::grid_order_name` spells them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum GridOrder {
    RowMajor,
    ColumnMajor,
}

/// `--vector-bits`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum VectorBits {
    #[value(name = "128")]
    Bits128,
    #[value(name = "256")]
    Bits256,
    #[value(name = "512")]
    Bits512,
}

impl VectorBits {
    pub fn bits(self) -> i64 {
        match self {
            VectorBits::Bits128 => 128,
            VectorBits::Bits256 => 256,
            VectorBits::Bits512 => 512,
        }
    }
}

impl ScheduleOptions {
    /// `--grid-order`, as the lowering's knob.
    fn column_major(&self) -> Option<bool> {
        self.grid_order.map(|order| order == GridOrder::ColumnMajor)
    }

    /// The knobs given on the command line, else the schedule `tessel tune`
    /// cached for `module_text` (the module as parsed and printed), else
    /// the defaults. Says on stderr when it uses the cache (or ignores a
    /// corrupt entry).
    pub fn resolve(&self, module_text: &str) -> tessel_lowering::cpu::Schedule {
        let explicit = tessel_lowering::cpu::Schedule {
            register_tile: self.register_tile,
            num_stages: self.num_stages,
            k_chunk: self.k_chunk,
            k_unroll: self.k_unroll,
            num_threads: self.num_threads,
            vector_bits: self.vector_bits.map(VectorBits::bits),
            pad_tiles: self.pad_tiles.then_some(true),
            column_major: self.column_major(),
            group: self.group.or(self.group_top),
            group_top: self.group_top.map(|_| true),
        };
        if explicit != tessel_lowering::cpu::Schedule::default() || self.no_cache {
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
                    if tuned.k_chunk > 0 { tuned.k_chunk.to_string() } else { "all".into() },
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

/// Options of the ROCm path.
#[derive(clap::Args, Debug, Default)]
pub struct GpuOptions {
    #[arg(long, help = knobs::CHIP.help, value_enum, default_value = knobs::CHIP.default)]
    chip: ChipOption,
    /// Code object version of the HSACO.
    #[arg(long, value_name = "4|5|6", default_value = "5", value_parser = clap::value_parser!(u32).range(4..=6))]
    code_object: u32,
    #[arg(long, help = knobs::NUM_WARPS.help, value_name = "N", value_parser = in_range(&knobs::NUM_WARPS))]
    num_warps: Option<i64>,
    #[arg(long, help = knobs::MATRIX_CORES.help, value_name = "on|off",
          value_parser = clap::builder::BoolishValueParser::new())]
    matrix_cores: Option<bool>,
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
        let explicit = tessel_lowering::rocm::RocmOptions {
            chip,
            code_object: self.code_object,
            num_warps: self.num_warps,
            num_stages: schedule.num_stages,
            lds_chunk: None,
            matrix_cores: self.matrix_cores,
            column_major: schedule.column_major(),
        };
        let given = self.num_warps.is_some()
            || self.matrix_cores.is_some()
            || schedule.num_stages.is_some()
            || schedule.grid_order.is_some();
        if given || schedule.no_cache {
            return explicit;
        }
        match tessel_tuner::gpu::cached_schedule(module_text, chip, &tessel_tuner::cache::default_dir()) {
            Ok(Some(tuned)) => {
                eprintln!(
                    "tessel: note: using the tuned schedule from the cache: num_warps {}, num_stages {}, lds_chunk {}, \
                     matrix cores {}, {} grid",
                    tuned.num_warps,
                    tuned.num_stages,
                    tuned.lds_chunk,
                    if tuned.matrix_cores { "on" } else { "off" },
                    tessel_lowering::grid_order_name(tuned.column_major)
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
