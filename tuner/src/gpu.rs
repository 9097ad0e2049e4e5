//! Tuning ROCm kernels: the workgroup's wavefronts (`num_warps`), LDS
//! double buffering of contraction chunks (`num_stages`), the chunk
//! depth (`lds_chunk`), matrix cores or FMAs for contractions
//! (`matrix_cores`) and the FMA path's register tile per work-item
//! (`register_tile`), for one chip, measured on an AMD GPU through HIP
//! (the emulator's timings say nothing about a GPU). Same search, guard,
//! confirmation and cache as the CPU's; without a GPU it says so.

use crate::{
    Progress, ScheduleJson, TuneError, TuneOptions, Tuned, beam_search,
    cache::{self, Cache, Entry, Lookup},
    measure::Outcome,
};
use serde::{Deserialize, Serialize};
use std::time::Instant;
use tessel_dialects::knobs::{
    GRID_ORDER, LDS_CHUNK, MATRIX_CORES, NUM_STAGES, NUM_WARPS, REGISTER_TILE, Settings, Value,
};
use tessel_lowering::rocm::{self, Chip, RocmOptions};
use tessel_runtime::{HostArray, hip};

/// One point of the ROCm space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GpuSchedule {
    pub num_warps: i64,
    pub num_stages: i64,
    pub lds_chunk: i64,
    /// Contractions on MFMA/WMMA where exact (else FMAs).
    pub matrix_cores: bool,
    /// Workgroups of the grid's parallel axes in column-major order.
    #[serde(default)]
    pub column_major: bool,
    /// A work-item's tile of FMA contractions (rows, columns); `None`: the
    /// largest that fits the block (tessel-register-tiles' choice).
    #[serde(default)]
    pub register_tile: Option<(i64, i64)>,
}

/// Names the ROCm space (part of the cache key).
pub const GPU_SPACE: &str = "rocm-4: num_warps 1..16 (up to 1024 work-items), num_stages 1..2, lds_chunk 4..32, \
                             matrix_cores on/off, grid order, FMA register tile 1..16 x 1..16";

const LDS_CHUNKS: [i64; 4] = [4, 8, 16, 32];
/// Tile extents of the FMA path (tessel-register-tiles tries the same).
const TILE_EXTENTS: [i64; 5] = [1, 2, 4, 8, 16];
/// The tiles the search tries first when the pass chooses: its usual
/// choices and their neighbours.
const FIRST_TILES: [(i64, i64); 4] = [(4, 4), (8, 8), (8, 16), (16, 8)];

impl GpuSchedule {
    pub fn default_for(_chip: Chip) -> Self {
        GpuSchedule {
            num_warps: 4,
            num_stages: 1,
            lds_chunk: 16,
            matrix_cores: true,
            column_major: false,
            register_tile: None,
        }
    }

    pub fn is_legal(self, chip: Chip) -> bool {
        NUM_WARPS.allows(self.num_warps)
            && self.num_warps * chip.wave_size() <= 1024
            && (1..=2).contains(&self.num_stages)
            && NUM_STAGES.allows(self.num_stages)
            && LDS_CHUNKS.contains(&self.lds_chunk)
            && LDS_CHUNK.allows(self.lds_chunk)
            && self
                .register_tile
                .is_none_or(|(rows, columns)| TILE_EXTENTS.contains(&rows) && TILE_EXTENTS.contains(&columns))
    }

