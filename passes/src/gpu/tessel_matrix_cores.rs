//! `tessel-matrix-cores`: contractions on AMD matrix cores — `amdgpu.mfma`
//! on CDNA (gfx90a, gfx942), `amdgpu.wmma` on RDNA 3 (gfx1100) — with the
//! accumulators in registers across the whole k loop.
//!
//! Runs on buffers, before `tessel-lds-stage` (which keeps the contractions
//! this pass leaves: they become FMA loops). A contraction qualifies only
//! where the instruction computes block.dot's meaning bit for bit:
//!
//! - f32 x f32 -> f32 on CDNA (`v_mfma_f32_16x16x4f32`): the f32 MFMAs
//!   compute each result as one fused multiply-add per k step, in k order,
//!   with denormals kept (Xie et al., "MMA-Sim: Bit-Accurate Reference
//!   Model of Tensor Cores and Matrix Cores", 2025, validated on CDNA 1-3
//!   hardware) — what block.dot means;
//! - i8 x i8 -> i32 on all three chips (`v_mfma_i32_16x16x16i8`,
//!   `v_mfma_i32_16x16x32_i8`, `v_wmma_i32_16x16x16_iu8`): integer sums
//!   are exact in any order.
//!
//! f16/bf16 matrix instructions sum several products per step with their
//! own rounding, so those contractions keep FMAs (so do f64 ones).
//!
//! The rewrite. The workgroup's `num_warps` waves form a `Wm` x `Wn` grid;
//! each wave owns `Tm` x `Tn` 16x16 tiles, so a sub-block of
//! (`Wm`·`Tm`·16) x (`Wn`·`Tn`·16) results is computed at a time (a loop
//! over sub-blocks covers larger blocks). Per sub-block: each lane loads
//! its accumulator registers from C; a loop over k-chunks stages the A and
//! B chunks in LDS (block work, shared by every work-item, coalesced) and
//! then every wave, per 16x16 tile and instruction step, loads its lanes'
//! A and B fragments from LDS and issues one matrix instruction; the
//! accumulators ride the chunk loop as `iter_args`; at the end each lane
//! stores its registers to C. MFMA tiles are computed transposed (see
//! `Plan::transposed`) so those loads and stores are one vector per tile.
//!
//! Where the chunks divide evenly among the work-items (`matrix_staging`),
//! each item stages its share itself, software-pipelined: the next
//! chunk's global loads go to registers before the current chunk's matrix
//! instructions (their latency hidden behind them), and after a barrier
//! the registers go to LDS, laid out so each lane reads all its fragments
//! of a chunk with one wide, conflict-free load per tile row and column.
//! Elsewhere the workgroup copies each chunk with `linalg.copy` (block
//! work) before computing it. With `tessel.num_stages = 2` the chunks are
//! double-buffered: chunk c + 1 is staged into the other LDS buffers while
//! chunk c is computed (one barrier per chunk). The per-lane code uses
//! `gpu.thread_id x`, which grid-to-gpu binds to the work-item: code on
//! thread ids runs on every work-item (SIMT), not as block work.
//!
//! Contractions that do not fit (a dimension not a multiple of 16, k not
//! a multiple of the instruction's, no wave arrangement that divides the
//! block, batched or dynamic shapes) are left to the FMA path. Module
//! attributes: `tessel.chip` (default gfx90a), `tessel.matrix_cores`
//! (0 turns the pass off: the tuner's MFMA/FMA choice), `tessel.num_warps`
//! and `tessel.wave_size` (the instruction's width, else FMAs),
//! `tessel.num_stages`, `tessel.lds_chunk` (k steps per staged chunk,
//! rounded to the instruction's k).

use crate::support::handles::{dim_size, rank_of, raw_op, value_type};
use crate::support::handles::{has_static_shape, is_memref};
use crate::support::template::emit_line;
use crate::{
    PassDefinition, PassError,
    block::block_to_linalg::CONTRACTION,
    gpu::matrix_staging::{
        Launch, Layout, StagedContraction, Staging, inside_programs, is_grid_steps, pair_loop_header, read_conflicts,
        replace_contraction,
    },
    gpu::pipeline_schedule::ChunkWork,
    gpu::pipelined_loop::pipelined_loop,
    gpu::tessel_lds_stage::{STAGED_BUFFER, STAGED_LOOP},
    support::ir::{collect_operations, element_name, enclosing, print_type, strided_view_type},
};
use melior::ir::OperationRef;
use mlir_sys::*;
use tessel_dialects::{
    Chip,
    matrix_layout::{Family, MatrixInstruction},
};
use tessel_dialects::{RawOp, knobs};

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-matrix-cores",
    name: "TesselMatrixCores",
    description: "Compute contractions with AMD matrix instructions (MFMA, WMMA), accumulators in registers",
    anchor: "builtin.module",
    run,
};

