//! `tessel-tile`: register tiling of contractions.
//!
//! Every `linalg.generic` that block-to-linalg marked `tessel.contraction`
//! (loops (batch,) i, j, k) is tiled into an outer loop over column panels,
//! an inner loop over row strips and a k loop of single steps, so that one
//! `tile_m x tile_n` accumulator tile lives in vector registers for the
//! whole k loop while the B panel (k x tile_n) stays in L1 across the row
//! strips. The tiled op is marked `tessel.vectorize` and its k loop
//! `tessel.reduction_loop` for `tessel-vectorize`.
//!
//! The B panel (k x tile_n) is first copied into a contiguous buffer (a
//! no-fold `tensor.pad` by nothing, rewritten as a `linalg.copy`): read
//! in place, its rows sit a whole matrix row apart and map to the same L1
//! sets, so they would evict each other on every strip. The copy is marked
//! `tessel.packing`: where it repeats across loops it does not vary in
//! (one B panel per row block of the grid), `tessel-hoist-packing` makes
//! it once per call.
//!
//! The register tile comes from the CPU's model (`CpuModel::register_tile`,
//! BLIS's analytical model: enough accumulators to cover the FMA latency,
//! with slack, registers for them, the most FMAs per load; vectors of the
//! host's width or of `tessel.vector_bits`; the FMAs in flight of the host
//! or of `tessel.fma_in_flight`): on 256 x 256 f32 blocks AVX-512 gets
//! 4 x 64 (16 accumulators, four B loads and four broadcasts per k step;
//! measured against 8 x 32, 2 x 128 and 16 x 32 on the 2048 matmul) and
//! AVX2's 16 registers 6 x 16 (12 accumulators, BLIS's Haswell tile). A
//! module attribute `tessel.register_tile = array<i64: M, N>` overrides it
//! (the tuner's knob; `[1, 1]` gives the scalar schedule). Columns shrink
//! to the largest divisor of the block's; rows that do not divide the block
//! run as whole strips over the largest multiple of the tile's rows and
//! one remainder strip of the rows left (`transform.structured.split`, per
//! contraction: 256 rows in 6-row tiles are 42 strips and a 4-row one;
//! where the tiles compute an epilogue, its panel is split and the
//! contraction fused into both parts).
//!
//! `tessel.k_unroll = U : i64` (the tuner's UNROLL) makes each step of the
//! k loop U steps of k (shrunk to a divisor): U outer products per loop
//! iteration, still in k order (contractions still on 16-bit operands —
//! the CPU pipeline widens them first, `tessel-widen-operands` — keep
//! single steps).
//!
//! `tessel.pad_tiles = 1 : i64` (the tuner's PADTO) keeps the register
//! tile's size where it does not divide the block: the last panel and
//! strip are padded with zeros to a full tile and only their real results
//! copied back (default: columns shrink to the largest divisor, which can
//! leave partial vectors, such as 20 columns of 16-lane vectors, and rows
//! leave a remainder strip).
//!
//! A contraction whose one user is an element-wise `linalg.generic`
//! (Pallas' `acc + dot`, a bias, a scale; `contraction_epilogue.rs` says
//! which) is tiled from that consumer instead: the consumer is tiled into
//! panels and strips, the contraction and the fill of its init fused into
//! them, so each tile's dot starts from zeros in registers and its
//! epilogue writes the destination once (not with `tessel.k_chunk` or
//! padded tiles, where a tile's dot is not finished in one piece).
//!
//! The other contractions into a filled block (a result read by a
//! reduction or by several ops) start their tiles from the fill value in
//! registers too, and the block is not filled (`filled_tiles.rs`; again
//! not with k chunks or padded tiles).
//!
//! k is split into chunks (shrunk to a divisor of k), outermost, where the
//! CPU's caches ask for it (`caches.rs`: a B panel of `chunk x tile_n` in
//! half the L2, the block's `rows x chunk` of A in half the core's L3;
//! `tessel.l2_bytes`/`tessel.l3_bytes` give another CPU's) or
//! `tessel.k_chunk = N : i64` (the tuner's cache-blocking knob) sets N
//! steps (a value >= k keeps k whole); each output still accumulates over
//! k in order, chunk after chunk.

