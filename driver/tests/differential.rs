//! Differential tests: random Pallas configurations (shapes not divisible
//! by their blocks, identity / transposed / constant index maps, revisited
//! outputs on arbitrary axes, masked stores, blocked matmuls, matmuls on
//! the GPUs' matrix cores and register tiles, unsigned arrays, gathers and scatters, loads
//! followed by writes to the loaded ref, sibling reductions, index
//! functions with scalar prefetch, grids sized by values, element-wise
//! blocks long enough for batched loads on the GPU, arrays updated in
//! place or accumulated in blocks that do not divide them, rows whose
//! intermediates are read back, in the GPU's private memory or LDS,
//! booleans through signed and unsigned ops, running sums kept in an
//! output block shared by a `parallel` axis, inputs aliased to outputs and
//! read after the output is written) are compiled
//! and run with `tessel run --check` (compiled code against the reference
//! interpreter), and the results are compared exactly with a plain Rust
//! reference computed here from the dumped inputs. The emulated GPU runs
//! each case a second time without `--check`: `--check` pads partial blocks
//! with NaN, which keeps them staged, while a plain run pads with zeros
//! and takes the GPU's default path for them (views past the arrays' ends,
//! read through buffer instructions), whose results must match too. Every
//! access is also checked against its buffer's bounds (the CPU's under
//! `--bounds-checks`, the emulated GPU's kernels always).

mod blocks;
mod contractions;
mod grids;
mod integers;
mod memory;
mod rows;

use blocks::*;
use contractions::*;
use grids::*;
use integers::*;
use memory::*;
use rand::{Rng, SeedableRng, rngs::StdRng};
use rows::*;
use std::{path::Path, process::Command};

/// Every output's expected contents, computed from the inputs.
type Reference = Box<dyn Fn(&[Vec<f64>]) -> Vec<Vec<f64>>>;

/// One random configuration and the module text that runs it.
struct Case {
    text: String,
    /// Leading arguments filled with random data; the rest are outputs.
    inputs: usize,
    arguments: usize,
    reference: Reference,
    description: String,
    /// Extra `tessel run` arguments on the emulated GPU (the chip).
    gpu_args: Vec<String>,
}

fn read_npy(path: &Path) -> Result<Vec<f64>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let npy = npyz::NpyFile::new(&bytes[..]).map_err(|e| e.to_string())?;
    let descr = npy.header().dtype().descr();
    if descr.contains("f4") {
        Ok(npy.into_vec::<f32>().map_err(|e| e.to_string())?.into_iter().map(f64::from).collect())
    } else if descr.contains("f2") {
        Ok(npy.into_vec::<half::f16>().map_err(|e| e.to_string())?.into_iter().map(f64::from).collect())
    } else if descr.contains("f8") {
        npy.into_vec::<f64>().map_err(|e| e.to_string())
    } else if descr.contains("b1") {
        Ok(npy.into_vec::<bool>().map_err(|e| e.to_string())?.into_iter().map(|b| f64::from(u8::from(b))).collect())
    } else if descr.contains("i1") {
        Ok(npy.into_vec::<i8>().map_err(|e| e.to_string())?.into_iter().map(f64::from).collect())
    } else if descr.contains("u1") {
        Ok(npy.into_vec::<u8>().map_err(|e| e.to_string())?.into_iter().map(f64::from).collect())
    } else if descr.contains("u2") {
        Ok(npy.into_vec::<u16>().map_err(|e| e.to_string())?.into_iter().map(f64::from).collect())
    } else if descr.contains("u4") {
        Ok(npy.into_vec::<u32>().map_err(|e| e.to_string())?.into_iter().map(f64::from).collect())
    } else {
        Ok(npy.into_vec::<i32>().map_err(|e| e.to_string())?.into_iter().map(f64::from).collect())
    }
}

