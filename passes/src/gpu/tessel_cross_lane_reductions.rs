//! `tessel-cross-lane-reductions`: the combine level that
//! `tessel-split-reductions` marks `tessel.cross_lane` folds each result's
//! partials across the lanes of a wave (`gpu.subgroup_reduce`: DPP moves
//! on AMD GPUs) instead of one work-item folding them from LDS.
//!
//! The marked op is a `linalg.generic` on memrefs reducing its innermost
//! dimension: `in[..., g, c] -> out[..., g]`, clusters of C consecutive
//! partials, one combiner op. When its iterations are exactly the
//! workgroup's work-items and C is a power of two no wider than a wave, it
//! becomes a parallel loop whose iteration i is work-item i (grid-to-gpu
//! runs such a loop straight-line): each item loads partial i, the cluster
//! of C consecutive lanes (the same result's partials) reduces across
//! lanes, and the cluster's first lane combines the sum with the output's
//! value (the fill) and stores it. Where the output is a program's own
//! buffer that only a fill with the combiner's identity initializes (a
//! partial level's buffer from `split_reduction`, or a result whose init is
//! the identity: a max from -inf), the fill goes and the first lane stores
//! the sum as it is: every element is written once either way, and the
//! workgroup no longer waits for the fill (one barrier less per
//! reduction). Other marked ops stay as they are — a correct, serial,
//! reduction.
//!
//! Runs after bufferization, before the linalg ops become loops.

use crate::support::handles::{
    attribute_text, block_of, context_of, dim_size, location_of, rank_of, raw_op, value_type,
};
use crate::support::template::emit_line;
use crate::{
    PassDefinition, PassError,
    gpu::grid_to_gpu::{DEFAULT_WAVE_SIZE, workgroup_items},
    support::ir::{
        ancestor_in, block_arguments, block_operations, collect_operations, constant_value, defining_op, erase,
        integer_of, join, print_type, users,
    },
    support::template,
    transforms::tessel_split_reductions::CROSS_LANE,
};
use melior::ir::OperationRef;
use mlir_sys::*;
use tessel_dialects::knobs;

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-cross-lane-reductions",
    name: "TesselCrossLaneReductions",
    description: "Fold reduction partials held one per lane across the lanes of a wave (gpu.subgroup_reduce)",
    anchor: "builtin.module",
    run,
};

/// The `gpu.subgroup_reduce` kinds and the arith ops that combine two
/// values of each: (kind, on floats, on integers). Shared with the
/// emulator (`tessel-emulate-subgroups`), which folds lanes with them.
pub(crate) const REDUCE_KINDS: [(&str, Option<&str>, Option<&str>); 13] = [
    ("add", Some("arith.addf"), Some("arith.addi")),
    ("mul", Some("arith.mulf"), Some("arith.muli")),
    ("maximumf", Some("arith.maximumf"), None),
    ("minimumf", Some("arith.minimumf"), None),
    ("maxnumf", Some("arith.maxnumf"), None),
    ("minnumf", Some("arith.minnumf"), None),
    ("maxsi", None, Some("arith.maxsi")),
    ("minsi", None, Some("arith.minsi")),
    ("maxui", None, Some("arith.maxui")),
    ("minui", None, Some("arith.minui")),
    ("and", None, Some("arith.andi")),
    ("or", None, Some("arith.ori")),
    ("xor", None, Some("arith.xori")),
];

/// The `gpu.subgroup_reduce` kind of a combiner op, if it has one.
fn reduce_kind(combiner: &str) -> Option<&'static str> {
    REDUCE_KINDS.iter().find(|(_, float, integer)| [*float, *integer].contains(&Some(combiner))).map(|(kind, ..)| *kind)
}

/// Is `value` a constant that the reduction `kind` of 32-bit elements
/// leaves every element alone with (w combined with it is w, NaNs
/// included; add's +0.0 turns a -0.0 sum into +0.0, which compares equal)?
fn is_identity(kind: &str, value: MlirValue) -> bool {
    let Some(attribute) = constant_value(value) else { return false };
    // SAFETY: a live attribute of the context, read as the kind it is
    // checked to be.
    if unsafe { mlirAttributeIsAFloat(attribute) } {
        // SAFETY: as above.
        let x = unsafe { mlirFloatAttrGetValueDouble(attribute) };
        return match kind {
            "add" => x == 0.0,
            "mul" => x == 1.0,
            "maximumf" => x == f64::NEG_INFINITY,
            "minimumf" => x == f64::INFINITY,
            _ => false,
        };
    }
    // Compared as 32-bit integers: a constant of all ones reads as -1
    // whether it is sign- or zero-extended.
    let Some(x) = integer_of(attribute).map(|x| x as i32) else { return false };
    match kind {
        "add" | "or" | "xor" | "maxui" => x == 0,
        "mul" => x == 1,
        "and" | "minui" => x == -1,
        "maxsi" => x == i32::MIN,
        "minsi" => x == i32::MAX,
        _ => false,
    }
}

