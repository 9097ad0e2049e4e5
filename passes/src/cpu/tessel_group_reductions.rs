//! `tessel-group-reductions`: on CPUs, tinygrad's GROUP and GROUPTOP: a
//! block reduction of N elements per result computed as P partial results
//! per result, then combined.
//!
//! The tuner's knob, a module attribute: `tessel.group = P : i64` (absent or
//! below 2: the pass changes nothing). P shrinks to the largest divisor of
//! N that leaves two or more elements per partial.
//!
//! - GROUP (default): partial p combines elements p, p + P, p + 2P ... For
//!   a reduction over the innermost (contiguous) dimension the partials
//!   become one vector of P accumulators: the split op is tiled to single
//!   steps of the reduction (one result at a time, all P partials),
//!   vectorized, and its accumulator read and write hoisted out of the
//!   reduction loop, so the partials stay in registers (P / lanes vector
//!   registers) with one vector operation per P elements and no horizontal
//!   step until the combine.
//! - GROUPTOP (`tessel.group_top = 1 : i64`): partial p combines the p-th
//!   contiguous chunk of N / P elements, the chunk's loop innermost: P
//!   independent reductions over contiguous memory.
//!
//! Which reductions split is `tessel-split-reductions`' rule (the GPU
//! pass, which spreads partials over work-items instead): one reduction
//! dimension, static shapes, and a combiner that may be reassociated
//! (integer ones, exact in any order, and float ones marked
//! `fastmath<reassoc>`: block.reduce's, whose order is unspecified, like
//! `jnp.sum`'s). Contractions keep their k order, so block.dot's bits never
//! change; a float block.reduce's may, by reassociation only.

use crate::support::handles::raw_op;
use crate::support::template::emit_line;
use crate::{
    PassDefinition, PassError,
    support::ir::{fitting, join},
    support::transform,
    transforms::tessel_split_reductions::{SplitGroup, mark_splits, split_steps},
};
use melior::ir::{OperationRef, operation::OperationLike};
use tessel_dialects::knobs;

/// After vectorizing: the single-step reductions become element-wise
/// vector operations, and each partials vector is read before and written
/// after its reduction loop instead of in every step.
fn hoist_partials() -> String {
    let patterns = [
        "vector.lower_multi_reduction lowering_strategy = \"innerparallel\"",
        "vector.transfer_permutation_patterns",
        "canonicalization",
    ];
    transform::patterns_then_hoist(&[&patterns], "tessel.group_loop")
}

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-group-reductions",
    name: "TesselGroupReductions",
    description: "Split block reductions into P partial results and a combine (CPU; tessel.group, tessel.group_top)",
    anchor: "builtin.module",
    run,
};

/// Partials per result for a reduction of `extent` elements when the
/// schedule asks for `wanted`: the largest divisor of `extent` up to it
/// that leaves two or more elements per partial (below 2: unsplit). The
/// tuner's space normalizes with the same rule.
pub fn group_partials(extent: i64, wanted: i64) -> i64 {
    fitting(extent, wanted.min(extent / 2))
}

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    let settings = raw_op(module.to_raw());
    let wanted = knobs::GROUP.integer_or(settings, 0);
    if wanted < 2 {
        return Ok(());
    }
    let top = knobs::GROUP_TOP.integer_or(settings, 0) != 0;
    let groups = mark_splits(module, |extents, dim| group_partials(extents[dim], wanted));
    if groups.is_empty() {
        return Ok(());
    }
    let any = "!transform.any_op";
    let mut body = String::new();
    let mut vectorized = false;
    for (index, group) in groups.iter().enumerate() {
        let SplitGroup { split, dim, rank, .. } = *group;
        body.push_str(&split_steps(index, split, dim, !top));
        if top || dim + 1 != rank {
            continue;
        }
        // The split op's dims: the results' (all but the last), then the
        // reduction's steps, then the P partials: single steps of all but
        // the partials, the reduction's loop innermost.
        let loops = join((0..rank).map(|d| format!("%loop{index}_{d}")));
        let types = join(std::iter::repeat_n(any, rank + 1));
        let sizes = join((0..rank).map(|_| "1").chain(["0"]));
        emit_line!(
            body,
            "%step{index}, {loops} = transform.structured.tile_using_for %partial{index} tile_sizes [{sizes}] \
             : ({any}) -> ({types})\n\
             transform.structured.vectorize %step{index} : {any}\n\
             transform.annotate %loop{index}_{} \"tessel.group_loop\" : {any}",
            rank - 1
        );
        vectorized = true;
    }
    if vectorized {
        body.push_str(&hoist_partials());
    }
    if let Err(error) = transform::apply(module.to_raw(), &transform::script(&body)) {
        return Err(PassError::at(module.location(), error.0));
    }
    Ok(())
}
