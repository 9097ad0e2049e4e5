//! Element-wise epilogues of contractions, computed by their register
//! tiles (`tessel-tile`).
//!
//! Pallas accumulates a matmul as `acc_ref[...] += jnp.dot(x, y)`: a
//! contraction from zeros into a fresh block, then an element-wise add of
//! that block to the accumulator. Run as written, the block is zero-filled
//! in memory, the register tiles load those zeros and store their sums,
//! and a separate pass reads both blocks back to add them. When the
//! contraction's one user is such an element-wise `linalg.generic`, the
//! tiles compute it instead: the consumer is tiled into the contraction's
//! column panels and row strips and the contraction (and a `linalg.fill`
//! of its init) fused into each tile, so a tile's sums start from zeros in
//! registers, run over all of k, and go through the consumer's arithmetic
//! straight into its destination. The arithmetic is the same, in the same
//! order (`acc + dot` still adds a finished dot product), so the bits are
//! too.
//!
//! Only consumers whose body is `arith` arithmetic, all-parallel, the
//! contraction's shape, reading the contraction through the identity map,
//! with no operand of fewer than 8 bits (masks) qualify; and only where
//! the tiles cover the block exactly in one k piece (no `tessel.k_chunk`,
//! no padded tiles), so every tile's dot is finished before its epilogue.
//!
//! Two rewrites of the consumer alone prepare it: a destination that is
//! the dot itself becomes a fresh tensor, and an input that is also the
//! destination (`acc + dot` into `acc`) is read through the destination's
//! block argument, so the tiles update `acc` in place. (MLIR's
//! `erase_unnecessary_inputs` patterns do the latter, but applied to a
//! whole kernel they made JAX's attention backward wrong,
//! `test/e2e/attention-backward.mlir`: a `row + iota` generic then read
//! its filled destination, and `linalg-fuse-elementwise-ops` fused it into
//! the broadcast after it by making that destination an output indexed
//! `(d0, d1) -> (d0)`, updated in place once per column. A fused
//! epilogue's tiles are vectorized before that pass runs.)

use crate::block::block_to_linalg::CONTRACTION;
use crate::support::handles::{context_of, dim_size, rank_of, raw_op, replace_all_uses, value_type};
use crate::support::ir::defining_op;
use crate::support::ir::{block_arguments, body_names, element_bits, element_type, print_type, uses};
use crate::support::template;
use mlir_sys::*;

/// The attribute marking a contraction's epilogue with its tile group.
pub const EPILOGUE_GROUP: &str = "tessel.epilogue_group";
/// The attribute marking the `linalg.fill` of a fused contraction's init.
pub const INIT_GROUP: &str = "tessel.init_group";

/// The consumer a contraction's tiles can compute, the fill of its init
/// they can fold into zeros in registers, and whether the consumer also
/// names the dot as its (unread) destination.
pub struct Epilogue {
    pub consumer: MlirOperation,
    pub init_fill: Option<MlirOperation>,
    /// The consumer's operand that reads the dot.
    pub dot_operand: usize,
    dot_as_destination: bool,
}

impl Epilogue {
    /// Makes the epilogue's destination a fresh tensor where it was the
    /// dot (element-wise ops written as `dot + c` name their first operand
    /// as destination): tiles cannot both compute the dot and update it in
    /// place.
    pub fn detach_destination(&self) -> Result<(), String> {
        if !self.dot_as_destination {
            return Ok(());
        }
        let user = raw_op(self.consumer);
        let init = user.operands().len() - 1;
        let text = format!(
            "func.func @template() -> {t} {{\n%empty = tensor.empty() : {t}\nreturn %empty : {t}\n}}",
            t = print_type(value_type(user.results()[0]))
        );
        let results =
            template::inline_before(context_of(self.consumer), self.consumer, &text, &[]).map_err(|error| error.0)?;
        // SAFETY: live IR of the module being rewritten (crate invariant, support/handles.rs); the new value has the operand's type
        unsafe { mlirOperationSetOperand(self.consumer, init as isize, results[0]) };
        Ok(())
    }

    /// Makes the epilogue read an input that is also its destination
    /// (`acc + dot` written into `acc`) through the destination's block argument:
    /// its tiles then read the destination slice they update, and
    /// bufferization updates it in place instead of copying `acc` first.
    /// (All loops are parallel and the maps both the identity, so the two
    /// arguments hold the same element.)
    pub fn read_destination_in_place(&self) {
        let user = raw_op(self.consumer);
        let operands = user.operands();
        let init = operands.len() - 1;
        let arguments = block_arguments(user.region_block(0));
        let maps = user.attribute("indexing_maps");
        for (index, operand) in operands[..init].iter().enumerate() {
            if operand.ptr == operands[init].ptr && is_identity(maps, index) {
                replace_all_uses(arguments[index], arguments[init]);
            }
        }
    }
}

