//! `tessel-to-cpu`: from grid/block IR to the LLVM dialect for the host.

use crate::{LowerError, SEMANTICS, TO_BUFFERS, run_passes};
use melior::{
    Context,
    ir::{
        BlockLike, Module,
        attribute::Attribute,
        operation::{OperationLike, OperationMutLike},
    },
};
use tessel_dialects::knobs;

// The CPU pipeline's stages, each named so other pipelines (the emulated
// GPU) can ask for them by name.

/// Pallas semantics: check the specs, define integer division and shifts
/// for every operand, check kernels' ref accesses when asked
/// (`tessel.out_of_bounds_reads`), run the grid as loops over blocks,
/// report the kernels' DMAs, accesses and semaphores to the race detector
/// when asked (`tessel.detect_races`: after grid-to-loops, which makes a
/// core mesh's semaphore ops name the counters they use), inline the
/// per-call-site kernels; arbitrary-axis loops prefetch the blocks of
/// later steps.
pub const GRID: &[&str] = &[
    SEMANTICS,
    "tessel-check-ref-accesses",
    "grid-to-loops",
    "tessel-detect-races",
    "tessel-prefetch",
    "inline",
    "symbol-dce",
];

/// Kernel bodies to linalg, contractions as register tiles.
pub const KERNELS: &[&str] = &[
    // Constants folded into the inlined kernels first: windows at offsets
    // that became constants (single-trip loops unrolled, `0 * n + iota`)
    // are recognized in bounds, masks true everywhere dropped.
    "canonicalize",
    "cse",
    "tessel-true-masks",
    // Kernel bodies: block ops and element-wise tensor math to linalg.
    "block-to-linalg",
    "func.func(convert-elementwise-to-linalg)",
    // K on the grid accumulating only the contraction: one contraction
    // over all of k (the register tiles keep their accumulators across
    // it); canonicalize first takes the first step's fill value out of
    // its scf.if.
    "canonicalize",
    "tessel-merge-k-steps",
    // Contractions: 8-bit ones in VNNI's form where the CPU has it,
    // other narrow operands widened once, then register tiles of FMA
    // outer products or vpdpbusd (before element-wise fusion, which
    // would fold producers into the contraction and hide it). Their
    // element-wise consumers first become one epilogue the tiles
    // compute: a contraction read only in an scf.if's branches is
    // computed in them, and element-wise chains are fused (never into a
    // contraction).
    "tessel-vnni",
    "tessel-widen-operands",
    "tessel-sink-into-branches",
    "tessel-fuse-elementwise",
    "tessel-tile",
    "tessel-vectorize",
    "canonicalize",
    "cse",
    "linalg-fuse-elementwise-ops",
    // Reductions as partials and a combine, when a schedule
    // asks (tinygrad's GROUP/GROUPTOP).
    "tessel-group-reductions",
    // Float max/min reductions on integer keys (x86 has no NaN-propagating
    // max before AVX10.2); after grouping, which splits linalg.reduce ops.
    "tessel-minmax-as-integers",
    // Element-wise results computed in an operand's buffer where it is
    // dead afterwards (no allocation per loop trip).
    "tessel-elementwise-in-place",
];

/// Tensors to buffers, with deallocation; results stored to a ref are
/// computed in it (no buffer and copy).
pub const BUFFERIZE: &[&str] = &[
    TO_BUFFERS,
    "canonicalize",
    "cse",
    "ownership-based-buffer-deallocation",
    "canonicalize",
    "buffer-deallocation-simplification",
    "bufferization-lower-deallocations",
    "cse",
    "canonicalize",
];

/// Loops; parallel grid axes onto OpenMP threads.
pub const LOOPS: &[&str] = &[
    // Panels packed once per call where programs would repack them (the
    // B panel of every row block), while loops are still scf loops.
    "tessel-hoist-packing",
    // Compare-and-swaps to their atomic regions, now that deallocation
    // (which rejects such regions) is done.
    "tessel-expand-atomics",
    "tessel-copies-to-linalg",
    // Copies of contiguous windows (DMA pages, whole-row blocks) as one
    // memcpy each, not loops LLVM unrolls.
    "tessel-contiguous-copies",
    // The other copies between disjoint windows (packed panels) move
    // rows as vectors: LLVM leaves their loops scalar.
    "tessel-vectorize-copies",
    "convert-linalg-to-loops",
    "func.func(convert-vector-to-scf{full-unroll=true})",
    // exp/tanh as polynomials, so loops calling them vectorize.
    "tessel-fast-math",
    // expm1/log1p/erf/cbrt as the C library's (upstream loses precision
    // or cannot lower them); before bf16 conversions are rewritten, as it
    // makes some.
    "tessel-libm-calls",
    // bf16 arithmetic in f32 (LLVM would do so too, but round each result
    // with compiler-rt's __truncsfbf2 where the CPU has no AVX-512 BF16,
    // a symbol the JIT cannot resolve), its conversions then as bits.
    "arith-emulate-unsupported-floats{source-types=bf16 target-type=f32}",
    "tessel-widen-bf16",
    // A core mesh's cores on a thread each, before the other foralls
    // become OpenMP loops on the schedule's thread count.
    "tessel-core-threads",
    "scf-forall-to-parallel",
    "convert-scf-to-openmp",
    // Thread count and vector width, when a schedule sets them.
    "tessel-cpu-target",
    // Every access's bounds, under `tessel run --bounds-checks`.
    "tessel-check-bounds",
];

