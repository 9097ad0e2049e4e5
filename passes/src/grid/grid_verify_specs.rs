//! `grid-verify-specs`: checks every `grid.call`'s BlockSpecs against its
//! operands over the whole grid, and writes the axis `semantics`.
//!
//! The op verifier checks what one look at the op can (ranks, arities,
//! kernel signature). This pass checks what needs the grid walked: every
//! program's block must have at least one element in bounds (Pallas' rule),
//! and index maps must not divide by zero. It then infers the semantics of
//! each axis: `arbitrary` when some output's block does not depend on it
//! (the output block is revisited, so the axis must run in order), else
//! `parallel`. Written semantics are kept, except that a `parallel` axis
//! along which an output block is revisited becomes `arbitrary`, with a
//! warning: a TPU core keeps the block in VMEM across the programs it runs,
//! threads sharing the array's block would race on it. (Unless the kernel
//! only updates that output atomically; a block an index function picks is
//! not known here.)
//!
//! Buffers the compiled code allocates for a call (scratch, and local
//! copies of blocks) must fit a process's address space: beyond it the
//! allocation cannot succeed and the kernel would crash at its first
//! access, so they are located errors here.
//!
//! Kernels only read their inputs: a store or atomic to an input ref is an
//! error (compiled code would write the caller's array, the interpreter a
//! copy, and Pallas' inputs are values).
//!
//! It is also where the module's schedule knobs are checked, once, against
//! the knob table (`tessel_dialects::knobs::check`): every pipeline starts
//! here, so no later pass sees a knob the table does not allow.

use crate::support::handles::{location_of, operation_ref, raw_op, shaped_element};
use crate::{
    PassDefinition, PassError, emit_error, emit_warning,
    support::ir::{collect_operations, element_bits},
};
use melior::ir::{
    BlockLike, OperationRef, RegionLike, TypeLike, ValueLike, operation::OperationLike, r#type::ShapedTypeLike,
};
use mlir_sys::{MlirOperation, MlirValue};
use tessel_dialects::{AxisSemantics, GridCall, MAX_ENUMERATED_PROGRAMS, Operand};

/// Bytes a user process can address on x86-64 and AArch64 (47 bits):
/// no buffer larger than this can be allocated.
const ADDRESSABLE_BYTES: i64 = 1 << 47;

/// Bytes of a buffer of `shape` with `bits`-bit elements, if addressable.
fn addressable_bytes(shape: &[i64], bits: i64) -> Option<i64> {
    shape
        .iter()
        .try_fold((bits + 7) / 8, |bytes, &extent| bytes.checked_mul(extent.max(0)))
        .filter(|&bytes| bytes <= ADDRESSABLE_BYTES)
}