/// The `linalg.fill` that alone initializes `out`, a program's own buffer,
/// before `op` (in its block) with the identity of `kind`, when every other
/// use of the buffer follows `op`: `op` writes each element once, so the
/// fill is dead and `op` may store its results without reading it.
fn identity_fill(op: MlirOperation, out: MlirValue, kind: &str) -> Option<MlirOperation> {
    if raw_op(defining_op(out)?).name() != "memref.alloc" {
        return None;
    }
    let block = block_of(op);
    // SAFETY: live ops of one block (checked) of the module being rewritten.
    let before = |a: MlirOperation, b: MlirOperation| unsafe { mlirOperationIsBeforeInBlock(a, b) };
    let mut fill = None;
    for user in users(out) {
        if user.ptr == op.ptr {
            continue;
        }
        let operands = raw_op(user).operands();
        let initializes = raw_op(user).name() == "linalg.fill"
            && block_of(user).ptr == block.ptr
            && operands.len() == 2
            && operands[1].ptr == out.ptr
            && before(user, op)
            && is_identity(kind, operands[0]);
        if initializes && fill.is_none() {
            fill = Some(user);
            continue;
        }
        let later = ancestor_in(block, user)?;
        if !before(op, later) {
            return None;
        }
    }
    fill
}

/// What a marked op reduces: its iteration extents (the reduction
/// innermost), the input dimension each iteration dimension indexes, the
/// element type and the combiner op's name.
struct LaneReduction {
    extents: Vec<i64>,
    input_dims: Vec<usize>,
    element: String,
    combiner: String,
}

/// The iteration dimension each result of the permutation map `map` is, if
/// it is a permutation of `rank` dimensions.
fn permutation(map: MlirAffineMap, rank: usize) -> Option<Vec<usize>> {
    // SAFETY: affine maps live in the context; results are read below
    // their count, and as dim expressions only after checking they are.
    unsafe {
        if !mlirAffineMapIsPermutation(map) || mlirAffineMapGetNumDims(map) as usize != rank {
            return None;
        }
        Some(
            (0..rank).map(|r| mlirAffineDimExprGetPosition(mlirAffineMapGetResult(map, r as isize)) as usize).collect(),
        )
    }
}

/// Reads a marked op: one memref input, indexed by a permutation of the
/// iteration dimensions, reduced along the innermost one into one memref
/// output indexed by the others in order; a body of one combiner op of the
/// two elements. `None` for anything else.
fn read(op: MlirOperation) -> Option<LaneReduction> {
    let raw = raw_op(op);
    let operands = raw.operands();
    let [input, output] = operands[..] else { return None };
    let (input_type, output_type) = (value_type(input), value_type(output));
    // SAFETY: types live in the context; only queried for their kind and shape.
    let static_memrefs =
        unsafe { [input_type, output_type].iter().all(|&t| mlirTypeIsAMemRef(t) && mlirShapedTypeHasStaticShape(t)) };
    if !static_memrefs || !raw.results().is_empty() {
        return None;
    }
    let rank = rank_of(input_type) as usize;
    if rank == 0 || rank_of(output_type) as usize != rank - 1 {
        return None;
    }
    let iterators = attribute_text(raw.attribute("iterator_types"));
    if iterators.matches("reduction").count() != 1 || !iterators.ends_with("reduction>]") {
        return None;
    }
    let maps = raw.attribute("indexing_maps");
    // SAFETY: a linalg.generic's indexing_maps is an array of two affine
    // map attributes (one input, one output: checked above).
    let map = |index: isize| unsafe { mlirAffineMapAttrGetValue(mlirArrayAttrGetElement(maps, index)) };
    let input_dims = permutation(map(0), rank)?;
    let dims: Vec<String> = (0..rank).map(|d| format!("d{d}")).collect();
    let kept = format!("affine_map<({}) -> ({})>", dims.join(", "), dims[..rank - 1].join(", "));
    // SAFETY: as above.
    if attribute_text(unsafe { mlirArrayAttrGetElement(maps, 1) }) != kept {
        return None;
    }
    let body = raw.region_block(0);
    let [combiner, terminator] = block_operations(body)[..] else { return None };
    let arguments = block_arguments(body);
    let combined = raw_op(combiner).operands();
    let uses_both = combined.len() == 2
        && arguments.iter().all(|argument| combined.iter().any(|operand| operand.ptr == argument.ptr));
    let yielded = raw_op(terminator).operands();
    let yields_it = yielded.len() == 1 && defining_op(yielded[0]).is_some_and(|op| op.ptr == combiner.ptr);
    if !uses_both || !yields_it {
        return None;
    }
    // Iteration dimension d has the extent of the input dimension it indexes.
    let mut extents = vec![0; rank];
    for (input_dim, &d) in input_dims.iter().enumerate() {
        extents[d] = dim_size(input_type, input_dim);
    }
    Some(LaneReduction {
        extents,
        input_dims,
        // SAFETY: a memref type (checked above).
        element: print_type(unsafe { mlirShapedTypeGetElementType(input_type) }),
        combiner: raw_op(combiner).name(),
    })
}

