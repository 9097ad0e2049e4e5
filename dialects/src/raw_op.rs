//! A thin view of an operation through the C API, for passes and the
//! interpreter that read operands and inherent attributes by name.

use melior::{StringRef, ir::OperationRef, ir::operation::OperationLike};
use mlir_sys::*;

/// An operation seen through its raw handle.
///
/// Made only by [`RawOp::from_raw`], whose caller promises the operation
/// stays alive while the view is used; every method relies on that.
#[derive(Clone, Copy)]
pub struct RawOp(MlirOperation);

impl RawOp {
    /// A view of `op`.
    ///
    /// # Safety
    /// `op` is a live operation, and stays alive (not erased, its context
    /// not dropped) while the view or any copy of it is used.
    pub unsafe fn from_raw(op: MlirOperation) -> Self {
        RawOp(op)
    }

    /// The raw handle.
    pub fn raw(&self) -> MlirOperation {
        self.0
    }

    pub fn name(&self) -> String {
        // SAFETY: the view's contract: a live operation.
        unsafe { OperationRef::from_raw(self.0) }.name().as_string_ref().as_str().unwrap_or("").to_string()
    }

    pub fn operands(&self) -> Vec<MlirValue> {
        // SAFETY: a live operation; indices below its operand count.
        unsafe { (0..mlirOperationGetNumOperands(self.0)).map(|i| mlirOperationGetOperand(self.0, i)).collect() }
    }

    pub fn results(&self) -> Vec<MlirValue> {
        // SAFETY: a live operation; indices below its result count.
        unsafe { (0..mlirOperationGetNumResults(self.0)).map(|i| mlirOperationGetResult(self.0, i)).collect() }
    }

    /// The attribute `name`; null when absent.
    pub fn attribute(&self, name: &str) -> MlirAttribute {
        // SAFETY: a live operation; the name outlives the call.
        unsafe { mlirOperationGetAttributeByName(self.0, StringRef::new(name).to_raw()) }
    }

    pub fn has(&self, name: &str) -> bool {
        !self.attribute(name).ptr.is_null()
    }

    /// An integer attribute (0 when absent).
    pub fn integer(&self, name: &str) -> i64 {
        let attribute = self.attribute(name);
        if attribute.ptr.is_null() {
            return 0;
        }
        // SAFETY: a non-null attribute, read only if it is an integer one.
        unsafe { if mlirAttributeIsAInteger(attribute) { mlirIntegerAttrGetValueInt(attribute) } else { 0 } }
    }

    /// An integer attribute, `default` when absent (module-level settings).
    pub fn integer_or(&self, name: &str, default: i64) -> i64 {
        if self.has(name) { self.integer(name) } else { default }
    }

    /// A string attribute (`None` when absent or not a string).
    pub fn string(&self, name: &str) -> Option<String> {
        let attribute = self.attribute(name);
        // SAFETY: checked non-null before the kind is asked.
        if attribute.ptr.is_null() || !unsafe { mlirAttributeIsAString(attribute) } {
            return None;
        }
        // SAFETY: a string attribute (checked above).
        Some(unsafe { string_value(attribute) })
    }

    /// The strings of an array attribute (empty when absent; elements
    /// that are not strings are left out).
    pub fn strings(&self, name: &str) -> Vec<String> {
        let list = self.attribute(name);
        // SAFETY: checked non-null before the kind is asked.
        if list.ptr.is_null() || !unsafe { mlirAttributeIsAArray(list) } {
            return Vec::new();
        }
        // SAFETY: an array attribute; indices below its size; each
        // element's value read only when it is a string, and copied.
        unsafe {
            (0..mlirArrayAttrGetNumElements(list))
                .map(|k| mlirArrayAttrGetElement(list, k))
                .filter(|&element| mlirAttributeIsAString(element))
                .map(|element| string_value(element))
                .collect()
        }
    }

