//! `tessel-vnni`: 8-bit contractions (i8 x i8 -> i32 `block.dot`) in the
//! form VNNI's `vpdpbusd` computes, on CPUs that have it.
//!
//! `vpdpbusd` adds to each 32-bit lane the four products of the lane's
//! four unsigned bytes of one operand and four signed bytes of the other:
//! four steps of k per instruction, four times the multiply-adds of an
//! `i32` FMA-style tile (which also needs `vpmulld`). Two things stand in
//! the way of `block.dot`'s signed x signed operands, both made exact:
//!
//! - A's bytes are biased to unsigned, `a + 128` (`a xor 0x80`), and the
//!   bias's contribution, `128 * sum_k b[k, j]` per column, is subtracted
//!   from the accumulator first. Every sum is taken modulo 2^32, as the
//!   `i32` contraction's are (`vpdpbusd` wraps, it does not saturate), so
//!   every result keeps its bits.
//! - B is packed so that the four k of a column are adjacent:
//!   `[k/4, n, 4]` (A's four k already are: `[m, k/4, 4]`).
//!
//! The contraction becomes a `linalg.generic` over loops (batch,) i, j,
//! k/4, r marked `tessel.contraction` and `tessel.vnni`, still an ordinary
//! linalg op with the same results (zero-extended A, sign-extended B):
//! `tessel-tile` tiles it as any contraction (r whole) and
//! `tessel-vectorize` turns its register tiles into `vpdpbusd`s
//! (`register_tile` below).
//!
//! Runs on tensors before `tessel-widen-operands` and `tessel-tile`, when
//! the CPU has VNNI (`tessel.vnni`, else the host's `CpuModel`) and k is
//! a multiple of 4.

use crate::support::handles::{dim_size, rank_of, raw_op};
use crate::support::template::emit_line;
use crate::{
    PassDefinition, PassError,
    block::block_to_linalg::{CONTRACTION, contraction_operand_types},
    cpu::cpu_model::CpuModel,
    support::ir::{element_name, join, print_type},
    support::template,
};
use melior::ir::OperationRef;
use mlir_sys::MlirType;
use tessel_dialects::knobs;

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-vnni",
    name: "TesselVnni",
    description: "8-bit contractions as VNNI's biased, packed form (CPUs with vpdpbusd)",
    anchor: "builtin.module",
    run,
};

/// The marker of contractions in VNNI's form.
pub const VNNI: &str = "tessel.vnni";

/// Whether code for `module` may use `vpdpbusd`: `tessel.vnni`, else the
/// host's model.
pub fn enabled(module: melior::ir::OperationRef<'_, '_>) -> bool {
    knobs::VNNI.integer_or(raw_op(module.to_raw()), i64::from(CpuModel::host().vnni)) != 0
}

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    if !enabled(module) {
        return Ok(());
    }
    template::rewrite_each(
        module,
        |name| name == "linalg.generic",
        |raw, _| {
            let Some(types) = contraction_operand_types(raw) else { return Ok(None) };
            let op = raw_op(raw);
            let elements = types.iter().map(|&t| element_name(t)).collect::<Vec<_>>();
            let body = crate::support::ir::body_names(raw);
            if elements != ["i8", "i8", "i32"]
                || body != ["arith.extsi", "arith.extsi", "arith.muli", "arith.addi", "linalg.yield"]
            {
                return Ok(None);
            }
            let rank = rank_of(types[0]) as usize;
            let shape = |t| (0..rank).map(|d| dim_size(t, d)).collect::<Vec<_>>();
            let (a, b) = (shape(types[0]), shape(types[1]));
            if a.iter().chain(&b).any(|&size| size < 1) || a[rank - 1] % 4 != 0 {
                return Ok(None);
            }
            Ok(Some((packed_form(rank, &a, &b, types.iter().map(|&t| print_type(t)).collect()), op.operands())))
        },
    )
}

