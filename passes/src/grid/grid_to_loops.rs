//! `grid-to-loops`: runs each `grid.call` as loops over its grid (CPU).
//!
//! Maximal runs of consecutive `parallel` axes become one `scf.forall`
//! (programs in row-major order, or column-major with `tessel.grid_order =
//! 1`), `arbitrary` axes become ordered `scf.for` loops, in the grid's axis
//! order, so revisited output blocks see the programs in Pallas order. Per program,
//! each operand's block is a `memref.subview` of the array when every block
//! is whole; when a block can be partial (a block size that does not divide
//! the array, or an unblocked spec) a program whose block is partial works
//! on a local buffer of the block shape: padded (zeros, or NaN / the integer
//! minimum when the module carries `tessel.poison`), filled with the
//! in-bounds part, and for outputs written back to the in-bounds part
//! afterwards; an output block revisited along the trailing arbitrary axes
//! keeps one such buffer across its visits, allocated outside their loops
//! and filled on the first visit (`block_refs::KeptBlock`: what a visit
//! leaves past the array's end is there at the next, as in a TPU's VMEM).
//! The programs with whole blocks of such an array still get
//! views of it (an `scf.if` per program picks; the kernel takes both as
//! one type with dynamic strides), so an array one element longer than a
//! multiple of the block costs one staged block, not a copy of everything:
//! 16,700,000 floats in blocks of 65536 ran 1.8x slower than 16,777,216.
//! On a GPU (a module with `tessel.chip`) the staging buffer lives in
//! workgroup memory, which no view of the array can stand in for (nor
//! share a ref type with): the kernel runs in two versions instead, an
//! `scf.if` (marked `tessel.staged_version`) sending the programs whose
//! blocks are all whole to one on views and the others to one on staged
//! copies (16,700,000 floats in blocks of 65536: wave 0 of a whole block
//! executed 15,929 instructions in 1296 round trips to memory before, 819
//! in 16 after, as for 16,777,216 floats). Scratch buffers
//! live per parallel program, across its arbitrary iterations, but for
//! `shared` scratch, one buffer for the call. On a core mesh (`cores`) the
//! leading axis' forall is marked for a thread per core and the cores'
//! semaphores reach each other (cores.rs). Buffers are
//! freed by the deallocation pipeline that follows bufferization.
//!
//! The kernel is specialized per call site: a private clone takes the refs'
//! actual types (the scalar arrays first, whole) plus the program ids as
//! trailing `index` arguments (`grid.program_id` uses them,
//! `grid.num_programs` becomes a constant, or, for a size given as a
//! value, one more trailing argument); the upstream `inline` pass then
//! inlines it into the loops.
//!
//! Grid sizes given as values bound their loops (clamped at 0). A BlockSpec
//! whose index map is a function gets its block indices from a call of it
//! with the program ids and the scalar arrays (inlined too; the function
//! becomes private for symbol-dce); its blocks are bounds-checked at run
//! time like those of maps that cannot be checked here.

use super::fills;
use crate::support::diagnostics::location_text;
use crate::support::handles::{context_of, location_of, operation_ref, raw_op, shaped_element, value_type};
use crate::support::template::{emit, emit_conjunction, emit_line};
use crate::support::uninitialized::Fill;
use crate::{
    PassDefinition, PassError,
    grid::block_refs::{BlockTarget, emit_first_visit, memref_text, operand_ref},
    grid::cores,
    grid::grid_verify_specs::infer_semantics,
    grid::{
        in_place::{self, Aliasing},
        last_visit,
    },
    support::ir::{collect_operations, enclosing, join, print_type},
    support::template,
};
use melior::{
    StringRef,
    ir::{
        OperationRef, ValueLike,
        operation::{OperationLike, WalkOrder, WalkResult},
    },
};
use mlir_sys::*;
use tessel_dialects::knobs;
use tessel_dialects::{
    AxisSemantics, BLOCK_OPERANDS, BlockSpec, DYNAMIC, GridCall, OUT_OF_BOUNDS_FLAG, Operand, find_symbol,
};

