//! `tessel-buffer-resources`: kernels read and write their global memrefs
//! in vectors through buffer resources.
//!
//! Each 1-D vector load or store (`vector.load`/`store`, in-bounds minor
//! identity transfers) in a `gpu.launch` of a view of global memory (the
//! function's memref arguments and host allocations: the kernel's
//! arguments once outlined) becomes `amdgpu.raw_buffer_load`/
//! `raw_buffer_store` on that memory,
//! at the view's linear element offset (`memref.extract_strided_metadata`,
//! which `expand-strided-metadata` folds into the index arithmetic):
//! LLVM then addresses the argument with one 128-bit resource descriptor
//! in scalar registers and a 32-bit offset per lane
//! (`buffer_load_dwordx4 v, v_off, s[0:3], 0 offen`) instead of a 64-bit
//! address per lane (two VALU adds with carry per access, two VGPRs per
//! pointer), and accesses past the buffer's end read zeros and write
//! nothing instead of faulting. Triton does the same for small tensors.
//!
//! The GPU emulator runs these ops as bounds-checked vector accesses
//! (`tessel-emulate-buffers`), so the offsets computed here are checked
//! on the CPU by every emulated test.
//!
//! Memory qualifies when every use in the launch, through views
//! (`support::ir::VIEWS`), is such a vector access
//! of 1 to 16 bytes along a unit-stride dimension; atomics, masked or
//! gathered accesses, pointer extraction and scalar accesses keep it
//! global (see `ACCESSES`) — except in the staged version of a kernel
//! grid-to-loops runs in two (`tessel.staged_version`): those stay global
//! accesses themselves, beside the other version's buffer accesses. Its
//! size must be static and below 2 GiB, so
//! every byte offset fits the descriptor's 32 bits.

use crate::support::handles::{context_of, location_of, operation_ref, raw_op, value_type};
use crate::support::ir::{
    VIEWS, block_arguments, collect_operations, enclosing, has_identity_layout, is_inside, join, print_type,
    static_bytes, strides_and_offset, uses,
};
use crate::support::template;
use crate::{
    PassDefinition, PassError,
    grid::grid_to_loops::{KernelVersion, kernel_version},
};
use melior::ir::OperationRef;
use mlir_sys::*;
use tessel_dialects::RawOp;

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-buffer-resources",
    name: "TesselBufferResources",
    description: "Read and write kernels' global memrefs in vectors through AMD buffer resources",
    anchor: "builtin.module",
    run,
};

/// The largest buffer, in bytes, addressed through a resource: offsets
/// are unsigned 32-bit, and staying below 2^31 keeps LLVM's i32 offset
/// arithmetic from wrapping.
const LARGEST_BUFFER: i64 = 1 << 31;

/// The accesses rewritten. Scalar `memref.load`/`store` keep an argument
/// global: LLVM's load-store vectorizer merges runs of scalar global
/// accesses into `dwordx4` (the softmax row loops rely on it) but cannot
/// merge buffer intrinsics (the 8-row softmax went from 16-byte loads to
/// 4-byte ones: 40 -> 112 round trips to memory).
const ACCESSES: &[&str] = &["vector.load", "vector.store", "vector.transfer_read", "vector.transfer_write"];

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    for (launch, _) in collect_operations(module, |name| name == "gpu.launch") {
        let body = raw_op(launch).region_block(0);
        // SAFETY: the crate invariant: a launch's body, which holds at least its terminator.
        let first = unsafe { mlirBlockGetFirstOperation(body) };
        for memory in global_memory(launch) {
            let Some(accesses) = vector_accesses(memory, launch) else { continue };
            through_buffer(memory, &accesses, first).map_err(|message| PassError::at(location_of(launch), message))?;
        }
    }
    Ok(())
}

/// The global memory a launch may address as buffers: its function's
/// memref arguments and host allocations (the kernel's arguments once
/// outlined). Views made on the host are left alone, and so is LDS seen
/// through a generic memref (a `memory_space_cast` inside the launch).
fn global_memory(launch: MlirOperation) -> Vec<MlirValue> {
    let Some(function) = enclosing(launch, |op| raw_op(op).name() == "func.func") else {
        return Vec::new();
    };
    let mut memory = block_arguments(raw_op(function).region_block(0));
    for (alloc, _) in collect_operations(operation_ref(function), |name| name == "memref.alloc") {
        if enclosing(alloc, |op| raw_op(op).name() == "gpu.launch").is_none() {
            memory.extend(raw_op(alloc).results());
        }
    }
    memory
}

