//! `tessel-to-rocm`: from grid/block IR to AMD GPU code objects (HSACO),
//! and the same kernels emulated on the CPU.
//!
//! The code object is made in-process by upstream's `gpu-module-to-binary`
//! with a ROCm "toolkit" folder Tessel assembles itself from Debian's
//! packages (device libraries from `rocm-device-libs`, LLVM's `ld.lld`): no
//! /opt/rocm needed.

use crate::{LowerError, SEMANTICS, TO_BUFFERS, run_passes};
use melior::{
    Context,
    ir::{BlockLike, Module, attribute::AttributeLike, operation::OperationLike},
};
use mlir_sys::*;
use std::path::{Path, PathBuf};
use tessel_dialects::knobs;
use tessel_runtime::hip::{HostProgram, host_program};

/// The AMD GPUs Tessel compiles for (defined below the passes, which
/// read the same chip).
pub use tessel_dialects::Chip;

/// Options of the ROCm pipeline: the chip, the code object version and
/// the schedule knobs (`num_warps`, `num_stages`, `lds_chunk`,
/// `matrix_cores`, `grid_order`; unset ones take the passes' defaults).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RocmOptions {
    pub chip: Chip,
    /// Code object version: 4, 5 (default; what Debian's HIP runtime
    /// loads) or 6.
    pub code_object: u32,
    pub knobs: knobs::Settings,
}

impl Default for RocmOptions {
    fn default() -> Self {
        RocmOptions { chip: Chip::default(), code_object: 5, knobs: knobs::Settings::default() }
    }
}

impl RocmOptions {
    /// Records the chip (and what it implies: wave size, LDS) and the knobs
    /// on `module` as the attributes the passes read.
    pub fn apply(&self, context: &Context, module: &mut Module) {
        let mut settings = knobs::Settings::default();
        settings
            .set(&knobs::CHIP, knobs::Value::Name(self.chip.name()))
            .set_integer(&knobs::WAVE_SIZE, self.chip.wave_size())
            .set_integer(&knobs::WORKGROUP_MEMORY, self.chip.workgroup_memory());
        for (knob, value) in self.knobs.iter() {
            settings.set(knob, value);
        }
        settings.apply(context, module);
    }
}

// The GPU kernel stages, shared by the code object and the emulator.

/// Pallas semantics: check the specs, define integer division and shifts
/// for every operand, run the grid as loops over blocks, inline the
/// per-call-site kernels.
pub const GRID: &[&str] = &[SEMANTICS, "grid-to-loops", "inline", "symbol-dce"];

/// Kernel bodies to linalg, contractions and reductions as the work-items
/// will compute them.
pub const KERNELS: &[&str] = &[
    "block-to-linalg",
    "func.func(convert-elementwise-to-linalg)",
    // block.dot's one FMA per k step, as the loops will compute it.
    "tessel-contraction-fma",
    "canonicalize",
    "cse",
    // Element-wise values too large for LDS recomputed by each consumer.
    "tessel-recompute-large-values",
    "linalg-fuse-elementwise-ops",
    // Reductions shared by the work-items (partials in LDS).
    "tessel-split-reductions",
    "canonicalize",
];

/// No deallocation: every buffer a program allocates becomes a slot of its
/// workgroup's memory (grid-to-gpu).
pub const BUFFERIZE: &[&str] = &[TO_BUFFERS, "canonicalize", "cse"];

