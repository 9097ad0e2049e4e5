//! `tessel-vnni`: 8-bit contractions (i8 x i8 -> i32 `block.dot`) in the
//! form of the x86 instruction that sums several 8- or 16-bit products
//! into each 32-bit lane: VNNI's `vpdpbusd` where the CPU has it, else
//! `vpmaddwd` (every x86-64).
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
//! Without VNNI, `vpmaddwd` multiplies signed 16-bit pairs and sums each
//! pair into a 32-bit lane: both operands sign-extended to `i16` once
//! (O(m·k + k·n) conversions), B packed `[k/2, n, 2]`, two steps of k per
//! instruction and an add, against `vpmulld` and an add per step on
//! operands widened to `i32`. Products of bytes fit 16 bits and their sums
//! 32, so no bias is needed and every result keeps its bits.
//!
//! The contraction becomes a `linalg.generic` over loops (batch,) i, j,
//! k/g, r (g = 4 or 2) marked `tessel.contraction` and the form's marker
//! (`tessel.vnni`, `tessel.pmaddwd`), still an ordinary linalg op with the
//! same results: `tessel-tile` tiles it as any contraction (r whole) and
//! `tessel-vectorize` turns its register tiles into the instruction
//! (`register_tile` below).
//!
//! Runs on tensors before `tessel-widen-operands` and `tessel-tile`, with
//! the best form the CPU has (`tessel.vnni`, `tessel.pmaddwd`, else the
//! host's `CpuModel`) whose g divides k.

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
    description: "8-bit contractions in the form of x86 multiply-add instructions (vpdpbusd with VNNI, else vpmaddwd)",
    anchor: "builtin.module",
    run,
};

/// The marker of contractions in VNNI's form.
pub const VNNI: &str = "tessel.vnni";

/// The marker of contractions in `vpmaddwd`'s form.
pub const PAIRS: &str = "tessel.pmaddwd";

/// How an 8-bit contraction's register tile sums its products.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// `vpdpbusd`: four unsigned x signed bytes per 32-bit lane.
    Quads,
    /// `vpmaddwd`: two signed 16-bit products per 32-bit lane.
    Pairs,
}

impl Form {
    /// Steps of k one instruction sums per lane.
    pub fn group(self) -> i64 {
        match self {
            Form::Quads => 4,
            Form::Pairs => 2,
        }
    }

    /// The operands' element type in this form.
    fn operand(self) -> &'static str {
        match self {
            Form::Quads => "i8",
            Form::Pairs => "i16",
        }
    }

    /// The marker of contractions in this form.
    fn marker(self) -> &'static str {
        match self {
            Form::Quads => VNNI,
            Form::Pairs => PAIRS,
        }
    }

    /// The form of a contraction `tessel-vnni` rewrote, if it did.
    pub fn of(op: mlir_sys::MlirOperation) -> Option<Form> {
        let op = raw_op(op);
        [Form::Quads, Form::Pairs].into_iter().find(|form| op.has(form.marker()))
    }

    /// The forms code for `module` may use, best first: `vpdpbusd` where
    /// the CPU has VNNI (`tessel.vnni`, else the host's model), `vpmaddwd`
    /// where it is x86 (`tessel.pmaddwd`, else the host's).
    pub fn for_module(module: melior::ir::OperationRef<'_, '_>) -> Vec<Form> {
        let (op, host) = (raw_op(module.to_raw()), CpuModel::host());
        let quads = knobs::VNNI.integer_or(op, i64::from(host.vnni)) != 0;
        let pairs = knobs::PMADDWD.integer_or(op, i64::from(host.pmaddwd)) != 0;
        [(Form::Quads, quads), (Form::Pairs, pairs)].into_iter().filter(|&(_, has)| has).map(|(form, _)| form).collect()
    }
}

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    let forms = Form::for_module(module);
    if forms.is_empty() {
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
            if a.iter().chain(&b).any(|&size| size < 1) {
                return Ok(None);
            }
            // The best form whose group divides k (vpmaddwd's pairs where
            // VNNI's quads do not).
            let Some(form) = forms.iter().copied().find(|form| a[rank - 1] % form.group() == 0) else {
                return Ok(None);
            };
            let types = types.iter().map(|&t| print_type(t)).collect();
            let text = match form {
                Form::Quads => quads_form(rank, &a, &b, types),
                Form::Pairs => pairs_form(rank, &a, &b, types),
            };
            Ok(Some((text, op.operands())))
        },
    )
}

