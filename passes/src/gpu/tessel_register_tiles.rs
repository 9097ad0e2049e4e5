//! `tessel-register-tiles`: contractions matrix cores leave (f32 on RDNA 3,
//! f16/bf16/f64 and wider integers everywhere, every contraction with
//! `--matrix-cores off`) computed with FMAs on a register tile per
//! work-item, the accumulators in registers across the whole k loop.
//!
//! Runs on buffers, after `tessel-matrix-cores` and before
//! `tessel-resident-accumulators` (which then keeps the tiles in registers
//! across an arbitrary grid axis too). The workgroup's work-items form a
//! `thread_rows` x `thread_columns` grid; work-item (r, c) owns the `rows`
//! x `columns` results at rows `r * rows ..` and columns `c * columns ..`
//! of a sub-block of (`thread_rows * rows`) x (`thread_columns *
//! columns`) results (a loop over sub-blocks covers larger blocks). Per
//! sub-block each work-item loads its accumulators from C (one vector per
//! tile row), then a loop over k-chunks stages both operands' chunks in
//! LDS, k-major — A transposed to `[k][m]`, B as it is, `[k][n]` — and per
//! k step each work-item reads its `rows` values of A and `columns` values
//! of B with one vector load each (the work-items of a wave read
//! neighbouring runs or share one: conflict-free, `bank_conflicts` checks
//! it) and applies the contraction's own multiply-add to the tile: rows x
//! columns of them per `rows + columns` values read, where the plain FMA
//! path reads two values per multiply-add. At the end the tile goes back
//! to C. Each result still sums over k in order with the contraction's
//! body: the same bits as every other path.
//!
//! The chunks are staged by `matrix_staging` (every work-item its share,
//! through registers), in the software-pipelined loop `tessel-matrix-cores`
//! uses too (the next chunk's global loads issued before this chunk's
//! multiply-adds; `tessel.num_stages = 2` double-buffers). Contractions
//! whose chunks do not divide evenly among the work-items, with fewer
//! results than work-items, batched or dynamic shapes, or a body other
//! than an element-wise multiply-add, are left to `tessel-lds-stage` (one
//! result per work-item). Module attributes: `tessel.register_tile` (the
//! tile, when it fits the block; else the largest that does, at most
//! `accumulator_registers`), `tessel.num_warps`, `tessel.wave_size`,
//! `tessel.num_stages`, `tessel.lds_chunk`.

use crate::support::handles::{attribute_text, dim_size, rank_of, raw_op, value_type};
use crate::support::ir::{block_arguments, block_operations, collect_operations, element_bytes};
use crate::support::template::emit_line;
use crate::{
    PassDefinition, PassError,
    block::block_to_linalg::CONTRACTION,
    gpu::matrix_staging::{
        Launch, Layout, StagedContraction, Staging, bank_conflicts, inside_programs, replace_contraction,
    },
    gpu::pipeline_schedule::ChunkWork,
    gpu::pipelined_loop::pipelined_loop,
    gpu::tessel_lds_stage::STAGED_BUFFER,
    support::ir::{element_name, print_type, strided_view_type},
};
use melior::ir::OperationRef;
use mlir_sys::*;
use std::collections::BTreeSet;
use tessel_dialects::{Chip, knobs};

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-register-tiles",
    name: "TesselRegisterTiles",
    description: "Compute contractions left to FMAs on a register tile per work-item, staged through LDS",
    anchor: "builtin.module",
    run,
};