/// Programs as workgroups, block work as work-items.
pub const WORKGROUPS: &[&str] = &[
    // Compare-and-swaps to their atomic regions.
    "tessel-expand-atomics",
    // Reduction partials held one per lane folded across lanes.
    "tessel-cross-lane-reductions",
    // A contraction accumulated across an arbitrary grid axis: one over
    // all of its k (one k-chunk pipeline).
    "tessel-merge-k-steps",
    // Contractions on MFMA/WMMA where they compute block.dot exactly,
    // accumulators in registers; the others on FMAs over register tiles
    // per work-item where the block allows, else read k-chunks of their
    // operands from LDS into FMA loops (tessel-lds-stage).
    "tessel-matrix-cores",
    "tessel-register-tiles",
    "canonicalize",
    // Output blocks revisited along arbitrary axes stay in registers.
    "tessel-resident-accumulators",
    "canonicalize",
    "tessel-lds-stage",
    "canonicalize",
    "tessel-copies-to-linalg",
    // Element-wise work in 16-byte vectors per work-item.
    "tessel-gpu-vectorize",
    "canonicalize",
    // Partial blocks past the arrays' ends on views where buffer accesses
    // read zeros there and write nothing (the staged version goes).
    "tessel-past-end-views",
    "canonicalize",
    "convert-linalg-to-parallel-loops",
    "canonicalize",
    // Programs -> workgroups, block work -> work-items.
    "grid-to-gpu",
    // Long per-item loops unrolled, their reads of unwritten memory first.
    "tessel-batch-loads",
    "canonicalize",
    "tessel-elide-barriers",
    // Vector accesses of global memory through buffer resources: 32-bit
    // offsets from one descriptor.
    "tessel-buffer-resources",
];

/// The stage that writes the code object; everything before it is the
/// `tessel-to-rocm` pipeline.
pub const CODE_OBJECT: &str = "code-object";

/// The whole ROCm pipeline for `options.chip`, in named stages: the kernel
/// stages, the kernels outlined into one `gpu.module` and lowered to
/// ROCDL, and the code object in `format` (`bin`, `isa` or `llvm`) made
/// with the toolkit at `toolkit`.
pub fn stages(options: &RocmOptions, format: &str, toolkit: &Path) -> Vec<(&'static str, Vec<String>)> {
    let chip = options.chip.name();
    let abi = options.code_object * 100;
    let wave = options.chip.wave_size();
    let wave64 = if wave == 64 { "true" } else { "false" };
    let owned = |passes: &[&str]| passes.iter().map(|pass| pass.to_string()).collect::<Vec<_>>();
    vec![
        ("grid", owned(GRID)),
        ("kernels", owned(KERNELS)),
        ("bufferize", owned(BUFFERIZE)),
        ("workgroups", owned(WORKGROUPS)),
        (
            "outline",
            vec![
                // Constants into the kernels rather than kernel arguments.
                "gpu-launch-sink-index-computations".into(),
                "gpu-kernel-outlining".into(),
                "tessel-gather-kernels".into(),
                format!("rocdl-attach-target{{chip={chip} abi={abi} O=3 wave64={wave64}}}"),
            ],
        ),
        (
            "rocdl",
            vec![
                // Vector transfers become vector loads/stores before the
                // ROCDL conversion (which does not lower them).
                format!(
                    "gpu.module(tessel-lower-subgroup-reduce{{chipset={chip} subgroup-size={wave}}},expand-strided-metadata,convert-vector-to-scf{{full-unroll=true}},lower-affine,\
                     convert-scf-to-cf,convert-vector-to-llvm,\
                     convert-gpu-to-rocdl{{chipset={chip} use-bare-ptr-memref-call-conv=true runtime=HIP}},\
                     reconcile-unrealized-casts)"
                ),
                "canonicalize".into(),
            ],
        ),
        (CODE_OBJECT, vec![format!("gpu-module-to-binary{{format={format} toolkit={}}}", toolkit.display())]),
    ]
}

/// The stages of `options`' pipeline up to ROCDL (all but the code object).
fn to_rocdl(options: &RocmOptions, format: &str, toolkit: &Path) -> Vec<(&'static str, Vec<String>)> {
    stages(options, format, toolkit).into_iter().filter(|(name, _)| *name != CODE_OBJECT).collect()
}

/// The pipeline up to ROCDL (before the code object), as one string.
pub fn pipeline(options: &RocmOptions) -> String {
    crate::join_stages(&to_rocdl(options, "bin", Path::new("<toolkit>")))
}