/// Down to the LLVM dialect.
pub const LLVM_DIALECT: &[&str] = &[
    "expand-strided-metadata",
    "lower-affine",
    "convert-vector-to-llvm",
    "finalize-memref-to-llvm{use-aligned-alloc=1}",
    "convert-scf-to-cf",
    "convert-math-to-llvm",
    "convert-arith-to-llvm",
    "convert-index-to-llvm",
    "convert-ub-to-llvm",
    "convert-func-to-llvm",
    "convert-cf-to-llvm",
    "convert-openmp-to-llvm",
    "reconcile-unrealized-casts",
];

/// The whole CPU pipeline, in order, in named stages (benchmarks time each
/// stage; `pipeline` joins them).
pub fn stages() -> [(&'static str, &'static [&'static str]); 5] {
    [("grid", GRID), ("kernels", KERNELS), ("bufferize", BUFFERIZE), ("loops", LOOPS), ("llvm-dialect", LLVM_DIALECT)]
}

/// The whole CPU pipeline as one pass-pipeline string.
pub fn pipeline() -> String {
    crate::join_stages(&stages())
}

/// (name, description, pipeline) of the named pipeline; its passes are
/// added to the module's pass manager it is used in.
pub(crate) fn registration() -> (&'static str, &'static str, String) {
    ("tessel-to-cpu", "Lower Tessel grid/block IR to the LLVM dialect for multi-core CPUs", pipeline())
}

/// How compiled code pads partial blocks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Padding {
    /// Zeros (the padding is unspecified in Pallas).
    #[default]
    Zero,
    /// NaN for floats, the minimum for integers, like the interpreter.
    Poison,
}

/// Schedule knobs: how the kernels run, never what they compute (every
/// schedule gives the same bits, except that `group` may reassociate float
/// block reductions, whose order is unspecified). Unset knobs take the
/// passes' defaults; the knobs themselves are the table's
/// (`tessel_dialects::knobs`), and `apply` records them on a module.
pub type Schedule = knobs::Settings;

/// Code for the host (no `tessel.vector_registers`: not compiled for a
/// named CPU, whose width `tessel compile --cpu` records) never gets
/// vectors wider than the host runs: a module or schedule asking for
/// 512-bit vectors on an AVX2 host (or as `TESSEL_CPU=x86-64-v3` code) gets
/// 256-bit ones, where 512-bit ones would not all lower (8-bit
/// contractions' `vpmaddwd` form aborted LLVM).
fn clamp_vector_bits(context: &Context, module: &mut Module) {
    let operation = module.as_operation();
    let (Some(bits), None) =
        (knobs::VECTOR_BITS.integer_on(&operation), knobs::VECTOR_REGISTERS.integer_on(&operation))
    else {
        return;
    };
    let widest = tessel_passes::CpuModel::host().vector_bits;
    if bits > widest {
        knobs::VECTOR_BITS.set_integer_on(context, module, widest);
    }
}

/// Lowers `module` in place to the LLVM dialect. Every public function gets
/// a C interface (`_mlir_ciface_<name>`) for callers.
pub fn lower(context: &Context, module: &mut Module, padding: Padding) -> Result<(), LowerError> {
    prepare(context, module, padding);
    run_passes(context, module, &pipeline())
}

/// What `lower` does before the pipeline: the padding choice and C
/// interfaces recorded as attributes, and a vector width the CPU runs.
pub fn prepare(context: &Context, module: &mut Module, padding: Padding) {
    if padding == Padding::Poison {
        module.as_operation_mut().set_attribute(knobs::POISON.attribute, Attribute::unit(context));
    }
    clamp_vector_bits(context, module);
    let unit = Attribute::unit(context);
    let body = module.body();
    let mut function = body.first_operation_mut();
    while let Some(mut op) = function {
        if op.name().as_string_ref().as_str() == Ok("func.func") && !op.has_attribute("sym_visibility") {
            op.set_attribute("llvm.emit_c_interface", unit);
        }
        function = op.next_in_block_mut();
    }
}