/// The call's scratch buffers and local block copies that no process could
/// allocate, as messages.
fn unallocatable_buffers(call: &GridCall, operands: &[(&str, &Vec<Operand>)]) -> Vec<String> {
    let mut messages = Vec::new();
    // `to_ref` reinterprets the `ContextRef` it borrows, so that handle must
    // outlive every use of the reference: keep it in a local, not a
    // temporary dropped at the end of the statement.
    let context_handle = call.operation().context();
    // SAFETY: the call's context owns the module and outlives this pass; the
    // handle the reference points into lives to the end of this function.
    let context = unsafe { context_handle.to_ref() };
    for (index, text) in call.scratch_types().iter().enumerate() {
        let Some(r#type) = melior::ir::Type::parse(context, text) else { continue };
        let Ok(memref) = melior::ir::r#type::MemRefType::try_from(r#type) else { continue };
        let shape: Vec<i64> = (0..memref.rank())
            .map(|d| match memref.dim_size(d) {
                Ok(melior::ir::r#type::DimSize::Static(size)) => size as i64,
                _ => 0,
            })
            .collect();
        if addressable_bytes(&shape, element_bits(memref.element().to_raw())).is_none() {
            messages.push(format!("scratch #{index} ({text}) is too large to allocate"));
        }
    }
    for (role, operands) in operands {
        for (index, operand) in operands.iter().enumerate() {
            let element = shaped_element(operand.value.r#type().to_raw());
            let bits = element_bits(element);
            if !operand.spec.full && addressable_bytes(&operand.spec.block_sizes(), bits).is_none() {
                messages.push(format!("the block of {role} #{index} is too large to allocate"));
            }
        }
    }
    messages
}

pub static PASS: PassDefinition = PassDefinition {
    argument: "grid-verify-specs",
    name: "GridVerifySpecs",
    description: "Check BlockSpecs over the whole grid and infer axis semantics",
    anchor: "builtin.module",
    run,
};

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    let mut ok = true;
    for message in tessel_dialects::knobs::check(&module) {
        emit_error(module.location(), &message);
        ok = false;
    }
    // Under `--out-of-bounds-reads uninitialized`, an input block out of
    // bounds reads as uninitialized memory (JAX's TPU interpreter's rule).
    let blocks_may_be_out = tessel_dialects::knobs::OUT_OF_BOUNDS_READS
        .integer_or(crate::support::handles::raw_op(module.to_raw()), 0)
        == 2;
    for (raw, _) in collect_operations(module, |name| name == GridCall::NAME) {
        let call = GridCall::new(operation_ref(raw)).expect("collected above");
        ok &= verify_call(&call, blocks_may_be_out);
    }
    // The diagnostics stand on their own (like an op verifier's).
    if ok { Ok(()) } else { Err(PassError::Reported) }
}

/// The kernel `call` calls.
fn kernel_of<'c, 'a>(call: &GridCall<'c, 'a>) -> Option<OperationRef<'c, 'a>> {
    let mut module = call.operation().parent_operation();
    while let Some(op) = module {
        if op.name().as_string_ref().as_str() == Ok("builtin.module") {
            break;
        }
        module = op.parent_operation();
    }
    module.and_then(|module| tessel_dialects::find_symbol(&module, &call.callee()))
}

/// The kernel's writes (stores, atomics) to its refs: (ref index, op,
/// op name).
fn kernel_writes(call: &GridCall) -> Vec<(usize, MlirOperation, String)> {
    let Some(kernel) = kernel_of(call) else {
        return Vec::new();
    };
    let Some(entry) = kernel.region(0).ok().and_then(|region| region.first_block()) else { return Vec::new() };
    let refs: Vec<MlirValue> =
        (0..entry.argument_count()).filter_map(|index| entry.argument(index).ok()).map(|a| a.to_raw()).collect();
    let writes = |name: &str| matches!(name, "block.store" | "block.atomic_rmw" | "block.atomic_cas");
    let mut found = Vec::new();
    for (op, name) in collect_operations(operation_ref(kernel.to_raw()), writes) {
        let written = raw_op(op).operands()[if name == "block.atomic_cas" { 2 } else { 1 }];
        if let Some(index) = refs.iter().position(|value| value.ptr == written.ptr) {
            found.push((index, op, name));
        }
    }
    found
}

/// Whether `call`'s kernel has a `block.print`.
fn prints(call: &GridCall) -> bool {
    kernel_of(call).is_some_and(|kernel| {
        !collect_operations(operation_ref(kernel.to_raw()), |name| name == "block.print").is_empty()
    })
}

fn verify_call(call: &GridCall, inputs_may_be_out: bool) -> bool {
    let location = call.operation().location();
    let (inputs, outputs) = match (call.inputs(), call.outputs()) {
        (Ok(inputs), Ok(outputs)) => (inputs, outputs),
        _ => {
            emit_error(location, "grid.call specs must be #grid.block attributes");
            return false;
        }
    };
    let grid = call.grid();
    let mut ok = true;
    let writes = kernel_writes(call);
    // Kernel refs: scalars, inputs, outputs, scratch.
    let scalars = call.scalars().len();
    let first_output = scalars + inputs.len();
    // Kernels write scalars and inputs through none of their ops: compiled
    // code would reach the caller's array while the interpreter writes a
    // copy.
    for &(index, writer, _) in writes.iter().filter(|(index, ..)| *index < first_output) {
        let what = if index < scalars { format!("scalar #{index}") } else { format!("input #{}", index - scalars) };
        emit_error(
            location_of(writer),
            &format!(
                "the kernel @{} writes {what} of a grid.call: inputs are read-only (Pallas' inputs are \
                 values); write an output instead, passing the array as an output too if it must change",
                call.callee()
            ),
        );
        ok = false;
    }
    for message in unallocatable_buffers(call, &[("input", &inputs), ("output", &outputs)]) {
        emit_error(location, &message);
        ok = false;
    }
    for (role, operands) in [("input", &inputs), ("output", &outputs)] {
        for (index, operand) in operands.iter().enumerate().filter(|_| !(inputs_may_be_out && role == "input")) {
            if let Err(message) = check_bounds(&grid, operand, &format!("{role} #{index}")) {
                emit_error(location, &message);
                ok = false;
            }
        }
    }

    // Outputs the kernel only updates atomically: programs may share them.
    let atomic_only = |output: usize| {
        let mut output_writes = writes.iter().filter(|(index, ..)| *index == first_output + output).peekable();
        output_writes.peek().is_some() && output_writes.all(|(_, _, name)| name != "block.store")
    };
    // The first output whose block stays the same along `axis` and that
    // programs along it would race on.
    let revisited = |axis: usize| {
        (0..outputs.len()).find(|&index| {
            let output = &outputs[index];
            // An index function's blocks are unknown until run: no warning.
            (output.spec.full || !output.spec.uses_grid_axis(axis))
                && output.spec.index_function.is_none()
                && !atomic_only(index)
        })
    };
    if call.cores() {
        // A core mesh's cores run at once (their outputs are HBM they
        // share, as on a TPU), each the rest of the grid in order.
        let mut semantics = vec![AxisSemantics::Parallel; grid.len()];
        crate::grid::cores::core_semantics(&mut semantics);
        call.set_semantics(&semantics);
        return ok;
    }
    match call.semantics() {
        Some(written) => {
            // A TPU core keeps an output block in its VMEM while the
            // programs it runs in turn revisit it, whatever the axis is
            // called: Splash attention keeps its running maximum, sum and
            // accumulator in outputs whose block never changes, under a
            // `parallel` head axis. Programs sharing one array block in
            // threads would race on it (and did: wrong rows), so such an
            // axis runs in order, as on a single-core TPU and in JAX's
            // interpreter. (One program has no one to race with.)
            let mut ordered = written.clone();
            for (axis, semantics) in written.iter().enumerate() {
                if let (AxisSemantics::Parallel, Some(output)) = (semantics, revisited(axis))
                    && grid[axis] != 1
                {
                    emit_warning(
                        location,
                        &format!(
                            "grid axis {axis} is parallel but the block of output #{output} does not \
                             depend on it: its programs run in order, as on one TPU core (in parallel \
                             they would race on the block)"
                        ),
                    );
                    ordered[axis] = AxisSemantics::Arbitrary;
                }
            }
            if ordered != written {
                call.set_semantics(&ordered);
            }
        }
        None => call.set_semantics(&infer_semantics(&outputs, grid.len())),
    }
    // A kernel that prints runs its programs in order, so that its lines
    // come out in program order (as JAX's interpreter prints them).
    if prints(call) {
        call.set_semantics(&vec![AxisSemantics::Arbitrary; grid.len()]);
    }
    ok
}

/// The semantics of each axis of `call`'s grid: as written, else inferred
/// (`infer_semantics`); none if its specs do not resolve.
pub fn axis_semantics(call: &tessel_dialects::GridCall) -> Option<Vec<AxisSemantics>> {
    match call.semantics() {
        Some(written) => Some(written),
        None => Some(infer_semantics(&call.outputs().ok()?, call.grid().len())),
    }
}

/// `arbitrary` for the axes along which some output block is revisited.
pub(crate) fn infer_semantics(outputs: &[Operand], rank: usize) -> Vec<AxisSemantics> {
    (0..rank)
        .map(|axis| {
            if outputs.iter().any(|output| output.spec.full || !output.spec.uses_grid_axis(axis)) {
                AxisSemantics::Arbitrary
            } else {
                AxisSemantics::Parallel
            }
        })
        .collect()
}

/// Checks that every program's block has an element in bounds, when that
/// can be decided here (else compiled code checks at run time).
fn check_bounds(grid: &[i64], operand: &Operand, name: &str) -> Result<(), String> {
    let spec = &operand.spec;
    if spec.full || grid.contains(&0) || !spec.bounds_provable(grid) {
        return Ok(());
    }
    let points = grid.iter().fold(1i64, |product, &size| product.saturating_mul(size));
    if points <= MAX_ENUMERATED_PROGRAMS {
        for_each_point(grid, |point| spec.check_in_bounds(&operand.shape, point, name))
    } else {
        for_each_point(&vec![2; grid.len()], |corner| {
            let point: Vec<i64> = corner.iter().zip(grid).map(|(&c, &size)| c * (size - 1)).collect();
            spec.check_in_bounds(&operand.shape, &point, name)
        })
    }
}

/// Calls `check` on every point of `grid` in row-major order, stopping at
/// the first error.
fn for_each_point(grid: &[i64], mut check: impl FnMut(&[i64]) -> Result<(), String>) -> Result<(), String> {
    let mut point = vec![0i64; grid.len()];
    loop {
        check(&point)?;
        let mut axis = grid.len();
        loop {
            if axis == 0 {
                return Ok(());
            }
            axis -= 1;
            point[axis] += 1;
            if point[axis] < grid[axis] {
                break;
            }
            point[axis] = 0;
        }
    }
}