    /// The legal schedules one action away: wavefronts doubled or halved,
    /// the other pipelining depth, chunks doubled or halved, and where the
    /// kernel has them (`knobs`), matrix cores or FMAs, the other grid
    /// order and, for contractions, the FMA register tile (from the pass's
    /// choice, its usual tiles; from a tile, either extent doubled or
    /// halved, or the pass's choice again).
    pub fn neighbours(&self, chip: Chip, knobs: Knobs) -> Vec<Self> {
        let mut candidates = vec![
            GpuSchedule { num_warps: self.num_warps * 2, ..*self },
            GpuSchedule { num_warps: self.num_warps / 2, ..*self },
            GpuSchedule { num_stages: 3 - self.num_stages, ..*self },
            GpuSchedule { lds_chunk: self.lds_chunk * 2, ..*self },
            GpuSchedule { lds_chunk: self.lds_chunk / 2, ..*self },
        ];
        if knobs.matrix_cores {
            candidates.push(GpuSchedule { matrix_cores: !self.matrix_cores, ..*self });
        }
        if knobs.grid_order {
            candidates.push(GpuSchedule { column_major: !self.column_major, ..*self });
        }
        if knobs.contractions {
            let tiles: Vec<Option<(i64, i64)>> = match self.register_tile {
                None => FIRST_TILES.into_iter().map(Some).collect(),
                Some((rows, columns)) => vec![
                    Some((rows * 2, columns)),
                    Some((rows / 2, columns)),
                    Some((rows, columns * 2)),
                    Some((rows, columns / 2)),
                    None,
                ],
            };
            candidates.extend(tiles.into_iter().map(|register_tile| GpuSchedule { register_tile, ..*self }));
        }
        candidates.into_iter().filter(|candidate| candidate != self && candidate.is_legal(chip)).collect()
    }

    /// The ROCm options for this schedule on `chip`.
    pub fn options(self, chip: Chip) -> RocmOptions {
        let mut knobs = Settings::default();
        knobs
            .set_integer(&NUM_WARPS, self.num_warps)
            .set_integer(&NUM_STAGES, self.num_stages)
            .set_integer(&LDS_CHUNK, self.lds_chunk)
            .set_integer(&MATRIX_CORES, self.matrix_cores as i64)
            .set_integer(&GRID_ORDER, self.column_major as i64);
        if let Some((rows, columns)) = self.register_tile {
            knobs.set(&REGISTER_TILE, Value::Pair(rows, columns));
        }
        RocmOptions { chip, knobs, ..RocmOptions::default() }
    }
}

fn target(chip: Chip) -> String {
    format!("rocm-{}", chip.name())
}

/// The cached ROCm schedule of `module_text` for `chip`, if tuned before
/// (`Err`: a corrupt entry, ignored).
pub fn cached_schedule(
    module_text: &str,
    chip: Chip,
    cache_dir: &std::path::Path,
) -> Result<Option<GpuSchedule>, String> {
    let key = cache::key(module_text, &target(chip), GPU_SPACE);
    match Cache::new(cache_dir).get(&key, |entry: &Entry<GpuSchedule>| entry.schedule.is_legal(chip)) {
        Lookup::Hit(entry) => Ok(Some(entry.schedule)),
        Lookup::Miss => Ok(None),
        Lookup::Corrupt(why) => Err(why),
    }
}

/// What GPU tuning found.
pub type TunedGpu = Tuned<GpuSchedule>;

/// `"best"` of a GPU tune.
#[derive(serde::Serialize)]
pub struct GpuReport {
    num_warps: i64,
    num_stages: i64,
    lds_chunk: i64,
    matrix_cores: bool,
    grid_order: &'static str,
    /// `ROWSxCOLUMNS`, or `default` (the pass's choice).
    register_tile: String,
}

impl ScheduleJson for GpuSchedule {
    type Report = GpuReport;
    fn report(&self) -> GpuReport {
        GpuReport {
            num_warps: self.num_warps,
            num_stages: self.num_stages,
            lds_chunk: self.lds_chunk,
            matrix_cores: self.matrix_cores,
            grid_order: tessel_lowering::grid_order_name(self.column_major),
            register_tile: tile_name(self.register_tile),
        }
    }
}

/// `ROWSxCOLUMNS`, or `default` for the pass's choice.
pub fn tile_name(tile: Option<(i64, i64)>) -> String {
    tile.map_or("default".into(), |(rows, columns)| format!("{rows}x{columns}"))
}

