#![doc = include_str!("../../README.md")]
// The `tessel-opt` and `tessel` command-line tools, as thin shells over the
// Tessel crates; the README (above) is the crate's documentation, and its
// library example a doctest.

pub mod compile;
pub mod opt;
pub mod run;
pub mod source;

/// Schedule knobs shared by `tessel run` and `tessel compile`.
#[derive(clap::Args, Debug, Default)]
pub struct ScheduleOptions {
    /// Register tile of contractions, ROWSxCOLUMNS (default: from the host's
    /// vector width). Results are identical under every tile.
    #[arg(long, value_name = "ROWSxCOLUMNS", value_parser = tessel_lowering::cpu::parse_register_tile)]
    register_tile: Option<(i64, i64)>,
    /// Blocks in flight along arbitrary grid axes: step k prefetches the
    /// blocks of step k + N - 1 (default 1: no software pipelining).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(i64).range(1..=8))]
    num_stages: Option<i64>,
}

impl ScheduleOptions {
    pub fn get(&self) -> tessel_lowering::cpu::Schedule {
        tessel_lowering::cpu::Schedule { register_tile: self.register_tile, num_stages: self.num_stages }
    }
}

/// Writes to stdout; a closed pipe (`tessel ... | head`) is not an error
/// worth a panic, the output is simply no longer wanted.
pub fn write_stdout(text: &str) {
    use std::io::Write;
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}