/// Accumulator registers a lane may hold (of 32 bits) in a workgroup of
/// `warps` waves, largest first. On CDNA, half the registers LLVM lets a
/// lane use when the workgroup's waves share a CU's four SIMDs (512
/// registers a lane each, at most 256 of them VGPRs): 128 for up to
/// eight waves, so four waves cover a 256x128 block and eight a 256x256
/// one in one pass (A and B staged once, not once per 128x128 sub-block)
/// at two waves per SIMD; 64 with sixteen (four waves per SIMD, 128
/// registers a lane) — and 64 where an arbitrary grid axis still loops
/// around the contraction (`in_grid_steps`: its k steps not merged into
/// one contraction by tessel-merge-k-steps): that loop's own values live
/// beside the accumulators (bias + relu on 256x256 blocks with eight
/// waves, before its epilogue merged, spilled 18 registers). On RDNA 3 half a wave32's 256 (its WMMA
/// tiles take 8 registers each, twice an MFMA tile's: 128 covers a
/// 128x128 block with four waves, so it stays in registers across a
/// grid's k axis; fewer would not).
fn accumulator_budgets(family: Family, warps: i64, in_grid_steps: bool) -> Vec<i64> {
    match family {
        Family::Mfma if in_grid_steps => vec![64],
        Family::Mfma => {
            let waves_per_simd = ((warps + 3) / 4).max(1);
            let half_of_lane = (512 / waves_per_simd).min(256) / 2;
            // The smaller budget too, for when the larger's sub-blocks leave
            // shallower chunks (see `plan`).
            if half_of_lane > 64 { vec![half_of_lane, 64] } else { vec![half_of_lane] }
        }
        Family::Wmma => vec![128],
    }
}
/// How the waves share a sub-block: (wave columns, tile rows, tile
/// columns per wave).
type Arrangement = (i64, i64, i64);
/// How deep a contraction's k is staged: (LDS buffers per operand, k
/// steps per chunk).
type Depth = (i64, i64);

/// The rows and columns of the sub-block `warps` waves arranged so cover.
fn sub_block(warps: i64, (wave_columns, tile_rows, tile_columns): Arrangement) -> (i64, i64) {
    (warps / wave_columns * tile_rows * 16, wave_columns * tile_columns * 16)
}

/// Tiles of 16 a wave may hold along either dimension.
const MAX_WAVE_TILES: i64 = 8;
/// Bytes of LDS the staged chunks of one contraction may take.
const STAGED_BYTES: i64 = 32768;
/// Bytes of k per operand row a chunk holds by default.
const CHUNK_ROW_BYTES: i64 = 64;
/// Registers a lane's fragments of one chunk may take (RDNA 3's i8 WMMA
/// tiles at 64 k a chunk would take 128, beside 128 accumulators: spills).
const FRAGMENT_REGISTERS: i64 = 64;

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    let settings = raw_op(module.to_raw());
    if knobs::MATRIX_CORES.integer_or(settings, 1) == 0 {
        return Ok(());
    }
    let Launch { chip, warps, wanted_chunk, chunk_chosen, stages, wave } = Launch::of(module)?;
    // Unless the module says, chunks of CHUNK_ROW_BYTES per row: 16 k of
    // f32, 64 of i8 (Triton's BLOCK_K for each), so a chunk's fixed costs
    // (barriers, waits, address arithmetic) spread over as many bytes.
    let wanted_chunk = |bytes: i64| if chunk_chosen { wanted_chunk } else { wanted_chunk.max(CHUNK_ROW_BYTES / bytes) };
    for (raw, _) in collect_operations(module, |name| name == "linalg.generic") {
        let Some(plan) = plan(raw, chip, warps, &wanted_chunk, stages) else { continue };
        // The instructions need their own wave size (64 for MFMA, 32 for
        // WMMA) as grid-to-gpu will launch the work-items.
        if plan.instruction.wave_size() != wave {
            continue;
        }
        replace_contraction(raw, |filled| plan.template(filled))?;
    }
    Ok(())
}

/// How one contraction is computed on matrix cores.
struct Plan {
    chip: Chip,
    instruction: MatrixInstruction,
    /// Contraction sizes: C is m x n, A m x k, B k x n.
    m: i64,
    n: i64,
    k: i64,
    /// Waves per workgroup, arranged `wave_rows` x `wave_columns`.
    waves: i64,
    wave_columns: i64,
    /// 16x16 tiles per wave, `tile_rows` x `tile_columns`.
    tile_rows: i64,
    tile_columns: i64,
    /// k steps per LDS chunk.
    chunk: i64,
    /// LDS buffers per operand: 2 double-buffers the chunks.
    stages: i64,
    /// Per-item staging through registers, where the chunks divide evenly.
    staging: Option<Staging>,
    types: [MlirType; 3],
    input: String,
    output: String,
}

