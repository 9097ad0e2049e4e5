//! The CPU pipeline's passes: register tiles and vectors from the target
//! model, reduction groups, fast math, C library calls and the thread/vector settings.

pub mod accumulator_pieces;
pub mod caches;
pub mod contraction_epilogue;
pub mod cpu_model;
pub mod filled_tiles;
pub mod tessel_check_bounds;
pub mod tessel_contiguous_copies;
pub mod tessel_core_threads;
pub mod tessel_cpu_target;
pub mod tessel_elementwise_in_place;
pub mod tessel_fast_math;
pub mod tessel_group_reductions;
pub mod tessel_hoist_packing;
pub mod tessel_libm_calls;
pub mod tessel_minmax_as_integers;
pub mod tessel_sink_into_branches;
pub mod tessel_tile;
pub mod tessel_true_masks;
pub mod tessel_vectorize;
pub mod tessel_vectorize_copies;
pub mod tessel_vnni;
pub mod tessel_widen_bf16;
pub mod tessel_widen_operands;
