//! Builders for the ops with operand segments (`block.load`, `block.store`,
//! `block.atomic_rmw`, `grid.call`).
//!
//! melior 0.27's generated builders write all-zero `operandSegmentSizes` for
//! ops that mix single and variadic operands, which the verifier rejects;
//! these build the same ops through `OperationBuilder` with the segments
//! filled in. The generated builders in [`crate::block`] and [`crate::grid`]
//! are right for every other op.

use crate::{AtomicKind, AxisSemantics, BlockSpec, BlockSpecError, ffi};
use melior::{
    Context,
    ir::{
        Attribute, Identifier, Location, Operation, Type, Value,
        attribute::{
            ArrayAttribute, DenseI32ArrayAttribute, DenseI64ArrayAttribute, FlatSymbolRefAttribute, IntegerAttribute,
            TypeAttribute,
        },
        operation::OperationBuilder,
        r#type::IntegerType,
    },
};

fn segments<'c>(context: &'c Context, sizes: &[usize]) -> (Identifier<'c>, Attribute<'c>) {
    let sizes: Vec<i32> = sizes.iter().map(|&size| size as i32).collect();
    (Identifier::new(context, "operandSegmentSizes"), DenseI32ArrayAttribute::new(context, &sizes).into())
}

/// `block.load %ref[offsets] [sizes] mask %m other %o : memref -> result`.
#[allow(clippy::too_many_arguments)]
pub fn load<'c>(
    context: &'c Context,
    r#ref: Value<'c, '_>,
    offsets: &[Value<'c, '_>],
    sizes: Option<&[i64]>,
    mask: Option<Value<'c, '_>>,
    other: Option<Value<'c, '_>>,
    result: Type<'c>,
    location: Location<'c>,
) -> Operation<'c> {
    // The last segment is a gather's indices (none here).
    let mut attributes =
        vec![segments(context, &[1, offsets.len(), mask.is_some() as usize, other.is_some() as usize, 0])];
    if let Some(sizes) = sizes {
        attributes.push((Identifier::new(context, "sizes"), DenseI64ArrayAttribute::new(context, sizes).into()));
    }
    let operands: Vec<Value> = [r#ref].into_iter().chain(offsets.iter().copied()).chain(mask).chain(other).collect();
    OperationBuilder::new("block.load", location)
        .add_operands(&operands)
        .add_attributes(&attributes)
        .add_results(&[result])
        .build()
        .expect("valid block.load")
}

/// `block.store %value, %ref[offsets] mask %m : tensor, memref`.
pub fn store<'c>(
    context: &'c Context,
    value: Value<'c, '_>,
    r#ref: Value<'c, '_>,
    offsets: &[Value<'c, '_>],
    mask: Option<Value<'c, '_>>,
    location: Location<'c>,
) -> Operation<'c> {
    write_access(context, "block.store", vec![], value, r#ref, offsets, mask, location)
}

/// `block.atomic_rmw kind %value, %ref[offsets] mask %m : tensor, memref`.
pub fn atomic_rmw<'c>(
    context: &'c Context,
    kind: AtomicKind,
    value: Value<'c, '_>,
    r#ref: Value<'c, '_>,
    offsets: &[Value<'c, '_>],
    mask: Option<Value<'c, '_>>,
    location: Location<'c>,
) -> Operation<'c> {
    let kind = IntegerAttribute::new(IntegerType::new(context, 32).into(), kind.ods());
    let attributes = vec![(Identifier::new(context, "kind"), kind.into())];
    write_access(context, "block.atomic_rmw", attributes, value, r#ref, offsets, mask, location)
}

/// Store and atomic_rmw share their operand layout: value, ref, offsets, mask.
#[allow(clippy::too_many_arguments)]
fn write_access<'c>(
    context: &'c Context,
    name: &str,
    mut attributes: Vec<(Identifier<'c>, Attribute<'c>)>,
    value: Value<'c, '_>,
    r#ref: Value<'c, '_>,
    offsets: &[Value<'c, '_>],
    mask: Option<Value<'c, '_>>,
    location: Location<'c>,
) -> Operation<'c> {
    let operands: Vec<Value> = [value, r#ref].into_iter().chain(offsets.iter().copied()).chain(mask).collect();
    let mut sizes = vec![1, 1, offsets.len(), mask.is_some() as usize];
    if name == "block.store" {
        // A scatter's indices (none here).
        sizes.push(0);
    }
    attributes.push(segments(context, &sizes));
    OperationBuilder::new(name, location)
        .add_operands(&operands)
        .add_attributes(&attributes)
        .build()
        .unwrap_or_else(|_| panic!("valid {name}"))
}

/// The operands and specs of a `grid.call`.
pub struct CallSpec<'c, 'a, 's> {
    pub kernel: &'s str,
    pub grid: &'s [i64],
    pub inputs: &'s [(Value<'c, 'a>, BlockSpec)],
    pub outputs: &'s [(Value<'c, 'a>, BlockSpec)],
    pub scratch: &'s [Type<'c>],
    /// `None`: left to `grid-verify-specs` to infer.
    pub semantics: Option<&'s [AxisSemantics]>,
}

/// `grid.call @kernel grid [...] ins(...) outs(...) ...`.
pub fn grid_call<'c>(
    context: &'c Context,
    call: &CallSpec<'c, '_, '_>,
    location: Location<'c>,
) -> Result<Operation<'c>, BlockSpecError> {
    let specs = |operands: &[(Value, BlockSpec)]| -> Result<Attribute<'c>, BlockSpecError> {
        let specs = operands.iter().map(|(_, spec)| spec.to_attribute(context)).collect::<Result<Vec<_>, _>>()?;
        Ok(ArrayAttribute::new(context, &specs).into())
    };
    let mut attributes = vec![
        (Identifier::new(context, "callee"), FlatSymbolRefAttribute::new(context, call.kernel).into()),
        (Identifier::new(context, "grid"), DenseI64ArrayAttribute::new(context, call.grid).into()),
        (Identifier::new(context, "in_specs"), specs(call.inputs)?),
        (Identifier::new(context, "out_specs"), specs(call.outputs)?),
        segments(context, &[call.inputs.len(), call.outputs.len(), 0, 0]),
    ];
    if !call.scratch.is_empty() {
        let types: Vec<Attribute> = call.scratch.iter().map(|&t| TypeAttribute::new(t).into()).collect();
        attributes.push((Identifier::new(context, "scratch"), ArrayAttribute::new(context, &types).into()));
    }
    if let Some(semantics) = call.semantics {
        let values: Vec<Attribute> = semantics
            .iter()
            // SAFETY: `context` is live (borrowed); the C++ side returns a
            // uniqued enum attribute of it.
            .map(|axis| unsafe {
                Attribute::from_raw(ffi::tesselDimensionSemanticsGet(
                    context.to_raw(),
                    *axis == AxisSemantics::Arbitrary,
                ))
            })
            .collect();
        attributes.push((Identifier::new(context, "semantics"), ArrayAttribute::new(context, &values).into()));
    }
    let operands: Vec<Value> = call.inputs.iter().chain(call.outputs).map(|(value, _)| *value).collect();
    Ok(OperationBuilder::new("grid.call", location)
        .add_operands(&operands)
        .add_attributes(&attributes)
        .build()
        .expect("valid grid.call"))
}