/// The plan for `op`, when it is a contraction matrix cores compute exactly.
fn plan(op: MlirOperation, chip: Chip, warps: i64, wanted_chunk: &dyn Fn(i64) -> i64, stages: i64) -> Option<Plan> {
    let raw = raw_op(op);
    if !raw.has(CONTRACTION) || raw.operands().len() != 3 || !inside_programs(op) {
        return None;
    }
    let types = [0, 1, 2].map(|index| value_type(raw.operands()[index]));
    let static_rank_2 = |t: MlirType| is_memref(t) && has_static_shape(t) && rank_of(t) == 2;
    if !types.iter().all(|&t| static_rank_2(t)) {
        return None;
    }
    let dim = |t: MlirType, d: isize| dim_size(t, (d) as usize);
    let (m, k, n) = (dim(types[0], 0), dim(types[0], 1), dim(types[1], 1));
    let (input, output) = (element_name(types[0]), element_name(types[2]));
    if element_name(types[1]) != input {
        return None;
    }
    let instruction = chip.matrix_instruction(&input, &output)?;
    if !computes_block_dot(op, &input) || m % 16 != 0 || n % 16 != 0 || k % instruction.k != 0 {
        return None;
    }
    let bytes = instruction.input_bits / 8;
    // Chunks deep enough that a lane's fragments of one are at least 8
    // bytes (one 64-bit LDS read), where k allows.
    let wide_chunk = instruction.k * (8 / (instruction.input_elements() * bytes)).max(1);
    let wanted_chunk = wanted_chunk(bytes);
    let wanted_chunk = if k % wide_chunk == 0 { wanted_chunk.max(wide_chunk) } else { wanted_chunk };
    let wanted_stages = stages;
    // The (stages, chunk) of a sub-block of `sub_m` x `sub_n` whose waves
    // hold `tile_rows` x `tile_columns` tiles each: the largest chunk of k a
    // multiple of the instruction's, dividing k, at most the wanted
    // chunk, whose buffers fit the LDS budget and whose fragments (a lane
    // reads a whole chunk's before its matrix instructions) fit
    // FRAGMENT_REGISTERS; double buffering (num_stages 2) needs an even
    // number of chunks.
    let depth = |(sub_m, sub_n): (i64, i64), (_, tile_rows, tile_columns): Arrangement| {
        let chunk_for = |stages: i64| {
            (1..=k / instruction.k)
                .map(|steps| steps * instruction.k)
                .filter(|&chunk| k % chunk == 0 && (chunk <= wanted_chunk || chunk == instruction.k))
                .filter(|&chunk| stages == 1 || (k / chunk) % 2 == 0)
                .filter(|&chunk| chunk == instruction.k || stages * (sub_m + sub_n) * chunk * bytes <= STAGED_BYTES)
                .filter(|&chunk| {
                    let run_bytes = chunk / instruction.k * instruction.input_elements() * bytes;
                    chunk == instruction.k || (tile_rows + tile_columns) * run_bytes / 4 <= FRAGMENT_REGISTERS
                })
                .max()
        };
        match chunk_for(2) {
            Some(chunk) if wanted_stages >= 2 => Some((2, chunk)),
            _ => Some((1, chunk_for(1)?)),
        }
    };
    // Larger sub-blocks stage A and B fewer times (once per block where
    // one covers it), but not at the cost of the double buffering or the
    // chunk depth a smaller one gets within the LDS budget (256x128 f32
    // sub-blocks double-buffered in 32 KiB would take 8-deep chunks, 64-bit
    // fragment reads): of the accumulator budgets, the largest with the
    // best (stages, chunk).
    let in_grid_steps = enclosing(op, is_grid_steps).is_some();
    let mut best: Option<(Depth, Arrangement)> = None;
    for budget in accumulator_budgets(instruction.family, warps, in_grid_steps) {
        let Some(arrangement) = arrange(m, n, warps, instruction.output_elements(), budget) else { continue };
        let Some(depth) = depth(sub_block(warps, arrangement), arrangement) else { continue };
        if best.is_none_or(|(known, _)| depth > known) {
            best = Some((depth, arrangement));
        }
    }
    let ((stages, chunk), arrangement) = best?;
    let (wave_columns, tile_rows, tile_columns) = arrangement;
    let (sub_m, sub_n) = sub_block(warps, arrangement);
    let layout = |outer: i64| Layout { outer, chunk, inst_k: instruction.k, elements: instruction.input_elements() };
    let threads = warps * instruction.wave_size();
    // Staged per item where the fragment reads have at most 2-way bank
    // conflicts (this layout's are 1-way).
    let (layout_a, layout_b) = (layout(sub_m), layout(sub_n));
    let wave = instruction.wave_size();
    let staging = (read_conflicts(layout_a, bytes, wave) <= 2 && read_conflicts(layout_b, bytes, wave) <= 2)
        .then(|| Staging::plan(layout_a, layout_b, threads, &input, bytes))
        .flatten();
    Some(Plan {
        chip,
        instruction,
        m,
        n,
        k,
        waves: warps,
        wave_columns,
        tile_rows,
        tile_columns,
        chunk,
        stages,
        staging,
        types,
        input,
        output,
    })
}