/// Shapes, maps and reassociations of a packed form, with the batch
/// dimension first when there is one.
struct Shapes {
    batch: bool,
    prefix: Vec<i64>,
}

impl Shapes {
    fn new(rank: usize, a: &[i64]) -> Self {
        let batch = rank == 3;
        Shapes { batch, prefix: if batch { vec![a[0]] } else { vec![] } }
    }

    fn tensor(&self, dims: &[i64], element: &str) -> String {
        let sizes: Vec<String> = self.prefix.iter().chain(dims).map(|d| d.to_string()).collect();
        format!("tensor<{}x{element}>", sizes.join("x"))
    }

    fn reassociation(&self, groups: &[&[usize]]) -> String {
        let shift = usize::from(self.batch);
        let group = |dims: &[usize]| format!("[{}]", join(dims.iter().map(|d| (d + shift).to_string())));
        let leading = if self.batch { "[0], " } else { "" };
        format!("[{leading}{}]", join(groups.iter().map(|dims| group(dims))))
    }

    fn output_shape(&self, dims: &[i64]) -> String {
        join(self.prefix.iter().chain(dims).map(|d| d.to_string()))
    }

    fn map(&self, dims: &str, results: &str) -> String {
        if self.batch {
            format!("affine_map<(batch, {dims}) -> (batch, {results})>")
        } else {
            format!("affine_map<({dims}) -> ({results})>")
        }
    }

    fn parallel(&self, count: usize) -> String {
        join((0..count + usize::from(self.batch)).map(|_| "\"parallel\""))
    }

    fn batch_iterator(&self) -> &'static str {
        if self.batch { "\"parallel\", " } else { "" }
    }

    fn permutation(&self) -> &'static str {
        if self.batch { "[0, 1, 3, 2]" } else { "[0, 2, 1]" }
    }
}

/// A contraction in `form`'s grouping: `operands` writes A (`a_source`,
/// (batch,) m x k, the form's operand type) expanded to `[m, k/g, g]` and
/// B (`b_source`) expanded to `[k/g, g, n]` and transposed to the packed
/// `[k/g, n, g]`; `contraction` the marked `(i, j, k/g, r)` contraction of
/// those into `init`, A's elements extended by `a_extension` (the
/// products' signs), B's sign-extended, defining `%r`.
struct Grouped<'a> {
    shapes: &'a Shapes,
    form: Form,
    m: i64,
    k: i64,
    n: i64,
}

