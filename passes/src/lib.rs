//! Tessel's own MLIR passes, one per file, registered by name.
//!
//! The MLIR C API cannot register a pass by name, so each Rust pass is handed
//! to a small C++ entry point (`tesselRegisterPass`) with a factory that
//! builds a fresh external pass; after [`register_passes`], `--<argument>`
//! flags and `--pass-pipeline` strings reach Tessel passes like upstream
//! ones (in `tessel-opt` and in any pass manager of the process).

#![deny(clippy::undocumented_unsafe_blocks)]

mod block;
mod cpu;
mod emulate;
mod gpu;
mod grid;
mod support;
mod transforms;

pub use cpu::caches::Caches;
pub use cpu::cpu_model::CpuModel;
pub use cpu::tessel_group_reductions::group_partials;
pub use cpu::tessel_tile::{default_tile, host_vector_bits};
pub use grid::grid_verify_specs::axis_semantics;
pub use support::diagnostics::{emit_error, emit_remark, emit_warning};
pub use support::ir::{element_bits, fitting};
pub use support::registry::{PassAlias, PassDefinition, PassError, create_pass, is_registered, register_passes};

/// Old names of renamed passes, registered for one more release.
pub static ALIASES: &[&PassAlias] = &[&grid::tessel_prefetch::DEPRECATED_ALIAS];

/// Every Tessel pass, in pipeline order.
pub static PASSES: &[&PassDefinition] = &[
    &grid::grid_verify_specs::PASS,
    &transforms::tessel_strip_signedness::PASS,
    &transforms::tessel_total_division::PASS,
    &transforms::tessel_saturating_shifts::PASS,
    &block::tessel_check_ref_accesses::PASS,
    &grid::grid_to_loops::PASS,
    &block::tessel_detect_races::PASS,
    &grid::tessel_prefetch::PASS,
    &cpu::tessel_true_masks::PASS,
    &block::block_to_linalg::PASS,
    &cpu::tessel_vnni::PASS,
    &cpu::tessel_widen_operands::PASS,
    &cpu::tessel_sink_into_branches::PASS,
    &cpu::tessel_elementwise_in_place::PASS,
    &cpu::tessel_tile::PASS,
    &cpu::tessel_vectorize::PASS,
    &cpu::tessel_group_reductions::PASS,
    &cpu::tessel_minmax_as_integers::PASS,
    &transforms::tessel_unshare_inits::PASS,
    &transforms::tessel_share_ref_tensors::PASS,
    &cpu::tessel_hoist_packing::PASS,
    &transforms::tessel_expand_atomics::PASS,
    &transforms::tessel_copies_to_linalg::PASS,
    &cpu::tessel_contiguous_copies::PASS,
    &cpu::tessel_vectorize_copies::PASS,
    &cpu::tessel_fast_math::PASS,
    &cpu::tessel_libm_calls::PASS,
    &cpu::tessel_widen_bf16::PASS,
    &cpu::tessel_core_threads::PASS,
    &cpu::tessel_cpu_target::PASS,
    &cpu::tessel_check_bounds::PASS,
    &gpu::tessel_contraction_fma::PASS,
    &gpu::tessel_recompute_large_values::PASS,
    &transforms::tessel_split_reductions::PASS,
    &gpu::tessel_cross_lane_reductions::PASS,
    &transforms::tessel_merge_k_steps::PASS,
    &gpu::tessel_matrix_cores::PASS,
    &gpu::tessel_register_tiles::PASS,
    &gpu::tessel_resident_accumulators::PASS,
    &gpu::tessel_lds_stage::PASS,
    &gpu::tessel_gpu_vectorize::PASS,
    &gpu::tessel_past_end_views::PASS,
    &gpu::grid_to_gpu::PASS,
    &gpu::tessel_batch_loads::PASS,
    &gpu::tessel_elide_barriers::PASS,
    &gpu::tessel_gather_kernels::PASS,
    &gpu::tessel_buffer_resources::PASS,
    &emulate::tessel_emulate_matrix_cores::PASS,
    &emulate::tessel_emulate_subgroups::PASS,
    &emulate::tessel_emulate_buffers::PASS,
    &emulate::tessel_emulate_bounds_checks::PASS,
    &emulate::tessel_emulate_gpu::PASS,
];

/// A pass written in C++ (`dialects/cpp`; registered with the MLIR
/// registry by `tesselRegisterCppPasses`, called from [`register_passes`]).
pub struct CppPass {
    pub argument: &'static str,
    /// The op it runs on: `builtin.module`, or `gpu.module` (nested there
    /// in a pipeline).
    pub anchor: &'static str,
    /// Its source file, from the repository's root.
    pub source: &'static str,
    /// The group of its lit test, `test/<group>/<argument>.mlir`.
    pub group: &'static str,
}

/// Every pass written in C++: what the C API cannot reach (upstream
/// patterns that exist only as C++ `populate...` functions).
pub static CPP_PASSES: &[CppPass] = &[
    CppPass {
        argument: "tessel-fuse-elementwise",
        anchor: "builtin.module",
        source: "dialects/cpp/TesselFuseElementwise.cpp",
        group: "cpu",
    },
    CppPass {
        argument: "tessel-lower-subgroup-reduce",
        anchor: "gpu.module",
        source: "dialects/cpp/TesselLowerSubgroupReduce.cpp",
        group: "gpu",
    },
];

#[cfg(test)]
mod layout_tests {
    use std::path::Path;

    /// The house rule (CONTRIBUTING.md): each pass lives in
    /// `passes/src/<group>/<argument>.rs` (dashes as underscores), its lit
    /// test at `test/<group>/<argument>.mlir`, and no pass at the root.
    #[test]
    fn every_pass_is_filed_under_its_group_and_argument() {
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("../test");
        for definition in super::PASSES {
            let file = format!("{}.rs", definition.argument.replace('-', "_"));
            let groups: Vec<_> = std::fs::read_dir(&source)
                .unwrap()
                .map(|entry| entry.unwrap().path())
                .filter(|path| path.join(&file).is_file())
                .collect();
            assert_eq!(groups.len(), 1, "{} should be in exactly one group directory", file);
            let text = std::fs::read_to_string(groups[0].join(&file)).unwrap();
            assert!(text.contains(&format!("argument: \"{}\"", definition.argument)), "{file} defines another pass");
            let group = groups[0].file_name().unwrap().to_str().unwrap();
            let lit = tests.join(group).join(format!("{}.mlir", definition.argument));
            assert!(lit.is_file(), "the lit test of {} belongs at {}", definition.argument, lit.display());
        }
        let at_root: Vec<_> = std::fs::read_dir(&source)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.is_file() && path.file_name().unwrap() != "lib.rs")
            .collect();
        assert!(at_root.is_empty(), "only lib.rs belongs at the root of passes/src: {at_root:?}");
        for pass in super::CPP_PASSES {
            let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
            let text = std::fs::read_to_string(root.join(pass.source)).unwrap();
            assert!(text.contains(&format!("return \"{}\"", pass.argument)), "{} defines another pass", pass.source);
            let lit = tests.join(pass.group).join(format!("{}.mlir", pass.argument));
            assert!(lit.is_file(), "the lit test of {} belongs at {}", pass.argument, lit.display());
        }
    }
}