pub static PASS: PassDefinition = PassDefinition {
    argument: "grid-to-loops",
    name: "GridToLoops",
    description: "Run grid.call programs as scf.forall/scf.for loops over subviews of the arrays",
    anchor: "builtin.module",
    run,
};

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    let calls = collect_operations(module, |name| name == GridCall::NAME);
    let options = Options {
        poison: Fill::of(raw_op(module.to_raw())),
        reversed: knobs::GRID_ORDER.integer_or(raw_op(module.to_raw()), 0) == 1,
        // A GPU's staging buffer lives in workgroup memory, which a view
        // of the array cannot stand in for (nor share a type with): its
        // whole blocks get a kernel version of their own.
        versioned: module.has_attribute(knobs::CHIP.attribute),
        dma_on_wait: knobs::DMA_MODE.integer_or(raw_op(module.to_raw()), 0) == 1,
        uninitialized_reads: knobs::OUT_OF_BOUNDS_READS.integer_or(raw_op(module.to_raw()), 0) == 2,
    };
    let mut kernels = Vec::new();
    // The operands whose blocks are checked, by the code the error flag
    // records (from 1).
    let mut checked = raw_op(module.to_raw()).strings(BLOCK_OPERANDS);
    for (index, (raw, _)) in calls.into_iter().enumerate() {
        let call = GridCall::new(operation_ref(raw)).expect("collected above");
        kernels.push(call.callee());
        match lower_call(module.to_raw(), &call, index, options, &mut checked) {
            Ok(()) => {}
            Err(LowerError::Call(message)) => return Err(PassError::at(call.operation().location(), message)),
            Err(LowerError::At(op, message)) => return Err(PassError::at(location_of(op), message)),
        }
    }
    if !checked.is_empty() {
        raw_op(module.to_raw()).set_strings(BLOCK_OPERANDS, &checked);
    }
    // Kernels run only through grid.call (grid.program_id means nothing
    // elsewhere): once every call has its specialization, they go.
    kernels.sort();
    kernels.dedup();
    for kernel in kernels {
        if !is_called(module, &kernel)
            && let Some(function) = find_symbol(&module, &kernel).map(|op| op.to_raw())
        {
            // SAFETY: `function` is a live kernel of the module that no call refers to any more (`is_called`), so destroying it leaves no dangling symbol use or handle.
            unsafe { mlirOperationDestroy(function) };
        }
    }
    Ok(())
}

/// How calls are lowered: the padding of partial blocks, the programs'
/// order, and whether the whole and the partial blocks of an array get a
/// kernel version each (GPU) rather than one ref an `scf.if` picks per
/// program (CPU).
#[derive(Clone, Copy)]
pub(super) struct Options {
    /// What padding and fresh scratch hold.
    pub(super) poison: Fill,
    pub(super) reversed: bool,
    pub(super) versioned: bool,
    /// DMAs copy on waits (`tessel.dma_mode`): fresh semaphores drop the
    /// copies queued on them.
    pub(super) dma_on_wait: bool,
    /// An input block with no element in bounds reads as uninitialized
    /// memory (`tessel.out_of_bounds_reads` uninitialized, as JAX's TPU
    /// interpreter) rather than being an error.
    pub(super) uninitialized_reads: bool,
}

/// Why a call could not be lowered: at the call, or at an op of its kernel.
enum LowerError {
    Call(String),
    At(MlirOperation, String),
}

impl From<String> for LowerError {
    fn from(message: String) -> Self {
        LowerError::Call(message)
    }
}

impl From<&str> for LowerError {
    fn from(message: &str) -> Self {
        LowerError::Call(message.to_string())
    }
}

impl From<(MlirOperation, String)> for LowerError {
    fn from((op, message): (MlirOperation, String)) -> Self {
        LowerError::At(op, message)
    }
}

/// Whether some `func.call` still calls `name`.
fn is_called(module: OperationRef, name: &str) -> bool {
    let mut called = false;
    let reference = format!("@{name}");
    module.walk(WalkOrder::PreOrder, |operation| {
        if operation.name().as_string_ref().as_str() == Ok("func.call")
            && operation.attribute("callee").is_ok_and(|callee| callee.to_string() == reference)
        {
            called = true;
            return WalkResult::Interrupt;
        }
        WalkResult::Advance
    });
    called
}

