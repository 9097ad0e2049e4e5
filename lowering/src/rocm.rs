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
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use tessel_dialects::RawOp;
use tessel_dialects::knobs;
use tessel_runtime::hip::{HostProgram, HostStep, HostValue, Launch, LaunchArg};

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

/// The integer value of an `arith.constant`, if `value` is one.
fn constant_i64(value: MlirValue) -> Option<i64> {
    // SAFETY: `value` is a live value of the host function being walked.
    if unsafe { mlirValueIsAOpResult(value) } {
        // SAFETY: checked to be an operation's result.
        let definition = view(unsafe { mlirOpResultGetOwner(value) });
        if definition.name() == "arith.constant" && definition.has("value") {
            return Some(definition.integer("value"));
        }
    }
    None
}

/// A view of an operation of the module `host_program` walks.
fn view(op: MlirOperation) -> RawOp {
    // SAFETY: the walk only holds handles of the module it borrows for its
    // whole run, which nothing changes or drops meanwhile.
    unsafe { RawOp::from_raw(op) }
}

/// What the host does in the lowered host function `entry`: scratch
/// allocations and launches, in order, and the integer arithmetic and
/// array reads that size grids given as values. Host loops with constant
/// bounds (ordered grid axes around parallel programs) are unrolled into
/// their launches, each passing its step as an index argument; loops whose
/// bounds are known only at run time stay loops.
pub fn host_program(module: &Module, entry: &str) -> Result<HostProgram, String> {
    let function =
        tessel_dialects::find_symbol(&module.as_operation(), entry).ok_or_else(|| format!("no function @{entry}"))?;
    let body = view(function.to_raw()).region_block(0);
    let mut walk = HostWalk {
        // SAFETY: `body` is the entry block of a function of `module`,
        // which outlives the walk; indices stay below the argument count.
        arguments: unsafe { (0..mlirBlockGetNumArguments(body)).map(|i| mlirBlockGetArgument(body, i)).collect() },
        scratch: Vec::new(),
        values: HashMap::new(),
        registers: 0,
    };
    let steps = walk.block(body)?;
    Ok(HostProgram { steps, registers: walk.registers })
}

/// What `host_program` knows while walking the host code.
struct HostWalk {
    arguments: Vec<MlirValue>,
    scratch: Vec<MlirValue>,
    /// Host integers known so far (constants, unrolled loop steps, values
    /// the program computes in registers), by value.
    values: HashMap<usize, HostValue>,
    registers: usize,
}

impl HostWalk {
    fn block(&mut self, block: MlirBlock) -> Result<Vec<HostStep>, String> {
        let mut steps = Vec::new();
        // SAFETY: `block` belongs to the module being walked, which is
        // neither changed nor dropped during the walk.
        let mut op = unsafe { mlirBlockGetFirstOperation(block) };
        while !op.ptr.is_null() {
            self.operation(op, &mut steps)?;
            // SAFETY: `op` is a live operation of that block (checked non-null).
            op = unsafe { mlirOperationGetNextInBlock(op) };
        }
        Ok(steps)
    }

    /// The host integer `value` is.
    fn value(&self, value: MlirValue) -> Result<HostValue, String> {
        constant_i64(value)
            .map(HostValue::Constant)
            .or_else(|| self.values.get(&(value.ptr as usize)).copied())
            .ok_or_else(|| "the HIP launcher cannot compute a value of the host code".to_string())
    }

    fn register(&mut self) -> usize {
        self.registers += 1;
        self.registers - 1
    }