/// Whether the contraction's body computes what `block.dot` does, read
/// from its dataflow, not its op names: for f32 `math.fma` of the two
/// input elements (either order) onto the accumulator, yielded; for i8,
/// the accumulator plus the product of the sign-extended inputs (either
/// order each), yielded. Any other body (an fma whose addend is an
/// input, a sub for an add) is left to the FMA path, which computes
/// whatever the body says.
fn computes_block_dot(op: MlirOperation, input: &str) -> bool {
    let body = raw_op(op).region_block(0);
    let arguments = crate::support::ir::block_arguments(body);
    let ops: Vec<RawOp> = crate::support::ir::block_operations(body).into_iter().map(raw_op).collect();
    let [a, b, acc] = arguments[..] else { return false };
    let same = |x: MlirValue, y: MlirValue| x.ptr == y.ptr;
    let pair = |operands: &[MlirValue], x: MlirValue, y: MlirValue| matches!(operands, [p, q] if (same(*p, x) && same(*q, y)) || (same(*p, y) && same(*q, x)));
    let yields = |yield_op: &RawOp, value: MlirValue| {
        yield_op.name() == "linalg.yield" && matches!(yield_op.operands()[..], [yielded] if same(yielded, value))
    };
    let result = |op: &RawOp| op.results().first().copied();
    match (input, &ops[..]) {
        ("f32", [fma, yield_op]) => {
            let operands = fma.operands();
            fma.name() == "math.fma"
                && operands.len() == 3
                && pair(&operands[..2], a, b)
                && same(operands[2], acc)
                && result(fma).is_some_and(|sum| yields(yield_op, sum))
        }
        ("i8", [wide_a, wide_b, mul, add, yield_op]) => {
            let extends = |op: &RawOp, from: MlirValue| {
                op.name() == "arith.extsi" && matches!(op.operands()[..], [x] if same(x, from))
            };
            let (Some(wide_a_value), Some(wide_b_value), Some(product), Some(sum)) =
                (result(wide_a), result(wide_b), result(mul), result(add))
            else {
                return false;
            };
            ((extends(wide_a, a) && extends(wide_b, b)) || (extends(wide_a, b) && extends(wide_b, a)))
                && mul.name() == "arith.muli"
                && pair(&mul.operands(), wide_a_value, wide_b_value)
                && add.name() == "arith.addi"
                && pair(&add.operands(), acc, product)
                && yields(yield_op, sum)
        }
        _ => false,
    }
}

/// The waves' arrangement (`wave_columns`) and each wave's tiles (rows,
/// columns) for an `m` x `n` result: tiles of 16, every wave busy, at most
/// `budget` accumulator registers per lane; most tiles per wave
/// first (each fragment load then feeds more instructions), then the
/// squarest.
fn arrange(m: i64, n: i64, warps: i64, registers_per_tile: i64, budget: i64) -> Option<Arrangement> {
    // (score, arrangement) of the best so far.
    type Candidate = ((i64, i64, i64), Arrangement);
    let mut best: Option<Candidate> = None;
    for wave_columns in (1..=warps).filter(|c| warps % c == 0) {
        let wave_rows = warps / wave_columns;
        for tile_rows in 1..=MAX_WAVE_TILES {
            for tile_columns in 1..=MAX_WAVE_TILES {
                let fits = m % (wave_rows * tile_rows * 16) == 0 && n % (wave_columns * tile_columns * 16) == 0;
                if !fits || tile_rows * tile_columns * registers_per_tile > budget {
                    continue;
                }
                let score = (tile_rows * tile_columns, tile_rows.min(tile_columns), -(wave_rows - wave_columns).abs());
                if best.is_none_or(|(known, _)| score > known) {
                    best = Some((score, (wave_columns, tile_rows, tile_columns)));
                }
            }
        }
    }
    best.map(|(_, arrangement)| arrangement)
}

impl Plan {
    fn sub_rows(&self) -> i64 {
        sub_block(self.waves, (self.wave_columns, self.tile_rows, self.tile_columns)).0
    }

    fn sub_columns(&self) -> i64 {
        sub_block(self.waves, (self.wave_columns, self.tile_rows, self.tile_columns)).1
    }

