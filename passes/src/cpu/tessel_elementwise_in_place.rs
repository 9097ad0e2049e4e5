//! `tessel-elementwise-in-place`: an element-wise `linalg.generic` that
//! writes a fresh tensor writes into one of its operands instead.
//!
//! `convert-elementwise-to-linalg` gives every element-wise op a
//! `tensor.empty` destination, so one-shot bufferization allocates a
//! buffer for each result. In a loop that is an allocation per trip, and
//! a loop-carried value computed that way (attention's `acc * alpha`, which
//! the next `block.dot` accumulates into) ends in a buffer other than the
//! iteration argument's, which bufferization then copies to yield: a
//! 32 KiB allocation and copy per trip. When the result has the type and
//! indexing map of an operand, the operand becomes the destination (its
//! block argument is left unread, so the values computed do not change):
//! one-shot analysis then computes in place where that operand's buffer
//! is writable and not read afterwards, and allocates a buffer as before
//! (without a copy: the destination is not read) where it is not — an
//! input block is never written (its tensor is not writable).
//!
//! Runs on tensors, after the element-wise fusions and before tiling.

use crate::support::handles::{raw_op, result_of, value_type};
use crate::support::ir::{block_arguments, collect_operations, defining_op, region_blocks, uses};
use crate::{PassDefinition, PassError};
use melior::ir::OperationRef;
use mlir_sys::*;

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-elementwise-in-place",
    name: "TesselElementwiseInPlace",
    description: "Give element-wise linalg.generics an operand of their result's type as destination",
    anchor: "builtin.module",
    run,
};

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    for (generic, _) in collect_operations(module, |name| name == "linalg.generic") {
        if let Some(input) = reusable_input(generic) {
            let inputs = raw_op(generic).segments()[0];
            // SAFETY: the crate invariant: a live generic whose one init is
            // operand `inputs`; `input` is one of its operands, of the
            // init's type, defined before it.
            unsafe { mlirOperationSetOperand(generic, inputs as isize, input) };
        }
    }
    Ok(())
}

/// The operand an element-wise generic may take as its destination: of
/// the result's type and indexing map, when the generic has one init, a
/// `tensor.empty` (CSE may share it with other ops, which keep it) unread
/// by its body, only parallel iterators, and a result not stored to a ref.
fn reusable_input(generic: MlirOperation) -> Option<MlirValue> {
    let op = raw_op(generic);
    let segments = op.segments();
    let (&[inputs, 1], true) = (segments.as_slice(), op.results().len() == 1) else { return None };
    let operands = op.operands();
    let init = operands[inputs];
    let empty = defining_op(init).is_some_and(|def| raw_op(def).name() == "tensor.empty");
    if !empty || !all_parallel(op.attribute("iterator_types")) || stored(result_of(generic, 0)) {
        return None;
    }
    let body = *region_blocks(generic).first()?;
    let out_argument = *block_arguments(body).last()?;
    if !uses(out_argument).is_empty() {
        return None;
    }
    let maps = op.attribute("indexing_maps");
    // SAFETY: attributes live in the context; the maps are an array with an entry per operand (the verifier's).
    let map_of = |index: usize| unsafe { mlirArrayAttrGetElement(maps, index as isize) };
    let result_type = value_type(result_of(generic, 0));
    (0..inputs).map(|index| (index, operands[index])).find_map(|(index, input)| {
        // SAFETY: types and attributes are uniqued in the context.
        let same = unsafe {
            mlirTypeEqual(value_type(input), result_type) && mlirAttributeEqual(map_of(index), map_of(inputs))
        };
        same.then_some(input)
    })
}

/// Whether `value` is stored to a ref: `eliminate-empty-tensors` then
/// computes it in the ref itself, which beats any operand's buffer.
fn stored(value: MlirValue) -> bool {
    uses(value).into_iter().any(|(user, _)| raw_op(user).name() == "bufferization.materialize_in_destination")
}

/// Whether an `iterator_types` array holds only parallel iterators.
fn all_parallel(iterators: MlirAttribute) -> bool {
    if iterators.ptr.is_null() {
        return false;
    }
    let text = crate::support::handles::attribute_text(iterators);
    text.contains("parallel") && !text.contains("reduction")
}