/// The template of the contraction of `a` (shape (batch,) m x k) and `b`
/// ((batch,) k x n) into `types[2]`, in VNNI's form.
fn packed_form(rank: usize, a: &[i64], b: &[i64], types: Vec<String>) -> String {
    let batch = rank == 3;
    let (k, n) = (b[rank - 2], b[rank - 1]);
    let quads = k / 4;
    let prefix: Vec<i64> = if batch { vec![a[0]] } else { vec![] };
    let tensor = |dims: &[i64], element: &str| {
        let sizes: Vec<String> = prefix.iter().chain(dims).map(|d| d.to_string()).collect();
        format!("tensor<{}x{element}>", sizes.join("x"))
    };
    let (ta, tb, tc) = (&types[0], &types[1], &types[2]);
    let a_quads = tensor(&[a[rank - 2], quads, 4], "i8");
    let b_quads = tensor(&[quads, 4, n], "i8");
    let b_packed = tensor(&[quads, n, 4], "i8");
    let sums = tensor(&[n], "i32");
    let shift = usize::from(batch);
    // Reassociations and maps with the batch loop first, when there is one.
    let group = |dims: &[usize]| format!("[{}]", join(dims.iter().map(|d| (d + shift).to_string())));
    let reassociation = |groups: &[&[usize]]| {
        let leading = if batch { "[0], " } else { "" };
        format!("[{leading}{}]", join(groups.iter().map(|dims| group(dims))))
    };
    let output_shape = |dims: &[i64]| join(prefix.iter().chain(dims).map(|d| d.to_string()));
    let map = |dims: &str, results: &str| {
        if batch {
            format!("affine_map<(batch, {dims}) -> (batch, {results})>")
        } else {
            format!("affine_map<({dims}) -> ({results})>")
        }
    };
    let parallel = |count: usize| join((0..count + shift).map(|_| "\"parallel\""));
    let batch_iterator = if batch { "\"parallel\", " } else { "" };
    let permutation = if batch { "[0, 1, 3, 2]" } else { "[0, 2, 1]" };
    format!(
        "func.func @template(%a: {ta}, %b: {tb}, %c: {tc}) -> {tc} {{\n\
         %a_empty = tensor.empty() : {ta}\n\
         %biased = linalg.generic {{indexing_maps = [{same2}, {same2}], iterator_types = [{parallel2}]}} \
         ins(%a : {ta}) outs(%a_empty : {ta}) {{\n\
         ^bb0(%x: i8, %unused: i8):\n%sign = arith.constant -128 : i8\n%u = arith.xori %x, %sign : i8\n\
         linalg.yield %u : i8\n}} -> {ta}\n\
         %a_quads = tensor.expand_shape %biased {a_groups} output_shape [{a_shape}] : {ta} into {a_quads}\n\
         %b_quads = tensor.expand_shape %b {b_groups} output_shape [{b_shape}] : {tb} into {b_quads}\n\
         %b_empty = tensor.empty() : {b_packed}\n\
         %b_packed = linalg.transpose ins(%b_quads : {b_quads}) outs(%b_empty : {b_packed}) \
         permutation = {permutation}\n\
         %zero = arith.constant 0 : i32\n\
         %sums_empty = tensor.empty() : {sums}\n\
         %sums_zero = linalg.fill ins(%zero : i32) outs(%sums_empty : {sums}) -> {sums}\n\
         %sums = linalg.generic {{indexing_maps = [{same2}, {columns}], iterator_types = [{batch_iterator}\
         \"reduction\", \"parallel\"]}} ins(%b : {tb}) outs(%sums_zero : {sums}) {{\n\
         ^bb0(%x: i8, %s: i32):\n%w = arith.extsi %x : i8 to i32\n%t = arith.addi %s, %w : i32\n\
         linalg.yield %t : i32\n}} -> {sums}\n\
         %c_empty = tensor.empty() : {tc}\n\
         %init = linalg.generic {{indexing_maps = [{same2}, {columns}, {same2}], iterator_types = [{parallel2}]}} \
         ins(%c, %sums : {tc}, {sums}) outs(%c_empty : {tc}) {{\n\
         ^bb0(%x: i32, %s: i32, %unused: i32):\n%seven = arith.constant 7 : i32\n\
         %bias = arith.shli %s, %seven : i32\n%r = arith.subi %x, %bias : i32\nlinalg.yield %r : i32\n}} -> {tc}\n\
         %r = linalg.generic {{indexing_maps = [{map_a}, {map_b}, {map_c}], iterator_types = [{batch_iterator}\
         \"parallel\", \"parallel\", \"reduction\", \"reduction\"], {CONTRACTION}, {VNNI}}} \
         ins(%a_quads, %b_packed : {a_quads}, {b_packed}) outs(%init : {tc}) {{\n\
         ^bb0(%x: i8, %y: i8, %s: i32):\n%xw = arith.extui %x : i8 to i32\n%yw = arith.extsi %y : i8 to i32\n\
         %p = arith.muli %xw, %yw : i32\n%t = arith.addi %s, %p : i32\nlinalg.yield %t : i32\n}} -> {tc}\n\
         return %r : {tc}\n}}",
        same2 = map("i, j", "i, j"),
        parallel2 = parallel(2),
        columns = map("i, j", "j"),
        a_groups = reassociation(&[&[0], &[1, 2]]),
        b_groups = reassociation(&[&[0, 1], &[2]]),
        a_shape = output_shape(&[a[rank - 2], quads, 4]),
        b_shape = output_shape(&[quads, 4, n]),
        map_a = map("i, j, q, r", "i, q, r"),
        map_b = map("i, j, q, r", "q, j, r"),
        map_c = map("i, j, q, r", "i, j"),
    )
}

