//! A read/write view of a `grid.call` operation for Rust passes.

use crate::{AxisSemantics, BlockSpec, BlockSpecError, ffi};
use melior::ir::{
    Attribute, AttributeLike, OperationRef, TypeLike, Value, ValueLike,
    attribute::ArrayAttribute,
    operation::{OperationLike, OperationMutLike, OperationRefMut},
};
use mlir_sys::{
    mlirArrayAttrGetElement, mlirArrayAttrGetNumElements, mlirDenseArrayGetNumElements, mlirDenseI32ArrayGetElement,
    mlirDenseI64ArrayGetElement, mlirIntegerAttrGetValueInt, mlirShapedTypeGetDimSize, mlirShapedTypeGetRank,
    mlirTypeAttrGetValue,
};

/// A grid size given as a value (MLIR's `ShapedType::kDynamic`).
pub const DYNAMIC: i64 = i64::MIN;

/// One array operand of a call with its BlockSpec.
#[derive(Clone, Debug)]
pub struct Operand<'c, 'a> {
    pub value: Value<'c, 'a>,
    pub shape: Vec<i64>,
    pub spec: BlockSpec,
}

/// A verified `grid.call`.
pub struct GridCall<'c, 'a> {
    operation: OperationRef<'c, 'a>,
}

impl<'c, 'a> GridCall<'c, 'a> {
    pub const NAME: &'static str = "grid.call";

    /// `None` unless `operation` is a `grid.call`.
    pub fn new(operation: OperationRef<'c, 'a>) -> Option<Self> {
        (operation.name().as_string_ref().as_str() == Ok(Self::NAME)).then_some(Self { operation })
    }

    pub fn operation(&self) -> OperationRef<'c, 'a> {
        self.operation
    }

    /// The kernel's symbol name, without `@`.
    pub fn callee(&self) -> String {
        let attribute = self.operation.attribute("callee").expect("verified grid.call");
        let text = attribute.to_string();
        text.trim_start_matches('@').trim_matches('"').to_string()
    }

    /// Grid sizes, one per axis (empty: one program); [`DYNAMIC`] for a
    /// size given as a value (`dynamic_grid`).
    pub fn grid(&self) -> Vec<i64> {
        let raw = self.operation.attribute("grid").expect("verified grid.call").to_raw();
        // SAFETY: the op is a verified grid.call (`new` checks the name; the verifier the attribute kinds): `grid` is a dense i64 array; indices below its size.
        unsafe { (0..mlirDenseArrayGetNumElements(raw)).map(|i| mlirDenseI64ArrayGetElement(raw, i)).collect() }
    }

    /// The values of the grid's dynamic sizes, in axis order.
    pub fn dynamic_grid(&self) -> Vec<Value<'c, 'a>> {
        self.segment(3).map(|position| self.operation.operand(position).expect("verified grid.call")).collect()
    }

    /// Operand positions of segment `index`: inputs, outputs, scalars,
    /// dynamic grid sizes.
    fn segment(&self, index: isize) -> std::ops::Range<usize> {
        let raw = self.operation.attribute("operandSegmentSizes").expect("verified grid.call").to_raw();
        // SAFETY: the op is a verified grid.call (`new` checks the name; the verifier the attribute kinds): four operand segments (inputs, outputs, scalars, dynamic grid sizes), `index` below 4.
        let sizes: Vec<usize> = (0..=index).map(|i| unsafe { mlirDenseI32ArrayGetElement(raw, i) } as usize).collect();
        let start: usize = sizes[..index as usize].iter().sum();
        start..start + sizes[index as usize]
    }

    /// The scalar arrays (scalar prefetch): the kernel's first refs, whole,
    /// and the trailing arguments of index functions.
    pub fn scalars(&self) -> Vec<Value<'c, 'a>> {
        self.segment(2).map(|position| self.operation.operand(position).expect("verified grid.call")).collect()
    }