/// The accesses inside `scope` (a launch, or a program nest before
/// grid-to-gpu) to `memory`, through views, when all but a staged kernel
/// version's are vector accesses a buffer instruction makes (and there is
/// one); `None` otherwise.
pub(super) fn vector_accesses(memory: MlirValue, scope: MlirOperation) -> Option<Vec<MlirOperation>> {
    if !addressable(memory) {
        return None;
    }
    let (mut views, mut accesses) = (vec![memory], Vec::new());
    let mut index = 0;
    while index < views.len() {
        for (user, operand) in uses(views[index]) {
            if !is_inside(user, scope) {
                continue;
            }
            let op = raw_op(user);
            let name = op.name();
            if VIEWS.contains(&name.as_str()) && operand == 0 {
                views.extend(op.results());
            } else if ACCESSES.contains(&name.as_str()) && buffer_access(op, views[index]) {
                accesses.push(user);
            } else if kernel_version(user) != Some(KernelVersion::Staged) {
                // (The staged version's scalar copies stay global accesses
                // beside the other version's buffer accesses; mixing the
                // two kinds elsewhere measured worse: the softmaxes'
                // exposed latency rose by half where their row loops'
                // scalar loads sat beside buffer loads.)
                return None;
            }
        }
        index += 1;
    }
    (!accesses.is_empty()).then_some(accesses)
}

