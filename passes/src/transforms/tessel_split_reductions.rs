//! `tessel-split-reductions`: on GPUs, a reduction is shared by the
//! workgroup's work-items instead of one item per result.
//!
//! A block reduction (`linalg.reduce`, or a fused `linalg.generic` with one
//! reduction dimension) of R results over N elements would keep only R
//! work-items busy (one for a full sum). Its reduction is split in two
//! (upstream's `split_reduction`, inner-parallel): P partial results per
//! result, partial p combining elements p, p + P, p + 2P ... (neighbouring
//! items read neighbouring elements), kept in a local buffer (LDS after
//! grid-to-gpu), then combined. P is the largest divisor of N up to the
//! work-items per result (num_warps x wave_size / R). The partial loop is
//! interchanged so its reduction is innermost: one parallel nest of R x P
//! iterations that grid-to-gpu spreads over the work-items. Where the
//! reduced dimension is the rows' contiguous one and 16-byte vectors divide
//! it among the partials, partial p folds whole vectors instead
//! (`vector_partials.rs`: neighbouring items still read neighbouring
//! vectors, one wide load each).
//!
//! The combine of P partials is split the same way, level by level (P ->
//! about sqrt(P) each time), until a result's last combine folds at most
//! eight: a tree through LDS instead of one work-item folding hundreds of
//! partials in a dependent chain (a one-row softmax's 256).
//!
//! Only combiners that may be reassociated are split: integer ones, and
//! float ones marked `fastmath<reassoc>` (block.reduce's, whose order is
//! unspecified). Contractions keep their k order.

use crate::support::handles::{attribute_text, dim_size, rank_of, raw_op, value_type};
use crate::support::handles::{has_static_shape, is_ranked_tensor};
use crate::support::ir::defining_op;
use crate::support::template::emit_line;
use crate::{
    PassDefinition, PassError,
    block::block_to_linalg::CONTRACTION,
    gpu::grid_to_gpu::{DEFAULT_WAVE_SIZE, workgroup_items},
    support::ir::{collect_operations, erase, fitting, group_of, join, set_i64_attribute},
    support::transform,
    transforms::vector_partials::{SPLIT_COMBINE, split_in_vectors},
};
use melior::ir::{OperationRef, operation::OperationLike};
use mlir_sys::*;
use tessel_dialects::knobs;

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-split-reductions",
    name: "TesselSplitReductions",
    description: "Split block reductions into per-work-item partials and a combine (GPU)",
    anchor: "builtin.module",
    run,
};

/// Marks a combine level whose partials are held one per work-item, a
/// result's in consecutive lanes (the reduction innermost): it is folded
/// across lanes.
pub const CROSS_LANE: &str = "tessel.cross_lane";

/// Partials one work-item may fold serially in a reduction's last combine.
const COMBINE_FAN_IN: i64 = 8;

/// The largest integer whose square is at most `n`.
fn integer_sqrt(n: i64) -> i64 {
    (1..=n).take_while(|root| root * root <= n).last().unwrap_or(1)
}

/// Integer combiners, exact in any order.
const INTEGER_COMBINERS: [&str; 9] = [
    "arith.addi",
    "arith.muli",
    "arith.andi",
    "arith.ori",
    "arith.xori",
    "arith.maxsi",
    "arith.minsi",
    "arith.maxui",
    "arith.minui",
];

/// May the reduction body's combiner be reassociated?
fn reassociable(op: MlirOperation) -> bool {
    let body = raw_op(op).region_block(0);
    // SAFETY: live values and uses of the module being rewritten (crate invariant, support/handles.rs); an owner is asked only of an op result
    let terminator = unsafe { mlirBlockGetTerminator(body) };
    let yielded = raw_op(terminator).operands();
    let [value] = yielded[..] else { return false };
    let Some(combiner) = defining_op(value).map(raw_op) else { return false };
    let name = combiner.name();
    if INTEGER_COMBINERS.contains(&name.as_str()) {
        return true;
    }
    let fastmath = combiner.attribute("fastmath");
    !fastmath.ptr.is_null() && attribute_text(fastmath).contains("reassoc")
}