    /// Sets the array attribute `name` to `strings` (what `strings` reads).
    pub fn set_strings(&self, name: &str, strings: &[String]) {
        // SAFETY: a live operation and its live context; the strings are
        // copied into the context's attributes, which the op then holds.
        unsafe {
            let context = mlirOperationGetContext(self.0);
            let elements: Vec<MlirAttribute> =
                strings.iter().map(|text| mlirStringAttrGet(context, StringRef::new(text).to_raw())).collect();
            let list = mlirArrayAttrGet(context, elements.len() as isize, elements.as_ptr());
            mlirOperationSetAttributeByName(self.0, StringRef::new(name).to_raw(), list);
        }
    }

    /// A `DenseI64ArrayAttr` (empty when absent).
    pub fn integers(&self, name: &str) -> Vec<i64> {
        let raw = self.attribute(name);
        // SAFETY: checked non-null before the kind is asked.
        if raw.ptr.is_null() || !unsafe { mlirAttributeIsADenseI64Array(raw) } {
            return Vec::new();
        }
        // SAFETY: a dense i64 array; indices below its size.
        unsafe { (0..mlirDenseArrayGetNumElements(raw)).map(|i| mlirDenseI64ArrayGetElement(raw, i)).collect() }
    }

    /// Operand counts per ODS operand group (`operandSegmentSizes`).
    pub fn segments(&self) -> Vec<usize> {
        let raw = self.attribute("operandSegmentSizes");
        // SAFETY: checked non-null before the kind is asked.
        if raw.ptr.is_null() || !unsafe { mlirAttributeIsADenseI32Array(raw) } {
            return Vec::new();
        }
        // SAFETY: a dense i32 array; indices below its size.
        unsafe {
            (0..mlirDenseArrayGetNumElements(raw)).map(|i| mlirDenseI32ArrayGetElement(raw, i) as usize).collect()
        }
    }

    /// Replaces the operands, and the operand segment sizes when the op has
    /// them (`segments` empty for an op without groups). The caller keeps
    /// the op well formed: `operands` in group order, `segments` summing to
    /// their number; the verifier reports a mistake.
    pub fn set_operands(&self, operands: &[MlirValue], segments: &[usize]) {
        // SAFETY: a live operation and live values (the view's contract and
        // the caller's); the sizes are copied into a context attribute.
        unsafe {
            mlirOperationSetOperands(self.0, operands.len() as isize, operands.as_ptr());
            if !segments.is_empty() {
                let sizes: Vec<i32> = segments.iter().map(|&size| size as i32).collect();
                let context = mlirOperationGetContext(self.0);
                let attribute = mlirDenseI32ArrayGet(context, sizes.len() as isize, sizes.as_ptr());
                mlirOperationSetAttributeByName(self.0, StringRef::new("operandSegmentSizes").to_raw(), attribute);
            }
        }
    }

    /// The first block of region `index` (null when the region is empty).
    pub fn region_block(&self, index: isize) -> MlirBlock {
        assert!(
            // SAFETY: a live operation.
            (0..unsafe { mlirOperationGetNumRegions(self.0) }).contains(&index),
            "region #{index} of an op with fewer"
        );
        // SAFETY: a live operation and one of its regions.
        unsafe { mlirRegionGetFirstBlock(mlirOperationGetRegion(self.0, index)) }
    }
}

/// The text of string attribute `attribute`, copied.
///
/// # Safety
/// `attribute` is a live string attribute.
unsafe fn string_value(attribute: MlirAttribute) -> String {
    // SAFETY: per the contract; its value lives in the context.
    let value = unsafe { mlirStringAttrGetValue(attribute) };
    // An empty string's data pointer may be null, which a slice may not
    // be made from.
    if value.length == 0 {
        return String::new();
    }
    // SAFETY: a non-empty string of the context: `length` bytes at `data`.
    unsafe { StringRef::from_raw(value) }.as_str().unwrap_or("").to_string()
}
