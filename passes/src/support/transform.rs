//! Schedules as transform-dialect scripts: a pass writes the script for the
//! ops it schedules and the upstream transform interpreter applies it, so
//! tiling and vectorization are MLIR's own (tile_using_for, vectorize, the
//! vector lowering patterns), with Tessel choosing only the parameters.

use melior::StringRef;
use mlir_sys::{
    MlirOperation, mlirModuleDestroy, mlirModuleGetOperation, mlirOperationGetContext, mlirTransformApplyNamedSequence,
    mlirTransformOptionsCreate, mlirTransformOptionsDestroy,
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

/// Transform steps applying pattern sets to every function, one set after
/// the other (each `transform.apply_patterns.*` name with its options).
pub fn patterns(phases: &[&[&str]]) -> String {
    let any = "!transform.any_op";
    let mut steps =
        format!("%functions = transform.structured.match ops{{[\"func.func\"]}} in %root : ({any}) -> {any}\n");
    for phase in phases {
        let patterns: String = phase.iter().map(|pattern| format!("  transform.apply_patterns.{pattern}\n")).collect();
        steps.push_str(&format!("transform.apply_patterns to %functions {{\n{patterns}}} : {any}\n"));
    }
    steps
}

/// Transform steps hoisting the loop-invariant reads and writes (an
/// accumulator's) out of the `scf.for`s marked `loop_marker`, so the value
/// stays in registers across the loop.
pub fn hoist(loop_marker: &str) -> String {
    let any = "!transform.any_op";
    format!(
        "%marked_loops = transform.structured.match ops{{[\"scf.for\"]}} attributes{{{loop_marker}}} in %root \
         : ({any}) -> {any}\n\
         transform.apply_licm to %marked_loops : {any}\n\
         transform.loop.hoist_loop_invariant_subsets %marked_loops : {any}\n"
    )
}

/// [`patterns`], then [`hoist`].
pub fn patterns_then_hoist(phases: &[&[&str]], loop_marker: &str) -> String {
    format!("{}{}", patterns(phases), hoist(loop_marker))
}

/// Applies the transform module `text` to `payload`.
pub fn apply(payload: MlirOperation, text: &str) -> Result<(), TransformError> {
    // SAFETY: `payload` is live (crate invariant, support/handles.rs); the
    // parsed script module and the options are ours and destroyed once, on
    // every path, after the interpreter that borrows them returns.
    unsafe {
        let context = mlirOperationGetContext(payload);
        let module = tessel_dialects::ffi::tesselParseModule(context, StringRef::new(text).to_raw());
        if module.ptr.is_null() {
            return Err(TransformError(format!("transform script does not parse:\n{text}")));
        }
        let root = mlirModuleGetOperation(module);
        let Some(entry) =
            tessel_dialects::find_symbol(&crate::support::handles::operation_ref(root), "__transform_main")
                .map(|op| op.to_raw())
        else {
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