/// (iteration extents, reduction dimension) of a reduction to split, if it
/// is one: one reduction dimension, static shapes, results in iteration
/// order.
fn reduction_shape(op: MlirOperation) -> Option<(Vec<i64>, usize)> {
    let raw = raw_op(op);
    let input = value_type(*raw.operands().first()?);
    if !is_ranked_tensor(input) || !has_static_shape(input) || raw.results().len() != 1 {
        return None;
    }
    let rank = rank_of(input) as usize;
    let extents: Vec<i64> = (0..rank).map(|d| dim_size(input, (d as isize) as usize)).collect();
    if raw.name() == "linalg.reduce" {
        let dims = raw.integers("dimensions");
        return (raw.operands().len() == 2 && dims.len() == 1).then(|| (extents, dims[0] as usize));
    }
    // A generic: its first input indexed by the identity, the others (a
    // fused element-wise producer's: softmax's sum of exp(x - max)) by
    // projections, one reduction iterator, one output indexed by the other
    // dimensions in order.
    let iterators = attribute_text(raw.attribute("iterator_types"));
    let kinds: Vec<bool> = iterators.split(',').map(|kind| kind.contains("reduction")).collect();
    let reductions: Vec<usize> = kinds.iter().enumerate().filter(|(_, r)| **r).map(|(d, _)| d).collect();
    let maps = raw.attribute("indexing_maps");
    let [dim] = reductions[..] else { return None };
    // SAFETY: a linalg.generic's indexing_maps is an array attribute (its verifier's guarantee).
    let count = unsafe { mlirArrayAttrGetNumElements(maps) };
    if kinds.len() != rank || raw.has(CONTRACTION) || count < 2 || raw.results().len() != 1 {
        return None;
    }
    // SAFETY: attributes and affine maps of live ops (crate invariant, support/handles.rs); an attribute is read as an affine map only where the op's verifier guarantees one, and positions stay below the map's result count
    let map = |index: isize| unsafe { mlirAffineMapAttrGetValue(mlirArrayAttrGetElement(maps, index)) };
    let (input_map, output_map) = (map(0), map(count - 1));
    // SAFETY: attributes and affine maps of live ops (crate invariant, support/handles.rs); an attribute is read as an affine map only where the op's verifier guarantees one, and positions stay below the map's result count
    let sorted_projection = unsafe { mlirAffineMapIsProjectedPermutation(output_map) }
        // SAFETY: attributes and affine maps of live ops (crate invariant, support/handles.rs); an attribute is read as an affine map only where the op's verifier guarantees one, and positions stay below the map's result count
        && (0..unsafe { mlirAffineMapGetNumResults(output_map) }).all(|position| {
            // SAFETY: attributes and affine maps of live ops (crate invariant, support/handles.rs); an attribute is read as an affine map only where the op's verifier guarantees one, and positions stay below the map's result count
            let expr = unsafe { mlirAffineMapGetResult(output_map, position) };
            let expected = if (position as usize) < dim { position } else { position + 1 };
            // SAFETY: attributes and affine maps of live ops (crate invariant, support/handles.rs); an attribute is read as an affine map only where the op's verifier guarantees one, and positions stay below the map's result count
            unsafe { mlirAffineExprIsADim(expr) && mlirAffineDimExprGetPosition(expr) == expected }
        });
    // SAFETY: attributes and affine maps of live ops (crate invariant, support/handles.rs); an attribute is read as an affine map only where the op's verifier guarantees one, and positions stay below the map's result count
    let projections = (1..count - 1).all(|index| unsafe { mlirAffineMapIsProjectedPermutation(map(index)) });
    // SAFETY: as above.
    (unsafe { mlirAffineMapIsIdentity(input_map) } && sorted_projection && projections).then_some((extents, dim))
}

/// Reductions split alike: one transform script step serves them all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SplitGroup {
    /// Partials per result.
    pub(crate) split: i64,
    /// The reduction dimension.
    pub(crate) dim: usize,
    /// The iteration rank.
    pub(crate) rank: usize,
    /// Results (the product of the other dimensions' extents).
    pub(crate) results: i64,
}