use crate::cpu::tessel_hoist_packing::PACKING;
use crate::support::handles::is_integer_or_index;
use crate::support::handles::{dim_size, rank_of, raw_op, shaped_element, value_type};
use crate::support::template::{emit, emit_line};
use crate::{
    PassDefinition, PassError,
    block::block_to_linalg::CONTRACTION,
    cpu::{
        caches::Caches,
        contraction_epilogue::{self, EPILOGUE_GROUP, INIT_GROUP},
        cpu_model::CpuModel,
        filled_tiles,
        tessel_vnni::Form,
    },
    support::ir::{
        collect_operations, element_bits, element_type, fitting, group_of, join, print_type, set_i64_attribute,
    },
    support::transform,
};
use melior::ir::{OperationRef, operation::OperationLike};
use mlir_sys::*;
use tessel_dialects::knobs;

/// The marker of a register tile's k loop, whose accumulator
/// `tessel-vectorize` keeps in registers across it.
pub const REDUCTION_LOOP: &str = "tessel.reduction_loop";

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-tile",
    name: "TesselTile",
    description: "Tile Tessel contractions into register tiles (tessel.register_tile overrides the host default)",
    anchor: "builtin.module",
    run,
};

/// Bits of the host's widest vector registers (default register tiles).
pub fn host_vector_bits() -> i64 {
    CpuModel::host().vector_bits
}

