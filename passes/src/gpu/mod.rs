//! The AMD GPU pipeline's passes: contractions on matrix cores or FMAs, LDS
//! staging, programs onto workgroups and work-items, barriers, kernels
//! gathered for the code object.

mod access_points;
pub mod grid_to_gpu;
mod matrix_staging;
mod memory_roots;
pub mod per_item;
mod pipeline_schedule;
mod pipelined_loop;
mod private_buffers;
mod replicated_buffers;
pub mod tessel_batch_loads;
pub mod tessel_buffer_resources;
pub mod tessel_contraction_fma;
pub mod tessel_cross_lane_reductions;
pub mod tessel_elide_barriers;
pub mod tessel_gather_kernels;
pub mod tessel_gpu_vectorize;
pub mod tessel_lds_stage;
pub mod tessel_matrix_cores;
pub mod tessel_past_end_views;
pub mod tessel_recompute_large_values;
pub mod tessel_register_tiles;
pub mod tessel_resident_accumulators;
pub mod work_items;
pub mod workgroup_arena;