/// 32-bit accumulator registers a work-item may hold, of the 256 VGPRs a
/// lane can address: a quarter on CDNA's wave64 (whose SIMDs hold 512
/// registers per lane: 8x8 tiles on 256 work-items cover a 128x128 block),
/// half on RDNA 3's wave32 (1536 per lane: 128 work-items need 128 each
/// for the same block, which then stays in registers across a grid's k
/// axis), leaving room for a k step's operands, the staging registers and
/// addresses.
fn accumulator_registers(wave: i64) -> i64 {
    if wave == 32 { 128 } else { 64 }
}
/// Tile extents tried (rows and columns).
const TILE_EXTENTS: [i64; 5] = [1, 2, 4, 8, 16];
/// The k-step loop is unrolled by two, no more: two steps' multiply-adds
/// give RDNA 3 independent FMAs to dual-issue (`v_dual_fmac_f32`: none
/// with the loop rolled or LLVM's own choice on 8x16 tiles); a whole
/// chunk straight-line had LLVM hoist every step's LDS reads above the
/// multiply-adds, a chunk of operands live at once (spills).
const UNROLL_STEPS_BY_TWO: &str =
    "loop_annotation = #llvm.loop_annotation<unroll = #llvm.loop_unroll<count = 2 : i32>>";
/// Bytes of LDS the staged chunks of one contraction may take.
const STAGED_BYTES: i64 = 32768;

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    let Launch { chip, warps, wanted_chunk, stages, wave, .. } = Launch::of(module)?;
    let wanted_tile = match raw_op(module.to_raw()).integers(knobs::REGISTER_TILE.attribute)[..] {
        [rows, columns] => Some((rows, columns)),
        _ => None,
    };
    let launch = Tiling { chip, threads: warps * wave, wave, wanted_tile, wanted_chunk, stages };
    for (raw, _) in collect_operations(module, |name| name == "linalg.generic") {
        let Some(plan) = plan(raw, &launch) else { continue };
        replace_contraction(raw, |filled| plan.template(filled))?;
    }
    Ok(())
}

/// What the module's settings give every contraction.
struct Tiling {
    chip: Chip,
    threads: i64,
    wave: i64,
    wanted_tile: Option<(i64, i64)>,
    wanted_chunk: i64,
    stages: i64,
}

/// One op of the contraction's body, applied to whole tile rows: its name
/// and operands (indices into the values: A's element, B's, the
/// accumulator, then the results of the ops before it).
struct BodyOp {
    name: String,
    operands: Vec<usize>,
    /// The result's element type and, for casts, the operand's.
    result: String,
    cast_from: Option<String>,
}

/// Element-wise ops a multiply-add body may use, and whether each is a
/// cast.
const BODY_OPS: &[(&str, bool)] = &[
    ("arith.extf", true),
    ("arith.extsi", true),
    ("arith.extui", true),
    ("arith.mulf", false),
    ("arith.addf", false),
    ("math.fma", false),
    ("arith.muli", false),
    ("arith.addi", false),
];

/// The contraction's body as tile-row ops and the value it yields, when it
/// is made only of `BODY_OPS` without rewriting flags (fast-math or
/// overflow: the ops are re-emitted by name).
fn body_ops(op: MlirOperation) -> Option<(Vec<BodyOp>, usize)> {
    let block = raw_op(op).region_block(0);
    let mut values: Vec<MlirValue> = block_arguments(block);
    let mut ops = Vec::new();
    for inner in block_operations(block) {
        let raw = raw_op(inner);
        let name = raw.name();
        let index_of = |value: MlirValue| values.iter().position(|known| known.ptr == value.ptr);
        if name == "linalg.yield" {
            return Some((ops, index_of(*raw.operands().first()?)?));
        }
        let &(_, cast) = BODY_OPS.iter().find(|(known, _)| *known == name)?;
        let flagged = ["fastmath", "overflowFlags"]
            .iter()
            .any(|flag| raw.has(flag) && !attribute_text(raw.attribute(flag)).ends_with("<none>"));
        if flagged || raw.results().len() != 1 {
            return None;
        }
        let operands = raw.operands().iter().map(|&value| index_of(value)).collect::<Option<Vec<usize>>>()?;
        let result = raw.results()[0];
        let cast_from = cast.then(|| print_type(value_type(raw.operands()[0])));
        ops.push(BodyOp { name, operands, result: print_type(value_type(result)), cast_from });
        values.push(result);
    }
    None
}

