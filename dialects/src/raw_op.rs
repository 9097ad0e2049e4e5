//! A thin view of an operation through the C API, for passes and the
//! interpreter that read operands and inherent attributes by name.

use melior::{StringRef, ir::OperationRef, ir::operation::OperationLike};
use mlir_sys::*;

/// An operation seen through its raw handle.
#[derive(Clone, Copy)]
pub struct RawOp(pub MlirOperation);

impl RawOp {
    pub fn name(&self) -> String {
        unsafe { OperationRef::from_raw(self.0) }.name().as_string_ref().as_str().unwrap_or("").to_string()
    }

    pub fn operands(&self) -> Vec<MlirValue> {
        unsafe { (0..mlirOperationGetNumOperands(self.0)).map(|i| mlirOperationGetOperand(self.0, i)).collect() }
    }

    pub fn results(&self) -> Vec<MlirValue> {
        unsafe { (0..mlirOperationGetNumResults(self.0)).map(|i| mlirOperationGetResult(self.0, i)).collect() }
    }

    /// The attribute `name`; null when absent.
    pub fn attribute(&self, name: &str) -> MlirAttribute {
        unsafe { mlirOperationGetAttributeByName(self.0, StringRef::new(name).to_raw()) }
    }

    pub fn has(&self, name: &str) -> bool {
        !self.attribute(name).ptr.is_null()
    }

    /// An integer attribute (0 when absent).
    pub fn integer(&self, name: &str) -> i64 {
        let attribute = self.attribute(name);
        if attribute.ptr.is_null() { 0 } else { unsafe { mlirIntegerAttrGetValueInt(attribute) } }
    }

    /// An integer attribute, `default` when absent (module-level settings).
    pub fn integer_or(&self, name: &str, default: i64) -> i64 {
        if self.has(name) { self.integer(name) } else { default }
    }

    /// A string attribute (`None` when absent or not a string).
    pub fn string(&self, name: &str) -> Option<String> {
        let attribute = self.attribute(name);
        if attribute.ptr.is_null() || !unsafe { mlirAttributeIsAString(attribute) } {
            return None;
        }
        let value = unsafe { StringRef::from_raw(mlirStringAttrGetValue(attribute)) };
        value.as_str().ok().map(str::to_string)
    }

    /// A `DenseI64ArrayAttr` (empty when absent).
    pub fn integers(&self, name: &str) -> Vec<i64> {
        let raw = self.attribute(name);
        if raw.ptr.is_null() {
            return Vec::new();
        }
        unsafe { (0..mlirDenseArrayGetNumElements(raw)).map(|i| mlirDenseI64ArrayGetElement(raw, i)).collect() }
    }

    /// Operand counts per ODS operand group (`operandSegmentSizes`).
    pub fn segments(&self) -> Vec<usize> {
        let raw = self.attribute("operandSegmentSizes");
        if raw.ptr.is_null() {
            return Vec::new();
        }
        unsafe {
            (0..mlirDenseArrayGetNumElements(raw)).map(|i| mlirDenseI32ArrayGetElement(raw, i) as usize).collect()
        }
    }

    /// The first block of region `index` (null when the region is empty).
    pub fn region_block(&self, index: isize) -> MlirBlock {
        unsafe { mlirRegionGetFirstBlock(mlirOperationGetRegion(self.0, index)) }
    }
}