    fn tiles(&self) -> impl Iterator<Item = (i64, i64)> + '_ {
        (0..self.tile_rows).flat_map(move |row| (0..self.tile_columns).map(move |column| (row, column)))
    }

    /// MFMA results are computed transposed (Cᵀ = Bᵀ·Aᵀ: the B fragment
    /// goes in as the instruction's A operand): a lane's registers then
    /// hold consecutive columns of one row of C, loaded and stored as one
    /// vector, instead of rows apart (a separate 64-bit address each).
    /// Products commute, so the bits are the same.
    fn transposed(&self) -> bool {
        self.instruction.family == Family::Mfma
    }

    fn accumulator_type(&self) -> String {
        format!("vector<{}x{}>", self.instruction.output_elements(), self.output)
    }

    fn fragment_type(&self) -> String {
        match self.instruction.input_elements() {
            1 => self.input.clone(),
            count => format!("vector<{count}x{}>", self.input),
        }
    }

    /// The template replacing the contraction (arguments %A, %B, %C).
    /// `filled`: C is filled right before (`replace_contraction`), the
    /// accumulators start from the template's `%fill`.
    fn template(&self, filled: bool) -> String {
        let inst = &self.instruction;
        let (sub_m, sub_n, chunk) = (self.sub_rows(), self.sub_columns(), self.chunk);
        let [ta, tb, tc] = self.types.map(print_type);
        let view_c = strided_view_type(self.types[2], sub_m, sub_n);
        let (lds_a, lds_b) = self.lds_types();
        let accumulator = self.accumulator_type();
        let tiles: Vec<(i64, i64)> = self.tiles().collect();
        let mut t = String::new();
        let c = |value: i64| format!("%c{value}");
        let mut constants: std::collections::BTreeSet<i64> = [0, 1, 16].into_iter().collect();
        constants.extend([
            self.m,
            self.n,
            self.k,
            sub_m,
            sub_n,
            chunk,
            inst.wave_size(),
            self.wave_columns,
            self.tile_rows * 16,
            self.tile_columns * 16,
            inst.fragment_k_stride(),
            inst.result_row_per_group(),
        ]);
        let fill = if filled { format!(", %fill: {}", self.output) } else { String::new() };
        emit_line!(t, "func.func @template(%A: {ta}, %B: {tb}, %C: {tc}{fill}) {{");
        // Constants the code below uses (some also per tile, added later).
        let mut body = String::new();
        // Which wave and lane this work-item is, and where its fragments are.
        emit_line!(
            body,
            "%tid = gpu.thread_id x\n\
             %lane = arith.remui %tid, {wave} : index\n%wave = arith.divui %tid, {wave} : index\n\
             %wave_row = arith.divui %wave, {wcols} : index\n%wave_col = arith.remui %wave, {wcols} : index\n\
             %row0 = arith.muli %wave_row, {trows} : index\n%col0 = arith.muli %wave_col, {tcols} : index\n\
             %lo = arith.remui %lane, %c16 : index\n%hi = arith.divui %lane, %c16 : index\n\
             %kfrag = arith.muli %hi, {kstride} : index\n%rfrag = arith.muli %hi, {rgroup} : index",
            wave = c(inst.wave_size()),
            wcols = c(self.wave_columns),
            trows = c(self.tile_rows * 16),
            tcols = c(self.tile_columns * 16),
            kstride = c(inst.fragment_k_stride()),
            rgroup = c(inst.result_row_per_group()),
        );
        if let Some(staging) = &self.staging {
            // The lane group's rows of the staged buffers.
            constants.extend([inst.input_elements(), sub_m, sub_n]);
            emit_line!(
                body,
                "%lgroup = arith.divui %kfrag, {e} : index\n%grow_a = arith.muli %lgroup, {sub_m_c} : index\n\
                 %grow_b = arith.muli %lgroup, {sub_n_c} : index",
                e = c(inst.input_elements()),
                sub_m_c = c(sub_m),
                sub_n_c = c(sub_n),
            );
            staging.emit_offsets(&mut body, &mut constants);
        }
        for buffer in 0..self.stages {
            emit_line!(
                body,
                "%la{buffer} = memref.alloc() {{alignment = 64 : i64, {STAGED_BUFFER}}} : {lds_a}\n\
                 %lb{buffer} = memref.alloc() {{alignment = 64 : i64, {STAGED_BUFFER}}} : {lds_b}"
            );
        }
        // Per tile row: the lane's A fragment row; per tile column: its B
        // fragment column. Where its results are in C: transposed, a row
        // (the A fragment's) and `output_elements` consecutive columns;
        // else one row per register and the B fragment's column.
        for row in 0..self.tile_rows {
            constants.insert(row * 16);
            emit_line!(
                body,
                "%tr{row} = arith.addi %row0, {} : index\n%ar{row} = arith.addi %tr{row}, %lo : index",
                c(row * 16)
            );
            if !self.transposed() {
                emit_line!(body, "%dr{row}_0 = arith.addi %tr{row}, %rfrag : index");
                for register in 1..inst.output_elements() {
                    let offset = register * inst.result_row_per_register();
                    constants.insert(offset);
                    emit_line!(body, "%dr{row}_{register} = arith.addi %dr{row}_0, {} : index", c(offset));
                }
            }
        }
        for column in 0..self.tile_columns {
            constants.insert(column * 16);
            emit_line!(
                body,
                "%tc{column} = arith.addi %col0, {} : index\n%dc{column} = arith.addi %tc{column}, %lo : index\n\
                 %ec{column} = arith.addi %tc{column}, %rfrag : index",
                c(column * 16)
            );
        }
        emit_line!(
            body,
            "scf.for %sm = %c0 to {m} step {sub_m_c} {{\nscf.for %sn = %c0 to {n} step {sub_n_c} {{\n\
             %cs = memref.subview %C[%sm, %sn] [{sub_m}, {sub_n}] [1, 1] : {tc} to {view_c}",
            m = c(self.m),
            n = c(self.n),
            sub_m_c = c(sub_m),
            sub_n_c = c(sub_n),
        );
        // The lane's accumulators, from C (or the value filling it).
        for &(row, column) in &tiles {
            if filled {
                emit_line!(body, "%init{row}_{column} = vector.broadcast %fill : {} to {accumulator}", self.output);
                continue;
            }
            if self.transposed() {
                emit_line!(
                    body,
                    "%init{row}_{column} = vector.load %cs[%ar{row}, %ec{column}] : {view_c}, {accumulator}"
                );
                continue;
            }
            let mut elements = Vec::new();
            for register in 0..inst.output_elements() {
                emit_line!(
                    body,
                    "%ci{row}_{column}_{register} = memref.load %cs[%dr{row}_{register}, %dc{column}] : {view_c}"
                );
                elements.push(format!("%ci{row}_{column}_{register}"));
            }
            emit_line!(body, "%init{row}_{column} = vector.from_elements {} : {accumulator}", elements.join(", "));
        }
        // The k-chunk loop: stage, then the matrix instructions; with two
        // stages, chunk c + 1 is staged in the other buffers while chunk c
        // is computed (prologue, steady pairs, epilogue).
        let carried = |prefix: &str| tiles.iter().map(|(r, c)| format!("%{prefix}{r}_{c}")).collect::<Vec<_>>();
        let iter_args: Vec<String> =
            carried("acc").iter().zip(carried("init")).map(|(arg, init)| format!("{arg} = {init}")).collect();
        let types = vec![accumulator.clone(); tiles.len()].join(", ");
        let (count, iter_args) = (tiles.len(), iter_args.join(", "));
        let last = if self.staging.is_some() {
            let accumulators = carried("acc").into_iter().zip(carried("init")).collect();
            pipelined_loop(self, &mut body, accumulators, &types, &mut constants)
        } else if self.stages == 1 {
            emit_line!(
                body,
                "%res:{count} = scf.for %k = %c0 to {} step {} iter_args({iter_args}) -> ({types}) {{",
                c(self.k),
                c(chunk)
            );
            body.push_str(&self.stage("s", "%k", "0"));
            let next = self.compute(&mut body, "s", "0", carried("acc"), &mut constants);
            emit_line!(body, "scf.yield {} : {types}\n}} {{{STAGED_LOOP}}}", next.join(", "));
            (0..count).map(|index| format!("%res#{index}")).collect::<Vec<_>>()
        } else {
            body.push_str(&self.stage("first", "%c0", "0"));
            pair_loop_header(&mut body, &mut constants, (self.k, chunk), count, (&iter_args, &types));
            body.push_str(&self.stage("next", "%k1", "1"));
            let middle = self.compute(&mut body, "p", "0", carried("acc"), &mut constants);
            body.push_str(&self.stage("after", "%k2", "0"));
            let next = self.compute(&mut body, "q", "1", middle, &mut constants);
            emit_line!(body, "scf.yield {} : {types}\n}} {{{STAGED_LOOP}}}", next.join(", "));
            body.push_str(&self.stage("last", &c(self.k - chunk), "1"));
            let results = (0..count).map(|index| format!("%res#{index}")).collect();
            let middle = self.compute(&mut body, "e", "0", results, &mut constants);
            self.compute(&mut body, "f", "1", middle, &mut constants)
        };
        // The lane's results, to C.
        for (index, &(row, column)) in tiles.iter().enumerate() {
            if self.transposed() {
                emit_line!(body, "vector.store {}, %cs[%ar{row}, %ec{column}] : {view_c}, {accumulator}", last[index]);
                continue;
            }
            for register in 0..inst.output_elements() {
                emit_line!(
                    body,
                    "%co{row}_{column}_{register} = vector.extract {}[{register}] : {} from {accumulator}\n\
                     memref.store %co{row}_{column}_{register}, %cs[%dr{row}_{register}, %dc{column}] : {view_c}",
                    last[index],
                    self.output
                );
            }
        }
        body.push_str("}\n}\nreturn\n}\n");
        for value in constants {
            emit_line!(t, "%c{value} = arith.constant {value} : index");
        }
        t.push_str(&body);
        t
    }

    fn lds_types(&self) -> (String, String) {
        if let Some(staging) = &self.staging {
            return staging.lds_types();
        }
        (
            format!("memref<{}x{}x{}>", self.sub_rows(), self.chunk, self.input),
            format!("memref<{}x{}x{}>", self.chunk, self.sub_columns(), self.input),
        )
    }

    /// Block work: the chunk of A and B at k = `at` into LDS buffers
    /// `%la{buffer}`, `%lb{buffer}` (`label` names the values).
    fn stage(&self, label: &str, at: &str, buffer: &str) -> String {
        let (view_a, view_b) = self.chunk_view_types();
        let (lds_a, lds_b) = self.lds_types();
        format!(
            "{}linalg.copy ins(%sa_{label} : {view_a}) outs(%la{buffer} : {lds_a})\n\
             linalg.copy ins(%sb_{label} : {view_b}) outs(%lb{buffer} : {lds_b})\n",
            self.chunk_views(label, at)
        )
    }

    /// The matrix instructions of k step `step` on fragments
    /// `%{label}a{step}_{row}`, `%{label}b{step}_{column}`, from the
    /// accumulators `current`; returns the new ones.
    fn instructions(&self, body: &mut String, label: &str, step: i64, current: Vec<String>) -> Vec<String> {
        let mut next = Vec::new();
        for (index, (row, column)) in self.tiles().enumerate() {
            let name = format!("%{label}m{step}_{row}_{column}");
            let (a, b) = (format!("%{label}a{step}_{row}"), format!("%{label}b{step}_{column}"));
            let (first, second) = if self.transposed() { (b, a) } else { (a, b) };
            emit_line!(body, "{name} = {}", self.instruction_text(&first, &second, &current[index]));
            next.push(name);
        }
        next
    }

    /// The matrix instruction `a * b + acc`.
    fn instruction_text(&self, a: &str, b: &str, acc: &str) -> String {
        let inst = &self.instruction;
        let (fragment, accumulator) = (self.fragment_type(), self.accumulator_type());
        let shape = format!("{}x{}x{}", inst.m, inst.n, inst.k);
        match inst.family {
            Family::Mfma => {
                format!("amdgpu.mfma {shape} {a} * {b} + {acc} blgp = none : {fragment}, {fragment}, {accumulator}")
            }
            Family::Wmma => format!("amdgpu.wmma {shape} {a} * {b} + {acc} : {fragment}, {fragment}, {accumulator}"),
        }
    }
}