/// How one contraction is computed on register tiles.
struct Plan {
    chip: Chip,
    /// Contraction sizes: C is m x n, A m x k, B k x n.
    m: i64,
    n: i64,
    k: i64,
    /// A work-item's tile and the work-items' arrangement.
    rows: i64,
    columns: i64,
    thread_columns: i64,
    threads: i64,
    /// k steps per LDS chunk; LDS buffers per operand.
    chunk: i64,
    stages: i64,
    staging: Staging,
    types: [MlirType; 3],
    input: String,
    output: String,
    body: Vec<BodyOp>,
    yielded: usize,
}

/// The plan for `op`, when it is a contraction register tiles can take.
fn plan(op: MlirOperation, launch: &Tiling) -> Option<Plan> {
    let raw = raw_op(op);
    if !raw.has(CONTRACTION) || raw.operands().len() != 3 || !inside_programs(op) {
        return None;
    }
    let types = [0, 1, 2].map(|index| value_type(raw.operands()[index]));
    let static_rank_2 =
        // SAFETY: types live in the context; shape queries run on memref types, as checked first
        |t: MlirType| unsafe { mlirTypeIsAMemRef(t) && mlirShapedTypeHasStaticShape(t) && rank_of(t) == 2 };
    if !types.iter().all(|&t| static_rank_2(t)) {
        return None;
    }
    let (m, k, n) = (dim_size(types[0], 0), dim_size(types[0], 1), dim_size(types[1], 1));
    let (input, output) = (element_name(types[0]), element_name(types[2]));
    if element_name(types[1]) != input {
        return None;
    }
    let (body, yielded) = body_ops(op)?;
    let bytes = element_bytes(types[0]);
    let registers_per_result = (element_bytes(types[2]) + 3) / 4;
    let threads = launch.threads;
    let (rows, columns, thread_columns) = arrange((m, n), launch, bytes, registers_per_result)?;
    let (sub_m, sub_n) = (threads / thread_columns * rows, thread_columns * columns);
    // The deepest chunk dividing k, at most the wanted one, whose buffers
    // fit the LDS budget and whose staging divides among the work-items;
    // double buffering needs an even number of chunks.
    let staged = |stages: i64| {
        (1..=k.min(launch.wanted_chunk))
            .rev()
            .filter(|&chunk| k % chunk == 0 && (stages == 1 || (k / chunk) % 2 == 0))
            .filter(|&chunk| stages * (sub_m + sub_n) * chunk * bytes <= STAGED_BYTES)
            .find_map(|chunk| {
                let layout = |run: i64| Layout { outer: chunk, chunk: run, inst_k: 1, elements: 1 };
                // B is copied as it is ([k][n]), A transposed ([k][m]).
                Some((chunk, Staging::plan(layout(sub_n), layout(sub_m), threads, &input, bytes)?))
            })
    };
    let (stages, (chunk, staging)) = match staged(2) {
        Some(found) if launch.stages >= 2 => (2, found),
        _ => (1, staged(1)?),
    };
    Some(Plan {
        chip: launch.chip,
        m,
        n,
        k,
        rows,
        columns,
        thread_columns,
        threads,
        chunk,
        stages,
        staging,
        types,
        input,
        output,
        body,
        yielded,
    })
}