/// Runs `count` configurations from `seed` (the file holds `seed = N` and
/// `count = N` lines), times `TESSEL_DIFFERENTIAL_SCALE`.
pub fn differential(path: &Path, source: String) -> datatest_stable::Result<()> {
    let field = |name: &str| -> u64 {
        source
            .lines()
            .find_map(|line| line.strip_prefix(name)?.trim().strip_prefix('=')?.trim().parse().ok())
            .unwrap_or_else(|| panic!("{}: missing '{name} = N'", path.display()))
    };
    // TESSEL_DIFFERENTIAL_SCALE=K runs K times as many cases per batch (a
    // longer hunt; batches' seeds are a million apart).
    let scale = match std::env::var("TESSEL_DIFFERENTIAL_SCALE") {
        Ok(text) => text.parse::<u64>().map_err(|_| format!("TESSEL_DIFFERENTIAL_SCALE={text}: expected a count"))?,
        Err(_) => 1,
    };
    let (seed, count) = (field("seed"), field("count") * scale);
    let targets = Targets::from_env()?;
    let work = std::env::temp_dir().join(format!("tessel-differential-{seed}"));
    for index in 0..count {
        let mut rng = StdRng::seed_from_u64(seed + index);
        let case = match rng.random_range(0..62) {
            0..12 => elementwise(&mut rng),
            12..17 => matmul(&mut rng),
            17..20 => matrix_core_matmul(&mut rng),
            20..24 => masked_rows(&mut rng),
            24..26 => atomics(&mut rng),
            26..28 => control_flow(&mut rng),
            28..30 => unsigned(&mut rng),
            30..32 => gather_scatter(&mut rng),
            32..34 => overwrite_after_load(&mut rng),
            34..36 => sibling_reductions(&mut rng),
            36..38 => index_functions(&mut rng),
            38..40 => dynamic_grid(&mut rng),
            40..42 => register_tile_matmul(&mut rng),
            42..44 => long_rows(&mut rng),
            44..46 => wide_window(&mut rng),
            46..48 => rewrite_in_place(&mut rng),
            48..50 => loop_carried(&mut rng),
            50..52 => partial_blocks(&mut rng),
            52..54 => row_intermediates(&mut rng),
            54..56 => boolean_ops(&mut rng),
            56..58 => shared_statistics(&mut rng),
            58..60 => aliased_inputs(&mut rng),
            _ => integer_edges(&mut rng),
        };
        let dir = work.join(index.to_string());
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)?;
        let file = dir.join("case.mlir");
        std::fs::write(&file, &case.text)?;
        // The CPU pipeline and the ROCm pipeline's kernels (emulated) must
        // both match the interpreter and the Rust reference bit for bit.
        for (run, (device, flags)) in RUNS.into_iter().enumerate().filter(|(_, (device, _))| targets.runs(device)) {
            let out = dir.join(format!("out-{run}-{device}"));
            let check = flags.contains(&"--check");
            let output = Command::new(env!("CARGO_BIN_EXE_tessel"))
                .env("TESSEL_CACHE_DIR", crate::empty_cache_dir())
                .args(["run", file.to_str().unwrap(), "--entry", "main", "--device", device, "--dump"])
                .arg(&out)
                .args(flags)
                .args(if device == "cpu" { &[][..] } else { &case.gpu_args[..] })
                .args((0..case.inputs).map(|a| format!("--arg={a}=random:{}", seed + index * 7 + a as u64)))
                .output()?;
            if !output.status.success() {
                return Err(format!(
                    "case {index} ({}): tessel run {} --device {device} failed:\n{}\n{}",
                    case.description,
                    flags.join(" "),
                    String::from_utf8_lossy(&output.stderr),
                    case.text
                )
                .into());
            }
            compare_with_reference(&case, &out).map_err(|message| {
                let padding = if check { "" } else { " (zero padding)" };
                format!("case {index} on {device}{padding}: {message}")
            })?;
        }
        // And the ROCm pipeline all the way to a code object, for every
        // chip (what the emulator runs stops before ROCDL and codegen).
        for chip in CHIPS.into_iter().filter(|_| targets.gpu) {
            let object = dir.join(format!("{chip}.hsaco"));
            let output = Command::new(env!("CARGO_BIN_EXE_tessel"))
                .env("TESSEL_CACHE_DIR", crate::empty_cache_dir())
                .args(["compile", file.to_str().unwrap(), "--target", "rocm", "--chip", chip, "--emit", "hsaco", "-o"])
                .arg(&object)
                .output()?;
            if !output.status.success() {
                return Err(format!(
                    "case {index} ({}): tessel compile --target rocm --chip {chip} failed:\n{}\n{}",
                    case.description,
                    String::from_utf8_lossy(&output.stderr),
                    case.text
                )
                .into());
            }
        }
        std::fs::remove_dir_all(&dir)?;
    }
    Ok(())
}

/// Where the differential cases run, and how: with `--check` (NaN
/// padding, compared with the interpreter too) or without (zero padding,
/// the default, which on the GPU reads partial blocks through views past
/// the arrays' ends); the CPU with every access's bounds checked (the
/// emulated GPU always checks them).
const RUNS: [(&str, &[&str]); 3] =
    [("cpu", &["--check", "--bounds-checks"]), ("rocm-emulated", &["--check"]), ("rocm-emulated", &[])];

/// Which of the runs a case gets: all by default; `TESSEL_DIFFERENTIAL_TARGETS=cpu`
/// keeps the CPU's alone (`.ci/run`'s AVX2 rerun: the emulated GPU's
/// kernels and the code objects do not depend on the host's vector ISA,
/// and ran in the full suite).
struct Targets {
    gpu: bool,
}

impl Targets {
    fn from_env() -> Result<Targets, String> {
        match std::env::var("TESSEL_DIFFERENTIAL_TARGETS").as_deref() {
            Err(_) | Ok("all") => Ok(Targets { gpu: true }),
            Ok("cpu") => Ok(Targets { gpu: false }),
            Ok(other) => Err(format!("TESSEL_DIFFERENTIAL_TARGETS={other}: expected 'all' or 'cpu'")),
        }
    }

    fn runs(&self, device: &str) -> bool {
        self.gpu || device == "cpu"
    }
}

/// The chips every case also compiles for.
const CHIPS: [&str; 3] = ["gfx90a", "gfx942", "gfx1100"];

fn compare_with_reference(case: &Case, dir: &Path) -> Result<(), String> {
    let read = |a: usize| read_npy(&dir.join(format!("arg{a}.npy")));
    let inputs: Vec<Vec<f64>> = (0..case.inputs).map(read).collect::<Result<_, _>>()?;
    for (output, expected) in (case.inputs..case.arguments).zip((case.reference)(&inputs)) {
        let compiled = read(output)?;
        if let Some(at) = (0..expected.len()).find(|&i| compiled[i].to_bits() != expected[i].to_bits()) {
            return Err(format!(
                "({}): argument {output}, element {at} is {} but the Rust reference gives {}\n{}",
                case.description, compiled[at], expected[at], case.text
            ));
        }
    }
    Ok(())
}