/// Whether the `index`th map of an op's `indexing_maps` is the identity.
fn is_identity(maps: MlirAttribute, index: usize) -> bool {
    // SAFETY: attributes and affine maps of live ops (crate invariant, support/handles.rs); a generic's verifier guarantees one affine map per operand
    unsafe { mlirAffineMapIsIdentity(mlirAffineMapAttrGetValue(mlirArrayAttrGetElement(maps, index as isize))) }
}

/// `contraction`'s element-wise epilogue, if it has one the tiles can
/// compute (see the module's conditions on the consumer).
pub fn epilogue_of(contraction: MlirOperation) -> Option<Epilogue> {
    let op = raw_op(contraction);
    let result = *op.results().first()?;
    // One user, reading the dot once (and perhaps naming it as its
    // destination too, unread).
    let dot_uses = uses(result);
    let consumer = dot_uses.first()?.0;
    let user = raw_op(consumer);
    let inputs = user.operands().len().checked_sub(1)?;
    let (read, written): (Vec<_>, Vec<_>) = dot_uses.iter().partition(|&&(_, position)| position < inputs);
    let [&(_, position)] = read[..] else { return None };
    let written = written.len();
    if user.name() != "linalg.generic"
        || user.has(CONTRACTION)
        || user.results().len() != 1
        || dot_uses.iter().any(|&(other, _)| other.ptr != consumer.ptr)
        || written > 1
        || (written == 1 && !uses(block_arguments(user.region_block(0))[inputs]).is_empty())
    {
        return None;
    }
    let (dot_type, out_type) = (value_type(result), value_type(user.results()[0]));
    let rank = rank_of(dot_type);
    if rank_of(out_type) != rank || (0..rank as usize).any(|d| dim_size(dot_type, d) != dim_size(out_type, d)) {
        return None;
    }
    let iterators = crate::support::handles::attribute_text(user.attribute("iterator_types"));
    if iterators.contains("reduction") {
        return None;
    }
    let maps = user.attribute("indexing_maps");
    if !is_identity(maps, position) || !is_identity(maps, inputs) {
        return None;
    }
    if !body_names(consumer).iter().all(|name| name.starts_with("arith.") || name == "linalg.yield") {
        return None;
    }
    // No masks or other sub-byte operands: a vector of i1 read from memory
    // is packed bits to LLVM, while the tensor's buffer holds a byte per
    // element (a select on a mask read whole bytes as bits).
    if user.operands().iter().any(|&operand| element_bits(element_type(value_type(operand))) < 8) {
        return None;
    }
    let init = op.operands()[op.operands().len() - 1];
    let init_fill = defining_op(init).filter(|&fill| uses(init).len() == 1 && raw_op(fill).name() == "linalg.fill");
    Some(Epilogue { consumer, init_fill, dot_operand: position, dot_as_destination: written == 1 })
}

/// Transform steps that tile group `index`'s epilogue into column panels
/// (`panel` sizes over its loops) and fuse the contraction (`%matched
/// {index}`) and its init's fill into them; the fused contraction is
/// `%panel{index}`, the panel loop `%columns{index}`.
pub fn fuse_into_panels(index: usize, panel: &str, fill: bool) -> String {
    let any = "!transform.any_op";
    let mut steps = format!(
        "%epilogue{index} = transform.structured.match ops{{[\"linalg.generic\"]}} \
         attributes{{{EPILOGUE_GROUP} = {index} : i64}} in %root : ({any}) -> {any}\n\
         %epilogue_panel{index}, %epilogue_columns{index} = transform.structured.tile_using_for %epilogue{index} \
         tile_sizes [{panel}] : ({any}) -> ({any}, {any})\n\
         %panel{index}, %columns{index} = transform.structured.fuse_into_containing_op %matched{index} \
         into %epilogue_columns{index} : ({any}, {any}) -> ({any}, {any})\n"
    );
    if fill {
        steps.push_str(&format!(
            "%init{index} = transform.structured.match ops{{[\"linalg.fill\"]}} \
             attributes{{{INIT_GROUP} = {index} : i64}} in %root : ({any}) -> {any}\n\
             %panel_init{index}, %columns_init{index} = transform.structured.fuse_into_containing_op %init{index} \
             into %columns{index} : ({any}, {any}) -> ({any}, {any})\n"
        ));
    }
    steps
}

/// How a fused epilogue's panel splits into whole strips and a remainder
/// strip: the whole strips' rows, the sizes of the remainder strip over
/// the epilogue's loops, and the epilogue's operand reading the dot.
pub struct Remainder<'a> {
    pub rows: i64,
    pub strip: &'a str,
    pub dot_operand: usize,
}

