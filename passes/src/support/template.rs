//! Rewriting by IR templates: a replacement is written as MLIR text, a
//! `func.func @template` whose arguments stand for existing values; its body
//! is parsed, verified and inlined in place of an operation.
//!
//! Lowerings stay readable (the IR they produce is written out as IR) and
//! every template is checked by MLIR's parser and verifiers when it is used.

use crate::PassError;
use crate::support::handles::{context_of, location_of};
use crate::support::ir::{element_type, print_type};
use melior::StringRef;
use melior::ir::operation::OperationLike;
use mlir_sys::{
    MlirBlock, MlirContext, MlirOperation, MlirType, MlirValue, mlirBlockGetFirstOperation, mlirBlockGetTerminator,
    mlirBlockInsertOwnedOperation, mlirIRRewriterCreate, mlirIRRewriterDestroy, mlirModuleDestroy, mlirModuleGetBody,
    mlirModuleGetOperation, mlirOperationGetFirstRegion, mlirOperationGetLocation, mlirOperationGetNextInBlock,
    mlirOperationGetNumOperands, mlirOperationGetOperand, mlirOperationRemoveFromParent, mlirOperationSetLocation,
    mlirRegionGetFirstBlock, mlirRewriterBaseEraseOp, mlirRewriterBaseInlineBlockBefore,
    mlirRewriterBaseReplaceOpWithValues, mlirRewriterBaseSetInsertionPointBefore, mlirTypeIsAShaped, mlirTypeIsATensor,
    mlirTypeIsAVector,
};

/// Appends formatted text to an IR template. Writing to a `String` cannot
/// fail, so unlike `write!` there is no `Result` to unwrap.
macro_rules! emit {
    ($text:expr, $($arg:tt)*) => {
        $text.push_str(&format!($($arg)*))
    };
}

/// As [`emit!`], then a newline.
macro_rules! emit_line {
    ($text:expr, $($arg:tt)*) => {{
        $text.push_str(&format!($($arg)*));
        $text.push('\n');
    }};
}

pub(crate) use {emit, emit_line};

/// Emits the conjunction of `conditions` (`i1` SSA names) into `text` as a
/// chain of `arith.andi`s named `<prefix><k>`, and returns the name that
/// holds it (the condition itself when there is one; none for none).
pub(crate) fn emit_conjunction(text: &mut String, conditions: &[String], prefix: &str) -> Option<String> {
    let (first, rest) = conditions.split_first()?;
    let mut all = first.clone();
    for (k, condition) in rest.iter().enumerate() {
        emit_line!(text, "{prefix}{k} = arith.andi {all}, {condition} : i1");
        all = format!("{prefix}{k}");
    }
    Some(all)
}

/// Why a template could not be used: a bug in the pass that wrote it.
#[derive(Debug)]
pub struct TemplateError(pub String);

fn template_body(module: mlir_sys::MlirModule) -> Option<MlirBlock> {
    // SAFETY: `module` is the live template module the caller parsed.
    let module_op = unsafe { mlirModuleGetOperation(module) };
    let function = tessel_dialects::find_symbol(&crate::support::handles::operation_ref(module_op), "template")?;
    // SAFETY: a function of that module, with one region.
    Some(unsafe { mlirRegionGetFirstBlock(mlirOperationGetFirstRegion(function.to_raw())) })
}

/// Inlines the body of `@template` (from `text`) before `anchor`, binding
/// its arguments to `args`, and returns the values its `return` returned.
/// Other functions in `text` (declarations the template calls) are only
/// there for the verifier and are dropped.
pub fn inline_before(
    context: MlirContext,
    anchor: MlirOperation,
    text: &str,
    args: &[MlirValue],
) -> Result<Vec<MlirValue>, TemplateError> {
    inline_ops_before(context, anchor, text, args).map(|inlined| inlined.results)
}

/// What `inline_ops_before` inlined.
pub struct Inlined {
    /// The values the template's `return` returned.
    pub results: Vec<MlirValue>,
    /// The template's top-level ops, now before the anchor, in order (its
    /// `return` erased).
    pub operations: Vec<MlirOperation>,
}