/// The emulator's pipeline in named stages: the GPU kernel stages, then the
/// launches as CPU loops and the CPU pipeline's last stages.
pub fn emulation_stages() -> [(&'static str, &'static [&'static str]); 7] {
    [
        ("grid", GRID),
        ("kernels", KERNELS),
        ("bufferize", BUFFERIZE),
        ("workgroups", WORKGROUPS),
        (
            "emulate",
            &[
                "tessel-emulate-buffers",
                "tessel-emulate-matrix-cores",
                "tessel-emulate-subgroups",
                // Every access checked against its memory's extent.
                "tessel-emulate-bounds-checks",
                "tessel-emulate-gpu",
                "canonicalize",
                "cse",
            ],
        ),
        ("loops", crate::cpu::LOOPS),
        ("llvm-dialect", crate::cpu::LLVM_DIALECT),
    ]
}

/// (name, description, pipeline) of the named pipeline.
pub(crate) fn registration() -> (&'static str, &'static str, String) {
    (
        "tessel-to-rocm",
        "Lower Tessel grid/block IR to the ROCDL dialect in one gpu.module (gfx90a; tessel compile sets the chip)",
        pipeline(&RocmOptions::default()),
    )
}

/// What `compile` produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// The module after lowering to ROCDL (host side still in GPU dialect).
    Mlir,
    /// The device module's LLVM IR, as text.
    LlvmIr,
    /// AMDGPU assembly.
    Assembly,
    /// The HSACO code object.
    CodeObject,
}

/// Lowers `module` for `options.chip` and returns the requested output.
pub fn compile(
    context: &Context,
    module: &mut Module,
    options: &RocmOptions,
    output: Output,
) -> Result<Vec<u8>, LowerError> {
    options.apply(context, module);
    let toolkit = toolkit().map_err(LowerError::Pipeline)?;
    let format = match output {
        Output::Mlir | Output::CodeObject => "bin",
        Output::LlvmIr => "llvm",
        Output::Assembly => "isa",
    };
    let stages = stages(options, format, &toolkit);
    let (before, code_object): (Vec<_>, Vec<_>) = stages.into_iter().partition(|(name, _)| *name != CODE_OBJECT);
    run_passes(context, module, &crate::join_stages(&before))?;
    if output == Output::Mlir {
        return Ok(format!("{}\n", module.as_operation()).into_bytes());
    }
    run_passes(context, module, &crate::join_stages(&code_object))?;
    // No grid call, no launch: nothing became device code.
    let object = binary_object(module).ok_or(LowerError::NoKernels)?;
    if output == Output::LlvmIr {
        let text = crate::emit::bitcode_to_text(&object).map_err(|error| LowerError::Pipeline(error.to_string()))?;
        return Ok(text.into_bytes());
    }
    Ok(object)
}

/// Compiles `module` to a code object and reads what the host does in
/// `entry` (scratch allocations and launches), for the HIP launcher.
pub fn compile_for_launch(
    context: &Context,
    module: &mut Module,
    options: &RocmOptions,
    entry: &str,
) -> Result<(Vec<u8>, HostProgram), LowerError> {
    let object = compile(context, module, options, Output::CodeObject)?;
    let program = host_program(module, entry).map_err(LowerError::Pipeline)?;
    Ok((object, program))
}

/// The contents of the (single) `gpu.binary`'s object.
fn binary_object(module: &Module) -> Option<Vec<u8>> {
    let body = module.body();
    let mut op = body.first_operation();
    while let Some(current) = op {
        if current.name().as_string_ref().as_str() == Ok("gpu.binary") {
            let objects = current.attribute("objects").map_or(MlirAttribute { ptr: std::ptr::null() }, |a| a.to_raw());
            // SAFETY: a verified `gpu.binary` has an array of
            // `#gpu.object`s (checked non-empty); the object's bytes live in
            // the context while they are copied out.
            unsafe {
                if objects.ptr.is_null() || mlirArrayAttrGetNumElements(objects) < 1 {
                    return None;
                }
                let object = mlirGPUObjectAttrGetObject(mlirArrayAttrGetElement(objects, 0));
                return Some(std::slice::from_raw_parts(object.data as *const u8, object.length).to_vec());
            }
        }
        op = current.next_in_block();
    }
    None
}

/// Lowers `module` for the emulator: GPU kernels as CPU loops, to the LLVM
/// dialect, ready for the JIT.
pub fn lower_emulated(context: &Context, module: &mut Module, options: &RocmOptions) -> Result<(), LowerError> {
    options.apply(context, module);
    // The GPU stages first: every grid call must have become a launch, or
    // the "emulated GPU" would silently run host code.
    let stages = emulation_stages();
    let (gpu, host) = stages.split_at(stages.iter().position(|(name, _)| *name == "emulate").unwrap_or(stages.len()));
    let calls = count_named(module, "grid.call");
    run_passes(context, module, &crate::join_stages(gpu))?;
    if calls > 0 && count_named(module, "gpu.launch") == 0 {
        return Err(LowerError::NoLaunch(calls));
    }
    run_passes(context, module, &crate::join_stages(host))
}

/// How many operations named `name` `module` holds.
fn count_named(module: &Module, name: &str) -> usize {
    let mut count = 0;
    module.as_operation().walk(melior::ir::operation::WalkOrder::PreOrder, |op| {
        count += usize::from(op.name().as_string_ref().as_str() == Ok(name));
        melior::ir::operation::WalkResult::Advance
    });
    count
}

/// Where Debian's `rocm-device-libs` put the AMDGPU bitcode libraries.
const DEVICE_LIBS: [&str; 2] = ["/usr/lib/x86_64-linux-gnu/amdgcn", "/usr/lib/amdgcn"];
/// LLVM's linker, which turns the relocatable object into a code object.
const LINKERS: [&str; 2] = ["/usr/lib/llvm-22/bin/ld.lld", "/usr/bin/ld.lld-22"];

/// A ROCm toolkit folder as `gpu-module-to-binary` expects it
/// (`amdgcn/bitcode/*.bc`, `llvm/bin/ld.lld`), made of symlinks to Debian's
/// files: `$TESSEL_ROCM_TOOLKIT` if set, else a folder in the temp dir.
pub fn toolkit() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os("TESSEL_ROCM_TOOLKIT") {
        return Ok(PathBuf::from(path));
    }
    let device_libs = DEVICE_LIBS
        .iter()
        .map(Path::new)
        .find(|path| path.join("bitcode/ocml.bc").exists())
        .ok_or("AMDGPU device libraries not found: install Debian's rocm-device-libs")?;
    let linker = LINKERS.iter().map(Path::new).find(|path| path.exists()).ok_or("ld.lld not found: install lld-22")?;
    let user = std::env::var("USER").unwrap_or_else(|_| "user".into());
    let folder = std::env::temp_dir().join(format!("tessel-rocm-toolkit-{user}"));
    let bin = folder.join("llvm/bin");
    std::fs::create_dir_all(&bin).map_err(|e| format!("cannot create {}: {e}", bin.display()))?;
    // Concurrent compilers may race to make the same links: whoever
    // loses finds them made.
    for (link, target) in [(folder.join("amdgcn"), device_libs), (bin.join("ld.lld"), linker)] {
        if std::fs::read_link(&link).ok().as_deref() != Some(target) {
            let _ = std::fs::remove_file(&link);
            if let Err(error) = std::os::unix::fs::symlink(target, &link)
                && std::fs::read_link(&link).ok().as_deref() != Some(target)
            {
                return Err(format!("cannot link {} -> {}: {error}", link.display(), target.display()));
            }
        }
    }
    Ok(folder)
}