/// Transform steps that tile group `index`'s epilogue panel into row
/// strips (`strip` sizes over its `rank` loops) and fuse the packed
/// contraction `%packed{index}` (and the panel's fill) into them; the fused
/// contraction is `%strip{index}`, and the epilogue and fill tiles are
/// marked for `tessel-vectorize`. With a `remainder`, the panel is split
/// first: whole strips, then one remainder strip, each with the
/// contraction fused in.
pub fn fuse_into_strips(index: usize, rank: i64, strip: &str, fill: bool, remainder: Option<Remainder>) -> String {
    let any = "!transform.any_op";
    // Slices of slices folded, so the strips' slices of the packed
    // contraction's result lead back to it.
    let panel_loop = if fill { format!("%columns_init{index}") } else { format!("%columns{index}") };
    let loop_types = if rank == 3 { format!("{any}, {any}, {any}") } else { format!("{any}, {any}") };
    let mut steps = format!(
        "transform.apply_patterns to {panel_loop} {{\n  transform.apply_patterns.canonicalization\n}} : {any}\n"
    );
    let split = remainder.is_some();
    // (part, epilogue handle, strip sizes, contraction handle) per strip
    // loop. Fusing consumes the contraction's handle, so with a remainder
    // it goes to the remainder strip's loop first, and the whole strips'
    // loop takes the contraction afresh (the op that the slice of the dot
    // they read, taken right after the split, is of).
    let parts: Vec<(&str, String, String, String)> = match remainder {
        None => vec![("strip", format!("%epilogue_panel{index}"), strip.to_string(), format!("%packed{index}"))],
        Some(Remainder { rows, strip: rest, dot_operand }) => {
            steps.push_str(&format!(
                "%epilogue_parts{index} = transform.structured.split %epilogue_panel{index} after {rows} \
                 {{dimension = {}}} : {any}\n\
                 %main_part{index}, %rest_part{index} = transform.split_handle %epilogue_parts{index} \
                 : ({any}) -> ({any}, {any})\n\
                 %main_slice{index} = transform.get_producer_of_operand %main_part{index}[{dot_operand}] \
                 : ({any}) -> {any}\n",
                if rank == 3 { 1 } else { 0 }
            ));
            vec![
                ("rest", format!("%rest_part{index}"), rest.to_string(), format!("%packed{index}")),
                ("strip", format!("%main_part{index}"), strip.to_string(), format!("%main_dot_of{index}")),
            ]
        }
    };
    let mut fused = Vec::new();
    for (part, epilogue, sizes, dot) in &parts {
        let rows = format!("%{part}_rows{index}");
        let loops = if rank == 3 { format!("%{part}_batch{index}, {rows}") } else { rows.clone() };
        if split && *part == "strip" {
            steps.push_str(&format!(
                "{dot} = transform.get_producer_of_operand %main_slice{index}[0] : ({any}) -> {any}\n"
            ));
        }
        steps.push_str(&format!(
            "%epilogue_{part}{index}, {loops} = transform.structured.tile_using_for {epilogue} tile_sizes [{sizes}] \
             : ({any}) -> ({loop_types})\n"
        ));
        // The split's slices of the dot, sliced again in the loop: merged
        // into one slice of it there, so the contraction is found to fuse;
        // the slices left unused go (LLVM 22's fuse_into_containing_op
        // crashed on a producer with an unused slice as a user).
        if split {
            steps.push_str(&format!(
                "transform.apply_patterns to {rows} {{\n  \
                 transform.apply_patterns.tensor.merge_consecutive_insert_extract_slice\n}} : {any}\n\
                 transform.apply_dce to {panel_loop} : {any}\n"
            ));
        }
        steps.push_str(&format!(
            "%{part}_dot{index}, %{part}_fused{index} = transform.structured.fuse_into_containing_op {dot} \
             into {rows} : ({any}, {any}) -> ({any}, {any})\n\
             transform.annotate %epilogue_{part}{index} \"tessel.vectorize\" : {any}\n"
        ));
        if fill {
            // The panel's fill, for the second part afresh too: the fused
            // dot's init (operand 2) is a slice of it.
            let init = if split && *part == "strip" {
                steps.push_str(&format!(
                    "%strip_init_slice{index} = transform.get_producer_of_operand %strip_dot{index}[2] \
                     : ({any}) -> {any}\n\
                     %strip_panel_init{index} = transform.get_producer_of_operand %strip_init_slice{index}[0] \
                     : ({any}) -> {any}\n"
                ));
                format!("%strip_panel_init{index}")
            } else {
                format!("%panel_init{index}")
            };
            steps.push_str(&format!(
                "%{part}_init{index}, %{part}_rows_init{index} = transform.structured.fuse_into_containing_op \
                 {init} into %{part}_fused{index} : ({any}, {any}) -> ({any}, {any})\n\
                 transform.annotate %{part}_init{index} \"tessel.vectorize\" : {any}\n"
            ));
        }
        fused.push(format!("%{part}_dot{index}"));
    }
    if split {
        // The contraction and fill over the whole panel, now unused.
        steps.push_str(&format!("transform.apply_dce to {panel_loop} : {any}\n"));
    }
    steps.push_str(&if fused.len() == 1 {
        format!("%strip{index} = transform.cast {} : {any} to {any}\n", fused[0])
    } else {
        format!("%strip{index} = transform.merge_handles {} : {any}\n", fused.join(", "))
    });
    steps
}