/// As [`inline_before`], also giving the ops it inlined.
pub fn inline_ops_before(
    context: MlirContext,
    anchor: MlirOperation,
    text: &str,
    args: &[MlirValue],
) -> Result<Inlined, TemplateError> {
    // SAFETY: `context` and `anchor` are live (crate invariant,
    // support/handles.rs); the parsed template module is ours: its body is
    // inlined before `anchor` with `args` bound (as many as its arguments,
    // else it would not have verified against them), its terminator erased,
    // and the emptied module destroyed once, on every path.
    unsafe {
        let module = tessel_dialects::ffi::tesselParseModule(context, StringRef::new(text).to_raw());
        if module.ptr.is_null() {
            return Err(TemplateError(format!("template does not parse:\n{text}")));
        }
        let Some(body) = template_body(module) else {
            mlirModuleDestroy(module);
            return Err(TemplateError(format!("no func.func @template in:\n{text}")));
        };
        let terminator = mlirBlockGetTerminator(body);
        // A returned argument of the template is the value bound to it (the
        // argument itself goes with the template's block).
        let results: Vec<MlirValue> = (0..mlirOperationGetNumOperands(terminator))
            .map(|i| {
                let value = mlirOperationGetOperand(terminator, i);
                if mlir_sys::mlirValueIsABlockArgument(value)
                    && mlir_sys::mlirBlockArgumentGetOwner(value).ptr == body.ptr
                {
                    args[mlir_sys::mlirBlockArgumentGetArgNumber(value) as usize]
                } else {
                    value
                }
            })
            .collect();
        // The template's ops take the location of what they replace.
        let location = mlirOperationGetLocation(anchor);
        let mut operations = Vec::new();
        let mut op = mlirBlockGetFirstOperation(body);
        while !op.ptr.is_null() {
            if op.ptr != terminator.ptr {
                operations.push(op);
            }
            melior::ir::OperationRef::from_raw(op).walk(melior::ir::operation::WalkOrder::PreOrder, |nested| {
                mlirOperationSetLocation(nested.to_raw(), location);
                melior::ir::operation::WalkResult::Advance
            });
            op = mlirOperationGetNextInBlock(op);
        }
        let rewriter = mlirIRRewriterCreate(context);
        mlirRewriterBaseSetInsertionPointBefore(rewriter, anchor);
        mlirRewriterBaseInlineBlockBefore(rewriter, body, anchor, args.len() as isize, args.as_ptr());
        mlirRewriterBaseEraseOp(rewriter, terminator);
        mlirIRRewriterDestroy(rewriter);
        mlirModuleDestroy(module);
        Ok(Inlined { results, operations })
    }
}

/// Replaces `operation` by the template's body; its results by the
/// template's returned values.
pub fn replace(
    context: MlirContext,
    operation: MlirOperation,
    text: &str,
    args: &[MlirValue],
) -> Result<(), TemplateError> {
    let results = inline_before(context, operation, text, args)?;
    // SAFETY: `operation` is live (crate invariant) and `results` are the inlined template's values, one per result of `operation` (the template verified against its types), so replacing leaves no use of it; the rewriter is ours.
    unsafe {
        let rewriter = mlirIRRewriterCreate(context);
        mlirRewriterBaseReplaceOpWithValues(rewriter, operation, results.len() as isize, results.as_ptr());
        mlirIRRewriterDestroy(rewriter);
    }
    Ok(())
}

/// The rewrite of one operation: a template and the values bound to its
/// arguments.
pub type Rewrite = (String, Vec<MlirValue>);

/// Replaces every op nested in `module` whose name `wanted` accepts, in
/// post-order, by the template `rewrite` gives for it (`Ok(None)` leaves it
/// alone). A failure is an error at the op's location, prefixed with the
/// pass's name, and fails the pass.
pub fn rewrite_each(
    module: melior::ir::OperationRef<'static, '_>,
    wanted: impl Fn(&str) -> bool,
    mut rewrite: impl FnMut(MlirOperation, &str) -> Result<Option<Rewrite>, String>,
) -> Result<(), PassError> {
    for (raw, name) in crate::support::ir::collect_operations(module, wanted) {
        let result = rewrite(raw, &name).and_then(|rewrite| match rewrite {
            Some((text, args)) => replace(context_of(raw), raw, &text, &args).map_err(|e| e.0),
            None => Ok(()),
        });
        if let Err(message) = result {
            return Err(PassError::at(location_of(raw), message));
        }
    }
    Ok(())
}

