//! Accesses block-to-linalg lowers to a `linalg.generic` whose body reads
//! or writes one element of the ref each: masked windows (`pl.ds` windows
//! that may reach past the ref, predicated per element), gathers and
//! scatters (positions from an index tensor). Loads fill a fresh buffer at
//! the load, so later stores to the ref cannot change what they read.

use super::block_to_linalg::{Lowering, Op, Shaped, buffer_text, operand_type, result_type, tensor_text};
use crate::support::ir::{identity_map, join, map_dims, parallel_iterators};
use crate::support::template::{emit, emit_line};
use crate::support::uninitialized::Fill;

/// `%p<d>` = `%o<d>` + the generic's index `d`, for predicated accesses.
fn window_indices(body: &mut String, rank: usize) -> String {
    for d in 0..rank {
        emit_line!(body, "%i{d} = linalg.index {d} : index\n%p{d} = arith.addi %o{d}, %i{d} : index");
    }
    join((0..rank).map(|d| format!("%p{d}")))
}

/// An input of a generic: (tensor value, tensor type, indexing map, block
/// argument, element type).
type GenericInput = (String, String, String, String, String);

/// Opens a `linalg.generic` over buffers whose body reads the ref into
/// `%buf`, a fresh buffer of `block`, right here: on tensors, fusion could
/// move the reads into a consumer that runs after a later store to the ref
/// (a load reads the ref as it is at the load). The tensor inputs are
/// viewed as buffers; `close_reading_generic` ends it with `%r`.
fn open_reading_generic(body: &mut String, block: &Shaped, inputs: &[GenericInput]) {
    let rank = block.shape.len();
    let buffer = buffer_text(&block.shape, &block.element);
    let mut buffers = Vec::new();
    for (index, (value, tensor_type, ..)) in inputs.iter().enumerate() {
        let buffer_type = tensor_type.replacen("tensor<", "memref<", 1);
        emit_line!(body, "%in{index} = bufferization.to_buffer {value} read_only : {tensor_type} to {buffer_type}");
        buffers.push((format!("%in{index}"), buffer_type));
    }
    emit!(
        body,
        "%buf = memref.alloc() : {buffer}\n\
         linalg.generic {{indexing_maps = [{maps}{separator}{map}], iterator_types = [{iterators}]}} \
         ins({names} : {types}) outs(%buf : {buffer}) {{\n^bb0({args}{separator}%unused: {e}):\n",
        maps = join(inputs.iter().map(|input| &input.2)),
        separator = if inputs.is_empty() { "" } else { ", " },
        map = identity_map(rank),
        iterators = parallel_iterators(rank),
        names = join(buffers.iter().map(|buffer| &buffer.0)),
        types = join(buffers.iter().map(|buffer| &buffer.1)),
        args = join(inputs.iter().map(|input| format!("{}: {}", input.3, input.4))),
        e = block.element
    );
}

/// Ends `open_reading_generic`'s generic: `%r` is the block read.
fn close_reading_generic(body: &mut String, block: &Shaped) {
    emit_line!(
        body,
        "}}\n%r = bufferization.to_tensor %buf restrict writable : {} to {}",
        buffer_text(&block.shape, &block.element),
        block.text
    );
}

