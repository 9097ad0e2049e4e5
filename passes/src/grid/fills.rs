//! What fresh memory of a `grid.call` holds under the module's fill
//! (`tessel.poison`, `tessel.uninitialized_memory`), for grid-to-loops:
//! scratch and the outputs no program may write.

use crate::support::handles::shaped_element;
use crate::support::ir::print_type;
use crate::support::template::emit_line;
use crate::support::uninitialized::Fill;
use mlir_sys::MlirType;

/// Fills scratch `%scratch<k>` of type `type` with the module's fill
/// (`tessel.poison`, `tessel.uninitialized_memory`), as a TPU poisons
/// fresh VMEM buffers for checking and the interpreters their scratch: a
/// kernel that reads scratch it never wrote sees it.
pub(super) fn poison_scratch(body: &mut String, k: usize, r#type: &str, fill: Fill) {
    let element = r#type.trim_end_matches('>').rsplit(['x', '<']).next().unwrap_or("f32");
    let value = fill.constant(element);
    emit_line!(
        body,
        "%poison{k} = arith.constant {value}\nlinalg.fill ins(%poison{k} : {element}) outs(%scratch{k} : {type})"
    );
}

/// Fills output `%a<i>` (of type `array`) with `fill` before any program
/// runs: JAX's TPU interpreter starts the outputs no input aliases as
/// uninitialized memory, so the elements no program writes read as it.
pub(super) fn fill_unwritten_output(body: &mut String, i: usize, array: MlirType, fill: Fill) {
    let element = print_type(shaped_element(array));
    emit_line!(
        body,
        "%unwritten{i} = arith.constant {}\nlinalg.fill ins(%unwritten{i} : {element}) outs(%a{i} : {})",
        fill.constant(&element),
        print_type(array)
    );
}