impl Grouped<'_> {
    fn types(&self) -> (String, String) {
        let (g, element) = (self.form.group(), self.form.operand());
        (self.shapes.tensor(&[self.m, self.k / g, g], element), self.shapes.tensor(&[self.k / g, self.n, g], element))
    }

    fn operands(&self, a_source: &str, b_source: &str) -> String {
        let (shapes, g, element) = (self.shapes, self.form.group(), self.form.operand());
        let (m, k, n) = (self.m, self.k, self.n);
        let (a_type, b_type) = (shapes.tensor(&[m, k], element), shapes.tensor(&[k, n], element));
        let b_grouped = shapes.tensor(&[k / g, g, n], element);
        let (a_grouped, b_packed) = self.types();
        format!(
            "%a_grouped = tensor.expand_shape {a_source} {a_groups} output_shape [{a_shape}] : {a_type} into {a_grouped}\n\
             %b_grouped = tensor.expand_shape {b_source} {b_groups} output_shape [{b_shape}] : {b_type} into {b_grouped}\n\
             %b_packed_empty = tensor.empty() : {b_packed}\n\
             %b_packed = linalg.transpose ins(%b_grouped : {b_grouped}) outs(%b_packed_empty : {b_packed}) \
             permutation = {permutation}\n",
            a_groups = shapes.reassociation(&[&[0], &[1, 2]]),
            b_groups = shapes.reassociation(&[&[0, 1], &[2]]),
            a_shape = shapes.output_shape(&[m, k / g, g]),
            b_shape = shapes.output_shape(&[k / g, g, n]),
            permutation = shapes.permutation(),
        )
    }

    fn contraction(&self, init: &str, result: &str, a_extension: &str) -> String {
        let (shapes, element) = (self.shapes, self.form.operand());
        let (a_grouped, b_packed) = self.types();
        format!(
            "%r = linalg.generic {{indexing_maps = [{map_a}, {map_b}, {map_c}], iterator_types = [{batch_iterator}\
             \"parallel\", \"parallel\", \"reduction\", \"reduction\"], {CONTRACTION}, {marker}}} \
             ins(%a_grouped, %b_packed : {a_grouped}, {b_packed}) outs({init} : {result}) {{\n\
             ^bb0(%x: {element}, %y: {element}, %s: i32):\n%xw = {a_extension} %x : {element} to i32\n\
             %yw = arith.extsi %y : {element} to i32\n%p = arith.muli %xw, %yw : i32\n%t = arith.addi %s, %p : i32\n\
             linalg.yield %t : i32\n}} -> {result}\n",
            marker = self.form.marker(),
            batch_iterator = shapes.batch_iterator(),
            map_a = shapes.map("i, j, q, r", "i, q, r"),
            map_b = shapes.map("i, j, q, r", "q, j, r"),
            map_c = shapes.map("i, j, q, r", "i, j"),
        )
    }
}

/// The template of the contraction of `a` (shape (batch,) m x k) and `b`
/// ((batch,) k x n) into `types[2]`, in vpmaddwd's form: both operands
/// sign-extended to i16 once, then grouped by pairs.
fn pairs_form(rank: usize, a: &[i64], b: &[i64], types: Vec<String>) -> String {
    let shapes = Shapes::new(rank, a);
    let (m, k, n) = (a[rank - 2], b[rank - 2], b[rank - 1]);
    let (ta, tb, tc) = (&types[0], &types[1], &types[2]);
    let (wa, wb) = (shapes.tensor(&[m, k], "i16"), shapes.tensor(&[k, n], "i16"));
    let same2 = shapes.map("i, j", "i, j");
    let widen = |name: &str, narrow: &str, wide: &str| {
        format!(
            "%{name}_empty = tensor.empty() : {wide}\n\
             %{name}_wide = linalg.generic {{indexing_maps = [{same2}, {same2}], iterator_types = [{}]}} \
             ins(%{name} : {narrow}) outs(%{name}_empty : {wide}) {{\n\
             ^bb0(%x: i8, %unused: i16):\n%w = arith.extsi %x : i8 to i16\nlinalg.yield %w : i16\n}} -> {wide}\n",
            shapes.parallel(2)
        )
    };
    let grouped = Grouped { shapes: &shapes, form: Form::Pairs, m, k, n };
    format!(
        "func.func @template(%a: {ta}, %b: {tb}, %c: {tc}) -> {tc} {{\n{}{}{}{}return %r : {tc}\n}}",
        widen("a", ta, &wa),
        widen("b", tb, &wb),
        grouped.operands("%a_wide", "%b_wide"),
        grouped.contraction("%c", tc, "arith.extsi"),
    )
}