/// Marks every reassociable reduction of `module` that `split_for`
/// (given its iteration extents and reduction dimension) splits by two or
/// more, leaving at least two elements per partial, with
/// `tessel.split_group`; returns the groups, indexed by that attribute.
pub(crate) fn mark_splits(module: OperationRef, split_for: impl Fn(&[i64], usize) -> i64) -> Vec<SplitGroup> {
    let mut groups: Vec<SplitGroup> = Vec::new();
    for (op, _) in collect_operations(module, |name| name == "linalg.reduce" || name == "linalg.generic") {
        let Some((extents, dim)) = reduction_shape(op) else { continue };
        if !reassociable(op) {
            continue;
        }
        let split = split_for(&extents, dim);
        if split < 2 || extents[dim] / split < 2 {
            continue;
        }
        let results = extents.iter().enumerate().filter(|&(d, _)| d != dim).map(|(_, &e)| e).product();
        let group = group_of(&mut groups, SplitGroup { split, dim, rank: extents.len(), results });
        set_i64_attribute(op, "tessel.split_group", group as i64);
    }
    groups
}

/// The transform steps splitting the reductions of group `index` by
/// `split` along `dim` (upstream's `split_reduction`): with
/// `inner_parallel`, partial p combines elements p, p + split, ...;
/// without, the p-th contiguous chunk. Binds `%partial{index}`.
pub(crate) fn split_steps(index: usize, split: i64, dim: usize, inner_parallel: bool) -> String {
    let any = "!transform.any_op";
    let inner = if inner_parallel { ", inner_parallel" } else { "" };
    format!(
        "%reductions{index} = transform.structured.match ops{{[\"linalg.reduce\", \"linalg.generic\"]}} \
         attributes{{tessel.split_group = {index} : i64}} in %root : ({any}) -> {any}\n\
         %generic{index} = transform.structured.generalize %reductions{index} : ({any}) -> {any}\n\
         %init{index}, %fill{index}, %partial{index}, %combine{index} = transform.structured.split_reduction \
         %generic{index} {{split_factor = {split}, insert_split_dimension = {dim}{inner}}} \
         : ({any}) -> ({any}, {any}, {any}, {any})\n"
    )
}

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    let settings = raw_op(module.to_raw());
    let wave = knobs::WAVE_SIZE.integer_or(settings, DEFAULT_WAVE_SIZE);
    let items = workgroup_items(module);
    let groups = mark_splits(module, |extents, dim| {
        let results: i64 = extents.iter().enumerate().filter(|&(d, _)| d != dim).map(|(_, &e)| e).product();
        fitting(extents[dim], (items / results.max(1)).max(1))
    });
    if groups.is_empty() {
        return Ok(());
    }
    // Row reductions whose rows divide into 16-byte vectors: partials over
    // vectors (vector_partials.rs); the others: upstream's split.
    let mut in_vectors = vec![false; groups.len()];
    let mut in_scalars = vec![false; groups.len()];
    for (op, _) in collect_operations(module, |name| name == "linalg.reduce" || name == "linalg.generic") {
        let raw = raw_op(op);
        if !raw.has("tessel.split_group") {
            continue;
        }
        let index = raw.integer("tessel.split_group") as usize;
        let group = groups[index];
        let vectorized = group.dim + 1 == group.rank
            && reduction_shape(op).is_some_and(|(extents, _)| split_in_vectors(op, &extents, group.split, index));
        if vectorized {
            erase(op);
            in_vectors[index] = true;
        } else {
            in_scalars[index] = true;
        }
    }
    let any = "!transform.any_op";
    let mut body = String::new();
    for (index, group) in groups.iter().enumerate() {
        let SplitGroup { split, dim, rank, .. } = *group;
        if in_vectors[index] {
            emit_line!(
                body,
                "%vcombine{index} = transform.structured.match ops{{[\"linalg.generic\"]}} \
                 attributes{{{SPLIT_COMBINE} = {index} : i64}} in %root : ({any}) -> {any}"
            );
            combine_levels(&mut body, &format!("v{index}"), group, format!("%vcombine{index}"), wave, items);
        }
        if in_scalars[index] {
            // The split op's iteration dims: the original ones with `dim`
            // expanded into (N / P: reduction, P: parallel); the reduction
            // moves innermost, so each work-item runs its own partial's loop.
            let order = join((0..=rank).filter(|&d| d != dim).chain([dim]));
            body.push_str(&split_steps(index, split, dim, true));
            emit_line!(
                body,
                "%interchanged{index} = transform.structured.interchange %partial{index} iterator_interchange = [{order}] \
                 : ({any}) -> {any}"
            );
            combine_levels(&mut body, &index.to_string(), group, format!("%combine{index}"), wave, items);
        }
    }
    if let Err(error) = transform::apply(module.to_raw(), &transform::script(&body)) {
        return Err(PassError::at(module.location(), error.0));
    }
    for (op, _) in collect_operations(module, |name| name == "linalg.generic") {
        // SAFETY: live IR of the module being rewritten (crate invariant, support/handles.rs); the name is a valid string
        unsafe { mlirOperationRemoveAttributeByName(op, melior::StringRef::new(SPLIT_COMBINE).to_raw()) };
    }
    Ok(())
}

