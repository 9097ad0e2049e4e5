//! `tessel-strip-signedness`: signed and unsigned integer types (`ui8`,
//! `si32`) become signless (`i8`, `i32`) everywhere in the module.
//!
//! An entry function may declare its arrays `memref<..xui8>`: that is how
//! the runtime knows to read `.npy` files of `u1` and print 200, not -56.
//! Kernels compute on signless integers (arith's rule; unsigned semantics
//! come from the op: `divui`, `cmpi ult`, `extui`, `uitofp`, `umax`), and
//! `grid.call` hands a kernel the signless ref of its array. The bits are
//! the same, so once the interface has been read the signedness is dropped
//! before any lowering: every pipeline runs this pass first.

use crate::support::handles::{set_attribute, set_value_type, signless, type_attribute, value_type};
use crate::{PassDefinition, PassError, support::ir::block_arguments};
use melior::ir::ValueLike;
use melior::ir::{
    BlockLike, OperationRef, RegionLike,
    attribute::AttributeLike,
    operation::{OperationLike, WalkOrder, WalkResult},
};
use mlir_sys::*;

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-strip-signedness",
    name: "TesselStripSignedness",
    description: "Make signed and unsigned integer types signless",
    anchor: "builtin.module",
    run,
};

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    module.walk(WalkOrder::PreOrder, |operation| {
        let raw = operation.to_raw();
        for index in 0..operation.result_count() {
            strip_value(operation.result(index).expect("result below the count").to_raw());
        }
        for region in operation.regions() {
            let mut block = region.first_block();
            while let Some(current) = block {
                for argument in block_arguments(current.to_raw()) {
                    strip_value(argument);
                }
                block = current.next_in_region();
            }
        }
        if let Ok(function_type) = operation.attribute("function_type")
            && let Some(stripped) = type_of_attribute(function_type.to_raw()).and_then(signless)
        {
            set_attribute(raw, "function_type", type_attribute(stripped));
        }
        if operation.name().as_string_ref().as_str() == Ok("grid.call") {
            strip_scratch(raw, &operation);
        }
        WalkResult::Advance
    });
    Ok(())
}

fn strip_value(value: MlirValue) {
    if let Some(stripped) = signless(value_type(value)) {
        set_value_type(value, stripped);
    }
}

/// The type a type attribute holds.
fn type_of_attribute(attribute: MlirAttribute) -> Option<MlirType> {
    // SAFETY: attributes and types are uniqued in the context; the
    // attribute is checked to be a type attribute.
    unsafe { mlirAttributeIsAType(attribute).then(|| mlirTypeAttrGetValue(attribute)) }
}

/// A `grid.call`'s scratch buffer types (an array of type attributes).
fn strip_scratch(raw: MlirOperation, operation: &OperationRef) {
    let Ok(scratch) = operation.attribute("scratch") else { return };
    let scratch = scratch.to_raw();
    // SAFETY: attributes and types are uniqued in the context; the
    // attribute is checked to be an array, indices stay below its size.
    unsafe {
        if !mlirAttributeIsAArray(scratch) {
            return;
        }
        let elements: Vec<MlirAttribute> =
            (0..mlirArrayAttrGetNumElements(scratch)).map(|i| mlirArrayAttrGetElement(scratch, i)).collect();
        let stripped: Vec<MlirAttribute> = elements
            .iter()
            .map(|&element| type_of_attribute(element).and_then(signless).map_or(element, type_attribute))
            .collect();
        if stripped.iter().zip(&elements).all(|(&a, &b)| mlirAttributeEqual(a, b)) {
            return;
        }
        let array = mlirArrayAttrGet(mlirAttributeGetContext(scratch), stripped.len() as isize, stripped.as_ptr());
        set_attribute(raw, "scratch", array);
    }
}