    fn operands(&self, segment: isize, specs: &str) -> Result<Vec<Operand<'c, 'a>>, BlockSpecError> {
        let specs = self.operation.attribute(specs).expect("verified grid.call").to_raw();
        self.segment(segment)
            .enumerate()
            .map(|(i, position)| {
                let value = self.operation.operand(position).expect("verified grid.call");
                // Verified: a statically shaped memref.
                let raw_type = value.r#type().to_raw();
                // SAFETY: a ranked memref type; dimensions below its rank.
                let shape = unsafe {
                    (0..mlirShapedTypeGetRank(raw_type))
                        .map(|d| mlirShapedTypeGetDimSize(raw_type, d as isize))
                        .collect()
                };
                // SAFETY: the op is a verified grid.call (`new` checks the name; the verifier the attribute kinds): one spec per operand of the segment.
                let spec = unsafe { Attribute::from_raw(mlirArrayAttrGetElement(specs, i as isize)) };
                Ok(Operand { value, shape, spec: BlockSpec::from_attribute(spec)? })
            })
            .collect()
    }

    pub fn inputs(&self) -> Result<Vec<Operand<'c, 'a>>, BlockSpecError> {
        self.operands(0, "in_specs")
    }

    pub fn outputs(&self) -> Result<Vec<Operand<'c, 'a>>, BlockSpecError> {
        self.operands(1, "out_specs")
    }

    /// The scratch buffer types, printed.
    pub fn scratch_types(&self) -> Vec<String> {
        let Ok(scratch) = self.operation.attribute("scratch") else {
            return Vec::new();
        };
        let raw = scratch.to_raw();
        // SAFETY: the op is a verified grid.call (`new` checks the name; the verifier the attribute kinds): `scratch` is an array of type attributes.
        unsafe {
            (0..mlirArrayAttrGetNumElements(raw))
                .map(|i| melior::ir::Type::from_raw(mlirTypeAttrGetValue(mlirArrayAttrGetElement(raw, i))).to_string())
                .collect()
        }
    }

    /// The positions in `scratch_types` of the semaphore scratch (i32
    /// counters, zero where a worker's programs start).
    pub fn semaphore_scratch(&self) -> Vec<usize> {
        self.scratch_positions("semaphores")
    }

    /// The positions in `scratch_types` of the scratch shared by every
    /// program of the call (`shared`: `pltpu.VMEM_SHARED`).
    pub fn shared_scratch(&self) -> Vec<usize> {
        self.scratch_positions("shared")
    }

    /// Whether the leading axis is a core mesh (`cores`): its programs
    /// run at once and signal each other.
    pub fn cores(&self) -> bool {
        self.operation.attribute("cores").is_ok()
    }

    /// The scratch positions a dense i64 array attribute `name` lists.
    fn scratch_positions(&self, name: &str) -> Vec<usize> {
        let Ok(positions) = self.operation.attribute(name) else {
            return Vec::new();
        };
        let raw = positions.to_raw();
        // SAFETY: the op is a verified grid.call: `semaphores` and `shared`
        // are dense i64 array attributes; indices stay below their element
        // count.
        unsafe {
            (0..mlirDenseArrayGetNumElements(raw)).map(|i| mlirDenseI64ArrayGetElement(raw, i) as usize).collect()
        }
    }

    /// The written `semantics`, if any.
    pub fn semantics(&self) -> Option<Vec<AxisSemantics>> {
        let raw = self.operation.attribute("semantics").ok()?.to_raw();
        // SAFETY: the op is a verified grid.call (`new` checks the name; the verifier the attribute kinds): `semantics` is an array of integer-valued enum attributes.
        unsafe {
            (0..mlirArrayAttrGetNumElements(raw))
                .map(|i| AxisSemantics::from_ods(mlirIntegerAttrGetValueInt(mlirArrayAttrGetElement(raw, i))))
                .collect::<Option<Vec<_>>>()
        }
    }

    /// Writes `semantics` on the op.
    pub fn set_semantics(&self, semantics: &[AxisSemantics]) {
        let context = self.operation.context();
        let elements: Vec<Attribute> = semantics
            .iter()
            // SAFETY: the op's context is live while the op is.
            .map(|axis| unsafe {
                Attribute::from_raw(ffi::tesselDimensionSemanticsGet(
                    context.to_ref().to_raw(),
                    *axis == AxisSemantics::Arbitrary,
                ))
            })
            .collect();
        // SAFETY: the op's context is live while the op is.
        let array = ArrayAttribute::new(unsafe { context.to_ref() }, &elements);
        // SAFETY: the view holds the only handle being written through here;
        // setting an attribute does not invalidate other views of the op.
        let mut operation = unsafe { OperationRefMut::from_raw(self.operation.to_raw()) };
        operation.set_inherent_attribute("semantics", array.into());
    }
}