/// The template of the contraction of `a` (shape (batch,) m x k) and `b`
/// ((batch,) k x n) into `types[2]`, in VNNI's form: A biased to unsigned
/// (x ^ 0x80 = x + 128), the accumulator corrected by 128 x B's column
/// sums, then grouped by quads.
fn quads_form(rank: usize, a: &[i64], b: &[i64], types: Vec<String>) -> String {
    let shapes = Shapes::new(rank, a);
    let (m, k, n) = (a[rank - 2], b[rank - 2], b[rank - 1]);
    let (ta, tb, tc) = (&types[0], &types[1], &types[2]);
    let sums = shapes.tensor(&[n], "i32");
    let grouped = Grouped { shapes: &shapes, form: Form::Quads, m, k, n };
    format!(
        "func.func @template(%a: {ta}, %b: {tb}, %c: {tc}) -> {tc} {{\n\
         %a_empty = tensor.empty() : {ta}\n\
         %biased = linalg.generic {{indexing_maps = [{same2}, {same2}], iterator_types = [{parallel2}]}} \
         ins(%a : {ta}) outs(%a_empty : {ta}) {{\n\
         ^bb0(%x: i8, %unused: i8):\n%sign = arith.constant -128 : i8\n%u = arith.xori %x, %sign : i8\n\
         linalg.yield %u : i8\n}} -> {ta}\n{operands}\
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
         %bias = arith.shli %s, %seven : i32\n%r0 = arith.subi %x, %bias : i32\nlinalg.yield %r0 : i32\n}} -> {tc}\n\
         {contraction}return %r : {tc}\n}}",
        operands = grouped.operands("%biased", "%b"),
        contraction = grouped.contraction("%init", tc, "arith.extui"),
        same2 = shapes.map("i, j", "i, j"),
        parallel2 = shapes.parallel(2),
        columns = shapes.map("i, j", "j"),
        batch_iterator = shapes.batch_iterator(),
    )
}