/// A work-item's tile (rows, columns) and the work-items' columns for an
/// `m` x `n` result of `bytes`-byte operands, `registers_per_result`
/// 32-bit registers per accumulator: every arrangement that covers a whole
/// number of sub-blocks of the block with every work-item busy, its
/// accumulators within budget and its reads at most 2-way conflicted; the
/// wanted tile if it is one, else the most results per work-item, then the
/// squarest tile, then the squarest sub-block (the least staged per
/// result); the first of equals.
fn arrange((m, n): (i64, i64), launch: &Tiling, bytes: i64, registers_per_result: i64) -> Option<(i64, i64, i64)> {
    let threads = launch.threads;
    let arrangements = (1..=threads).filter(|columns| threads % columns == 0).flat_map(|thread_columns| {
        TILE_EXTENTS
            .into_iter()
            .flat_map(move |rows| TILE_EXTENTS.into_iter().map(move |columns| (rows, columns, thread_columns)))
    });
    let sub_block =
        |(rows, columns, thread_columns): (i64, i64, i64)| (threads / thread_columns * rows, thread_columns * columns);
    let legal = |&(rows, columns, thread_columns): &(i64, i64, i64)| {
        let (sub_m, sub_n) = sub_block((rows, columns, thread_columns));
        let reads = |extent: i64, owner: &dyn Fn(i64) -> i64| {
            bank_conflicts(launch.wave, extent * bytes, |lane| owner(lane) * extent * bytes)
        };
        m % sub_m == 0
            && n % sub_n == 0
            && rows * columns * registers_per_result <= accumulator_registers(launch.wave)
            && reads(rows, &|lane| lane / thread_columns) <= 2
            && reads(columns, &|lane| lane % thread_columns) <= 2
    };
    let score = |&(rows, columns, thread_columns): &(i64, i64, i64)| {
        let (sub_m, sub_n) = sub_block((rows, columns, thread_columns));
        let wanted = launch.wanted_tile == Some((rows, columns));
        std::cmp::Reverse((wanted, rows * columns, rows.min(columns), -(sub_m - sub_n).abs()))
    };
    arrangements.filter(legal).min_by_key(score)
}

impl Plan {
    fn sub_rows(&self) -> i64 {
        self.threads / self.thread_columns * self.rows
    }

    fn sub_columns(&self) -> i64 {
        self.thread_columns * self.columns
    }

    fn vector(&self, count: i64, element: &str) -> String {
        format!("vector<{count}x{element}>")
    }

    /// The template replacing the contraction (arguments %A, %B, %C).
    /// `filled`: C is filled right before (`replace_contraction`), the
    /// accumulators start from the template's `%fill`.
    fn template(&self, filled: bool) -> String {
        let (sub_m, sub_n) = (self.sub_rows(), self.sub_columns());
        let [ta, tb, tc] = self.types.map(print_type);
        let view_c = strided_view_type(self.types[2], sub_m, sub_n);
        let (lds_b, lds_a) = self.staging.lds_types();
        let accumulator = self.vector(self.columns, &self.output);
        let mut constants: BTreeSet<i64> =
            [0, self.m, self.n, sub_m, sub_n, self.thread_columns, self.rows, self.columns].into_iter().collect();
        let mut body = String::new();
        // This work-item's place in the sub-block and its tile rows.
        emit_line!(
            body,
            "%tid = gpu.thread_id x\n%tx = arith.remui %tid, %c{tc} : index\n%ty = arith.divui %tid, %c{tc} : index\n\
             %arow = arith.muli %ty, %c{rows} : index\n%bcol = arith.muli %tx, %c{columns} : index",
            tc = self.thread_columns,
            rows = self.rows,
            columns = self.columns,
        );
        for row in 1..self.rows {
            constants.insert(row);
            emit_line!(body, "%arow{row} = arith.addi %arow, %c{row} : index");
        }
        self.staging.emit_offsets(&mut body, &mut constants);
        for buffer in 0..self.stages {
            emit_line!(
                body,
                "%la{buffer} = memref.alloc() {{alignment = 64 : i64, {STAGED_BUFFER}}} : {lds_b}\n\
                 %lb{buffer} = memref.alloc() {{alignment = 64 : i64, {STAGED_BUFFER}}} : {lds_a}"
            );
        }
        emit_line!(
            body,
            "scf.for %sm = %c0 to %c{m} step %c{sub_m} {{\nscf.for %sn = %c0 to %c{n} step %c{sub_n} {{\n\
             %cs = memref.subview %C[%sm, %sn] [{sub_m}, {sub_n}] [1, 1] : {tc} to {view_c}",
            m = self.m,
            n = self.n,
        );
        let row_index = |row: i64| if row == 0 { "%arow".to_string() } else { format!("%arow{row}") };
        for row in 0..self.rows {
            if filled {
                emit_line!(body, "%init{row} = vector.broadcast %fill : {} to {accumulator}", self.output);
            } else {
                emit_line!(body, "%init{row} = vector.load %cs[{}, %bcol] : {view_c}, {accumulator}", row_index(row));
            }
        }
        let types = vec![accumulator.clone(); self.rows as usize].join(", ");
        let accumulators = (0..self.rows).map(|row| (format!("%acc{row}"), format!("%init{row}"))).collect();
        let last = pipelined_loop(self, &mut body, accumulators, &types, &mut constants);
        for (row, value) in last.iter().enumerate() {
            emit_line!(body, "vector.store {value}, %cs[{}, %bcol] : {view_c}, {accumulator}", row_index(row as i64));
        }
        body.push_str("}\n}\nreturn\n}\n");
        let fill = if filled { format!(", %fill: {}", self.output) } else { String::new() };
        let mut text = format!("func.func @template(%A: {ta}, %B: {tb}, %C: {tc}{fill}) {{\n");
        for value in constants {
            emit_line!(text, "%c{value} = arith.constant {value} : index");
        }
        text + &body
    }