/// Inserts the op `text` (one module-level op: a global, a declaration) at
/// the start of `module`'s body, unless `module` already has the symbol
/// `name`.
pub fn define_symbol(context: MlirContext, module: MlirOperation, name: &str, text: &str) -> Result<(), String> {
    if tessel_dialects::find_symbol(&crate::support::handles::operation_ref(module), name).is_some() {
        return Ok(());
    }
    // SAFETY: `context` and `module` are live (crate invariant,
    // support/handles.rs); the parsed module is ours: its one op moves into
    // `module` and the emptied module is destroyed once.
    unsafe {
        let parsed = tessel_dialects::ffi::tesselParseModule(context, StringRef::new(text).to_raw());
        if parsed.ptr.is_null() {
            return Err(format!("cannot define @{name} by:\n{text}"));
        }
        let op = mlirBlockGetFirstOperation(mlirModuleGetBody(parsed));
        mlirOperationRemoveFromParent(op);
        let body = mlirRegionGetFirstBlock(mlirOperationGetFirstRegion(module));
        mlirBlockInsertOwnedOperation(body, 0, op);
        mlirModuleDestroy(parsed);
    }
    Ok(())
}

/// A template that loads (`store` false: arguments `%m`, the indices; it
/// returns the value) or stores (arguments `%v`, `%m`, the indices) a
/// value of type `value` — a scalar, or a vector of consecutive elements
/// (`vector.load`/`vector.store`) — at `indices` index arguments of
/// `memref`.
pub fn load_or_store(memref: &str, indices: usize, value: &str, store: bool) -> String {
    let names: Vec<String> = (0..indices).map(|k| format!("%i{k}")).collect();
    let parameters: String = names.iter().map(|name| format!(", {name}: index")).collect();
    let at = format!("%m[{}] : {memref}", names.join(", "));
    let vector = if value.starts_with("vector<") { format!(", {value}") } else { String::new() };
    let dialect = if vector.is_empty() { "memref" } else { "vector" };
    if store {
        format!(
            "func.func @template(%v: {value}, %m: {memref}{parameters}) {{\n{dialect}.store %v, {at}{vector}\nreturn\n}}"
        )
    } else {
        format!(
            "func.func @template(%m: {memref}{parameters}) -> {value} {{\n%v = {dialect}.load {at}{vector}\n\
             return %v : {value}\n}}"
        )
    }
}

/// An `arith.constant` of the integer `value` of `r#type` (scalar, or a
/// splat of a shaped type), as template text.
pub(crate) fn integer_constant(value: i64, r#type: MlirType) -> String {
    let printed = print_type(r#type);
    // SAFETY: a live type, asked only whether it is shaped.
    if unsafe { mlirTypeIsAShaped(r#type) } {
        format!("arith.constant dense<{value}> : {printed}")
    } else {
        format!("arith.constant {value} : {printed}")
    }
}

/// The `i1` type with `r#type`'s shape (the type of a comparison of two
/// `r#type` values), as template text.
pub(crate) fn condition_type(r#type: MlirType) -> String {
    let printed = print_type(r#type);
    let element = print_type(element_type(r#type));
    // SAFETY: a live type, asked what kind of shaped type it is.
    let shaped = unsafe { mlirTypeIsATensor(r#type) || mlirTypeIsAVector(r#type) };
    if shaped {
        // `tensor<4x8xi32>` -> `tensor<4x8xi1>`: the element is the
        // type's last component.
        let cut = printed.rfind(&element).expect("a shaped type prints its element");
        format!("{}i1{}", &printed[..cut], &printed[cut + element.len()..])
    } else {
        "i1".to_string()
    }
}
