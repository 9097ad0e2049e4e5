//! block-to-linalg's lowering of `block.print` (`pl.debug_print`) on the
//! CPU: calls of the print functions the JIT provides
//! (`tessel_dialects::PRINT_FUNCTIONS`), which collect the line's values
//! for the caller to format once the call returns.

use super::block_to_linalg::{Lowering, Op};
use crate::support::handles::value_type;
use crate::support::ir::{join, print_type};
use crate::support::template::emit_line;
use tessel_dialects::PRINT_FUNCTIONS;

/// The print functions' declarations (module text).
pub(super) fn declarations() -> [String; 5] {
    let [begin, int, single, double, end] = PRINT_FUNCTIONS;
    [
        format!("func.func private @{begin}(i64)"),
        format!("func.func private @{int}(i64)"),
        format!("func.func private @{single}(f32)"),
        format!("func.func private @{double}(f64)"),
        format!("func.func private @{end}()"),
    ]
}

/// The site's value types, as `PRINT_TYPES` lists them.
pub(super) fn value_types(op: &Op) -> String {
    op.operands().iter().map(|&value| print_type(value_type(value))).collect::<Vec<_>>().join(";")
}

/// One line at site `site`: `begin`, each value widened to i64, f32 or
/// f64 (a tensor's elements in row-major order, by a loop nest), `end`.
pub(super) fn print(op: &Op, site: usize) -> Lowering {
    let [begin, _, _, _, end] = PRINT_FUNCTIONS;
    let operands = op.operands();
    let types: Vec<String> = operands.iter().map(|&value| print_type(value_type(value))).collect();
    let mut body = String::new();
    emit_line!(body, "%site = arith.constant {site} : i64\nfunc.call @{begin}(%site) : (i64) -> ()");
    for (k, (&operand, r#type)) in operands.iter().zip(&types).enumerate() {
        let raw = value_type(operand);
        let Some(shape) = tensor_shape(raw) else {
            print_scalar(&mut body, &format!("%v{k}"), r#type, &format!("{k}"));
            continue;
        };
        // for each element, in row-major order: extract, print.
        emit_line!(body, "%c0_{k} = arith.constant 0 : index\n%c1_{k} = arith.constant 1 : index");
        for (d, size) in shape.iter().enumerate() {
            emit_line!(
                body,
                "%n{k}_{d} = arith.constant {size} : index\nscf.for %i{k}_{d} = %c0_{k} to %n{k}_{d} step %c1_{k} {{"
            );
        }
        let element = print_type(crate::support::handles::shaped_element(raw));
        let indices = join((0..shape.len()).map(|d| format!("%i{k}_{d}")));
        emit_line!(body, "%e{k} = tensor.extract %v{k}[{indices}] : {type}");
        print_scalar(&mut body, &format!("%e{k}"), &element, &format!("e{k}"));
        body.push_str(&"}\n".repeat(shape.len()));
    }
    emit_line!(body, "func.call @{end}() : () -> ()");
    let params = join(types.iter().enumerate().map(|(k, r#type)| format!("%v{k}: {type}")));
    let text = format!("{}\nfunc.func @template({params}) {{\n{body}return\n}}", declarations().join("\n"));
    Ok((text, operands))
}

/// The static shape of a ranked tensor type (`None`: a scalar; printed
/// tensors are statically shaped, as kernel values are).
fn tensor_shape(raw: mlir_sys::MlirType) -> Option<Vec<i64>> {
    // SAFETY: a type of the live context (crate invariant, support/handles.rs).
    let is_tensor = unsafe { mlir_sys::mlirTypeIsARankedTensor(raw) };
    if !is_tensor {
        return None;
    }
    let rank = crate::support::handles::rank_of(raw).max(0) as usize;
    Some((0..rank).map(|d| crate::support::handles::dim_size(raw, d)).collect())
}

/// The print call of scalar `value` of type `type` (widened first), names
/// suffixed by `tag`.
fn print_scalar(body: &mut String, value: &str, r#type: &str, tag: &str) {
    let [_, int, single, double, _] = PRINT_FUNCTIONS;
    let (function, widened, conversion) = match r#type {
        "index" => (int, "i64", Some("arith.index_cast")),
        "i64" => (int, "i64", None),
        "i1" => (int, "i64", Some("arith.extui")),
        integer if integer.starts_with('i') => (int, "i64", Some("arith.extsi")),
        "f64" => (double, "f64", None),
        "f32" => (single, "f32", None),
        _ => (single, "f32", Some("arith.extf")),
    };
    let value = match conversion {
        Some(conversion) => {
            emit_line!(body, "%w{tag} = {conversion} {value} : {type} to {widened}");
            format!("%w{tag}")
        }
        None => value.to_string(),
    };
    emit_line!(body, "func.call @{function}({value}) : ({widened}) -> ()");
}