impl StagedContraction for Plan {
    fn staging(&self) -> Option<&Staging> {
        self.staging.as_ref()
    }

    fn depth(&self) -> (i64, i64, i64) {
        (self.k, self.chunk, self.stages)
    }

    fn chunk_work(&self) -> ChunkWork {
        let (global_loads, lds_stores, chunk_registers) = self.staging.as_ref().map_or((0, 0, 0), Staging::per_item);
        let instructions = self.tile_rows * self.tile_columns * (self.chunk / self.instruction.k);
        // One run per tile row and column, in reads of 16 bytes at most.
        let run_bytes =
            self.chunk / self.instruction.k * self.instruction.input_elements() * self.instruction.input_bits / 8;
        ChunkWork {
            chip: self.chip,
            global_loads,
            lds_stores,
            lds_reads: (self.tile_rows + self.tile_columns) * ((run_bytes + 15) / 16),
            compute_cycles: instructions * self.instruction.issue_cycles,
            chunk_registers,
            accumulator_registers: self.tile_rows * self.tile_columns * self.instruction.output_elements(),
            chunks: self.k / self.chunk,
            buffers: self.stages,
        }
    }

    const B_STAGED_FIRST: bool = false;

    fn operand_types(&self) -> [MlirType; 2] {
        [self.types[0], self.types[1]]
    }

