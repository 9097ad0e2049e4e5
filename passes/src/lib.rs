//! Tessel's own MLIR passes, one per file, registered by name.
//!
//! The MLIR C API cannot register a pass by name, so each Rust pass is handed
//! to a small C++ entry point (`tesselRegisterPass`) with a factory that
//! builds a fresh external pass; after [`register_passes`], `--<argument>`
//! flags and `--pass-pipeline` strings reach Tessel passes like upstream
//! ones (in `tessel-opt` and in any pass manager of the process).

mod block_to_linalg;
mod contraction_fma;
mod copies_to_linalg;
mod cpu_model;
mod cpu_target;
mod diagnostics;
mod elide_barriers;
mod emulate_gpu;
mod emulate_matrix_cores;
mod fast_math;
mod gather_kernels;
mod gpu_vectorize;
mod grid_to_gpu;
mod grid_to_loops;
mod grid_verify_specs;
mod group_reductions;
mod in_place;
mod ir;
mod lds_stage;
mod matrix_cores;
pub mod matrix_layout;
mod per_item;
mod privatize;
mod registry;
mod split_reductions;
mod template;
mod tessel_pipeline;
mod tessel_tile;
mod tessel_vectorize;
mod transform;
mod widen_bf16;
mod widen_operands;

pub use cpu_model::{CpuModel, VECTOR_REGISTERS};
pub use cpu_target::{NUM_THREADS, VECTOR_BITS};
pub use diagnostics::{emit_error, emit_remark, emit_warning};
pub use grid_to_gpu::{NUM_WARPS, WAVE_SIZE, WORKGROUP_MEMORY};
pub use grid_to_loops::GRID_ORDER;
pub use grid_verify_specs::axis_semantics;
pub use group_reductions::{GROUP, GROUP_TOP, group_partials};
pub use ir::{constant_value, fitting};
pub use matrix_cores::{CHIP, MATRIX_CORES, instruction_for};
pub use registry::{PassDefinition, create_pass, is_registered, register_passes};
pub use tessel_tile::{PAD_TILES, default_tile, host_vector_bits};

/// Every Tessel pass, in pipeline order.
pub static PASSES: &[&PassDefinition] = &[
    &grid_verify_specs::PASS,
    &grid_to_loops::PASS,
    &tessel_pipeline::PASS,
    &block_to_linalg::PASS,
    &widen_operands::PASS,
    &tessel_tile::PASS,
    &tessel_vectorize::PASS,
    &group_reductions::PASS,
    &copies_to_linalg::PASS,
    &fast_math::PASS,
    &widen_bf16::PASS,
    &cpu_target::PASS,
    &contraction_fma::PASS,
    &split_reductions::PASS,
    &matrix_cores::PASS,
    &lds_stage::PASS,
    &gpu_vectorize::PASS,
    &grid_to_gpu::PASS,
    &elide_barriers::PASS,
    &gather_kernels::PASS,
    &emulate_matrix_cores::PASS,
    &emulate_gpu::PASS,
];