    /// The body's ops on tile row values: `a` (A's element, broadcast), `b`
    /// (a row of B's) and the accumulator row `acc`; returns the result.
    fn multiply_add(&self, body: &mut String, name: &str, [a, b, acc]: [&str; 3]) -> String {
        let mut values: Vec<String> = vec![a.to_string(), b.to_string(), acc.to_string()];
        for (index, op) in self.body.iter().enumerate() {
            let result = format!("{name}_{index}");
            let operands: Vec<&str> = op.operands.iter().map(|&operand| values[operand].as_str()).collect();
            let result_type = self.vector(self.columns, &op.result);
            match &op.cast_from {
                Some(from) => emit_line!(
                    body,
                    "{result} = {} {} : {} to {result_type}",
                    op.name,
                    operands[0],
                    self.vector(self.columns, from)
                ),
                None => emit_line!(body, "{result} = {} {} : {result_type}", op.name, operands.join(", ")),
            }
            values.push(result);
        }
        values[self.yielded].clone()
    }
}

impl StagedContraction for Plan {
    fn staging(&self) -> Option<&Staging> {
        Some(&self.staging)
    }

    fn depth(&self) -> (i64, i64, i64) {
        (self.k, self.chunk, self.stages)
    }

    fn chunk_work(&self) -> ChunkWork {
        let (global_loads, lds_stores, chunk_registers) = self.staging.per_item();
        let (bytes, result_registers) = (element_bytes(self.types[0]), (element_bytes(self.types[2]) + 3) / 4);
        // Per k step: a run of the tile's rows of A and one of its columns
        // of B, in reads of 16 bytes at most; the body per result.
        let reads_per_step = (self.rows * bytes + 15) / 16 + (self.columns * bytes + 15) / 16;
        let operations = self.chunk * self.rows * self.columns * self.body.len() as i64;
        ChunkWork {
            chip: self.chip,
            global_loads,
            lds_stores,
            lds_reads: self.chunk * reads_per_step,
            compute_cycles: operations * self.chip.issue_cycles(),
            chunk_registers,
            accumulator_registers: self.rows * self.columns * result_registers,
            chunks: self.k / self.chunk,
            buffers: self.stages,
        }
    }

    const B_STAGED_FIRST: bool = true;

    fn operand_types(&self) -> [MlirType; 2] {
        [self.types[0], self.types[1]]
    }

    fn chunk_shape(&self) -> (i64, i64, i64) {
        (self.sub_rows(), self.sub_columns(), self.chunk)
    }