/// The knobs worth measuring for a kernel beyond the always-present ones.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Knobs {
    /// It has contractions matrix cores may take on the chip (element
    /// types the instructions compute exactly, sizes multiples of 16).
    pub matrix_cores: bool,
    /// It has a grid of two or more axes.
    pub grid_order: bool,
    /// It has contractions (the FMA path's register tile matters: they
    /// are FMAs where matrix cores do not take them, or are off).
    pub contractions: bool,
}

fn knobs_of(module_text: &str, chip: Chip) -> Knobs {
    tessel_lowering::register_everything();
    let context = tessel_dialects::create_context();
    let Some(module) = melior::ir::Module::parse(&context, module_text) else { return Knobs::default() };
    let dots = crate::space::Space::dots(&module);
    let matrix_cores = dots.iter().any(|dot| {
        let [m, n, _] = dot.sizes;
        m % 16 == 0 && n % 16 == 0 && chip.matrix_instruction(&dot.input, &dot.output).is_some()
    });
    Knobs { matrix_cores, grid_order: crate::space::grid_shapes(&module).0, contractions: !dots.is_empty() }
}

/// A compiled candidate: the code object and what the host launches.
type Compiled = (Vec<u8>, hip::HostProgram);

fn compile(module_text: &str, entry: &str, schedule: GpuSchedule, chip: Chip) -> Result<Compiled, String> {
    tessel_lowering::register_everything();
    let context = tessel_dialects::create_context();
    let mut module = melior::ir::Module::parse(&context, module_text).ok_or("the kernel does not parse")?;
    tessel_lowering::cpu::prepare(&context, &mut module, tessel_lowering::cpu::Padding::Zero);
    rocm::compile_for_launch(&context, &mut module, &schedule.options(chip), entry).map_err(|error| error.to_string())
}

/// Times `compiled` on the GPU: one checked run, then `RUNS` timed ones.
fn time(compiled: &Compiled, inputs: &[HostArray], reference: &mut Option<Vec<HostArray>>) -> Outcome {
    const RUNS: usize = 5;
    let mut checked = inputs.to_vec();
    if let Err(error) = hip::run(&compiled.0, &compiled.1, &mut checked) {
        return Outcome::Failed(error.to_string());
    }
    match reference {
        None => *reference = Some(checked),
        Some(reference) => {
            if let Err(difference) = tessel_runtime::compare(&checked, reference, "candidate", "default") {
                return Outcome::Wrong(difference);
            }
        }
    }
    let mut arrays = inputs.to_vec();
    match hip::run_timed(&compiled.0, &compiled.1, &mut arrays, RUNS) {
        Ok(times) => match crate::measure::median(times) {
            Some(seconds) => Outcome::Timed(seconds),
            None => Outcome::Failed("no timed run".into()),
        },
        Err(error) => Outcome::Failed(error.to_string()),
    }
}

