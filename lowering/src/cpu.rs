//! `tessel-to-cpu`: from grid/block IR to the LLVM dialect for the host.

use crate::{LowerError, ONE_SHOT_BUFFERIZE, run_passes};
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

/// Pallas semantics: check the specs, run the grid as loops over blocks,
/// inline the per-call-site kernels; arbitrary-axis loops prefetch the
/// blocks of later steps.
pub const GRID: &[&str] = &["grid-verify-specs", "grid-to-loops", "tessel-prefetch", "inline", "symbol-dce"];

/// Kernel bodies to linalg, contractions as register tiles.
pub const KERNELS: &[&str] = &[
    // Kernel bodies: block ops and element-wise tensor math to linalg.
    "block-to-linalg",
    "func.func(convert-elementwise-to-linalg)",
    // Contractions: narrow operands widened once, then register
    // tiles of FMA outer products (before element-wise fusion,
    // which would fold producers into the contraction and hide it).
    "tessel-widen-operands",
    "tessel-tile",
    "tessel-vectorize",
    "canonicalize",
    "cse",
    "linalg-fuse-elementwise-ops",
    // Reductions as partials and a combine, when a schedule
    // asks (tinygrad's GROUP/GROUPTOP).
    "tessel-group-reductions",
];

/// Tensors to buffers, with deallocation; results stored to a ref are
/// computed in it (no buffer and copy).
pub const BUFFERIZE: &[&str] = &[
    "eliminate-empty-tensors",
    ONE_SHOT_BUFFERIZE,
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
    "tessel-copies-to-linalg",
    "convert-linalg-to-loops",
    "func.func(convert-vector-to-scf{full-unroll=true})",
    // exp/tanh as polynomials, so loops calling them vectorize.
    "tessel-fast-math",
    "tessel-widen-bf16",
    "scf-forall-to-parallel",
    "convert-scf-to-openmp",
    // Thread count and vector width, when a schedule sets them.
    "tessel-cpu-target",
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
/// host's defaults.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Schedule {
    /// Rows x columns of a contraction's register tile (`tessel-tile`).
    pub register_tile: Option<(i64, i64)>,
    /// Blocks in flight along arbitrary axes (`tessel-prefetch`; 1: none).
    pub num_stages: Option<i64>,
    /// k steps per cache block of a contraction (`tessel-tile`; none: all).
    pub k_chunk: Option<i64>,
    /// k steps per iteration of a contraction's k loop (`tessel-tile`; 1).
    pub k_unroll: Option<i64>,
    /// Threads sharing a grid's programs (`tessel-cpu-target`; all cores).
    pub num_threads: Option<i64>,
    /// Vector width in bits, 128, 256 or 512 (`tessel-cpu-target`,
    /// `tessel-tile`; the host's widest).
    pub vector_bits: Option<i64>,
    /// Pad partial register tiles instead of shrinking tiles to divisors
    /// of the block (`tessel-tile`; off).
    pub pad_tiles: Option<bool>,
    /// Programs of consecutive parallel axes in column-major order (the
    /// first axis fastest; `grid-to-loops`; off: row-major).
    pub column_major: Option<bool>,
    /// Partial results per reassociable reduction result
    /// (`tessel-group-reductions`; none: unsplit).
    pub group: Option<i64>,
    /// Each partial a contiguous chunk (GROUPTOP) instead of every P-th
    /// element (GROUP).
    pub group_top: Option<bool>,
}

impl Schedule {
    /// Records the schedule on `module` (as attributes the passes read).
    pub fn apply(&self, context: &Context, module: &mut Module) {
        if let Some((rows, columns)) = self.register_tile {
            let text = format!("array<i64: {rows}, {columns}>");
            let attribute = Attribute::parse(context, &text).expect("a dense i64 array");
            module.as_operation_mut().set_attribute(knobs::REGISTER_TILE.attribute, attribute);
        }
        let knobs = [
            (knobs::NUM_STAGES.attribute, self.num_stages),
            (knobs::K_CHUNK.attribute, self.k_chunk),
            (knobs::K_UNROLL.attribute, self.k_unroll),
            (knobs::NUM_THREADS.attribute, self.num_threads),
            (knobs::VECTOR_BITS.attribute, self.vector_bits),
            (knobs::PAD_TILES.attribute, self.pad_tiles.map(i64::from)),
            (knobs::GRID_ORDER.attribute, self.column_major.map(i64::from)),
            (knobs::GROUP.attribute, self.group),
            (knobs::GROUP_TOP.attribute, self.group_top.map(i64::from)),
        ];
        for (name, value) in knobs {
            if let Some(value) = value {
                let attribute = Attribute::parse(context, &format!("{value} : i64")).expect("an integer");
                module.as_operation_mut().set_attribute(name, attribute);
            }
        }
    }
}

/// `ROWSxCOLUMNS`, both positive.
pub fn parse_register_tile(text: &str) -> Result<(i64, i64), String> {
    let parse = |part: Option<&str>| part.and_then(|p| p.trim().parse::<i64>().ok()).filter(|&size| size > 0);
    let mut parts = text.split('x');
    match (parse(parts.next()), parse(parts.next()), parts.next()) {
        (Some(rows), Some(columns), None) => Ok((rows, columns)),
        _ => Err(format!("expected ROWSxCOLUMNS with positive sizes, got '{text}'")),
    }
}

/// Lowers `module` in place to the LLVM dialect. Every public function gets
/// a C interface (`_mlir_ciface_<name>`) for callers.
pub fn lower(context: &Context, module: &mut Module, padding: Padding) -> Result<(), LowerError> {
    prepare(context, module, padding);
    run_passes(context, module, &pipeline())
}

/// What `lower` does before the pipeline: the padding choice and C
/// interfaces recorded as attributes.
pub fn prepare(context: &Context, module: &mut Module, padding: Padding) {
    if padding == Padding::Poison {
        module.as_operation_mut().set_attribute(knobs::POISON.attribute, Attribute::unit(context));
    }
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