/// The register tile the host's model gives a contraction into a `rows x
/// columns` block of `output` elements, in vectors of `vector_bits`
/// (`CpuModel::register_tile`). (Narrow operands arrive widened by
/// `tessel-widen-operands`: the tile is the wide type's.)
pub fn default_tile(output: melior::ir::Type, vector_bits: i64, rows: i64, columns: i64) -> (i64, i64) {
    let bits = element_bits(melior::ir::r#type::TypeLike::to_raw(&output));
    CpuModel::host().register_tile(vector_bits, bits, rows, columns)
}

/// One schedule of contractions: the rank, the register tile (m x n), the
/// operands' zeros, the k chunk and unrolling, which of the tile's sides
/// are padded, whether it is in one of `tessel-vnni`'s grouped forms, and for a contraction fused with its
/// epilogue, its own id, whether its init's fill is fused too and its remainder strip's rows.
#[derive(PartialEq)]
struct TileGroup {
    rank: i64,
    m: i64,
    n: i64,
    zeros: String,
    chunk: i64,
    unroll: i64,
    pad_rows: bool,
    pad_columns: bool,
    split_rows: i64,
    grouped: bool,
    /// A fused epilogue: (a group of its own, its init's fill fuses too,
    /// the rows of its remainder strip or 0, its operand reading the dot).
    fused: Option<(usize, bool, i64, usize)>,
}

/// The zero of a shaped type's element type, as an attribute.
fn zero_of(shaped: MlirType) -> String {
    let element = shaped_element(shaped);
    let zero = if is_integer_or_index(element) { "0" } else { "0.0" };
    format!("{zero} : {}", print_type(element))
}

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    let settings = raw_op(module.to_raw());
    let requested = settings.integers(knobs::REGISTER_TILE.attribute);
    if !requested.is_empty() && (requested.len() != 2 || requested.iter().any(|&size| size < 1)) {
        return Err(PassError::at(
            module.location(),
            "tessel.register_tile must be two positive sizes [rows, columns]",
        ));
    }
    let k_chunk = knobs::K_CHUNK.integer_or(settings, 0);
    // Vectors of `tessel.vector_bits` (tessel-cpu-target), else the host's;
    // the registers and caches of the CPU code is for (`tessel compile --cpu`).
    let host = CpuModel::host();
    let vector_bits = knobs::VECTOR_BITS.integer_or(settings, host.vector_bits);
    let in_flight = knobs::FMA_IN_FLIGHT.integer_or(settings, host.fma_in_flight_at(vector_bits));
    let model = CpuModel {
        vector_bits,
        vector_registers: settings.integer_or(knobs::VECTOR_REGISTERS.attribute, host.vector_registers),
        fma_in_flight: [in_flight; 3],
        caches: Caches {
            l2: knobs::L2_BYTES.integer_or(settings, host.caches.l2),
            l3: knobs::L3_BYTES.integer_or(settings, host.caches.l3),
            ..host.caches
        },
        ..host
    };
    if model.vector_registers < 2 {
        return Err(PassError::at(module.location(), "tessel.vector_registers must be at least 2"));
    }
    let k_unroll = match knobs::K_UNROLL.integer_or(settings, 0) {
        0 => 1,
        unroll => unroll,
    };
    // PADTO: tiles keep their size and partial ones are padded, instead of
    // shrinking to divisors of the block.
    let pad_tiles = knobs::PAD_TILES.integer_or(settings, 0) != 0;
    if k_chunk < 0 || k_unroll < 1 {
        return Err(PassError::at(module.location(), "tessel.k_chunk and tessel.k_unroll must be positive integers"));
    }
    // Groups of contractions tiled alike; the tile and the group are marked
    // on each op. A contraction whose tiles compute its element-wise
    // epilogue is a group of its own (the script names its consumer).
    let mut tiles: Vec<TileGroup> = Vec::new();
    for (raw, _) in collect_operations(module, |name| name == "linalg.generic") {
        let op = raw_op(raw);
        // Tiles are computed on tensors (the pipeline runs this pass before
        // bufferization); a contraction on buffers has no result and is
        // left as it is.
        let [result] = op.results()[..] else { continue };
        if !op.has(CONTRACTION) {
            continue;
        }
        let result = value_type(result);
        let rank = rank_of(result);
        let extent = |d: isize| dim_size(result, (d) as usize);
        let (rows, columns) = (extent(rank as isize - 2), extent(rank as isize - 1));
        let element = element_bits(element_type(result));
        let candidate = contraction_epilogue::epilogue_of(raw);
        let (want_m, want_n) = match requested[..] {
            [m, n] => (m, n),
            _ => model.register_tile(vector_bits, element, rows, columns),
        };
        let size = |extent: i64, wanted: i64| if pad_tiles { wanted.min(extent) } else { fitting(extent, wanted) };
        let n = size(columns, want_n);
        // Rows the tile does not divide: padded (PADTO), else a main part
        // of whole strips and one remainder strip of the rows left
        // (`split_rows`: the main part's rows).
        let (m, split_rows) = if pad_tiles || want_m >= rows || rows % want_m == 0 {
            (size(rows, want_m), 0)
        } else {
            (want_m, rows / want_m * want_m)
        };
        let (pad_rows, pad_columns) = (pad_tiles && rows % m != 0, columns % n != 0);
        // SAFETY: `raw` is the live contraction (crate invariant); the dense i64 array is made in its context from `sizes`, which outlives the call.
        unsafe {
            let context = mlirOperationGetContext(raw);
            let sizes = [m, n];
            let attribute = mlirDenseI64ArrayGet(context, 2, sizes.as_ptr());
            mlirOperationSetAttributeByName(
                raw,
                melior::StringRef::new(knobs::REGISTER_TILE.attribute).to_raw(),
                attribute,
            );
        }
        let zeros = join(op.operands().iter().map(|&value| zero_of(value_type(value))));
        let lhs = value_type(op.operands()[0]);
        // tessel-vnni's forms step k g at a time (4 or 2), loop k/g,
        // with a last loop r over the g kept whole.
        let form = Form::of(raw);
        let grouped = form.is_some();
        let step_k = form.map_or(1, Form::group);
        let depth = dim_size(lhs, (rank_of(lhs) - 1 - i64::from(grouped)) as usize);
        // 0: k in one piece. Unset, the CPU's caches decide (`caches.rs`).
        let k_steps = if k_chunk > 0 {
            k_chunk
        } else {
            model.caches.k_block(rows, n, element_bits(element_type(lhs)) / 8, depth * step_k)
        };
        let chunk_steps = k_steps / step_k;
        let chunk =
            if chunk_steps > 0 && fitting(depth, chunk_steps) < depth { fitting(depth, chunk_steps) } else { 0 };
        // 16-bit operands keep single steps: their unrolled contractions
        // lower to vector ops LLVM's x86 backend cannot legalize.
        let narrow = element_bits(element_type(lhs)) < 32;
        let unroll = if narrow { 1 } else { fitting(if chunk > 0 { chunk } else { depth }, k_unroll) };
        // An epilogue needs each tile's dot finished in one piece first.
        let epilogue = candidate.filter(|_| chunk == 0 && !pad_rows && !pad_columns);
        let rest_rows = if split_rows > 0 { rows - split_rows } else { 0 };
        let fused = epilogue
            .as_ref()
            .map(|epilogue| (tiles.len(), epilogue.init_fill.is_some(), rest_rows, epilogue.dot_operand));
        let key = TileGroup { rank, m, n, zeros, chunk, unroll, pad_rows, pad_columns, split_rows, grouped, fused };
        let group = group_of(&mut tiles, key);
        set_i64_attribute(raw, "tessel.tile_group", group as i64);
        if epilogue.is_none() && chunk == 0 && !pad_rows && !pad_columns {
            filled_tiles::mark(raw);
        }
        if let Some(epilogue) = epilogue {
            epilogue.detach_destination().map_err(|error| PassError::at(module.location(), error))?;
            epilogue.read_destination_in_place();
            set_i64_attribute(epilogue.consumer, EPILOGUE_GROUP, group as i64);
            if let Some(fill) = epilogue.init_fill {
                set_i64_attribute(fill, INIT_GROUP, group as i64);
            }
        }
    }
    if tiles.is_empty() {
        return Ok(());
    }
    let mut body = String::new();
    for (index, group) in tiles.iter().enumerate() {
        let TileGroup { rank, m, n, zeros, chunk, unroll, pad_rows, pad_columns, split_rows, grouped, fused } = group;
        // Tile sizes over the contraction's loops (batch,) i, j, k (the
        // grouped forms: (batch,) i, j, k/g, r, r never tiled).
        let sizes_with = |batch: &str, i: i64, j: i64, k: i64, r: &str| {
            let group = if *grouped { format!(", {r}") } else { String::new() };
            if *rank == 3 { format!("{batch}, {i}, {j}, {k}{group}") } else { format!("{i}, {j}, {k}{group}") }
        };
        let sizes = |batch: &str, i: i64, j: i64, k: i64| sizes_with(batch, i, j, k, "0");
        let (panel, strip, step) = (sizes("0", 0, *n, 0), sizes("1", *m, 0, 0), sizes("0", 0, 0, *unroll));
        let loops = *rank as usize + 1 + usize::from(*grouped);
        let dims = join((0..loops).map(|d| d.to_string()));
        let any = "!transform.any_op";
        let (strip_loops, strip_types) = if *rank == 3 {
            (format!("%batch{index}, %rows{index}"), format!("{any}, {any}, {any}"))
        } else {
            (format!("%rows{index}"), format!("{any}, {any}"))
        };
        emit_line!(
            body,
            "%matched{index} = transform.structured.match ops{{[\"linalg.generic\"]}} \
             attributes{{tessel.contraction, tessel.tile_group = {index} : i64}} in %root \
             : ({any}) -> {any}"
        );
        if *chunk > 0 {
            emit_line!(
                body,
                "%dots{index}, %chunks{index} = transform.structured.tile_using_for %matched{index} \
                 tile_sizes [{}] : ({any}) -> ({any}, {any})",
                sizes("0", 0, 0, *chunk)
            );
        } else {
            emit_line!(body, "%dots{index} = transform.cast %matched{index} : {any} to {any}");
        }
        // A partial panel or strip (PADTO) is padded to the full tile with
        // zeros (its extra results are computed and dropped: the copy
        // back writes only the real ones).
        let multiple = |i: i64, j: i64| format!(" pad_to_multiple_of [{}]", sizes_with("1", i, j, 1, "1"));
        let (panel_multiple, panel_back) =
            if *pad_columns { (multiple(1, *n), "linalg.copy") } else { (String::new(), "none") };
        // The epilogue's loops are the contraction's without k.
        let over_epilogue = |batch: &str, i: i64, j: i64| {
            if *rank == 3 { format!("{batch}, {i}, {j}") } else { format!("{i}, {j}") }
        };
        match fused {
            Some((_, fill, _, _)) => {
                body.push_str(&contraction_epilogue::fuse_into_panels(index, &over_epilogue("0", 0, *n), *fill))
            }
            None => emit_line!(
                body,
                "%panel{index}, %columns{index} = transform.structured.tile_using_for %dots{index} \
                 tile_sizes [{panel}] : ({any}) -> ({any}, {any})"
            ),
        }
        emit!(
            body,
            "%packed{index}, %pad{index}, %copy{index} = transform.structured.pad %panel{index}{panel_multiple} {{\
             padding_values = [{zeros}], padding_dimensions = [{dims}], nofold_flags = [0, 1, 0], \
             copy_back_op = \"{panel_back}\"}} : ({any}) -> ({any}, {any}, {any})\n\
             %panel_copy{index} = transform.structured.rewrite_in_destination_passing_style %pad{index} \
             : ({any}) -> {any}\n\
             transform.annotate %panel_copy{index} \"{PACKING}\" : {any}\n",
        );
        match fused {
            Some((_, fill, rest_rows, dot_operand)) => {
                let rest = over_epilogue("1", *rest_rows, 0);
                let remainder = (*rest_rows > 0).then_some(contraction_epilogue::Remainder {
                    rows: *split_rows,
                    strip: &rest,
                    dot_operand: *dot_operand,
                });
                body.push_str(&contraction_epilogue::fuse_into_strips(
                    index,
                    *rank,
                    &over_epilogue("1", *m, 0),
                    *fill,
                    remainder,
                ))
            }
            None if *split_rows > 0 => {
                // Whole strips over the main part's rows, the rest one
                // strip of its own (a smaller register tile); per
                // contraction of the group.
                let (row_dim, rest) = if *rank == 3 { (1, sizes("1", 0, 0, 0)) } else { (0, String::new()) };
                let rest_strip = if rest.is_empty() {
                    format!("%strip_rest = transform.cast %rest : {any} to {any}")
                } else {
                    format!(
                        "%strip_rest, %rest_batch = transform.structured.tile_using_for %rest tile_sizes [{rest}] \
                         : ({any}) -> ({any}, {any})"
                    )
                };
                emit!(
                    body,
                    "%strip{index} = transform.foreach %packed{index} : {any} -> {any} {{\n\
                     ^bb0(%one: {any}):\n\
                     %parts = transform.structured.split %one after {split_rows} {{dimension = {row_dim}}} : {any}\n\
                     %main, %rest = transform.split_handle %parts : ({any}) -> ({any}, {any})\n\
                     %strip_main, {} = transform.structured.tile_using_for %main tile_sizes [{strip}] \
                     : ({any}) -> ({strip_types})\n\
                     {rest_strip}\n\
                     %both = transform.merge_handles %strip_main, %strip_rest : {any}\n\
                     transform.yield %both : {any}\n\
                     }}\n",
                    if *rank == 3 { "%main_batch, %main_rows" } else { "%main_rows" }
                );
            }
            None => emit_line!(
                body,
                "%strip{index}, {strip_loops} = transform.structured.tile_using_for %packed{index} \
                 tile_sizes [{strip}] : ({any}) -> ({strip_types})"
            ),
        }
        let strip = if *pad_rows {
            emit!(
                body,
                "%strip_full{index}, %strip_pad{index}, %strip_copy{index} = transform.structured.pad %strip{index}{} {{\
                 padding_values = [{zeros}], padding_dimensions = [{dims}], copy_back_op = \"linalg.copy\"}} \
                 : ({any}) -> ({any}, {any}, {any})\n\
                 %strip_dps{index} = transform.structured.rewrite_in_destination_passing_style %strip_pad{index} \
                 : ({any}) -> {any}\n",
                multiple(*m, 1)
            );
            format!("%strip_full{index}")
        } else {
            format!("%strip{index}")
        };
        emit!(
            body,
            "%step{index}, %k{index} = transform.structured.tile_using_for {strip} tile_sizes [{step}] \
             : ({any}) -> ({any}, {any})\n\
             transform.annotate %step{index} \"tessel.vectorize\" : {any}\n\
             transform.annotate %k{index} \"{REDUCTION_LOOP}\" : {any}\n",
        );
    }
    if let Err(error) = transform::apply(module.to_raw(), &transform::script(&body)) {
        return Err(PassError::at(module.location(), error.0));
    }
    filled_tiles::start_from_fills(module).map_err(|error| PassError::at(module.location(), error))
}