/// The vectorized register tile of a contraction in `form`, as
/// `tessel-tile` leaves it (one step of k/g: A `(1x) m x 1 x g`, B's packed
/// panel `(1x) 1 x n x g`, the accumulator `(1x) m x n`): a template
/// reading the accumulator tile whole (`tessel-vectorize` hoists it out of
/// the k loop) and adding, for each row and `lanes`-wide piece of it, the
/// form's instruction on the row's g A elements (one 32-bit lane,
/// broadcast) and the piece's packed B. `vector_bits`: the widest vectors
/// the code may use.
pub fn register_tile(
    form: Form,
    a: MlirType,
    b: MlirType,
    c: MlirType,
    vector_bits: i64,
) -> (String, Option<Intrinsic>) {
    let rank = rank_of(c) as usize;
    let (rows, columns) = (dim_size(c, rank - 2), dim_size(c, rank - 1));
    let [ta, tb, tc] = [a, b, c].map(print_type);
    let (group, element) = (form.group(), form.operand());
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
        format!("%tile = vector.transfer_read %c[{}], %zero {{{}}} : {tc}, {tile_type}\n", zeros(rank), in_bounds(2));
    // The widest instruction whose lanes divide the tile's columns.
    let lanes = [vector_bits / 32, 8, 4].into_iter().find(|&lanes| lanes >= 4 && columns % lanes == 0);
    if let Some(lanes) = lanes {
        // B's packed panel row: the g k of each column adjacent.
        let flat = format!("tensor<{}x{element}>", group * columns);
        emit_line!(
            body,
            "%b_flat = tensor.collapse_shape %b [[{}]] : {tb} into {flat}",
            join((0..=rank).map(|d| d.to_string()))
        );
        for j in 0..columns / lanes {
            emit_line!(
                body,
                "%b{j} = vector.transfer_read %b_flat[{}], %zero_operand {{{}}} : {flat}, vector<{}x{element}>",
                index(group * lanes * j),
                in_bounds(1),
                group * lanes
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
                let operand = format!("vector<{}x{element}>", group * lanes);
                let intrinsic = Intrinsic::of(form, lanes).name;
                // A's g k of row i, one 32-bit lane, in every lane.
                emit_line!(
                    body,
                    "%a{i} = vector.transfer_read %a[{batch}{row_index}, %c0, %c0], %zero_operand {{{}}} \
                     : {ta}, vector<{group}x{element}>\n\
                     %a{i}_word = vector.bitcast %a{i} : vector<{group}x{element}> to vector<1xi32>\n\
                     %a{i}_scalar = vector.extract %a{i}_word[0] : i32 from vector<1xi32>\n\
                     %a{i}_lanes = vector.broadcast %a{i}_scalar : i32 to vector<{lanes}xi32>\n\
                     %a{i}_operand = vector.bitcast %a{i}_lanes : vector<{lanes}xi32> to {operand}",
                    in_bounds(1)
                );
                for j in 0..columns / lanes {
                    let offset = j * lanes;
                    emit_line!(
                        body,
                        "%acc{i}_{j} = vector.extract_strided_slice %row{i} {{offsets = [{offset}], sizes = [{lanes}], \
                         strides = [1]}} : {row_type} to vector<{lanes}xi32>"
                    );
                    // vpdpbusd accumulates; vpmaddwd's pair sums are added.
                    match form {
                        Form::Quads => emit_line!(
                            body,
                            "%sum{i}_{j} = func.call @{intrinsic}(%acc{i}_{j}, %a{i}_operand, %b{j}) \
                             : (vector<{lanes}xi32>, {operand}, {operand}) -> vector<{lanes}xi32>"
                        ),
                        Form::Pairs => emit_line!(
                            body,
                            "%pairs{i}_{j} = func.call @{intrinsic}(%a{i}_operand, %b{j}) \
                             : ({operand}, {operand}) -> vector<{lanes}xi32>\n\
                             %sum{i}_{j} = arith.addi %acc{i}_{j}, %pairs{i}_{j} : vector<{lanes}xi32>"
                        ),
                    }
                    emit_line!(
                        body,
                        "%tile{i}_{j} = vector.insert_strided_slice %sum{i}_{j}, {tile} {{offsets = [{i}, {offset}], \
                         strides = [1]}} : vector<{lanes}xi32> into {tile_type}"
                    );
                    tile = format!("%tile{i}_{j}");
                }
            }
            // Columns not a multiple of 4: each of the g k as an outer
            // product of extended A (zero-extended: VNNI's A is biased to
            // unsigned) and sign-extended B.
            None => {
                let extend_a = if form == Form::Quads { "arith.extui" } else { "arith.extsi" };
                for r in 0..group {
                    let r_index = index(r);
                    emit_line!(
                        body,
                        "%a{i}_{r} = vector.transfer_read %a[{batch}{row_index}, %c0, {r_index}], %zero_operand {{{}}} \
                         : {ta}, vector<1x{element}>\n\
                         %a{i}_{r}_wide = {extend_a} %a{i}_{r} : vector<1x{element}> to vector<1xi32>\n\
                         %a{i}_{r}_lanes = vector.broadcast %a{i}_{r}_wide : vector<1xi32> to {row_type}\n\
                         %b{i}_{r} = vector.transfer_read %b[{batch}%c0, %c0, {r_index}], %zero_operand \
                         {{permutation_map = {}, {}}} : {tb}, vector<{columns}x{element}>\n\
                         %b{i}_{r}_wide = arith.extsi %b{i}_{r} : vector<{columns}x{element}> to {row_type}\n\
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
    let intrinsic = lanes.map(|lanes| Intrinsic::of(form, lanes));
    let declaration = intrinsic.as_ref().map_or(String::new(), |intrinsic| intrinsic.declaration.clone());
    let template = format!(
        "func.func @template(%a: {ta}, %b: {tb}, %c: {tc}) -> {tc} {{\n\
         %zero_operand = arith.constant 0 : {element}\n%zero = arith.constant 0 : i32\n{constants}{body}\
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
    /// The instruction of `form` on `lanes` 32-bit lanes: `vpdpbusd`
    /// (accumulator, unsigned bytes, signed bytes) or `vpmaddwd` (two
    /// vectors of 16-bit elements).
    fn of(form: Form, lanes: i64) -> Self {
        let words = format!("vector<{lanes}xi32>");
        let operand = format!("vector<{}x{}>", form.group() * lanes, form.operand());
        let (name, arguments) = match form {
            Form::Quads => {
                (format!("llvm.x86.avx512.vpdpbusd.{}", lanes * 32), format!("{words}, {operand}, {operand}"))
            }
            Form::Pairs => {
                let name = match lanes {
                    4 => "llvm.x86.sse2.pmadd.wd",
                    8 => "llvm.x86.avx2.pmadd.wd",
                    _ => "llvm.x86.avx512.pmaddw.d.512",
                };
                (name.to_string(), format!("{operand}, {operand}"))
            }
        };
        let declaration = format!("func.func private @{name}({arguments}) -> {words}\n");
        Intrinsic { name, declaration }
    }
}