/// Tunes `entry` of `module_text` for `chip` on the AMD GPU HIP finds.
pub fn tune_gpu(
    module_text: &str,
    entry: &str,
    inputs: Vec<HostArray>,
    chip: Chip,
    options: &TuneOptions,
    mut progress: impl FnMut(Progress<GpuSchedule>),
) -> Result<TunedGpu, TuneError> {
    hip::device_count().map_err(|error| TuneError::NoDevice(error.to_string()))?;
    let cache = Cache::new(&options.cache_dir);
    let key = cache::key(module_text, &target(chip), GPU_SPACE);
    let mut warnings = Vec::new();
    let valid = |entry: &Entry<GpuSchedule>| entry.schedule.is_legal(chip);
    if let Some(answer) = crate::from_cache(&cache, &key, options.use_cache, valid, &mut warnings) {
        return Ok(answer);
    }
    let started = Instant::now();
    let start = GpuSchedule::default_for(chip);
    let default = compile(module_text, entry, start, chip).map_err(TuneError::DefaultFailed)?;
    let mut reference = None;
    let default_s = time(&default, &inputs, &mut reference)
        .seconds()
        .ok_or_else(|| TuneError::DefaultFailed("the default schedule did not run on the GPU".into()))?;
    let deadline = started + options.budget;
    let mut measured = 1;
    let mut timings: Vec<(GpuSchedule, f64)> = Vec::new();
    let knobs = knobs_of(module_text, chip);
    let found = beam_search(
        start,
        options.beam,
        64,
        crate::PATIENCE,
        |s: &GpuSchedule| s.neighbours(chip, knobs),
        |batch: &[GpuSchedule]| {
            if batch.first() == Some(&start) {
                return vec![Some(default_s)];
            }
            let mut costs = Vec::new();
            for &schedule in batch {
                if Instant::now() >= deadline {
                    break;
                }
                let outcome = match compile(module_text, entry, schedule, chip) {
                    Ok(compiled) => time(&compiled, &inputs, &mut reference),
                    Err(why) => Outcome::Failed(why),
                };
                if let Some(seconds) = outcome.seconds() {
                    measured += 1;
                    timings.push((schedule, seconds));
                }
                let best_s = timings.iter().map(|t| t.1).fold(default_s, f64::min);
                progress(Progress { schedule, outcome: &outcome, best_s, measured, elapsed: started.elapsed() });
                costs.push(outcome.seconds());
            }
            costs
        },
    )
    .expect("the default schedule was measured");
    // Confirm the winner against the default in rounds, alternating
    // which goes first; it replaces the default only where clearly faster
    // (`measure::clear_winner`, as on the CPU).
    let (mut best, mut best_s, mut default_again) = (start, default_s, default_s);
    if found.schedule != start
        && let Ok(winner) = compile(module_text, entry, found.schedule, chip)
    {
        let (mut defaults, mut winners) = (Vec::new(), Vec::new());
        for round in 0..crate::CONFIRM_ROUNDS {
            let (d, w) = if round % 2 == 0 {
                let d = time(&default, &inputs, &mut reference).seconds();
                (d, time(&winner, &inputs, &mut reference).seconds())
            } else {
                let w = time(&winner, &inputs, &mut reference).seconds();
                (time(&default, &inputs, &mut reference).seconds(), w)
            };
            if let (Some(d), Some(w)) = (d, w) {
                defaults.push(d);
                winners.push(w);
            }
        }
        if let Some(d) = crate::measure::median(defaults.clone()) {
            default_again = d;
            best_s = d;
            if let Some((_, w)) = crate::measure::clear_winner(&defaults, &[winners]) {
                (best, best_s) = (found.schedule, w);
            }
        }
    }
    let tuned = TunedGpu {
        default_s: default_again,
        best_s,
        candidates: found.measured,
        cached: false,
        best,
        warnings: Vec::new(),
    };
    if options.use_cache {
        let entry = Entry { schedule: best, default_s: tuned.default_s, best_s, candidates: tuned.candidates };
        if let Err(error) = cache.put(&key, &entry) {
            warnings.push(format!("could not write the cache in {}: {error}", cache.dir().display()));
        }
    }
    Ok(TunedGpu { warnings, ..tuned })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_space_respects_each_chip() {
        for chip in Chip::ALL {
            let start = GpuSchedule::default_for(chip);
            assert!(start.is_legal(chip));
            let next = start.neighbours(chip, Knobs { matrix_cores: true, grid_order: true, contractions: true });
            assert!(next.iter().all(|s| s.is_legal(chip) && *s != start));
            assert!(next.iter().any(|s| s.num_stages == 2));
            assert!(next.iter().any(|s| !s.matrix_cores));
            assert!(next.iter().any(|s| s.column_major));
            assert!(next.iter().any(|s| s.register_tile == Some((8, 16))));
            assert!(
                start
                    .neighbours(chip, Knobs::default())
                    .iter()
                    .all(|s| s.matrix_cores && !s.column_major && s.register_tile.is_none())
            );
            // From a tile: its extents doubled or halved within 1..16, or
            // the pass's choice again.
            let tiled = GpuSchedule { register_tile: Some((16, 1)), ..start };
            let tiles: Vec<_> = tiled
                .neighbours(chip, Knobs { contractions: true, ..Knobs::default() })
                .into_iter()
                .filter(|s| s.register_tile != tiled.register_tile)
                .map(|s| s.register_tile)
                .collect();
            assert_eq!(tiles, [Some((8, 1)), Some((16, 2)), None]);
        }
        // 16 wavefronts of 64 are 1024 work-items; of 32 (RDNA) too.
        let wide = GpuSchedule { num_warps: 16, ..GpuSchedule::default_for(Chip::Gfx90a) };
        assert!(wide.is_legal(Chip::Gfx90a) && wide.is_legal(Chip::Gfx1100));
        assert!(!GpuSchedule { num_warps: 32, ..wide }.is_legal(Chip::Gfx1100));
    }

    #[test]
    fn cached_schedules_are_per_chip() {
        let dir = tempfile::tempdir().unwrap();
        let module = "module {}";
        let tuned = GpuSchedule {
            num_warps: 8,
            num_stages: 2,
            lds_chunk: 8,
            matrix_cores: false,
            column_major: true,
            register_tile: Some((4, 8)),
        };
        let entry = Entry { schedule: tuned, default_s: 2.0, best_s: 1.0, candidates: 5 };
        Cache::new(dir.path()).put(&cache::key(module, &target(Chip::Gfx942), GPU_SPACE), &entry).unwrap();
        assert_eq!(cached_schedule(module, Chip::Gfx942, dir.path()), Ok(Some(tuned)));
        assert_eq!(cached_schedule(module, Chip::Gfx90a, dir.path()), Ok(None));
        let options = tuned.options(Chip::Gfx942);
        let knob = |knob| options.knobs.integer(knob);
        assert_eq!(
            (knob(&NUM_WARPS), knob(&NUM_STAGES), knob(&LDS_CHUNK), knob(&MATRIX_CORES), knob(&GRID_ORDER)),
            (Some(8), Some(2), Some(8), Some(0), Some(1))
        );
        assert_eq!(options.knobs.get(&REGISTER_TILE), Some(Value::Pair(4, 8)));
    }

    #[test]
    fn the_matrix_core_knob_only_where_contractions_take_it() {
        let matmul = |element: &str, output: &str, size: i64| {
            format!(
                "func.func @k(%x: memref<{size}x{size}x{element}>, %o: memref<{size}x{size}x{output}>) {{\n\
                 %a = block.load %x : memref<{size}x{size}x{element}> -> tensor<{size}x{size}x{element}>\n\
                 %c = block.dot %a, %a : tensor<{size}x{size}x{element}>, tensor<{size}x{size}x{element}> -> tensor<{size}x{size}x{output}>\n\
                 block.store %c, %o : tensor<{size}x{size}x{output}>, memref<{size}x{size}x{output}>\nreturn\n}}"
            )
        };
        let takes = |text: &str, chip| knobs_of(text, chip).matrix_cores;
        assert!(takes(&matmul("f32", "f32", 64), Chip::Gfx90a));
        assert!(!takes(&matmul("f32", "f32", 64), Chip::Gfx1100));
        assert!(takes(&matmul("i8", "i32", 32), Chip::Gfx1100));
        assert!(!takes(&matmul("f32", "f32", 12), Chip::Gfx942));
        assert!(!takes(&matmul("f16", "f32", 64), Chip::Gfx942));
    }

    #[test]
    fn without_a_gpu_tuning_says_so() {
        let options = TuneOptions { use_cache: false, ..TuneOptions::default() };
        match tune_gpu("module {}", "f", Vec::new(), Chip::Gfx90a, &options, |_| {}) {
            Err(TuneError::NoDevice(why)) => assert!(why.contains("GPU") || why.contains("hip"), "{why}"),
            // On a machine with an AMD GPU (and the hip feature) the empty
            // module fails differently; either way nothing is cached.
            other => assert!(other.is_err(), "{other:?}"),
        }
    }
}
