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

/// One line at site `site`: `begin`, each value widened to i64, f32 or
/// f64, `end`.
pub(super) fn print(op: &Op, site: usize) -> Lowering {
    let [begin, int, single, double, end] = PRINT_FUNCTIONS;
    let operands = op.operands();
    let types: Vec<String> = operands.iter().map(|&value| print_type(value_type(value))).collect();
    let mut body = String::new();
    emit_line!(body, "%site = arith.constant {site} : i64\nfunc.call @{begin}(%site) : (i64) -> ()");
    for (k, r#type) in types.iter().enumerate() {
        let (function, widened, conversion) = match r#type.as_str() {
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
                emit_line!(body, "%w{k} = {conversion} %v{k} : {type} to {widened}");
                format!("%w{k}")
            }
            None => format!("%v{k}"),
        };
        emit_line!(body, "func.call @{function}({value}) : ({widened}) -> ()");
    }
    emit_line!(body, "func.call @{end}() : () -> ()");
    let params = join(types.iter().enumerate().map(|(k, r#type)| format!("%v{k}: {type}")));
    let text = format!("{}\nfunc.func @template({params}) {{\n{body}return\n}}", declarations().join("\n"));
    Ok((text, operands))
}