/// Whether `memory` can be addressed through one buffer resource: a global
/// memref of static size below 2 GiB with the identity layout.
fn addressable(memory: MlirValue) -> bool {
    let r#type = value_type(memory);
    // SAFETY: types live in the context; the memory space is read only from a memref type.
    let global = unsafe { mlirTypeIsAMemRef(r#type) && mlirMemRefTypeGetMemorySpace(r#type).ptr.is_null() };
    global && static_bytes(r#type).is_some_and(|bytes| bytes < LARGEST_BUFFER) && has_identity_layout(r#type)
}

/// The innermost stride of the memref type `r#type`, when static.
fn innermost_stride(r#type: MlirType) -> Option<i64> {
    let (strides, _) = strides_and_offset(r#type)?;
    // SAFETY: a constant of the C API.
    let dynamic = unsafe { mlirShapedTypeGetDynamicStrideOrOffset() };
    strides.last().copied().filter(|&stride| stride != dynamic)
}

/// Whether `op` (one of `ACCESSES`) reads or writes `memref` in one 1-D
/// vector of 1 to 16 bytes, contiguous, unmasked and in bounds.
fn buffer_access(op: RawOp, memref: MlirValue) -> bool {
    let name = op.name();
    let operands = op.operands();
    let (vector, memref_at) = match name.as_str() {
        "vector.load" | "vector.transfer_read" => (value_type(op.results()[0]), 0),
        _ => (value_type(operands[0]), 1),
    };
    if operands.get(memref_at).is_none_or(|operand| operand.ptr != memref.ptr) {
        return false;
    }
    let memref_type = value_type(memref);
    // SAFETY: types live in the context; shapes are read from shaped types only, below their rank.
    let (rank, vector_rank, element_bits, bits) = unsafe {
        if !mlirTypeIsAVector(vector) {
            return false;
        }
        let element_bits = crate::support::ir::element_bits(mlirShapedTypeGetElementType(vector));
        let bits = mlirShapedTypeGetDimSize(vector, 0) * element_bits;
        (mlirShapedTypeGetRank(memref_type) as usize, mlirShapedTypeGetRank(vector), element_bits, bits)
    };
    // The memref, its indices and (reads) the padding: no mask.
    let expected = 1 + rank + usize::from(name.starts_with("vector.transfer") || name == "vector.store");
    // Whole-byte elements (no i1 or i4 vectors), accesses the buffer
    // instructions have: 1, 2, 4, 8 or 16 bytes.
    vector_rank == 1
        && element_bits % 8 == 0
        && matches!(bits, 8 | 16 | 32 | 64 | 128)
        && operands.len() == expected
        && innermost_stride(memref_type) == Some(1)
        && (!name.starts_with("vector.transfer") || transfer_is_plain(op))
}

/// Whether a transfer reads or writes along the innermost dimension
/// (minor identity map) and in bounds.
fn transfer_is_plain(op: RawOp) -> bool {
    let (map, in_bounds) = (op.attribute("permutation_map"), op.attribute("in_bounds"));
    // SAFETY: attributes live in the context; each is read as its kind only after the kind is checked, arrays below their size.
    unsafe {
        !map.ptr.is_null()
            && mlirAttributeIsAAffineMap(map)
            && mlirAffineMapIsMinorIdentity(mlirAffineMapAttrGetValue(map))
            && !in_bounds.ptr.is_null()
            && mlirAttributeIsAArray(in_bounds)
            && (0..mlirArrayAttrGetNumElements(in_bounds)).all(|i| {
                let element = mlirArrayAttrGetElement(in_bounds, i);
                mlirAttributeIsABool(element) && mlirBoolAttrGetValue(element)
            })
    }
}

/// Template lines computing `%at`, the i32 element offset of `%view` at
/// `%i0...` in its underlying memory: the view's strided metadata (offset
/// and strides, which `expand-strided-metadata` folds into the view
/// chain's arithmetic) applied to the indices.
fn element_offset(view: &str, element: &str, rank: usize) -> String {
    let counts = if rank == 1 { String::new() } else { format!(":{rank}") };
    let index_types = join(std::iter::repeat_n("index", 2 * rank + 1));
    let mut body = format!(
        "  %base, %offset, %sizes{counts}, %strides{counts} = memref.extract_strided_metadata %view : {view} -> memref<{element}>, {index_types}\n"
    );
    let mut linear = "%offset".to_string();
    for d in 0..rank {
        let stride = if rank == 1 { "%strides".to_string() } else { format!("%strides#{d}") };
        body +=
            &format!("  %s{d} = arith.muli %i{d}, {stride} : index\n  %l{d} = arith.addi {linear}, %s{d} : index\n");
        linear = format!("%l{d}");
    }
    body + &format!("  %at = arith.index_cast {linear} : index to i32\n")
}

/// Rewrites `accesses` of `memory`'s views into buffer accesses of
/// `memory` seen as one dimension (a reinterpret_cast before `first`).
fn through_buffer(memory: MlirValue, accesses: &[MlirOperation], first: MlirOperation) -> Result<(), String> {
    let context = context_of(first);
    let global = value_type(memory);
    let element = crate::support::ir::element_name(global);
    let elements = static_bytes(global).unwrap_or(0) / crate::support::ir::element_bytes(global);
    let flat_type = format!("memref<{elements}x{element}>");
    let from = print_type(global);
    let flat_text = format!(
        "func.func @template(%m: {from}) -> {flat_type} {{\n  \
         %f = memref.reinterpret_cast %m to offset: [0], sizes: [{elements}], strides: [1] : {from} to {flat_type}\n  \
         return %f : {flat_type}\n}}"
    );
    let flat = template::inline_before(context, first, &flat_text, &[memory]).map_err(|error| error.0)?[0];
    for &access in accesses {
        let op = raw_op(access);
        let name = op.name();
        let operands = op.operands();
        let reads = name == "vector.load" || name == "vector.transfer_read";
        let (memref, value) = if reads { (operands[0], None) } else { (operands[1], Some(operands[0])) };
        let memref_at = usize::from(!reads);
        let view_type = value_type(memref);
        // SAFETY: a ranked memref type (checked by `buffer_access`).
        let rank = unsafe { mlirShapedTypeGetRank(view_type) } as usize;
        let indices = &operands[memref_at + 1..memref_at + 1 + rank];
        let vector = print_type(if reads { value_type(op.results()[0]) } else { value_type(operands[0]) });
        let view = print_type(view_type);
        let index_args = join((0..rank).map(|d| format!("%i{d}: index")));
        let body = element_offset(&view, &element, rank);
        let text = if value.is_some() {
            format!(
                "func.func @template(%flat: {flat_type}, %value: {vector}, %view: {view}, {index_args}) {{\n{body}  \
                 amdgpu.raw_buffer_store %value -> %flat[%at] : {vector} -> {flat_type}, i32\n  return\n}}"
            )
        } else {
            format!(
                "func.func @template(%flat: {flat_type}, %view: {view}, {index_args}) -> {vector} {{\n{body}  \
                 %v = amdgpu.raw_buffer_load %flat[%at] : {flat_type}, i32 -> {vector}\n  return %v : {vector}\n}}"
            )
        };
        let mut args = vec![flat];
        args.extend(value);
        args.push(memref);
        args.extend_from_slice(indices);
        template::replace(context, access, &text, &args).map_err(|error| error.0)?;
    }
    Ok(())
}
