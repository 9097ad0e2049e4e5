//! The CPU schedule space: what the tuner may change about a kernel's
//! lowering, and which combinations are legal, before anything compiles.
//!
//! In tinygrad's terms: the register tile's rows and columns are UPCASTs of
//! the contraction's i and j loops (columns in whole vectors), `k_unroll`
//! UNROLLs its k loop, `k_chunk` splits the contraction's k loop for the
//! caches (a GROUP of k), `num_threads` is how the grid's programs are
//! split over threads (LOCAL), `vector_bits` the vector width code is
//! generated for, and `num_stages` is the depth of software pipelining
//! along arbitrary grid axes; `group` splits block reductions into
//! partials (GROUP: every P-th element; with `group_top`, GROUPTOP:
//! contiguous chunks). Every point computes block.dot's same bits (the
//! passes keep its FMA order); splitting reassociates float block
//! reductions, whose order is unspecified (the guard checks them within
//! `--check`'s tolerance), so the search only ever trades speed.

use melior::ir::{
    Module, OperationRef, TypeLike, ValueLike,
    operation::{OperationLike, WalkOrder, WalkResult},
    r#type::{RankedTensorType, ShapedTypeLike},
};
use serde::{Deserialize, Serialize};
use tessel_dialects::knobs;
use tessel_lowering::cpu::Schedule;
// The passes' own rule for shrinking sizes to divisors, so normalized
// schedules are exactly what the passes apply.
use tessel_passes::fitting;

/// One point of the space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CpuSchedule {
    /// Rows x columns of a contraction's register tile.
    pub register_tile: [i64; 2],
    /// Blocks in flight along arbitrary axes (1: no pipelining).
    pub num_stages: i64,
    /// k steps per cache block of a contraction (0: what the CPU's caches
    /// give; as deep as k or deeper: k whole).
    pub k_chunk: i64,
    /// k steps per iteration of the k loop (tinygrad's UNROLL).
    pub k_unroll: i64,
    /// Threads sharing the grid's programs (0: one per core).
    #[serde(default)]
    pub num_threads: i64,
    /// Vector width in bits (0: the host's widest).
    #[serde(default)]
    pub vector_bits: i64,
    /// Pad partial register tiles instead of shrinking the tile to
    /// divisors of the block (tinygrad's PADTO).
    #[serde(default)]
    pub pad_tiles: bool,
    /// The grid's parallel programs in column-major order (loop order).
    #[serde(default)]
    pub column_major: bool,
    /// Partial results per block-reduction result (0: unsplit).
    #[serde(default)]
    pub group: i64,
    /// Partials over contiguous chunks (GROUPTOP) instead of every P-th
    /// element (GROUP).
    #[serde(default)]
    pub group_top: bool,
}

/// Names the space (part of the cache key: a different space may find a
/// different best).
pub const SPACE: &str = "cpu-6: register_tile rows 1..16 x columns 1..8 vectors (accumulators in registers), \
                         num_stages 1..4, k_chunk 0 (the caches' choice) or 16..32768 (powers of two; >= k: whole), \
                         k_unroll 1..8 (powers of two), \
                         num_threads 1..cores, vector_bits 256..host, pad_tiles, grid order, \
                         group 0 or 2..256, group_top";

const MAX_ROWS: i64 = 16;
const MAX_VECTORS_PER_ROW: i64 = 8;
const MAX_STAGES: i64 = 4;
/// 0: the k blocks the CPU's caches give (`tessel_passes::Caches`).
const K_CHUNKS: [i64; 13] = [0, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768];
const K_UNROLLS: [i64; 4] = [1, 2, 4, 8];
/// Largest split of a reduction (GROUP/GROUPTOP).
const MAX_GROUP: i64 = 256;

/// The host's widest vectors in bits, and its vector registers.
fn host_vectors() -> (i64, i64) {
    let model = tessel_passes::CpuModel::host();
    (model.vector_bits, model.vector_registers)
}

/// The host's cores (the threads OpenMP uses by default).
fn host_cores() -> i64 {
    std::thread::available_parallelism().map_or(1, |n| n.get() as i64)
}

impl CpuSchedule {
    /// Where the search starts: the passes' own default for this host.
    pub fn host_default() -> Self {
        let model = tessel_passes::CpuModel::host();
        let (rows, columns) = model.default_tile(model.vector_bits, 32);
        CpuSchedule {
            register_tile: [rows, columns],
            num_stages: 1,
            k_chunk: 0,
            k_unroll: 1,
            num_threads: 0,
            vector_bits: 0,
            pad_tiles: false,
            column_major: false,
            group: 0,
            group_top: false,
        }
    }