/// The parallel loop of `items` iterations replacing a marked op; with
/// `overwrite`, the first lanes store their sums without reading the output.
fn lane_loop(reduction: &LaneReduction, kind: &str, items: i64, types: (&str, &str), overwrite: bool) -> String {
    let LaneReduction { extents, input_dims, element, combiner } = reduction;
    let rank = extents.len();
    let cluster = extents[rank - 1];
    let indices = |count: usize| join(vec!["index"; count]);
    let position = |count: usize| join((0..count).map(|d| format!("%d#{d}")));
    let mut text = format!(
        "func.func @template(%in: {in_type}, %out: {out_type}) {{\n\
         %c0 = arith.constant 0 : index\n%c1 = arith.constant 1 : index\n%items = arith.constant {items} : index\n\
         scf.parallel (%i) = (%c0) to (%items) step (%c1) {{\n\
         %d:{rank} = affine.delinearize_index %i into ({extents}) : {index_types}\n\
         %v = memref.load %in[{all}] : {in_type}\n\
         %w = gpu.subgroup_reduce {kind} %v cluster(size = {cluster}) : ({element}) -> {element}\n\
         %first = arith.cmpi eq, %d#{last}, %c0 : index\nscf.if %first {{",
        in_type = types.0,
        out_type = types.1,
        extents = join(extents),
        index_types = indices(rank),
        all = join(input_dims.iter().map(|d| format!("%d#{d}"))),
        last = rank - 1,
    );
    let (kept, out_type) = (position(rank - 1), types.1);
    if overwrite {
        emit_line!(text, "\nmemref.store %w, %out[{kept}] : {out_type}");
    } else {
        emit_line!(
            text,
            "\n%o = memref.load %out[{kept}] : {out_type}\n%r = {combiner} %w, %o : {element}\n\
             memref.store %r, %out[{kept}] : {out_type}"
        );
    }
    text.push_str("}\nscf.reduce\n}\nreturn\n}");
    text
}

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    let settings = raw_op(module.to_raw());
    let wave = knobs::WAVE_SIZE.integer_or(settings, DEFAULT_WAVE_SIZE);
    let items = workgroup_items(module);
    let marked = |name: &str| name == "linalg.generic";
    for (op, _) in collect_operations(module, marked) {
        if !raw_op(op).has(CROSS_LANE) {
            continue;
        }
        let Some(reduction) = read(op) else { continue };
        let Some(kind) = reduce_kind(&reduction.combiner) else { continue };
        let cluster = *reduction.extents.last().expect("rank >= 1");
        let element_bits = reduction.element.trim_start_matches(['i', 'f']).parse::<u32>().unwrap_or(0);
        let fits = reduction.extents.iter().product::<i64>() == items
            && cluster > 1
            && cluster <= wave
            && cluster & (cluster - 1) == 0
            // DPP moves 32-bit registers.
            && element_bits == 32;
        if !fits {
            continue;
        }
        let operands = raw_op(op).operands();
        let types = (print_type(value_type(operands[0])), print_type(value_type(operands[1])));
        let fill = identity_fill(op, operands[1], kind);
        let text = lane_loop(&reduction, kind, items, (&types.0, &types.1), fill.is_some());
        if let Err(error) = template::replace(context_of(op), op, &text, &operands) {
            return Err(PassError::at(location_of(op), error.0));
        }
        if let Some(fill) = fill {
            erase(fill);
        }
    }
    Ok(())
}
