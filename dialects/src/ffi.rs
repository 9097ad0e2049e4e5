//! Raw bindings of `dialects/include/tessel-c/Tessel.h`.
#![allow(non_snake_case, missing_docs)]

use mlir_sys::{
    MlirAffineMap, MlirAttribute, MlirContext, MlirDialectHandle, MlirLocation, MlirLogicalResult, MlirModule,
    MlirOperation, MlirPass, MlirPassManager, MlirStringRef,
};
use std::ffi::c_void;

/// Opaque `TesselSourceDiagnostics`.
#[repr(C)]
pub struct TesselSourceDiagnostics {
    _private: [u8; 0],
}

/// `TesselSeverity`.
pub const SEVERITY_ERROR: u32 = 0;
pub const SEVERITY_WARNING: u32 = 1;
pub const SEVERITY_REMARK: u32 = 2;

pub type TesselPassFactory = unsafe extern "C" fn(user_data: *mut c_void) -> MlirPass;

unsafe extern "C" {
    pub fn mlirGetDialectHandle__grid__() -> MlirDialectHandle;
    pub fn mlirGetDialectHandle__block__() -> MlirDialectHandle;

    pub fn tesselAttributeIsABlockSpec(attr: MlirAttribute) -> bool;
    pub fn tesselBlockSpecGet(
        ctx: MlirContext,
        full: bool,
        rank: isize,
        block_shape: *const i64,
        index_map: MlirAffineMap,
        unblocked: bool,
        n_padding: isize,
        padding: *const i64,
        index_function: MlirStringRef,
    ) -> MlirAttribute;
    pub fn tesselBlockSpecGetIndexFunction(attr: MlirAttribute) -> MlirStringRef;
    pub fn tesselBlockSpecSqueezed() -> i64;
    pub fn tesselBlockSpecIsFull(attr: MlirAttribute) -> bool;
    pub fn tesselBlockSpecGetRank(attr: MlirAttribute) -> isize;
    pub fn tesselBlockSpecGetBlockDim(attr: MlirAttribute, pos: isize) -> i64;
    pub fn tesselBlockSpecGetIndexMap(attr: MlirAttribute) -> MlirAffineMap;
    pub fn tesselBlockSpecIsUnblocked(attr: MlirAttribute) -> bool;
    pub fn tesselBlockSpecGetNumPadding(attr: MlirAttribute) -> isize;
    pub fn tesselBlockSpecGetPadding(attr: MlirAttribute, pos: isize) -> i64;
    pub fn tesselDimensionSemanticsGet(ctx: MlirContext, arbitrary: bool) -> MlirAttribute;

    pub fn tesselOperationIsMemoryEffectFree(op: MlirOperation) -> bool;

    pub fn tesselEmitDiagnostic(loc: MlirLocation, severity: u32, message: MlirStringRef);

    pub fn tesselRegisterPass(factory: TesselPassFactory, user_data: *mut c_void);
    pub fn tesselIsRegisteredPass(argument: MlirStringRef) -> bool;
    pub fn tesselRegisterPassPipeline(argument: MlirStringRef, description: MlirStringRef, pipeline: MlirStringRef);
    pub fn tesselPrintRegisteredPasses();
    pub fn tesselRegisterCppPasses();
    pub fn tesselPassManagerCreateImplicitNesting(ctx: MlirContext) -> MlirPassManager;

    pub fn tesselSourceDiagnosticsCreate(
        ctx: MlirContext,
        buffer: MlirStringRef,
        buffer_name: MlirStringRef,
        verify: bool,
    ) -> *mut TesselSourceDiagnostics;
    pub fn tesselSourceDiagnosticsParse(diagnostics: *mut TesselSourceDiagnostics) -> MlirOperation;
    pub fn tesselParseModule(ctx: MlirContext, text: MlirStringRef) -> MlirModule;
    pub fn tesselInstructionTiming(
        triple: MlirStringRef,
        cpu: MlirStringRef,
        features: MlirStringRef,
        instruction: MlirStringRef,
        latency: *mut i64,
        reciprocal_throughput: *mut f64,
    ) -> bool;
    pub fn tesselCompareCpuFeatures(
        triple: MlirStringRef,
        cpu: MlirStringRef,
        features: MlirStringRef,
        difference: unsafe extern "C" fn(feature: MlirStringRef, host_has: bool, data: *mut std::ffi::c_void),
        data: *mut std::ffi::c_void,
    ) -> bool;
    pub fn tesselSourceDiagnosticsVerify(diagnostics: *mut TesselSourceDiagnostics) -> MlirLogicalResult;
    pub fn tesselSourceDiagnosticsDestroy(diagnostics: *mut TesselSourceDiagnostics);
}