    fn chunk_shape(&self) -> (i64, i64, i64) {
        (self.sub_rows(), self.sub_columns(), self.chunk)
    }

    /// Per-lane code: the matrix instructions of one staged chunk (buffers
    /// `buffer`), from the accumulators `current`; returns the new ones.
    fn compute(
        &self,
        body: &mut String,
        label: &str,
        buffer: &str,
        current: Vec<String>,
        constants: &mut std::collections::BTreeSet<i64>,
    ) -> Vec<String> {
        let inst = &self.instruction;
        let (lds_a, lds_b) = self.lds_types();
        let fragment = self.fragment_type();
        let mut current = current;
        if let Some(staging) = &self.staging {
            // Each tile row's and column's fragments of the whole chunk:
            // one run per lane.
            let run = format!("vector<{}x{}>", staging.a.run(), self.input);
            for row in 0..self.tile_rows {
                emit_line!(
                    body,
                    "%{label}la{row} = arith.addi %ar{row}, %grow_a : index\n\
                     %{label}ra{row} = vector.load %la{buffer}[%{label}la{row}, %c0] : {lds_a}, {run}"
                );
            }
            for column in 0..self.tile_columns {
                emit_line!(
                    body,
                    "%{label}lb{column} = arith.addi %dc{column}, %grow_b : index\n\
                     %{label}rb{column} = vector.load %lb{buffer}[%{label}lb{column}, %c0] : {lds_b}, {run}"
                );
            }
        }
        for step in 0..self.chunk / inst.k {
            let kk = step * inst.k;
            constants.insert(kk);
            if self.staging.is_some() {
                let fragment_of = |name: String| {
                    let elements = inst.input_elements();
                    if elements == 1 {
                        format!(
                            "vector.extract {name}[{step}] : {} from vector<{}x{}>",
                            self.input,
                            self.chunk / inst.k,
                            self.input
                        )
                    } else {
                        format!(
                            "vector.extract_strided_slice {name} {{offsets = [{}], sizes = [{elements}], strides = [1]}} : \
                             vector<{}x{}> to {fragment}",
                            step * elements,
                            self.chunk / inst.k * elements,
                            self.input
                        )
                    }
                };
                for row in 0..self.tile_rows {
                    emit_line!(body, "%{label}a{step}_{row} = {}", fragment_of(format!("%{label}ra{row}")));
                }
                for column in 0..self.tile_columns {
                    emit_line!(body, "%{label}b{step}_{column} = {}", fragment_of(format!("%{label}rb{column}")));
                }
                current = self.instructions(body, label, step, current);
                continue;
            }
            let k = format!("%{label}k{step}");
            emit_line!(body, "{k} = arith.addi %kfrag, %c{kk} : index");
            // A fragment: consecutive k of one row (one load, vector or not).
            for row in 0..self.tile_rows {
                let load = if inst.input_elements() == 1 { "memref.load" } else { "vector.load" };
                let result_type = if inst.input_elements() == 1 { String::new() } else { format!(", {fragment}") };
                emit_line!(body, "%{label}a{step}_{row} = {load} %la{buffer}[%ar{row}, {k}] : {lds_a}{result_type}");
            }
            // B fragment: consecutive k of one column (a load per element).
            for column in 0..self.tile_columns {
                let name = format!("%{label}b{step}_{column}");
                if inst.input_elements() == 1 {
                    emit_line!(body, "{name} = memref.load %lb{buffer}[{k}, %dc{column}] : {lds_b}");
                    continue;
                }
                let mut elements = Vec::new();
                for element in 0..inst.input_elements() {
                    constants.insert(element);
                    let (at, value) = (format!("{name}_k{element}"), format!("{name}_{element}"));
                    emit_line!(
                        body,
                        "{at} = arith.addi {k}, %c{element} : index\n{value} = memref.load %lb{buffer}[{at}, %dc{column}] : {lds_b}"
                    );
                    elements.push(value);
                }
                emit_line!(body, "{name} = vector.from_elements {} : {fragment}", elements.join(", "));
            }
            current = self.instructions(body, label, step, current);
        }
        current
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accumulators_take_half_a_lane_up_to_eight_waves() {
        assert_eq!(accumulator_budgets(Family::Mfma, 4, false), vec![128, 64]);
        assert_eq!(accumulator_budgets(Family::Mfma, 8, false), vec![128, 64]);
        // Sixteen waves: four per SIMD, 128 registers a lane.
        assert_eq!(accumulator_budgets(Family::Mfma, 16, false), vec![64]);
        // Inside the grid's k steps (not merged): the loop's values too.
        assert_eq!(accumulator_budgets(Family::Mfma, 4, true), vec![64]);
        assert_eq!(accumulator_budgets(Family::Wmma, 4, false), vec![128]);
        assert_eq!(accumulator_budgets(Family::Wmma, 4, true), vec![128]);
    }

    #[test]
    fn the_largest_budget_covers_the_most_of_a_block() {
        // (wave_columns, tile_rows, tile_columns) of 4-register MFMA tiles.
        // 256x256 with four waves: 4x8 tiles each, 2x2 waves (a 128x256
        // sub-block, two passes); with 64 registers 4x4 (128x128, four).
        assert_eq!(arrange(256, 256, 4, 4, 128), Some((2, 4, 8)));
        assert_eq!(arrange(256, 256, 4, 4, 64), Some((2, 4, 4)));
        // Eight waves cover it whole.
        let arrangement = arrange(256, 256, 8, 4, 128).expect("an arrangement");
        assert_eq!(sub_block(8, arrangement), (256, 256));
        // A 128x128 block with four waves stays 4x4 tiles a wave.
        assert_eq!(arrange(128, 128, 4, 4, 128), Some((2, 4, 4)));
    }
}
