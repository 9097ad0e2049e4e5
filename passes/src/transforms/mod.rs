//! Target-independent rewrites that both the CPU and the GPU pipelines use.

pub mod tessel_copies_to_linalg;
pub mod tessel_expand_atomics;
pub mod tessel_merge_k_steps;
pub mod tessel_saturating_shifts;
pub mod tessel_share_ref_tensors;
pub mod tessel_split_reductions;
pub mod tessel_strip_signedness;
pub mod tessel_total_division;
pub mod tessel_unshare_inits;
mod vector_partials;