/// The vectorized register tile of a contraction in VNNI's form, as
/// `tessel-tile` leaves it (one step of k/4: A `(1x) m x 1 x 4`, B's packed
/// panel `(1x) 1 x n x 4`, the accumulator `(1x) m x n`): a template
/// reading the accumulator tile whole (`tessel-vectorize` hoists it out of
/// the k loop) and adding, for each row and `lanes`-wide piece of it, one
/// `vpdpbusd` of the row's four A bytes (broadcast) and the piece's packed
/// B. `vector_bits`: the widest vectors the code may use.
pub fn register_tile(a: MlirType, b: MlirType, c: MlirType, vector_bits: i64) -> (String, Option<Intrinsic>) {
    let rank = rank_of(c) as usize;
    let (rows, columns) = (dim_size(c, rank - 2), dim_size(c, rank - 1));
    let [ta, tb, tc] = [a, b, c].map(print_type);
    let batch = if rank == 3 { "%c0, " } else { "" };
    let zeros = |count: usize| join((0..count).map(|_| "%c0"));
    let in_bounds = |count: usize| format!("in_bounds = [{}]", join((0..count).map(|_| "true")));
    let row_type = format!("vector<{columns}xi32>");
    let tile_type = format!("vector<{rows}x{columns}xi32>");
    // Index constants, defined at the top.
    let mut indices = std::collections::BTreeSet::from([0]);
    let mut index = |value: i64| {
        indices.insert(value);
        format!("%c{value}")
    };
    let mut body =
        format!("%tile = vector.transfer_read %c[{}], %zero32 {{{}}} : {tc}, {tile_type}\n", zeros(rank), in_bounds(2));
    // The widest vpdpbusd whose lanes divide the tile's columns.
    let lanes = [vector_bits / 32, 8, 4].into_iter().find(|&lanes| lanes >= 4 && columns % lanes == 0);
    if let Some(lanes) = lanes {
        // B's packed panel row: the four k of each column adjacent.
        let flat = format!("tensor<{}xi8>", 4 * columns);
        emit_line!(
            body,
            "%b_flat = tensor.collapse_shape %b [[{}]] : {tb} into {flat}",
            join((0..=rank).map(|d| d.to_string()))
        );
        for j in 0..columns / lanes {
            emit_line!(
                body,
                "%b{j} = vector.transfer_read %b_flat[{}], %zero8 {{{}}} : {flat}, vector<{}xi8>",
                index(4 * lanes * j),
                in_bounds(1),
                4 * lanes
            );
        }
    }
    let mut tile = "%tile".to_string();
    for i in 0..rows {
        let row_index = index(i);
        // Rows read from the tile as it came in, results inserted piece by
        // piece (a chain of whole-row inserts would canonicalize into
        // element-by-element `from_elements`).
        emit_line!(body, "%row{i} = vector.extract %tile[{i}] : {row_type} from {tile_type}");
        let mut row = format!("%row{i}");
        match lanes {
            Some(lanes) => {
                let bytes = 4 * lanes;
                let intrinsic = Intrinsic::vpdpbusd(lanes).name;
                // A's four k of row i, one 32-bit lane, in every lane.
                emit_line!(
                    body,
                    "%a{i} = vector.transfer_read %a[{batch}{row_index}, %c0, %c0], %zero8 {{{}}} : {ta}, vector<4xi8>\n\
                     %a{i}_word = vector.bitcast %a{i} : vector<4xi8> to vector<1xi32>\n\
                     %a{i}_scalar = vector.extract %a{i}_word[0] : i32 from vector<1xi32>\n\
                     %a{i}_lanes = vector.broadcast %a{i}_scalar : i32 to vector<{lanes}xi32>\n\
                     %a{i}_bytes = vector.bitcast %a{i}_lanes : vector<{lanes}xi32> to vector<{bytes}xi8>",
                    in_bounds(1)
                );
                for j in 0..columns / lanes {
                    let offset = j * lanes;
                    emit_line!(
                        body,
                        "%acc{i}_{j} = vector.extract_strided_slice %row{i} {{offsets = [{offset}], sizes = [{lanes}], \
                         strides = [1]}} : {row_type} to vector<{lanes}xi32>\n\
                         %sum{i}_{j} = func.call @{intrinsic}(%acc{i}_{j}, %a{i}_bytes, %b{j}) \
                         : (vector<{lanes}xi32>, vector<{bytes}xi8>, vector<{bytes}xi8>) -> vector<{lanes}xi32>\n\
                         %tile{i}_{j} = vector.insert_strided_slice %sum{i}_{j}, {tile} {{offsets = [{i}, {offset}], \
                         strides = [1]}} : vector<{lanes}xi32> into {tile_type}"
                    );
                    tile = format!("%tile{i}_{j}");
                }
            }
            // Columns not a multiple of 4: each of the four k as an outer
            // product of zero-extended A and sign-extended B.
            None => {
                for r in 0..4 {
                    let r_index = index(r);
                    emit_line!(
                        body,
                        "%a{i}_{r} = vector.transfer_read %a[{batch}{row_index}, %c0, {r_index}], %zero8 {{{}}} \
                         : {ta}, vector<1xi8>\n\
                         %a{i}_{r}_wide = arith.extui %a{i}_{r} : vector<1xi8> to vector<1xi32>\n\
                         %a{i}_{r}_lanes = vector.broadcast %a{i}_{r}_wide : vector<1xi32> to {row_type}\n\
                         %b{i}_{r} = vector.transfer_read %b[{batch}%c0, %c0, {r_index}], %zero8 \
                         {{permutation_map = {}, {}}} : {tb}, vector<{columns}xi8>\n\
                         %b{i}_{r}_wide = arith.extsi %b{i}_{r} : vector<{columns}xi8> to {row_type}\n\
                         %p{i}_{r} = arith.muli %a{i}_{r}_lanes, %b{i}_{r}_wide : {row_type}\n\
                         %row{i}_{r} = arith.addi {row}, %p{i}_{r} : {row_type}",
                        in_bounds(1),
                        if rank == 3 { "affine_map<(b, q, j, r) -> (j)>" } else { "affine_map<(q, j, r) -> (j)>" },
                        in_bounds(1)
                    );
                    row = format!("%row{i}_{r}");
                }
                emit_line!(
                    body,
                    "%tile{i} = vector.insert_strided_slice {row}, {tile} {{offsets = [{i}, 0], strides = [1]}} \
                     : {row_type} into {tile_type}"
                );
                tile = format!("%tile{i}");
            }
        }
    }
    let constants: String =
        indices.iter().map(|value| format!("%c{value} = arith.constant {value} : index\n")).collect();
    let intrinsic = lanes.map(Intrinsic::vpdpbusd);
    let declaration = intrinsic.as_ref().map_or(String::new(), |intrinsic| intrinsic.declaration.clone());
    let template = format!(
        "func.func @template(%a: {ta}, %b: {tb}, %c: {tc}) -> {tc} {{\n\
         %zero8 = arith.constant 0 : i8\n%zero32 = arith.constant 0 : i32\n{constants}{body}\
         %r = vector.transfer_write {tile}, %c[{}] {{{}}} : {tile_type}, {tc}\nreturn %r : {tc}\n}}\n{declaration}",
        zeros(rank),
        in_bounds(2)
    );
    (template, intrinsic)
}

/// An LLVM intrinsic called as a function declared by its name (LLVM
/// treats any function named `llvm.*` as the intrinsic): a `func.call`
/// passes buffer deallocation, which rejects `llvm.call_intrinsic` (no
/// memory effects known), and becomes the intrinsic's call in LLVM IR.
pub struct Intrinsic {
    /// The symbol: the intrinsic's name.
    pub name: String,
    /// Its `func.func private` declaration.
    pub declaration: String,
}

impl Intrinsic {
    /// `vpdpbusd` on `lanes` 32-bit lanes.
    fn vpdpbusd(lanes: i64) -> Self {
        let name = format!("llvm.x86.avx512.vpdpbusd.{}", lanes * 32);
        let (words, bytes) = (format!("vector<{lanes}xi32>"), format!("vector<{}xi8>", 4 * lanes));
        let declaration = format!("func.func private @{name}({words}, {bytes}, {bytes}) -> {words}\n");
        Intrinsic { name, declaration }
    }
}