    /// The vector width this schedule generates code for.
    pub fn bits(self) -> i64 {
        if self.vector_bits > 0 { self.vector_bits } else { host_vectors().0 }
    }

    /// f32 lanes of this schedule's vectors.
    fn lanes(self) -> i64 {
        (self.bits() / 32).max(1)
    }

    /// The knobs for `tessel_lowering::cpu`.
    pub fn to_lowering(self) -> Schedule {
        let [rows, columns] = self.register_tile;
        let mut schedule = Schedule::default();
        schedule
            .set(&knobs::REGISTER_TILE, knobs::Value::Pair(rows, columns))
            .set_integer(&knobs::NUM_STAGES, self.num_stages)
            .set_integer(&knobs::K_UNROLL, self.k_unroll);
        // 0 (or false) is "the default" in the space: left unset.
        let optional = [
            (&knobs::K_CHUNK, self.k_chunk),
            (&knobs::NUM_THREADS, self.num_threads),
            (&knobs::VECTOR_BITS, self.vector_bits),
            (&knobs::PAD_TILES, self.pad_tiles as i64),
            (&knobs::GRID_ORDER, self.column_major as i64),
            (&knobs::GROUP, self.group),
            (&knobs::GROUP_TOP, (self.group > 0 && self.group_top) as i64),
        ];
        for (knob, value) in optional {
            if value > 0 {
                schedule.set_integer(knob, value);
            }
        }
        schedule
    }

    /// In the space: whole vectors per row, bounded knobs, a vector width
    /// the host has, a thread count up to its cores, and a tile that fits
    /// the registers.
    pub fn is_legal(self) -> bool {
        let lanes = self.lanes();
        let [rows, columns] = self.register_tile;
        let vectors = columns / lanes;
        (1..=MAX_ROWS).contains(&rows)
            && columns % lanes == 0
            && (1..=MAX_VECTORS_PER_ROW).contains(&vectors)
            && (1..=MAX_STAGES).contains(&self.num_stages)
            && knobs::NUM_STAGES.allows(self.num_stages)
            && K_CHUNKS.contains(&self.k_chunk)
            && (self.k_chunk == 0 || knobs::K_CHUNK.allows(self.k_chunk))
            && K_UNROLLS.contains(&self.k_unroll)
            && knobs::K_UNROLL.allows(self.k_unroll)
            && (self.num_threads == 0 || knobs::NUM_THREADS.allows(self.num_threads))
            && (0..=host_cores()).contains(&self.num_threads)
            && (self.vector_bits == 0
                || (matches!(self.vector_bits, 256 | 512) && self.vector_bits <= host_vectors().0))
            && knobs::VECTOR_BITS.allows(self.bits())
            && (self.group == 0 || ((2..=MAX_GROUP).contains(&self.group) && knobs::GROUP.allows(self.group)))
            && self.fits_registers()
    }

    /// The accumulator tile plus a row of B and a broadcast of A fit the
    /// vector registers (else it spills, which is never faster).
    pub fn fits_registers(self) -> bool {
        let lanes = self.lanes();
        let [rows, columns] = self.register_tile;
        tessel_passes::CpuModel::host().fits(rows, (columns + lanes - 1) / lanes)
    }

