//! Schedules as transform-dialect scripts: a pass writes the script for the
//! ops it schedules and the upstream transform interpreter applies it, so
//! tiling and vectorization are MLIR's own (tile_using_for, vectorize, the
//! vector lowering patterns), with Tessel choosing only the parameters.

use melior::StringRef;
use mlir_sys::{
    MlirOperation, mlirModuleDestroy, mlirModuleGetOperation,
    mlirOperationGetContext, mlirTransformApplyNamedSequence, mlirTransformOptionsCreate,
    mlirTransformOptionsDestroy,
};

/// Why a script did not apply; the interpreter's diagnostics went to the
/// context's handlers.
#[derive(Debug)]
pub struct TransformError(pub String);

/// Wraps the body of `@__transform_main` (which gets the payload root as
/// `%root`) into a transform module.
pub fn script(body: &str) -> String {
    format!(
        "module attributes {{transform.with_named_sequence}} {{\n\
         transform.named_sequence @__transform_main(%root: !transform.any_op {{transform.readonly}}) {{\n\
         {body}transform.yield\n}}\n}}\n"
    )
}

/// Applies the transform module `text` to `payload`.
pub fn apply(payload: MlirOperation, text: &str) -> Result<(), TransformError> {
    unsafe {
        let context = mlirOperationGetContext(payload);
        let module = tessel_dialects::ffi::tesselParseModule(context, StringRef::new(text).to_raw());
        if module.ptr.is_null() {
            return Err(TransformError(format!("transform script does not parse:\n{text}")));
        }
        let root = mlirModuleGetOperation(module);
        let Some(entry) = tessel_dialects::find_symbol(root, "__transform_main") else {
            mlirModuleDestroy(module);
            return Err(TransformError("transform script without @__transform_main".into()));
        };
        let options = mlirTransformOptionsCreate();
        let result = mlirTransformApplyNamedSequence(payload, entry, root, options);
        mlirTransformOptionsDestroy(options);
        mlirModuleDestroy(module);
        if result.value != 0 { Ok(()) } else { Err(TransformError("transform script failed".into())) }
    }
}