fn lower_call(
    module: MlirOperation,
    call: &GridCall,
    index: usize,
    options: Options,
    checked: &mut Vec<String>,
) -> Result<(), LowerError> {
    let reversed = options.reversed;
    let context = context_of(call.operation().to_raw());
    let inputs = call.inputs().map_err(|e| e.to_string())?;
    let outputs = call.outputs().map_err(|e| e.to_string())?;
    let grid = call.grid();
    let rank = grid.len();
    // An axis of one program has nothing to order: it runs as a parallel
    // one. (An ordered loop of one iteration would be folded away by
    // canonicalization, and on the GPU path the program with it, leaving
    // nothing to launch.)
    let mut semantics: Vec<AxisSemantics> = call
        .semantics()
        .unwrap_or_else(|| infer_semantics(&outputs, rank))
        .into_iter()
        .zip(&grid)
        .map(|(semantics, &extent)| if extent == 1 { AxisSemantics::Parallel } else { semantics })
        .collect();
    let core_mesh = call.cores();
    if core_mesh {
        cores::core_semantics(&mut semantics);
    }
    let kernel = find_symbol(&operation_ref(module), &call.callee()).map(|op| op.to_raw()).ok_or("kernel not found")?;
    let specialized = format!("{}__call{index}", call.callee());

    let operands: Vec<(&Operand, bool)> =
        inputs.iter().map(|o| (o, false)).chain(outputs.iter().map(|o| (o, true))).collect();
    // Scalar arrays: whole, the kernel's first refs and the index
    // functions' trailing arguments.
    let scalar_values: Vec<MlirValue> = call.scalars().iter().map(|value| value.to_raw()).collect();
    let scalars: Vec<(String, String)> =
        scalar_values.iter().enumerate().map(|(k, &value)| (format!("%q{k}"), print_type(value_type(value)))).collect();
    let mut scratch = call.scratch_types();
    let semaphores = call.semaphore_scratch();
    // Scratch one buffer serves the whole call with: `shared` scratch, and
    // a core mesh's semaphores (a row per core; see cores.rs).
    let shared = call.shared_scratch();
    if core_mesh {
        for &k in &semaphores {
            scratch[k] = cores::all_cores_type(&scratch[k], grid[0])?;
        }
    }
    if options.versioned && !shared.is_empty() {
        // A GPU's scratch is workgroup memory, one per program.
        return Err("scratch shared by every program (`shared`) runs on the CPU only, not on AMD GPUs yet".into());
    }
    let call_wide: Vec<(usize, String)> = scratch
        .iter()
        .enumerate()
        .filter(|(k, _)| shared.contains(k) || (core_mesh && semaphores.contains(k)))
        .map(|(k, r#type)| (k, r#type.clone()))
        .collect();
    // Scratch persists from one program to the next along the ordered
    // axes (the TPU core's VMEM: paged attention prefetches the next
    // program's pages into it): one scratch per point of the leading
    // parallel axes, allocated outside every ordered loop. A parallel
    // axis after an ordered one would share it between threads, so with
    // scratch it runs in order too (one of a single program as a loop of
    // one trip, not a forall inside the ordered loop, which the GPU path
    // cannot share among work-items).
    let first_ordered = semantics.iter().position(|s| *s == AxisSemantics::Arbitrary).unwrap_or(rank);
    if !scratch.is_empty() {
        semantics[first_ordered..].fill(AxisSemantics::Arbitrary);
    }
    let mut refs = Vec::new();
    let mut arguments = Vec::new();
    // Inputs that are also outputs of the call (`input_output_aliases`):
    // on a TPU a program's input block is copied to VMEM before the
    // kernel runs, so the kernel reads it as it was even after writing
    // the output it aliases. Here such an input is a snapshot taken
    // at the program's start (`%snap<i>`, type): a view of the array would
    // show the kernel its own writes. A `full` spec is the array itself
    // (Pallas' pl.ANY: memory in HBM, which input and output share), as
    // in the interpreter. Consecutive programs with the same block (along
    // the trailing arbitrary axes its index map does not use) share one
    // snapshot, taken on the first of them: a TPU fetches a block only
    // when its index changes, so they all read the array as it was then.
    let snapshots: Vec<Option<Snapshot>> = operands
        .iter()
        .enumerate()
        .map(|(i, (operand, is_output))| {
            let aliased = outputs.iter().any(|output| output.value.to_raw().ptr == operand.value.to_raw().ptr);
            (!is_output && aliased && !operand.spec.full).then(|| {
                let raw_type = value_type(operand.value.to_raw());
                let shape: Vec<String> = operand.spec.block_shape.iter().flatten().map(i64::to_string).collect();
                Snapshot {
                    name: format!("%snap{i}"),
                    r#type: memref_text(&shape, &print_type(shaped_element(raw_type)), None),
                    revisits: revisit_axes(&operand.spec, &semantics),
                }
            })
        })
        .collect();
    for (i, (operand, is_output)) in operands.iter().enumerate() {
        let raw_type = value_type(operand.value.to_raw());
        let array_type = print_type(raw_type);
        let element = print_type(shaped_element(raw_type));
        let identity = memref_text(&operand.shape.iter().map(i64::to_string).collect::<Vec<_>>(), &element, None);
        if array_type != identity {
            return Err(format!("arrays need the identity layout, got {array_type}").into());
        }
        arguments.push(format!("%a{i}: {array_type}"));
        // An output block revisited by consecutive programs keeps the
        // whole of its staged buffer from one visit to the next.
        let revisits = if *is_output { revisit_axes(&operand.spec, &semantics) } else { Vec::new() };
        let target = BlockTarget { grid: &grid, scalars: &scalars, is_output: *is_output, revisits: &revisits };
        refs.push(operand_ref(i, operand, &array_type, &element, target, options));
    }
    arguments.extend(scalars.iter().map(|(name, r#type)| format!("{name}: {type}")));
    // Sizes given as values: `%dgv<axis>`, template arguments after the
    // scalars (`%dg<axis>` once clamped at 0).
    let dynamic_axes: Vec<usize> = (0..rank).filter(|&a| grid[a] == DYNAMIC).collect();
    let dynamic_values: Vec<MlirValue> = call.dynamic_grid().iter().map(|value| value.to_raw()).collect();
    arguments.extend(dynamic_axes.iter().map(|a| format!("%dgv{a}: index")));
    let extent = |axis: usize| if grid[axis] == DYNAMIC { format!("%dg{axis}") } else { grid[axis].to_string() };

    // Constants the loop nest and the clamping of partial blocks use.
    let mut constants: Vec<i64> = vec![0, 1];
    constants.extend(grid.iter().copied().filter(|&size| size != DYNAMIC));
    for (operand, _) in &operands {
        constants.extend(operand.spec.block_sizes());
        constants.extend(operand.shape.iter().copied());
    }
    constants.sort();
    constants.dedup();
    let mut body = String::new();
    for value in &constants {
        emit_line!(body, "%c{value} = arith.constant {value} : index");
    }
    if matches!(options.poison, Fill::Nan | Fill::Zero) {
        let unaliased = operands.iter().enumerate().filter(|(_, (operand, is_output))| {
            *is_output && inputs.iter().all(|input| input.value.to_raw().ptr != operand.value.to_raw().ptr)
        });
        for (i, (operand, _)) in unaliased {
            fills::fill_unwritten_output(&mut body, i, value_type(operand.value.to_raw()), options.poison);
        }
    }
    // A negative size runs no program (no launch of a negative count; the
    // interpreter reports it as an error).
    for a in &dynamic_axes {
        emit_line!(body, "%dg{a} = arith.maxsi %dgv{a}, %c0 : index");
    }

    // The loop nest, in axis order; scratch lives inside the forall of the
    // leading parallel axes (before the nest when the first is ordered).
    let last_parallel = first_ordered.checked_sub(1);
    let on_wait = options.dma_on_wait && !semaphores.is_empty();
    cores::allocate_call_wide(&mut body, &call_wide, &semaphores, on_wait);
    let allocate_scratch = |body: &mut String| {
        for (k, r#type) in scratch.iter().enumerate().filter(|(k, _)| call_wide.iter().all(|(wide, _)| wide != k)) {
            emit_line!(body, "%scratch{k} = memref.alloc() : {type}");
            if semaphores.contains(&k) {
                // Semaphores start at zero with each worker, as a TPU
                // core's do with each kernel.
                cores::zero_semaphores(body, k, r#type, on_wait);
            } else if options.poison.fills_scratch() && !options.versioned {
                fills::poison_scratch(body, k, r#type, options.poison);
            }
        }
    };
    // Closing text of each loop, innermost last; the ordered loop of an
    // arbitrary axis is marked for tessel-prefetch.
    let mut closers: Vec<String> = Vec::new();
    if rank == 0 {
        // `grid []`: one program, still a loop nest of its own (so the GPU
        // path makes it a workgroup); the mapping keeps canonicalization
        // from folding the single iteration away.
        emit_line!(body, "scf.forall (%single) in (1) {{");
        closers.push(format!("}} {{mapping = [{}]}}\n", single_program_mapping(0)));
    }
    if last_parallel.is_none() {
        allocate_scratch(&mut body);
    }
    let mut axis = 0;
    while axis < rank {
        if semantics[axis] == AxisSemantics::Parallel {
            let end = (axis..rank).find(|&a| semantics[a] != AxisSemantics::Parallel).unwrap_or(rank);
            // Programs in row-major order (the last axis fastest), or
            // column-major with tessel.grid_order = 1.
            let mut axes: Vec<usize> = (axis..end).collect();
            if reversed {
                axes.reverse();
            }
            emit_line!(
                body,
                "scf.forall ({}) in ({}) {{",
                join(axes.iter().map(|a| format!("%g{a}"))),
                join(axes.iter().map(|&a| extent(a)))
            );
            if last_parallel.is_some_and(|last| (axis..end).contains(&last)) {
                allocate_scratch(&mut body);
            }
            // A nest of single programs (`grid [1]`, `[1, 1]`) is mapped like
            // `grid []`'s, so canonicalization keeps it for the GPU path;
            // so is one with sizes given as values, which may fold to 1.
            if core_mesh && axis == 0 {
                // The cores, a thread each (tessel-core-threads).
                closers.push(format!("}} {{{}}}\n", cores::CORES));
            } else if axes.iter().all(|&a| grid[a] == 1) || axes.iter().any(|&a| grid[a] == DYNAMIC) {
                closers.push(format!("}} {{mapping = [{}]}}\n", join((0..axes.len()).map(single_program_mapping))));
            } else {
                closers.push("}\n".into());
            }
            axis = end;
        } else {
            for kept in refs.iter().filter_map(|r| r.kept.as_ref()).filter(|kept| kept.outermost_axis == axis) {
                body.push_str(&kept.allocation);
            }
            for snapshot in snapshots.iter().flatten() {
                if snapshot.revisits.iter().min() == Some(&axis) {
                    emit_line!(body, "{} = memref.alloc() : {}", snapshot.name, snapshot.r#type);
                }
            }
            let upper = if grid[axis] == DYNAMIC { format!("%dg{axis}") } else { format!("%c{}", grid[axis]) };
            emit_line!(body, "scf.for %g{axis} = %c0 to {upper} step %c1 {{");
            closers.push(format!("}} {{{ARBITRARY_AXIS} = {axis} : i64}}\n"));
            axis += 1;
        }
    }
    for r in &refs {
        body.push_str(&r.offsets);
    }
    // The kernel's arguments around the refs: the scalar arrays first;
    // scratch, program ids and dynamic sizes (for grid.num_programs) after.
    let mut trailing: Vec<(String, String)> =
        scratch.iter().enumerate().map(|(k, r#type)| (format!("%scratch{k}"), r#type.clone())).collect();
    trailing.extend((0..rank).map(|a| (format!("%g{a}"), "index".to_string())));
    trailing.extend(dynamic_axes.iter().map(|a| (format!("%dg{a}"), "index".to_string())));
    // One program: its refs, the kernel's call, the write-backs; with the
    // whole blocks' views where `whole`.
    let version = |name: &str, whole: bool| -> (String, Vec<String>) {
        let mut program = String::new();
        let mut arguments = scalars.to_vec();
        for (r, snapshot) in refs.iter().zip(&snapshots) {
            let (before, value, r#type) = match r.whole.as_ref().filter(|_| whole) {
                Some(view) => (&view.before, &view.value, &view.r#type),
                None => (&r.before, &r.value, &r.r#type),
            };
            program.push_str(before);
            match snapshot {
                Some(Snapshot { name, r#type: snapshot_type, revisits }) if revisits.is_empty() => {
                    emit_line!(
                        program,
                        "{name} = memref.alloc() : {snapshot_type}\nmemref.copy {value}, {name} : {type} to {snapshot_type}"
                    );
                    arguments.push((name.clone(), snapshot_type.clone()));
                }
                Some(Snapshot { name, r#type: snapshot_type, revisits }) => {
                    // Allocated before the revisiting loops; taken where
                    // they are all at 0.
                    let first = emit_first_visit(&mut program, revisits, &format!("{name}_first"));
                    emit_line!(
                        program,
                        "scf.if {first} {{\nmemref.copy {value}, {name} : {type} to {snapshot_type}\n}}"
                    );
                    arguments.push((name.clone(), snapshot_type.clone()));
                }
                None => arguments.push((value.clone(), r#type.clone())),
            }
        }
        arguments.extend(trailing.iter().cloned());
        let (values, types): (Vec<String>, Vec<String>) = arguments.into_iter().unzip();
        emit_line!(program, "func.call @{name}({}) : ({}) -> ()", join(&values), join(&types));
        for r in refs.iter().filter(|r| !(whole && r.whole.is_some())) {
            program.push_str(&r.after);
        }
        (program, types)
    };
    let (mut program, call_types) = version(&specialized, false);
    let mut versions = vec![(specialized.clone(), call_types)];
    // A GPU stages partial blocks in workgroup memory, where no view of the
    // array can stand in for them: the programs whose blocks all turn out
    // whole run a second version of the kernel, on views (the condition
    // depends on program ids only: uniform across the workgroup).
    let whole_tests: Vec<String> = refs.iter().filter_map(|r| r.whole.as_ref().map(|w| w.is_whole.clone())).collect();
    if let Some(all) = emit_conjunction(&mut body, &whole_tests, "%whole") {
        let name = format!("{specialized}_whole");
        let (whole_program, types) = version(&name, true);
        let past_end = refs.iter().filter_map(|r| r.whole.as_ref()).all(|w| w.past_end);
        let marks = if past_end { format!("{STAGED_VERSION}, {PAST_END_VIEWS}") } else { STAGED_VERSION.to_string() };
        program = format!("scf.if {all} {{\n{whole_program}}} else {{\n{program}}} {{{marks}}}\n");
        versions.push((name, types));
    }
    // Programs whose blocks could not be proven in bounds are checked here;
    // one that fails is skipped and records in the module's error flag the
    // first operand whose block is out (its code in `BLOCK_OPERANDS`).
    let location = location_text(location_of(call.operation().to_raw()));
    let mut codes = Vec::new();
    for (i, r) in refs.iter().enumerate() {
        let Some(in_bounds) = &r.in_bounds else { continue };
        let (is_output, position) = if i < inputs.len() { (false, i) } else { (true, i - inputs.len()) };
        let role = if is_output { "output" } else { "input" };
        checked.push(format!("{role} #{position} of @{} (called at {location})", call.callee()));
        codes.push((in_bounds.clone(), checked.len()));
    }
    let checks: Vec<String> = codes.iter().map(|(in_bounds, _)| in_bounds.clone()).collect();
    let guarded = !checks.is_empty();
    match emit_conjunction(&mut body, &checks, "%ok") {
        Some(all) => {
            // The code of the first operand out: a chain of selects from
            // the last one.
            let mut record = String::new();
            let mut code = String::from("%code_none");
            emit_line!(record, "{code} = arith.constant 0 : i32");
            for (k, (in_bounds, operand)) in codes.iter().enumerate().rev() {
                emit_line!(
                    record,
                    "%code_{k}_out = arith.constant {operand} : i32\n\
                     %code_{k} = arith.select {in_bounds}, {code}, %code_{k}_out : i32"
                );
                code = format!("%code_{k}");
            }
            emit!(
                body,
                "scf.if {all} {{\n{program}}} else {{\n{record}\
                 %flag = memref.get_global @{OUT_OF_BOUNDS_FLAG} : memref<i32>\n\
                 memref.store {code}, %flag[] : memref<i32>\n}}\n"
            );
        }
        None => body.push_str(&program),
    }
    closers.iter().rev().for_each(|closer| body.push_str(closer));
    let flag =
        if guarded { format!("memref.global @{OUT_OF_BOUNDS_FLAG} : memref<i32> = dense<0>\n") } else { String::new() };
    // The index functions the offsets call, declared for the template.
    // They are inlined into the loops: private, so symbol-dce removes them
    // once no call is left.
    let mut declarations = String::new();
    let mut declared = Vec::new();
    for (operand, _) in &operands {
        let Some(name) = operand.spec.index_function.as_deref() else { continue };
        if declared.contains(&name) {
            continue;
        }
        declared.push(name);
        let function = find_symbol(&operation_ref(module), name).ok_or(format!("index function @{name} not found"))?;
        let signature = function.attribute("function_type").map_err(|_| format!("@{name} is not a function"))?;
        emit_line!(declarations, "func.func private @{name}{signature}");
        set_private(context, function.to_raw());
    }
    for (name, types) in &versions {
        emit_line!(declarations, "func.func private @{name}({})", join(types));
    }
    if on_wait {
        let forget = cores::forget_declaration();
        emit_line!(declarations, "{forget}");
        template::define_symbol(context, module, tessel_dialects::DMA_FUNCTIONS[2], &forget)?;
    }
    let text = format!("{flag}{declarations}func.func @template({}) {{\n{body}return\n}}\n", join(&arguments));
    if guarded {
        define_error_flag(context, module)?;
    }

    // Which refs' loads may skip their copy (see in_place.rs), in kernel
    // argument order: scalars, inputs, outputs.
    let arrays: Vec<MlirValue> = scalar_values
        .iter()
        .copied()
        .chain(inputs.iter().chain(&outputs).map(|operand| operand.value.to_raw()))
        .collect();
    let first_output = scalar_values.len() + inputs.len();
    let refs: Vec<Aliasing> = arrays
        .iter()
        .enumerate()
        .map(|(index, array)| {
            // A snapshot is the program's own copy.
            let own = index >= scalar_values.len()
                && index < first_output
                && snapshots[index - scalar_values.len()].is_some();
            Aliasing {
                no_output_alias: own
                    || index >= first_output
                    || outputs.iter().all(|output| output.value.to_raw().ptr != array.ptr),
                exclusive: own
                    || arrays.iter().enumerate().all(|(other, value)| other == index || value.ptr != array.ptr),
            }
        })
        .collect();
    // Scratch buffers (the kernel arguments after the arrays) are each
    // program's own: they alias nothing. Shared scratch other cores may
    // write at any time: its loads keep their copies.
    let scratch_refs = (0..scratch.len()).map(|k| {
        let own = !shared.contains(&k);
        Aliasing { no_output_alias: own, exclusive: own }
    });
    let aliasing: Vec<Aliasing> = refs.iter().copied().chain(scratch_refs).collect();
    // Outputs revisited along the trailing arbitrary axes: stores only the
    // last visit needs (see last_visit.rs). Kernel arguments: scalars,
    // refs, scratch, program ids, dynamic sizes.
    let first_program_id = arrays.len() + scratch.len();
    let extent_argument = |axis: usize| match grid[axis] {
        DYNAMIC => last_visit::Extent::Argument(
            first_program_id + rank + grid[..axis].iter().filter(|&&size| size == DYNAMIC).count(),
        ),
        size => last_visit::Extent::Static(size),
    };
    let revisits: Vec<last_visit::Revisit> = outputs
        .iter()
        .enumerate()
        .filter(|&(index, _)| refs[first_output + index].exclusive)
        .map(|(index, output)| last_visit::Revisit {
            argument: first_output + index,
            axes: revisit_axes(&output.spec, &semantics)
                .into_iter()
                .map(|axis| (first_program_id + axis, extent_argument(axis)))
                .collect(),
        })
        .collect();
    for (name, types) in &versions {
        let clone = specialize_kernel(context, module, kernel, name, types, &grid)?;
        if core_mesh {
            let semaphore_arguments: Vec<usize> = semaphores.iter().map(|k| arrays.len() + k).collect();
            cores::address_semaphores(clone, &semaphore_arguments, first_program_id)?;
        } else {
            cores::refuse_core_signals(clone)?;
        }
        in_place::mark_loads(clone, &aliasing);
        last_visit::guard_stores(context, clone, &revisits)?;
    }
    let operand_values: Vec<MlirValue> = operands
        .iter()
        .map(|(o, _)| o.value.to_raw())
        .chain(scalar_values.iter().copied())
        .chain(dynamic_values)
        .collect();
    template::replace(context, call.operation().to_raw(), &text, &operand_values).map_err(|e| LowerError::Call(e.0))
}

/// An aliased input's copy, taken before the program (or, along
/// `revisits`, before the first of the programs that share its block).
struct Snapshot {
    name: String,
    r#type: String,
    /// The trailing arbitrary axes the input's index map does not use.
    revisits: Vec<usize>,
}

/// The trailing arbitrary axes along which consecutive programs visit the
/// same block of an output (its index map does not use them), innermost
/// first; none where an index function gives its blocks.
fn revisit_axes(spec: &BlockSpec, semantics: &[AxisSemantics]) -> Vec<usize> {
    if spec.index_function.is_some() {
        return Vec::new();
    }
    (0..semantics.len())
        .rev()
        .take_while(|&axis| semantics[axis] == AxisSemantics::Arbitrary && (spec.full || !spec.uses_grid_axis(axis)))
        .collect()
}

fn set_private(context: MlirContext, function: MlirOperation) {
    // SAFETY: live IR of the module being rewritten (crate invariant,
    // support/handles.rs); a string attribute of the live context.
    unsafe {
        let private = mlirStringAttrGet(context, StringRef::new("private").to_raw());
        mlirOperationSetAttributeByName(function, StringRef::new("sym_visibility").to_raw(), private);
    }
}

/// The attribute on the ordered `scf.for` of an arbitrary grid axis (its
/// axis number).
pub const ARBITRARY_AXIS: &str = "tessel.arbitrary_axis";

/// The unit attribute on the `scf.if` that runs a GPU kernel's two
/// versions: its else region is the programs with partial blocks, which
/// copy them into (and out of) workgroup memory element by element.
pub const STAGED_VERSION: &str = "tessel.staged_version";

/// Beside `STAGED_VERSION`: every partial block of the call lies past its
/// array's end (only outermost dimensions are partial), so where buffer
/// accesses address the arrays the whole blocks' version is exact for
/// every program (`tessel-past-end-views`).
pub const PAST_END_VIEWS: &str = "tessel.past_end_views";

/// One of the two versions of a kernel on a GPU (see `STAGED_VERSION`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum KernelVersion {
    /// On views of the arrays: the programs whose blocks are all whole.
    Whole,
    /// On staged copies: the programs with a partial block.
    Staged,
}

/// The kernel version `op` runs in, if it is inside one.
pub fn kernel_version(op: MlirOperation) -> Option<KernelVersion> {
    let mut child = op;
    while let Some(parent) = enclosing(child, |_| true) {
        if raw_op(parent).name() == "scf.if" && raw_op(parent).has(STAGED_VERSION) {
            // SAFETY: live IR of the module being rewritten (crate invariant, support/handles.rs).
            let block = unsafe { mlirOperationGetBlock(child) };
            let staged = block.ptr == raw_op(parent).region_block(1).ptr;
            return Some(if staged { KernelVersion::Staged } else { KernelVersion::Whole });
        }
        child = parent;
    }
    None
}

/// Adds the error flag's definition to the module, once.
fn define_error_flag(context: MlirContext, module: MlirOperation) -> Result<(), String> {
    let text = format!("memref.global @{OUT_OF_BOUNDS_FLAG} : memref<i32> = dense<0>");
    template::define_symbol(context, module, OUT_OF_BOUNDS_FLAG, &text)
}

/// Clones `kernel` as private `name` taking `types` (refs, scratch, then
/// one index per grid axis) and resolves its grid queries.
fn specialize_kernel(
    context: MlirContext,
    module: MlirOperation,
    kernel: MlirOperation,
    name: &str,
    types: &[String],
    grid: &[i64],
) -> Result<MlirOperation, String> {
    // SAFETY: `kernel` and `module` are live; the clone is owned by no block until inserted after `kernel`; attributes and types are made in `context` (null parses are refused before use); `entry` is checked non-null.
    unsafe {
        let clone = mlirOperationClone(kernel);
        let body = mlirRegionGetFirstBlock(mlirOperationGetFirstRegion(module));
        mlirBlockInsertOwnedOperationAfter(body, kernel, clone);
        let set = |attribute: &str, value: MlirAttribute| {
            mlirOperationSetAttributeByName(clone, StringRef::new(attribute).to_raw(), value)
        };
        set("sym_name", mlirStringAttrGet(context, StringRef::new(name).to_raw()));
        set("sym_visibility", mlirStringAttrGet(context, StringRef::new("private").to_raw()));
        let parsed: Vec<MlirType> =
            types.iter().map(|t| mlirTypeParseGet(context, StringRef::new(t).to_raw())).collect();
        if parsed.iter().any(|t| t.ptr.is_null()) {
            return Err(format!("bad specialized types {types:?}"));
        }
        let function_type = mlirFunctionTypeGet(context, parsed.len() as isize, parsed.as_ptr(), 0, std::ptr::null());
        set("function_type", mlirTypeAttrGet(function_type));
        let entry = mlirRegionGetFirstBlock(mlirOperationGetFirstRegion(clone));
        if entry.ptr.is_null() {
            return Err("the kernel has no body".into());
        }
        let refs = mlirBlockGetNumArguments(entry) as usize;
        let dynamic = grid.iter().filter(|&&size| size == DYNAMIC).count();
        if refs + grid.len() + dynamic != parsed.len() {
            return Err("kernel arity does not match the call".into());
        }
        for (i, &t) in parsed[..refs].iter().enumerate() {
            mlirBlockArgumentSetType(mlirBlockGetArgument(entry, i as isize), t);
        }
        let location = mlirOperationGetLocation(kernel);
        // Trailing arguments: the program ids, then the dynamic sizes.
        let added: Vec<MlirValue> = parsed[refs..].iter().map(|&t| mlirBlockAddArgument(entry, t, location)).collect();
        let (program_ids, dynamic_sizes) = added.split_at(grid.len());

        let queries = collect_operations(OperationRef::from_raw(clone), |name| {
            name == "grid.program_id" || name == "grid.num_programs"
        });
        for (op, name) in queries {
            let is_program_id = name == "grid.program_id";
            let axis = mlirIntegerAttrGetValueInt(mlirOperationGetAttributeByName(op, StringRef::new("axis").to_raw()))
                as usize;
            if is_program_id {
                let rewriter = mlirIRRewriterCreate(context);
                mlirRewriterBaseReplaceOpWithValues(rewriter, op, 1, &program_ids[axis]);
                mlirIRRewriterDestroy(rewriter);
            } else if grid[axis] == DYNAMIC {
                let position = grid[..axis].iter().filter(|&&size| size == DYNAMIC).count();
                let rewriter = mlirIRRewriterCreate(context);
                mlirRewriterBaseReplaceOpWithValues(rewriter, op, 1, &dynamic_sizes[position]);
                mlirIRRewriterDestroy(rewriter);
            } else {
                let text = format!(
                    "func.func @template() -> index {{\n%n = arith.constant {} : index\nreturn %n : index\n}}",
                    grid[axis]
                );
                template::replace(context, op, &text, &[]).map_err(|e| e.0)?;
            }
        }
        Ok(clone)
    }
}

/// The GPU mapping of axis `axis` of a nest of single programs: one that
/// canonicalization does not fold away (grid-to-gpu folds every axis into
/// workgroups itself).
fn single_program_mapping(axis: usize) -> String {
    match axis {
        0 => "#gpu.block<x>".into(),
        1 => "#gpu.block<y>".into(),
        2 => "#gpu.block<z>".into(),
        _ => format!("#gpu.block<linear_dim_{}>", axis - 3),
    }
}