    /// The schedules one action away, before legality and normalization:
    /// a row more or fewer, rows doubled or halved, a vector more or fewer
    /// per row, a stage more or fewer, k chunks doubled or halved (or the
    /// caches' choice; from that, 256, 128 or whole k), k unrolled twice as far or half, the vector width halved
    /// or doubled (the tile keeping its columns, or its vectors), a thread
    /// fewer or more.
    fn actions(&self) -> Vec<Self> {
        let lanes = self.lanes();
        let [rows, columns] = self.register_tile;
        let mut next = Vec::new();
        for r in [rows + 1, rows - 1, rows * 2, rows / 2] {
            next.push(CpuSchedule { register_tile: [r, columns], ..*self });
        }
        for c in [columns + lanes, columns - lanes, columns * 2, columns / 2] {
            next.push(CpuSchedule { register_tile: [rows, c], ..*self });
        }
        for s in [self.num_stages + 1, self.num_stages - 1] {
            next.push(CpuSchedule { num_stages: s, ..*self });
        }
        // From the caches' choice: two chunk depths, and k whole (the
        // deepest chunk; normalization makes it the space's whole k).
        let deepest = K_CHUNKS[K_CHUNKS.len() - 1];
        let chunks: &[i64] =
            if self.k_chunk == 0 { &[256, 128, deepest] } else { &[self.k_chunk * 2, self.k_chunk / 2, 0] };
        for &k in chunks {
            next.push(CpuSchedule { k_chunk: k, ..*self });
        }
        for u in [self.k_unroll * 2, self.k_unroll / 2] {
            next.push(CpuSchedule { k_unroll: u, ..*self });
        }
        for bits in [self.bits() / 2, self.bits() * 2] {
            let vector_bits = if bits == host_vectors().0 { 0 } else { bits };
            let scaled = [rows, columns * bits / self.bits()];
            next.push(CpuSchedule { vector_bits, ..*self });
            next.push(CpuSchedule { vector_bits, register_tile: scaled, ..*self });
        }
        // Padding keeps a tile of whole vectors that the block's extent
        // would have shrunk (50 columns of a 100-wide block back to 64).
        let whole_vectors = [rows, (columns + lanes - 1) / lanes * lanes];
        next.push(CpuSchedule { pad_tiles: !self.pad_tiles, register_tile: whole_vectors, ..*self });
        next.push(CpuSchedule { column_major: !self.column_major, ..*self });
        let threads = if self.num_threads == 0 { host_cores() } else { self.num_threads };
        for t in [threads - 1, threads + 1] {
            next.push(CpuSchedule { num_threads: if t == host_cores() { 0 } else { t }, ..*self });
        }
        // Reductions: unsplit to a vector of interleaved partials (GROUP)
        // or a few contiguous chunks (GROUPTOP); then twice or half as
        // many partials (fewer than two: unsplit), or the other kind.
        if self.group == 0 {
            next.push(CpuSchedule { group: lanes, group_top: false, ..*self });
            next.push(CpuSchedule { group: 4, group_top: true, ..*self });
        } else {
            for p in [self.group * 2, self.group / 2] {
                next.push(CpuSchedule { group: if p < 2 { 0 } else { p }, ..*self });
            }
            next.push(CpuSchedule { group_top: !self.group_top, ..*self });
        }
        next
    }
}

/// The register tile `tessel-tile` gives the module's first contraction
/// with no knobs set, read from a copy lowered up to it (the model's tile,
/// `Dot::default_tile`, shrunk as the pass shrinks it).
fn passes_default_tile(module: &Module) -> Option<[i64; 2]> {
    use tessel_lowering::cpu::{GRID, KERNELS};
    let context = tessel_dialects::create_context();
    let mut copy = Module::parse(&context, &module.as_operation().to_string())?;
    let tiling = KERNELS.iter().position(|&pass| pass == "tessel-tile")?;
    let passes: Vec<&str> = GRID.iter().chain(&KERNELS[..=tiling]).copied().collect();
    tessel_lowering::run_passes(&context, &mut copy, &passes.join(",")).ok()?;
    let mut tile = None;
    copy.as_operation().walk(WalkOrder::PreOrder, |op: OperationRef| {
        if let (Ok(_), Ok(attribute)) =
            (op.attribute("tessel.contraction"), op.attribute(knobs::REGISTER_TILE.attribute))
            && let Ok(sizes) = melior::ir::attribute::DenseI64ArrayAttribute::try_from(attribute)
            && let (Ok(rows), Ok(columns)) = (sizes.element(0), sizes.element(1))
        {
            tile = Some([rows, columns]);
            return WalkResult::Interrupt;
        }
        WalkResult::Advance
    });
    tile
}

/// The space's k chunk that keeps `k` whole: the smallest power of two at
/// least as deep (the deepest chunk there is, past it).
fn whole_k(k: i64) -> i64 {
    (k.max(1) as u64).next_power_of_two().min(K_CHUNKS[K_CHUNKS.len() - 1] as u64) as i64
}

/// What the space knows of a kernel: the (rows, columns, depth) of its
/// contractions, so that schedules the passes would make identical (the
/// tile shrinks to divisors of the block, a chunk as deep as k is no
/// chunk) are measured once.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Space {
    pub contractions: Vec<[i64; 3]>,
    /// The passes' default register tile for the first contraction (its
    /// element types decide it), where the search starts.
    pub default_tile: Option<[i64; 2]>,
    /// Some grid has two or more axes (so the programs' order is a knob).
    pub multi_axis_grid: bool,
    /// Some grid has an arbitrary axis (so pipelining depth is a knob).
    pub arbitrary_axis: bool,
    /// Bytes of the first contraction's operand elements (its k blocks
    /// follow them).
    pub operand_bytes: i64,
    /// The caches the k blocks are computed for (the host's, read once).
    pub caches: tessel_passes::Caches,
    /// The extent of the reduced dimension of each block reduction over
    /// one dimension (what GROUP/GROUPTOP split).
    pub reductions: Vec<i64>,
}