    /// A loop over the chunk's k steps (`UNROLL_STEPS_BY_TWO`); per step
    /// one vector of A's column (the tile's rows) and one of B's row (its
    /// columns), then per tile row the body on A's element broadcast, B's
    /// row and the row's accumulators.
    fn compute(
        &self,
        body: &mut String,
        label: &str,
        buffer: &str,
        current: Vec<String>,
        constants: &mut BTreeSet<i64>,
    ) -> Vec<String> {
        let (lds_b, lds_a) = self.staging.lds_types();
        let (column_of_a, row_of_b) = (self.vector(self.rows, &self.input), self.vector(self.columns, &self.input));
        let accumulator = self.vector(self.columns, &self.output);
        constants.extend([1, self.chunk]);
        let iter_args: Vec<String> =
            current.iter().enumerate().map(|(row, value)| format!("%{label}c{row} = {value}")).collect();
        let count = current.len();
        emit_line!(
            body,
            "%{label}t:{count} = scf.for %{label}k = %c0 to %c{chunk} step %c1 iter_args({}) -> ({}) {{\n\
             %{label}a = vector.load %lb{buffer}[%{label}k, %arow] : {lds_a}, {column_of_a}\n\
             %{label}b = vector.load %la{buffer}[%{label}k, %bcol] : {lds_b}, {row_of_b}",
            iter_args.join(", "),
            vec![accumulator; count].join(", "),
            chunk = self.chunk,
        );
        let next: Vec<String> = (0..count)
            .map(|row| {
                let element = format!("%{label}e{row}");
                emit_line!(
                    body,
                    "{element} = vector.extract %{label}a[{row}] : {} from {column_of_a}\n\
                     {element}s = vector.broadcast {element} : {} to {row_of_b}",
                    self.input,
                    self.input
                );
                let (name, accumulator) = (format!("%{label}f{row}"), format!("%{label}c{row}"));
                self.multiply_add(body, &name, [&format!("{element}s"), &format!("%{label}b"), &accumulator])
            })
            .collect();
        emit_line!(
            body,
            "scf.yield {} : {}\n}} {{{UNROLL_STEPS_BY_TWO}}}",
            next.join(", "),
            vec![self.vector(self.columns, &self.output); count].join(", ")
        );
        (0..count).map(|row| format!("%{label}t#{row}")).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(threads: i64, wave: i64, wanted_tile: Option<(i64, i64)>) -> Tiling {
        Tiling { chip: Chip::Gfx1100, threads, wave, wanted_tile, wanted_chunk: 16, stages: 1 }
    }

    #[test]
    fn tiles_cover_a_128_block_on_each_family() {
        // CDNA: 256 work-items of 8x8 (64 accumulators) as 16 x 16.
        assert_eq!(arrange((128, 128), &launch(256, 64, None), 4, 1), Some((8, 8, 16)));
        // RDNA 3: 128 work-items need 128 accumulators each: 8x16 as 16 rows x 8 columns.
        assert_eq!(arrange((128, 128), &launch(128, 32, None), 4, 1), Some((8, 16, 8)));
        // f64 accumulators take two registers: 32 results per item on CDNA.
        let (rows, columns, _) = arrange((128, 128), &launch(256, 64, None), 8, 2).expect("an arrangement");
        assert_eq!(rows * columns, 32);
    }

    #[test]
    fn wanted_tiles_are_taken_where_they_fit() {
        assert_eq!(arrange((128, 128), &launch(256, 64, Some((2, 4))), 4, 1).map(|(r, c, _)| (r, c)), Some((2, 4)));
        // 32 x 32 results cannot give 256 items 8x8 tiles: the best that fits.
        assert_eq!(arrange((32, 32), &launch(256, 64, Some((8, 8))), 4, 1).map(|(r, c, _)| (r, c)), Some((2, 2)));
        // Fewer results than work-items: none.
        assert_eq!(arrange((8, 8), &launch(256, 64, None), 4, 1), None);
    }

    #[test]
    fn chosen_reads_are_conflict_free() {
        for (threads, wave) in [(256, 64), (128, 32), (64, 64)] {
            let (rows, columns, thread_columns) = arrange((128, 128), &launch(threads, wave, None), 4, 1).unwrap();
            assert!(bank_conflicts(wave, rows * 4, |lane| lane / thread_columns * rows * 4) <= 1);
            assert!(bank_conflicts(wave, columns * 4, |lane| lane % thread_columns * columns * 4) <= 1);
        }
    }
}