    fn operation(&mut self, op: MlirOperation, steps: &mut Vec<HostStep>) -> Result<(), String> {
        let raw = view(op);
        let name = raw.name();
        match name.as_str() {
            "arith.constant" | "gpu.dealloc" | "memref.dealloc" | "func.return" | "scf.yield" => {}
            "gpu.alloc" => {
                // SAFETY: a `gpu.alloc` of the lowered host code has one
                // result, a rank-1 `memref<Nxi8>` or `memref<?xi8>` sized
                // by its one operand (grid-to-gpu makes it so).
                let memref = unsafe { mlirValueGetType(raw.results()[0]) };
                // SAFETY: as above: a shaped type of rank 1.
                let size = unsafe { mlirShapedTypeGetDimSize(memref, 0) };
                let bytes = match raw.operands().last() {
                    Some(&operand) if size < 0 => self.value(operand)?,
                    _ => HostValue::Constant(size),
                };
                steps.push(HostStep::Alloc { scratch: self.scratch.len(), bytes });
                self.scratch.push(raw.results()[0]);
            }
            "memref.load" => {
                // An integer element of an entry array: a grid size.
                let operands = raw.operands();
                let array = self
                    .arguments
                    .iter()
                    .position(|argument| argument.ptr == operands[0].ptr)
                    .ok_or("the host code reads memory that is not an argument")?;
                let memref = operands[0];
                // SAFETY: a `memref.load`'s first operand is a ranked memref
                // (of the entry's identity layout); dimensions below its rank.
                let (shape, element) = unsafe {
                    let r#type = mlirValueGetType(memref);
                    let shape: Vec<i64> = (0..mlirShapedTypeGetRank(r#type))
                        .map(|d| mlirShapedTypeGetDimSize(r#type, d as isize))
                        .collect();
                    (shape, mlirShapedTypeGetElementType(r#type))
                };
                // SAFETY: a type of the module.
                let bits = unsafe { mlirTypeIsAInteger(element).then(|| mlirIntegerTypeGetWidth(element)) };
                let bytes = match bits {
                    Some(bits @ (8 | 16 | 32 | 64)) => bits as usize / 8,
                    _ => return Err("the host code reads an array of other than 8- to 64-bit integers".into()),
                };
                // The row-major element offset.
                let mut offset = HostValue::Constant(0);
                for (d, &index) in operands[1..].iter().enumerate() {
                    let stride: i64 = shape[d + 1..].iter().product();
                    let scaled = self.arith(steps, "arith.muli", self.value(index)?, HostValue::Constant(stride))?;
                    offset = self.arith(steps, "arith.addi", offset, scaled)?;
                }
                let register = self.register();
                steps.push(HostStep::Load { register, array, offset, bytes });
                self.values.insert(raw.results()[0].ptr as usize, HostValue::Register(register));
            }
            _ if tessel_runtime::hip::is_host_arith(&name) => {
                let operands = raw.operands();
                let lhs = self.value(operands[0])?;
                let rhs = operands.get(1).map(|&rhs| self.value(rhs)).transpose()?.unwrap_or(HostValue::Constant(0));
                let result = self.arith(steps, &name, lhs, rhs)?;
                self.values.insert(raw.results()[0].ptr as usize, result);
            }
            "scf.for" => {
                let operands = raw.operands();
                if operands.len() > 3 {
                    return Err("host loops must carry no values".into());
                }
                let (lower, upper, step) =
                    (self.value(operands[0])?, self.value(operands[1])?, self.value(operands[2])?);
                let body = raw.region_block(0);
                // SAFETY: an `scf.for` body's first argument is its
                // induction variable.
                let iv = unsafe { mlirBlockGetArgument(body, 0) };
                match (lower, upper, step) {
                    (HostValue::Constant(lower), HostValue::Constant(upper), HostValue::Constant(step)) => {
                        if step <= 0 {
                            return Err("host loops must count up".into());
                        }
                        let mut at = lower;
                        while at < upper {
                            self.values.insert(iv.ptr as usize, HostValue::Constant(at));
                            steps.extend(self.block(body)?);
                            at += step;
                        }
                    }
                    _ => {
                        let register = self.register();
                        self.values.insert(iv.ptr as usize, HostValue::Register(register));
                        let body = self.block(body)?;
                        steps.push(HostStep::Loop { register, lower, upper, step, body });
                    }
                }
            }
            "gpu.launch_func" => {
                // asyncDependencies, grid x y z, block x y z, cluster x y z,
                // dynamic shared memory, kernel operands, async object.
                let segments = raw.segments();
                let operands = raw.operands();
                let start = |group: usize| segments[..group].iter().sum::<usize>();
                let grid =
                    [self.value(operands[start(1)])?, self.value(operands[start(2)])?, self.value(operands[start(3)])?];
                let size = |group: usize| match constant_i64(operands[start(group)]) {
                    Some(size) => u32::try_from(size).map_err(|_| format!("workgroup size {size}")),
                    None => Err("workgroup sizes must be constants".to_string()),
                };
                let workgroup = [size(4)?, size(5)?, size(6)?];
                let kernel_operands = &operands[start(11)..start(11) + segments[11]];
                let args = kernel_operands.iter().map(|value| self.argument(*value)).collect::<Result<_, _>>()?;
                // SAFETY: `gpu.launch_func` verifies that it has a `kernel`
                // symbol reference attribute (non-null).
                let kernel = unsafe { melior::ir::Attribute::from_raw(raw.attribute("kernel")) }.to_string();
                let kernel = kernel.rsplit("::@").next().unwrap_or("").trim_start_matches('@').to_string();
                steps.push(HostStep::Launch(Launch { kernel, grid, workgroup, args }));
            }
            other => return Err(format!("the HIP launcher does not run host operation '{other}'")),
        }
        Ok(())
    }

    /// `op` of two host integers: folded when both are constants, else a
    /// step computing a new register.
    fn arith(
        &mut self,
        steps: &mut Vec<HostStep>,
        op: &str,
        lhs: HostValue,
        rhs: HostValue,
    ) -> Result<HostValue, String> {
        if let (HostValue::Constant(lhs), HostValue::Constant(rhs)) = (lhs, rhs) {
            return tessel_runtime::hip::host_arith(op, lhs, rhs)
                .map(HostValue::Constant)
                .ok_or_else(|| format!("'{op}' of {lhs} and {rhs} in the host code fails"));
        }
        let register = self.register();
        steps.push(HostStep::Arith { register, op: op.to_string(), lhs, rhs });
        Ok(HostValue::Register(register))
    }

    fn argument(&self, value: MlirValue) -> Result<LaunchArg, String> {
        if let Some(index) = self.arguments.iter().position(|argument| argument.ptr == value.ptr) {
            Ok(LaunchArg::Array(index))
        } else if let Some(index) = self.scratch.iter().position(|buffer| buffer.ptr == value.ptr) {
            Ok(LaunchArg::Scratch(index))
        } else {
            self.value(value)
                .map(LaunchArg::Index)
                .map_err(|_| "a kernel argument is neither an array, scratch nor a host integer".to_string())
        }
    }
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