/// Does `module` call a kernel over a grid of two or more axes, and over
/// one with an arbitrary axis?
pub fn grid_shapes(module: &Module) -> (bool, bool) {
    let (mut multi_axis, mut arbitrary) = (false, false);
    module.as_operation().walk(WalkOrder::PreOrder, |op: OperationRef| {
        if op.name().as_string_ref().as_str() == Ok(tessel_dialects::GridCall::NAME)
            && let Some(call) = tessel_dialects::GridCall::new(op)
        {
            multi_axis |= call.grid().len() >= 2;
            arbitrary |= tessel_passes::axis_semantics(&call)
                .is_some_and(|axes| axes.contains(&tessel_dialects::AxisSemantics::Arbitrary));
        }
        WalkResult::Advance
    });
    (multi_axis, arbitrary)
}

/// One `block.dot` of a kernel: its (rows, columns, depth) and element
/// types.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dot {
    pub sizes: [i64; 3],
    pub input: String,
    /// Bytes of one input element (its bits from the MLIR type, rounded
    /// down to whole bytes, as `tessel-tile` reads them).
    pub input_bytes: i64,
    pub output: String,
    /// The register tile the passes give it by default.
    pub default_tile: [i64; 2],
}

impl Space {
    /// The contractions (`block.dot`s) of `module`.
    pub fn of(module: &Module) -> Space {
        let dots = Space::dots(module);
        let default_tile = passes_default_tile(module).or_else(|| dots.first().map(|dot| dot.default_tile));
        let (multi_axis_grid, arbitrary_axis) = grid_shapes(module);
        let operand_bytes = dots.first().map_or(4, |dot| dot.input_bytes);
        let contractions = dots.into_iter().map(|dot| dot.sizes).collect();
        Space {
            contractions,
            default_tile,
            multi_axis_grid,
            arbitrary_axis,
            operand_bytes,
            caches: tessel_passes::CpuModel::host().caches,
            reductions: Space::reductions(module),
        }
    }