/// A masked load of a window: each element read only where the mask holds.
pub(super) fn predicated_load(op: &Op, poison: Fill) -> Lowering {
    let segments = op.segments();
    let (offsets, has_other) = (segments[1], segments[3] == 1);
    let r#ref = operand_type(op, 0);
    let result = result_type(op);
    let rank = result.shape.len();
    let mask_type = tensor_text(&result.shape, "i1");
    let mut params = vec![format!("%ref: {}", r#ref.text)];
    params.extend((0..offsets).map(|d| format!("%o{d}: index")));
    params.push(format!("%mask: {mask_type}"));
    let mut body = String::new();
    let off = if has_other {
        params.push(format!("%other: {}", result.element));
        "%other".to_string()
    } else {
        emit_line!(body, "%unset = arith.constant {}", poison.constant(&result.element));
        "%unset".to_string()
    };
    let mask = ("%mask".into(), mask_type, identity_map(rank), "%m".into(), "i1".into());
    open_reading_generic(&mut body, &result, &[mask]);
    let at = window_indices(&mut body, rank);
    emit!(
        body,
        "%v = scf.if %m -> ({e}) {{\n%l = memref.load %ref[{at}] : {ref_type}\nscf.yield %l : {e}\n}} else {{\n\
         scf.yield {off} : {e}\n}}\nlinalg.yield %v : {e}\n",
        e = result.element,
        ref_type = r#ref.text,
    );
    close_reading_generic(&mut body, &result);
    let text = format!(
        "func.func @template({}) -> {result} {{\n{body}return %r : {result}\n}}",
        join(&params),
        result = result.text
    );
    Ok((text, op.operands()))
}

/// A masked store to a window: each element written only where the mask
/// holds. The generic's own result (the mask) is unused; its body's
/// stores are what it is for.
pub(super) fn predicated_store(op: &Op) -> Lowering {
    let value = operand_type(op, 0);
    let r#ref = operand_type(op, 1);
    let rank = value.shape.len();
    let mask_type = tensor_text(&value.shape, "i1");
    let mut params = vec![format!("%value: {}", value.text), format!("%ref: {}", r#ref.text)];
    params.extend((0..rank).map(|d| format!("%o{d}: index")));
    params.push(format!("%mask: {mask_type}"));
    let map = identity_map(rank);
    let mut body = format!(
        "%empty = tensor.empty() : {mask_type}\n\
         %done = linalg.generic {{indexing_maps = [{map}, {map}, {map}], iterator_types = [{iterators}]}} \
         ins(%value, %mask : {value_type}, {mask_type}) outs(%empty : {mask_type}) {{\n\
         ^bb0(%x: {e}, %m: i1, %unused: i1):\n",
        iterators = parallel_iterators(rank),
        value_type = value.text,
        e = value.element
    );
    let at = window_indices(&mut body, rank);
    emit!(
        body,
        "scf.if %m {{\nmemref.store %x, %ref[{at}] : {ref_type}\n}}\nlinalg.yield %m : i1\n}} -> {mask_type}\n",
        ref_type = r#ref.text
    );
    Ok((format!("func.func @template({}) {{\n{body}return\n}}", join(&params)), op.operands()))
}

/// A gather (`block.load .. gather`) or scatter (`block.store .. scatter`):
/// a `linalg.generic` over the block whose body reads (writes) one element
/// of the ref each, at the window's position with the index in place along
/// the indexed dimension. Gathers clamp that position into the ref (JAX's
/// rule); scatters drop elements outside it. Masked-off elements read
/// `other` (or the padding value) and are not written.
pub(super) fn indexed_access(op: &Op, poison: Fill) -> Lowering {
    let store = op.name() == "block.store";
    let segments = op.segments();
    let first = store as usize;
    let offsets = segments[first + 1];
    let has_mask = segments[first + 2] == 1;
    let has_other = !store && segments[3] == 1;
    let r#ref = operand_type(op, first);
    let block = if store { operand_type(op, 0) } else { result_type(op) };
    let rank = block.shape.len();
    let dim = op.integer(if store { "scatter_dim" } else { "gather_dim" }) as usize;
    let indices = operand_type(op, op.operands().len() - 1);
    let mask_type = tensor_text(&block.shape, "i1");
    let e = &block.element;

    let mut params = Vec::new();
    if store {
        params.push(format!("%value: {}", block.text));
    }
    params.push(format!("%ref: {}", r#ref.text));
    params.extend((0..offsets).map(|d| format!("%o{d}: index")));
    if has_mask {
        params.push(format!("%mask: {mask_type}"));
    }
    if has_other {
        params.push(format!("%other: {e}"));
    }
    params.push(format!("%indices: {}", indices.text));

    // Inputs of the generic: (value,) indices along `dim`, (mask).
    let map = identity_map(rank);
    let along = format!("affine_map<({}) -> (d{dim})>", map_dims(rank));
    let mut inputs: Vec<GenericInput> = Vec::new();
    if store {
        inputs.push(("%value".into(), block.text.clone(), map.clone(), "%x".into(), e.clone()));
    }
    inputs.push(("%indices".into(), indices.text.clone(), along, "%index".into(), indices.element.clone()));
    if has_mask {
        inputs.push(("%mask".into(), mask_type.clone(), map.clone(), "%m".into(), "i1".into()));
    }
    let mut body = String::new();
    if store {
        // The generic's result (the mask) is unused: its body's stores
        // are what it is for.
        emit!(
            body,
            "%empty = tensor.empty() : {mask_type}\n\
             %done = linalg.generic {{indexing_maps = [{maps}, {map}], iterator_types = [{iterators}]}} \
             ins({names} : {types}) outs(%empty : {mask_type}) {{\n^bb0({args}, %unused: i1):\n",
            maps = join(inputs.iter().map(|input| &input.2)),
            iterators = parallel_iterators(rank),
            names = join(inputs.iter().map(|input| &input.0)),
            types = join(inputs.iter().map(|input| &input.1)),
            args = join(inputs.iter().map(|input| format!("{}: {}", input.3, input.4))),
        );
    } else {
        if !has_other {
            emit_line!(body, "%unset = arith.constant {}", poison.constant(e));
        }
        open_reading_generic(&mut body, &block, &inputs);
    }
    // Positions in the ref: the window's offset plus the element's index,
    // or plus the index tensor's entry along `dim`.
    let mut positions = Vec::new();
    for d in 0..rank {
        let within = if d != dim {
            emit_line!(body, "%i{d} = linalg.index {d} : index");
            format!("%i{d}")
        } else if indices.element == "index" {
            "%index".to_string()
        } else {
            emit_line!(body, "%g = arith.index_cast %index : {} to index", indices.element);
            "%g".to_string()
        };
        positions.push(if d < offsets {
            emit_line!(body, "%p{d} = arith.addi %o{d}, {within} : index");
            format!("%p{d}")
        } else {
            within
        });
    }
    let size = r#ref.shape[dim];
    let ref_type = &r#ref.text;
    if store {
        // Dropped outside the ref along `dim` (and where masked off).
        emit!(
            body,
            "%c0 = arith.constant 0 : index\n%size = arith.constant {size} : index\n\
             %above = arith.cmpi sge, {p}, %c0 : index\n%below = arith.cmpi slt, {p}, %size : index\n\
             %inside = arith.andi %above, %below : i1\n",
            p = positions[dim]
        );
        let write = if has_mask {
            emit_line!(body, "%write = arith.andi %inside, %m : i1");
            "%write"
        } else {
            "%inside"
        };
        emit!(
            body,
            "scf.if {write} {{\nmemref.store %x, %ref[{at}] : {ref_type}\n}}\nlinalg.yield {write} : i1\n\
             }} -> {mask_type}\n",
            at = join(&positions)
        );
        return Ok((format!("func.func @template({}) {{\n{body}return\n}}", join(&params)), op.operands()));
    }
    // Clamped into the ref along `dim`.
    emit!(
        body,
        "%c0 = arith.constant 0 : index\n%last = arith.constant {last} : index\n\
         %low = arith.maxsi {p}, %c0 : index\n%clamped = arith.minsi %low, %last : index\n",
        last = size - 1,
        p = positions[dim]
    );
    let mut clamped = positions.clone();
    clamped[dim] = "%clamped".into();
    let at = join(&clamped);
    if has_mask {
        let off = if has_other { "%other" } else { "%unset" };
        emit!(
            body,
            "%v = scf.if %m -> ({e}) {{\n%l = memref.load %ref[{at}] : {ref_type}\nscf.yield %l : {e}\n}} else {{\n\
             scf.yield {off} : {e}\n}}\nlinalg.yield %v : {e}\n"
        );
    } else {
        emit!(body, "%v = memref.load %ref[{at}] : {ref_type}\nlinalg.yield %v : {e}\n");
    }
    close_reading_generic(&mut body, &block);
    let text = format!("func.func @template({}) -> {r} {{\n{body}return %r : {r}\n}}", join(&params), r = block.text);
    Ok((text, op.operands()))
}
