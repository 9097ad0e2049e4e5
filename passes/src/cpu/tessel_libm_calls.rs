//! `tessel-libm-calls`: `math.expm1`, `math.log1p`, `math.erf`, `math.erfc`
//! and `math.cbrt` on f32/f64 (scalars, or vectors lane by lane) become
//! calls of the C library's `expm1f`/`expm1`, `log1pf`/`log1p`,
//! `erff`/`erf`, `erfcf`/`erfc`, `cbrtf`/`cbrt`; on f16/bf16 the f32
//! function computes them (as XLA does), rounded once.
//!
//! Upstream's `convert-math-to-llvm` lowers expm1 as `exp(x) - 1` and log1p
//! as `log(1 + x)`, which lose every digit for small x (expm1(1e-30) gives
//! 0): the very inputs these functions exist for. erf, erfc and cbrt it
//! does not lower at all, so kernels using them failed to compile (erfc is
//! what exact GELU, `jax.nn.gelu(x, approximate=False)`, computes; 1 -
//! erf(x) would lose its tail). `convert-math-to-libm` would fix these but also turns `sqrt`, `floor`, `fma` and the
//! rest into scalar calls, which would stop vector code at full rate; this
//! pass takes only the five. The C library's versions are within an ulp.

use crate::support::handles::{context_of, raw_op, value_type};
use crate::support::template::{self, emit_line};
use crate::{PassDefinition, PassError, support::ir::print_type};
use melior::ir::OperationRef;
use mlir_sys::*;

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-libm-calls",
    name: "TesselLibmCalls",
    description: "Turn math.expm1/log1p/erf/erfc/cbrt on f32 and f64 into calls of the C library's functions",
    anchor: "builtin.module",
    run,
};

/// The C function computing `op` on `element` (f32 or f64).
fn function(op: &str, element: &str) -> Option<String> {
    let base = match op {
        "math.expm1" => "expm1",
        "math.log1p" => "log1p",
        "math.erf" => "erf",
        "math.erfc" => "erfc",
        "math.cbrt" => "cbrt",
        _ => return None,
    };
    match element {
        "f32" | "f16" | "bf16" => Some(format!("{base}f")),
        "f64" => Some(base.to_string()),
        _ => None,
    }
}

/// The element type the C function computes in for `element`.
fn computed_in(element: &str) -> &str {
    if element == "f64" { "f64" } else { "f32" }
}

/// `%{out} = callee(%{x})` on one element, widened and rounded back when
/// the element is narrower than the function's.
fn call_line(body: &mut String, callee: &str, element: &str, x: &str, out: &str) {
    let wide = computed_in(element);
    if wide == element {
        emit_line!(body, "%{out} = func.call @{callee}(%{x}) : ({element}) -> {element}");
    } else {
        emit_line!(body, "%{out}_in = arith.extf %{x} : {element} to {wide}");
        emit_line!(body, "%{out}_wide = func.call @{callee}(%{out}_in) : ({wide}) -> {wide}");
        emit_line!(body, "%{out} = arith.truncf %{out}_wide : {wide} to {element}");
    }
}

/// (element type, vector shape) of a scalar or vector float type; `None`
/// for anything else (left to other lowerings).
fn element_and_shape(raw: MlirType) -> Option<(String, Vec<i64>)> {
    // SAFETY: live IR (crate invariant, support/handles.rs); the shape is
    // read only from a type checked to be a vector
    unsafe {
        if mlirTypeIsAVector(raw) {
            let element = print_type(mlirShapedTypeGetElementType(raw));
            let shape = (0..mlirShapedTypeGetRank(raw)).map(|d| mlirShapedTypeGetDimSize(raw, d as isize)).collect();
            return Some((element, shape));
        }
        Some((print_type(raw), Vec::new()))
    }
}

/// Every index of a vector of `shape`, in row-major order.
fn positions(shape: &[i64]) -> Vec<Vec<i64>> {
    shape.iter().fold(vec![Vec::new()], |prefixes, &size| {
        prefixes.iter().flat_map(|prefix| (0..size).map(move |i| [prefix.clone(), vec![i]].concat())).collect()
    })
}

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    let module_raw = module.to_raw();
    let wanted = |name: &str| matches!(name, "math.expm1" | "math.log1p" | "math.erf" | "math.erfc" | "math.cbrt");
    template::rewrite_each(module, wanted, |raw, name| {
        let operands = raw_op(raw).operands();
        let ty = value_type(operands[0]);
        let Some((element, shape)) = element_and_shape(ty) else { return Ok(None) };
        let Some(callee) = function(name, &element) else { return Ok(None) };
        let wide = computed_in(&element);
        let declaration = format!("func.func private @{callee}({wide}) -> {wide}");
        template::define_symbol(context_of(raw), module_raw, &callee, &declaration)?;
        let full = print_type(ty);
        let mut body = String::new();
        let result = if shape.is_empty() {
            call_line(&mut body, &callee, &element, "x", "r");
            "%r".to_string()
        } else {
            // Lane by lane: the C functions are scalar.
            emit_line!(body, "%v0 = arith.constant dense<0.0> : {full}");
            let lanes = positions(&shape);
            for (lane, position) in lanes.iter().enumerate() {
                let at = position.iter().map(i64::to_string).collect::<Vec<_>>().join(", ");
                emit_line!(body, "%a{lane} = vector.extract %x[{at}] : {element} from {full}");
                call_line(&mut body, &callee, &element, &format!("a{lane}"), &format!("c{lane}"));
                emit_line!(body, "%v{} = vector.insert %c{lane}, %v{lane} [{at}] : {element} into {full}", lane + 1);
            }
            format!("%v{}", lanes.len())
        };
        let text = format!(
            "{declaration}\nfunc.func @template(%x: {full}) -> {full} {{\n{body}return {result} : {full}\n}}\n"
        );
        Ok(Some((text, operands[..1].to_vec())))
    })
}