    /// The reduced extent of each `block.reduce` of `module` over one
    /// dimension.
    pub fn reductions(module: &Module) -> Vec<i64> {
        let mut extents = Vec::new();
        module.as_operation().walk(WalkOrder::PreOrder, |op: OperationRef| {
            if op.name().as_string_ref().as_str() == Ok("block.reduce")
                && let Ok(dims) = op.attribute("dims")
                && let Ok(dims) = melior::ir::attribute::DenseI64ArrayAttribute::try_from(dims)
                && let (1, Ok(dim)) = (dims.len(), dims.element(0))
                && let Ok(input) = op.operand(0)
                && let Ok(shaped) = RankedTensorType::try_from(input.r#type())
                && let Ok(melior::ir::r#type::DimSize::Static(extent)) = shaped.dim_size(dim as usize)
            {
                extents.push(extent as i64);
            }
            WalkResult::Advance
        });
        extents
    }

    /// The `block.dot`s of `module`.
    pub fn dots(module: &Module) -> Vec<Dot> {
        let mut dots = Vec::new();
        module.as_operation().walk(WalkOrder::PreOrder, |op: OperationRef| {
            if op.name().as_string_ref().as_str() == Ok("block.dot") {
                let shape = |index: usize| -> Option<(Vec<i64>, melior::ir::Type)> {
                    let value = if index < 2 { op.operand(index).ok()? } else { op.result(0).ok()?.into() };
                    let shaped = RankedTensorType::try_from(value.r#type()).ok()?;
                    let dims = (0..shaped.rank())
                        .map(|d| match shaped.dim_size(d) {
                            Ok(melior::ir::r#type::DimSize::Static(size)) => size as i64,
                            _ => 0,
                        })
                        .collect();
                    Some((dims, shaped.element()))
                };
                // M and N from the result; K from the lhs, whose last two
                // dimensions a `transposed` lhs swaps.
                let transposed_lhs = op.attribute("transpose_lhs").is_ok();
                if let (Some((lhs, input)), Some((_, _)), Some((result, output))) = (shape(0), shape(1), shape(2))
                    && let ([.., m, n], [.., rows, columns]) = (&result[..], &lhs[..])
                {
                    let k = if transposed_lhs { rows } else { columns };
                    let (rows, columns) = tessel_passes::default_tile(output, host_vectors().0, *m, *n);
                    dots.push(Dot {
                        sizes: [*m, *n, *k],
                        input: input.to_string(),
                        input_bytes: (tessel_passes::element_bits(input.to_raw()) / 8).max(1),
                        output: output.to_string(),
                        default_tile: [rows, columns],
                    });
                }
            }
            WalkResult::Advance
        });
        dots
    }

    /// The schedule the passes would actually apply (sizes shrunk to the
    /// first contraction's extents; tile knobs unused without one).
    pub fn normalize(&self, schedule: CpuSchedule) -> CpuSchedule {
        let schedule = CpuSchedule {
            column_major: schedule.column_major && self.multi_axis_grid,
            num_stages: if self.arbitrary_axis { schedule.num_stages } else { 1 },
            ..self.normalize_group(schedule)
        };
        let Some(&[m, n, k]) = self.contractions.first() else {
            let default = CpuSchedule::host_default();
            return CpuSchedule {
                register_tile: default.register_tile,
                k_chunk: 0,
                k_unroll: 1,
                pad_tiles: false,
                ..schedule
            };
        };
        let [rows, columns] = schedule.register_tile;
        // Padded tiles keep their size (up to the block's); where they
        // divide the block anyway, padding changes nothing.
        let (padded_rows, padded_columns) = (rows.min(m), columns.min(n));
        let pads = schedule.pad_tiles && (m % padded_rows != 0 || n % padded_columns != 0);
        // Unpadded, columns shrink to a divisor; rows stay (a remainder
        // strip, with or without an epilogue the tiles compute).
        let register_tile = if pads { [padded_rows, padded_columns] } else { [rows.min(m), fitting(n, columns)] };
        // The chunk the passes apply (0: k whole), asked for or the
        // caches' (as `tessel-tile` computes it, from the tile's width);
        // the caches' choice is 0 in the space, whole k a power of two at
        // least as deep.
        let applied = |chunk: i64| if chunk > 0 && fitting(k, chunk) < k { fitting(k, chunk) } else { 0 };
        let cached = applied(self.caches.k_block(m, register_tile[1], self.operand_bytes, k));
        let asked = if schedule.k_chunk == 0 { cached } else { applied(schedule.k_chunk) };
        let chunk = match asked {
            _ if asked == cached => 0,
            0 => whole_k(k),
            _ => asked,
        };
        let unroll = fitting(if asked > 0 { asked } else { k }, schedule.k_unroll);
        CpuSchedule { register_tile, k_chunk: chunk, k_unroll: unroll, pad_tiles: pads, ..schedule }
    }

    /// The split the pass would apply to the largest reduction (the
    /// passes' `group_partials`); none without reductions, or where fewer
    /// than two partials are left.
    fn normalize_group(&self, schedule: CpuSchedule) -> CpuSchedule {
        let largest = self.reductions.iter().copied().max().unwrap_or(0);
        let group = if schedule.group >= 2 { tessel_passes::group_partials(largest, schedule.group) } else { 0 };
        let group = if group >= 2 { group } else { 0 };
        CpuSchedule { group, group_top: schedule.group_top && group > 0, ..schedule }
    }

    /// Where the search starts: what the passes do by default (the
    /// host's default with this kernel's default tile), normalized.
    pub fn start(&self) -> CpuSchedule {
        let default = CpuSchedule::host_default();
        self.normalize(CpuSchedule { register_tile: self.default_tile.unwrap_or(default.register_tile), ..default })
    }

    /// The distinct legal schedules one action away from `schedule`.
    pub fn neighbours(&self, schedule: &CpuSchedule) -> Vec<CpuSchedule> {
        let mut next: Vec<CpuSchedule> = Vec::new();
        for candidate in schedule.actions() {
            if !candidate.is_legal() {
                continue;
            }
            let candidate = self.normalize(candidate);
            if candidate != *schedule && candidate.fits_registers() && !next.contains(&candidate) {
                next.push(candidate);
            }
        }
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbours_are_distinct_normalized_and_fit() {
        let space = Space {
            contractions: vec![[256, 256, 256]],
            default_tile: None,
            multi_axis_grid: true,
            arbitrary_axis: true,
            operand_bytes: 4,
            caches: tessel_passes::CpuModel::host().caches,
            reductions: vec![],
        };
        let start = space.start();
        assert!(start.is_legal());
        let next = space.neighbours(&start);
        assert!(!next.is_empty());
        assert!(next.iter().all(|s| s.fits_registers() && *s != start && space.normalize(*s) == *s));
        for (i, a) in next.iter().enumerate() {
            assert!(!next[i + 1..].contains(a));
        }
    }

    #[test]
    fn equivalent_schedules_normalize_alike() {
        let space = Space {
            contractions: vec![[16, 16, 256]],
            default_tile: None,
            multi_axis_grid: false,
            arbitrary_axis: true,
            operand_bytes: 4,
            caches: tessel_passes::CpuModel::host().caches,
            reductions: vec![],
        };
        let (lanes, _) = host_vectors();
        let a = CpuSchedule {
            register_tile: [8, 4 * lanes],
            num_stages: 1,
            k_chunk: 512,
            k_unroll: 1,
            num_threads: 0,
            vector_bits: 0,
            pad_tiles: false,
            column_major: false,
            group: 0,
            group_top: false,
        };
        let b = CpuSchedule { register_tile: [8, 2 * lanes], k_chunk: 0, ..a };
        assert_eq!(space.normalize(a), space.normalize(b));
        // No contraction: only the pipeline depth matters.
        let none = Space::default();
        assert_eq!(none.normalize(a), none.normalize(CpuSchedule { k_chunk: 64, ..b }));
    }

    #[test]
    fn the_caches_k_blocks_are_the_space_default_and_whole_k_is_in_it() {
        // 32768 deep: every CPU's caches split k (a B panel of at least 8
        // floats per k step would need 2 MiB of L2 to stay whole).
        let space = Space {
            contractions: vec![[256, 256, 32768]],
            default_tile: None,
            multi_axis_grid: false,
            arbitrary_axis: true,
            operand_bytes: 4,
            caches: tessel_passes::CpuModel::host().caches,
            reductions: vec![],
        };
        let start = space.start();
        assert_eq!(start.k_chunk, 0, "the caches' choice is the start");
        let tile_columns = start.register_tile[1];
        let cached = space.caches.k_block(256, tile_columns, 4, 32768);
        assert!(cached > 0 && cached < 32768, "{cached}");
        // Asking for the caches' chunk is the same point.
        assert_eq!(space.normalize(CpuSchedule { k_chunk: cached, ..start }), start);
        // Whole k is another point, and legal (a cached best stays in the space).
        let whole = space.normalize(CpuSchedule { k_chunk: 32768, ..start });
        assert_eq!(whole.k_chunk, 32768);
        assert!(whole.is_legal());
        assert!(space.neighbours(&start).contains(&whole), "whole k is one action from the start");
        // Where the caches keep k whole, asking for it is the default.
        let shallow = Space { contractions: vec![[256, 256, 64]], ..space.clone() };
        assert_eq!(shallow.normalize(CpuSchedule { k_chunk: 1024, ..start }).k_chunk, 0);
    }

    #[test]
    fn operand_bytes_come_from_the_dots_element_type() {
        tessel_lowering::register_everything();
        let context = tessel_dialects::create_context();
        let bytes = |input: &str, output: &str| {
            let text = format!(
                "func.func @k(%a: tensor<16x32x{input}>, %b: tensor<32x16x{input}>) -> tensor<16x16x{output}> {{\n\
                 %c = block.dot %a, %b : tensor<16x32x{input}>, tensor<32x16x{input}> -> tensor<16x16x{output}>\n\
                 return %c : tensor<16x16x{output}>\n}}\n"
            );
            let space = Space::of(&Module::parse(&context, &text).expect("the kernel parses"));
            assert_eq!(space.contractions, vec![[16, 16, 32]]);
            space.operand_bytes
        };
        assert_eq!(bytes("f32", "f32"), 4);
        assert_eq!(bytes("i8", "i32"), 1);
        assert_eq!(bytes("bf16", "f32"), 2);
        assert_eq!(bytes("f64", "f64"), 8);
    }

    /// A 64-row matmul kernel storing `stored`, after its dot `%c` and an
    /// `epilogue` (MLIR lines).
    fn kernel_64(epilogue: &str, stored: &str) -> String {
        format!(
            "func.func @k(%x: memref<64x64xf32>, %y: memref<64x64xf32>, %z: memref<64x64xf32>) {{\n\
             %a = block.load %x : memref<64x64xf32> -> tensor<64x64xf32>\n\
             %b = block.load %y : memref<64x64xf32> -> tensor<64x64xf32>\n\
             %c = block.dot %a, %b : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>\n\
             {epilogue}\n\
             block.store {stored}, %z : tensor<64x64xf32>, memref<64x64xf32>\n\
             return\n}}\n\
             func.func @f(%x: memref<128x64xf32>, %y: memref<64x64xf32>, %z: memref<128x64xf32>) {{\n\
             grid.call @k grid [2] ins(%x, %y : memref<128x64xf32>, memref<64x64xf32>) outs(%z : memref<128x64xf32>)\n\
             in_specs [#grid.block<[64, 64], (i) -> (i, 0)>, #grid.block<full>]\n\
             out_specs [#grid.block<[64, 64], (i) -> (i, 0)>]\n\
             return\n}}\n"
        )
    }

    #[test]
    fn the_start_is_the_tile_the_passes_give() {
        tessel_lowering::register_everything();
        let context = tessel_dialects::create_context();
        let space_of = |text: &str| Space::of(&Module::parse(&context, text).expect("the kernel parses"));
        // A dot stored as it is: the model's tile (on AVX2, 6 x 16 with a
        // remainder strip of 4 rows).
        let stored = kernel_64("", "%c");
        let plain = space_of(&stored);
        let model = Space::dots(&Module::parse(&context, &stored).unwrap());
        assert_eq!(plain.default_tile, Some(model[0].default_tile), "the model's tile");
        // Tiles computing the dot's epilogue (a relu) get the same tile
        // (the pass splits a remainder strip off the epilogue too).
        let relu = space_of(&kernel_64(
            "%zero = arith.constant dense<0.0> : tensor<64x64xf32>\n\
             %r = arith.maximumf %c, %zero : tensor<64x64xf32>",
            "%r",
        ));
        assert_eq!(relu.default_tile, Some(model[0].default_tile), "{:?}", relu.default_tile);
        // The start requests it, and normalization keeps remainder rows.
        assert_eq!(relu.start().register_tile, relu.default_tile.unwrap());
        assert_eq!(plain.start().register_tile, plain.default_tile.unwrap());
    }

    #[test]
    fn spilling_and_partial_vector_tiles_are_illegal() {
        let (bits, registers) = host_vectors();
        let lanes = bits / 32;
        let legal = CpuSchedule {
            register_tile: [4, lanes],
            num_stages: 1,
            k_chunk: 64,
            k_unroll: 2,
            num_threads: 0,
            vector_bits: 0,
            pad_tiles: false,
            column_major: false,
            group: 0,
            group_top: false,
        };
        assert!(legal.is_legal());
        assert!(!CpuSchedule { register_tile: [registers, 2 * lanes], ..legal }.is_legal());
        assert!(!CpuSchedule { register_tile: [4, lanes + 1], ..legal }.is_legal());
        assert!(!CpuSchedule { num_stages: 0, ..legal }.is_legal());
        assert!(!CpuSchedule { k_chunk: 48, ..legal }.is_legal());
        assert!(!CpuSchedule { k_unroll: 3, ..legal }.is_legal());
        // Vector widths the host has; thread counts up to its cores.
        if bits >= 512 {
            assert!(CpuSchedule { vector_bits: 256, register_tile: [4, 8], ..legal }.is_legal());
        }
        assert!(!CpuSchedule { vector_bits: 128, register_tile: [4, 4], ..legal }.is_legal());
        assert!(!CpuSchedule { vector_bits: 2 * bits, ..legal }.is_legal());
        assert!(!CpuSchedule { vector_bits: 96, ..legal }.is_legal());
        assert!(CpuSchedule { num_threads: 1, ..legal }.is_legal());
        assert!(!CpuSchedule { num_threads: host_cores() + 1, ..legal }.is_legal());
    }

    #[test]
    fn padded_tiles_only_where_tiles_do_not_divide() {
        let (bits, _) = host_vectors();
        let lanes = bits / 32;
        let tile = CpuSchedule { register_tile: [4, 2 * lanes], pad_tiles: true, ..CpuSchedule::host_default() };
        // 100 rows and columns: 4 divides 100, 2 vectors do not: padded.
        let odd = Space {
            contractions: vec![[100, 100, 64]],
            default_tile: None,
            multi_axis_grid: false,
            arbitrary_axis: true,
            operand_bytes: 4,
            caches: tessel_passes::CpuModel::host().caches,
            reductions: vec![],
        };
        assert_eq!(odd.normalize(tile).register_tile, [4, 2 * lanes]);
        assert!(odd.normalize(tile).pad_tiles);
        // Without padding the tile shrinks to divisors of 100.
        assert_eq!(odd.normalize(CpuSchedule { pad_tiles: false, ..tile }).register_tile[1], fitting(100, 2 * lanes));
        // Where the tile divides, padding is the same schedule.
        let even = Space {
            contractions: vec![[256, 256, 64]],
            default_tile: None,
            multi_axis_grid: false,
            arbitrary_axis: true,
            operand_bytes: 4,
            caches: tessel_passes::CpuModel::host().caches,
            reductions: vec![],
        };
        assert_eq!(even.normalize(tile), even.normalize(CpuSchedule { pad_tiles: false, ..tile }));
        assert!(odd.neighbours(&odd.start()).iter().any(|s| s.pad_tiles));
    }

    #[test]
    fn width_and_thread_actions_stay_in_the_space() {
        let space = Space {
            contractions: vec![[256, 256, 256]],
            default_tile: None,
            multi_axis_grid: true,
            arbitrary_axis: true,
            operand_bytes: 4,
            caches: tessel_passes::CpuModel::host().caches,
            reductions: vec![],
        };
        let start = space.start();
        let next = space.neighbours(&start);
        // A narrower width, keeping the tile's columns (more vectors) or
        // its vector count (fewer columns).
        let narrower: Vec<_> = next.iter().filter(|s| s.vector_bits == start.bits() / 2).collect();
        assert!(!narrower.is_empty() || start.bits() <= 256);
        assert!(narrower.iter().all(|s| s.register_tile[1] % (s.bits() / 32) == 0 && s.fits_registers()));
        if host_cores() > 1 {
            assert!(next.iter().any(|s| s.num_threads == host_cores() - 1));
        }
        // A multi-axis grid's programs may run column-major; a one-axis
        // grid's order is no knob.
        assert!(next.iter().any(|s| s.column_major));
        let one_axis = Space { multi_axis_grid: false, ..space.clone() };
        assert!(one_axis.neighbours(&one_axis.start()).iter().all(|s| !s.column_major));
        // The default maps to no knobs beyond the tile and depth.
        let lowering = start.to_lowering();
        assert_eq!((lowering.integer(&knobs::NUM_THREADS), lowering.integer(&knobs::VECTOR_BITS)), (None, None));
    }

    #[test]
    fn group_actions_only_where_there_are_reductions() {
        let lanes = host_vectors().0 / 32;
        let none = Space::default();
        assert!(none.neighbours(&none.start()).iter().all(|s| s.group == 0 && !s.group_top));
        let rows = Space { reductions: vec![4096, 100], ..Space::default() };
        let start = rows.start();
        assert_eq!((start.group, start.group_top), (0, false));
        let next = rows.neighbours(&start);
        // GROUP: a vector of interleaved partials; GROUPTOP: a few chunks.
        assert!(next.iter().any(|s| s.group == lanes && !s.group_top));
        assert!(next.iter().any(|s| s.group == 4 && s.group_top));
        // From a split: twice or half as many partials, the other kind.
        let split = CpuSchedule { group: 16, ..start };
        let after = rows.neighbours(&split);
        assert!(after.iter().any(|s| s.group == 32) && after.iter().any(|s| s.group == 8));
        assert!(after.iter().any(|s| s.group == 16 && s.group_top));
        // As the pass splits the largest reduction: a divisor of its
        // extent, two elements per partial at least, else unsplit.
        let six = Space { reductions: vec![6], ..Space::default() };
        assert_eq!(six.normalize(CpuSchedule { group: 16, ..start }).group, 3);
        let two = Space { reductions: vec![2], ..Space::default() };
        assert_eq!(two.normalize(CpuSchedule { group: 16, group_top: true, ..start }), two.normalize(start));
        // Bounds, and the knobs the lowering gets.
        assert!(!CpuSchedule { group: 1, ..start }.is_legal());
        assert!(!CpuSchedule { group: 512, ..start }.is_legal());
        let lowering = CpuSchedule { group: 32, group_top: true, ..start }.to_lowering();
        assert_eq!((lowering.integer(&knobs::GROUP), lowering.integer(&knobs::GROUP_TOP)), (Some(32), Some(1)));
        let default = start.to_lowering();
        assert_eq!((default.integer(&knobs::GROUP), default.integer(&knobs::GROUP_TOP)), (None, None));
    }

    #[test]
    fn pipelining_depth_only_where_a_grid_has_an_arbitrary_axis() {
        let parallel = Space { contractions: vec![[256, 256, 256]], ..Space::default() };
        let start = parallel.start();
        assert!(parallel.neighbours(&start).iter().all(|s| s.num_stages == 1));
        assert_eq!(parallel.normalize(CpuSchedule { num_stages: 3, ..start }), start);
        let revisited = Space { arbitrary_axis: true, ..parallel };
        assert!(revisited.neighbours(&revisited.start()).iter().any(|s| s.num_stages == 2));
    }
}