/// Transform steps for the combine of `group`'s partials (handle
/// `combine`; `name` keeps the steps' handles apart): with one partial per
/// work-item, each result's partials sit in consecutive lanes, and the
/// first combine level folds clusters of them across lanes
/// (tessel-cross-lane-reductions), one cluster per wave at most; what is
/// left is split level by level (a tree of LDS levels, each P -> about
/// sqrt(P)) until a result's last combine is at most COMBINE_FAN_IN
/// partials, so no work-item folds hundreds of partials in a serial chain.
fn combine_levels(body: &mut String, name: &str, group: &SplitGroup, combine: String, wave: i64, items: i64) {
    let any = "!transform.any_op";
    let SplitGroup { split, dim, rank, results } = *group;
    let order = join((0..=rank).filter(|&d| d != dim).chain([dim]));
    let (mut partials, mut combine) = (split, combine);
    let cluster = partials.min(wave);
    let lanes_fit = cluster > 1 && cluster & (cluster - 1) == 0 && partials % cluster == 0;
    if results * partials == items && lanes_fit {
        let annotate = |body: &mut String, op: &str, order: &str| {
            emit_line!(
                body,
                "%cross{name} = transform.structured.interchange {op} iterator_interchange = [{order}] \
                 : ({any}) -> {any}\ntransform.annotate %cross{name} \"{CROSS_LANE}\" : {any}"
            )
        };
        if partials == cluster {
            annotate(body, &combine, &join((0..rank).filter(|&d| d != dim).chain([dim])));
            return;
        }
        // Contiguous clusters (no inner_parallel): partial q folds
        // partials q * C .. (q + 1) * C.
        emit_line!(
            body,
            "%init{name}_lanes, %fill{name}_lanes, %partial{name}_lanes, %combine{name}_lanes = \
             transform.structured.split_reduction {combine} {{split_factor = {}, insert_split_dimension = {dim}}} \
             : ({any}) -> ({any}, {any}, {any}, {any})",
            partials / cluster
        );
        // Its dims: the original ones with `dim` expanded into (P / C:
        // parallel, C: reduction); the reduction moves innermost.
        let lanes_order = join((0..=rank).filter(|&d| d != dim + 1).chain([dim + 1]));
        annotate(body, &format!("%partial{name}_lanes"), &lanes_order);
        (partials, combine) = (partials / cluster, format!("%combine{name}_lanes"));
    }
    for level in 0.. {
        if partials <= COMBINE_FAN_IN {
            break;
        }
        let factor = fitting(partials, integer_sqrt(partials));
        if factor < 2 {
            break;
        }
        let level_name = format!("{name}_{level}");
        emit_line!(
            body,
            "%init{level_name}, %fill{level_name}, %partial{level_name}, %combine{level_name} = \
             transform.structured.split_reduction {combine} {{split_factor = {factor}, insert_split_dimension = {dim}, \
             inner_parallel}} : ({any}) -> ({any}, {any}, {any}, {any})\n\
             %interchanged{level_name} = transform.structured.interchange %partial{level_name} \
             iterator_interchange = [{order}] : ({any}) -> {any}"
        );
        (partials, combine) = (factor, format!("%combine{level_name}"));
    }
}
