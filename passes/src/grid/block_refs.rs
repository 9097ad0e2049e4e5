//! Each operand's ref around a `grid.call` program, for `grid-to-loops`:
//! where the program's block starts in the array, whether that start is
//! in bounds (when it cannot be proven), and the ref itself — a view of
//! the array for a whole block, a padded local buffer filled with the
//! in-bounds part (and written back for outputs) for a partial one, and
//! where a block may be either, both: on a CPU as one ref an `scf.if`
//! chooses per program, on a GPU as the staged ref plus the whole block's
//! view and test, for the caller's two versions of the kernel.

use super::grid_to_loops::Options;
use crate::support::ir::{ShapedKind, join, shaped_type_text};
use crate::support::template::{emit, emit_conjunction, emit_line};
use crate::support::uninitialized::Fill;
use tessel_dialects::{BlockSpec, IndexExpr, Operand};

/// Row-major strides of an identity-layout array.
fn strides(shape: &[i64]) -> Vec<i64> {
    let mut strides = vec![1; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    strides
}

pub(super) fn memref_text(shape: &[String], element: &str, layout: Option<&[i64]>) -> String {
    shaped_type_text(ShapedKind::Memref, shape, element, layout)
}

fn affine_text(expr: &IndexExpr) -> String {
    match expr {
        IndexExpr::Dim(position) => format!("d{position}"),
        IndexExpr::Constant(value) => value.to_string(),
        IndexExpr::Add(l, r) => format!("({} + {})", affine_text(l), affine_text(r)),
        IndexExpr::Mul(l, r) => format!("({} * {})", affine_text(l), affine_text(r)),
        IndexExpr::Mod(l, r) => format!("({} mod {})", affine_text(l), affine_text(r)),
        IndexExpr::FloorDiv(l, r) => format!("({} floordiv {})", affine_text(l), affine_text(r)),
        IndexExpr::CeilDiv(l, r) => format!("({} ceildiv {})", affine_text(l), affine_text(r)),
    }
}

/// Whether the program is the first of those along `revisits` (the
/// revisiting axes all at 0), as an `i1` named from `prefix`.
pub(super) fn emit_first_visit(text: &mut String, revisits: &[usize], prefix: &str) -> String {
    let firsts: Vec<String> = revisits
        .iter()
        .map(|axis| {
            emit_line!(text, "{prefix}_{axis} = arith.cmpi eq, %g{axis}, %c0 : index");
            format!("{prefix}_{axis}")
        })
        .collect();
    emit_conjunction(text, &firsts, &format!("{prefix}_all")).unwrap_or_default()
}

/// Text for one operand's ref, around the kernel call.
pub(super) struct RefText {
    /// `%s<operand>_<dim>`: where the block starts, per array dimension.
    pub(super) offsets: String,
    /// The in-bounds test of a block that was not (an `i1` SSA name).
    pub(super) in_bounds: Option<String>,
    pub(super) before: String,
    pub(super) after: String,
    pub(super) value: String,
    pub(super) r#type: String,
    /// For a GPU's staged partial block: the ref of the programs whose
    /// block is whole after all (the caller runs a second version of the
    /// kernel for them).
    pub(super) whole: Option<WholeRef>,
    /// A staged output block kept across its revisits.
    pub(super) kept: Option<KeptBlock>,
}

/// The staged buffer of an output block that consecutive programs revisit
/// (a TPU keeps such a block in VMEM from one visit to the next, the part
/// past the array's end included: paged attention's row maximum and sum
/// are 128-lane blocks of a one-column array). It is allocated outside the
/// revisiting loops, padded and filled on the first visit only.
pub(super) struct KeptBlock {
    /// The revisiting axis whose loop the allocation goes before.
    pub(super) outermost_axis: usize,
    pub(super) allocation: String,
}

/// Where an operand's blocks go: the grid, its scalar arrays, whether the
/// operand is an output and the axes along which programs revisit its
/// block (`grid_to_loops::revisit_axes`).
pub(super) struct BlockTarget<'a> {
    pub(super) grid: &'a [i64],
    pub(super) scalars: &'a Scalars,
    pub(super) is_output: bool,
    pub(super) revisits: &'a [usize],
}

/// A whole block's ref where the block may also be partial: the view the
/// programs with a whole block take, and the `i1` (defined in
/// `RefText::offsets`) telling them apart.
pub(super) struct WholeRef {
    pub(super) is_whole: String,
    /// Whether only the outermost dimension has partial blocks, so that a
    /// partial block's clipped part lies past the array's end (where
    /// buffer accesses read zeros and write nothing; not with poison
    /// padding): `tessel-past-end-views` may run every program on views.
    pub(super) past_end: bool,
    pub(super) before: String,
    pub(super) value: String,
    pub(super) r#type: String,
}

/// The call's scalar arrays as template arguments: (`%q<k>`, type).
pub(super) type Scalars = [(String, String)];

pub(super) fn operand_ref(
    index: usize,
    operand: &Operand,
    array_type: &str,
    element: &str,
    target: BlockTarget,
    options: Options,
) -> RefText {
    let Options { poison, versioned, uninitialized_reads, .. } = options;
    let BlockTarget { grid, scalars, is_output, revisits } = target;
    let grid_rank = grid.len();
    let spec: &BlockSpec = &operand.spec;
    let array = format!("%a{index}");
    if spec.full || operand.shape.is_empty() {
        return RefText {
            offsets: String::new(),
            in_bounds: None,
            before: String::new(),
            after: String::new(),
            value: array,
            r#type: array_type.to_string(),
            whole: None,
            kept: None,
        };
    }
    let dims = join((0..grid_rank).map(|d| format!("d{d}")));
    let ids = join((0..grid_rank).map(|d| format!("%g{d}")));
    let sizes = spec.block_sizes();
    let kept: Vec<usize> = (0..sizes.len()).filter(|&d| spec.block_shape[d].is_some()).collect();
    let array_strides = strides(&operand.shape);
    let mut offsets = String::new();
    // An index function gives the block indices (or element offsets) of
    // the program: a call, which the inliner then inlines.
    if let Some(function) = &spec.index_function {
        let arguments = (0..grid_rank).map(|d| format!("%g{d}")).chain(scalars.iter().map(|(name, _)| name.clone()));
        let types = (0..grid_rank).map(|_| "index".to_string()).chain(scalars.iter().map(|(_, t)| t.clone()));
        emit_line!(
            offsets,
            "%bi{index}:{rank} = func.call @{function}({}) : ({}) -> ({})",
            join(arguments),
            join(types),
            join(vec!["index"; sizes.len()]),
            rank = sizes.len()
        );
    }
    // Element offset at which the block starts, per array dimension.
    for (d, size) in sizes.iter().enumerate() {
        if spec.index_function.is_some() {
            let (op, amount) = if spec.unblocked {
                ("arith.subi", spec.padding.get(d).map_or(0, |(low, _)| *low))
            } else {
                ("arith.muli", *size)
            };
            emit_line!(
                offsets,
                "%s{index}_{d}_by = arith.constant {amount} : index
                 %s{index}_{d} = {op} %bi{index}#{d}, %s{index}_{d}_by : index"
            );
            continue;
        }
        let block_index = spec.index_map.as_ref().map_or("0".to_string(), |map| affine_text(&map.results[d]));
        let start = if spec.unblocked {
            let low = spec.padding.get(d).map_or(0, |(low, _)| *low);
            format!("({block_index}) - {low}")
        } else {
            format!("({block_index}) * {size}")
        };
        emit_line!(offsets, "%s{index}_{d} = affine.apply affine_map<({dims}) -> ({start})>({ids})");
    }
    // A block must start in the array (blocked) or its offset fall in the
    // padded array (unblocked): checked at run time where not provable.
    let provable = spec.bounds_provable(grid);
    // An input block wholly out of bounds may instead read as
    // uninitialized memory: staged, with nothing of the array in it.
    // (Those the verifier found out are not errors then: every input block
    // may be out.)
    let staged_when_out = uninitialized_reads && !is_output && !spec.unblocked;
    let mut conditions = Vec::new();
    for d in (0..sizes.len()).filter(|_| !provable && !staged_when_out) {
        let (low, high) = match spec.padding.get(d) {
            Some(&(low, high)) if spec.unblocked => (-low, operand.shape[d] + high),
            _ => (0, operand.shape[d]),
        };
        let b = format!("%b{index}_{d}");
        emit!(
            offsets,
            "{b}_low = arith.constant {low} : index\n{b}_high = arith.constant {high} : index\n\
             {b}_above = arith.cmpi sge, %s{index}_{d}, {b}_low : index\n\
             {b}_below = arith.cmpi slt, %s{index}_{d}, {b}_high : index\n\
             {b} = arith.andi {b}_above, {b}_below : i1\n"
        );
        conditions.push(b);
    }
    let in_bounds = emit_conjunction(&mut offsets, &conditions, &format!("%in{index}_"));
    let mut before = String::new();
    let partial = spec.unblocked || staged_when_out || kept.iter().any(|&d| operand.shape[d] % sizes[d] != 0);
    let kernel_shape: Vec<String> = kept.iter().map(|&d| sizes[d].to_string()).collect();
    let kept_strides: Vec<i64> = kept.iter().map(|&d| array_strides[d]).collect();
    let unit_strides = |count: usize| join(vec!["1"; count]);
    // A whole block as a view of the array.
    let view_type = memref_text(&kernel_shape, element, Some(&kept_strides));
    let view = |name: &str| {
        format!(
            "{name} = memref.subview {array}[{}] [{}] [{}] : {array_type} to {view_type}\n",
            join((0..sizes.len()).map(|d| format!("%s{index}_{d}"))),
            join(&sizes),
            unit_strides(sizes.len())
        )
    };
    if !partial {
        before.push_str(&view(&format!("%r{index}")));
        return RefText {
            offsets,
            in_bounds,
            before,
            after: String::new(),
            value: format!("%r{index}"),
            r#type: view_type,
            whole: None,
            kept: None,
        };
    }

    // The in-bounds part, per blocked dimension: where it starts in the
    // array (`_lo`), its length (`_n`) and where it starts in the block
    // (`_at`); pure index arithmetic, with the offsets.
    let (mut src_offsets, mut src_sizes, mut dst_offsets, mut dst_sizes) = (vec![], vec![], vec![], vec![]);
    for (d, size) in sizes.iter().enumerate() {
        let s = format!("%s{index}_{d}");
        if spec.block_shape[d].is_none() {
            src_offsets.push(s);
            src_sizes.push("1".to_string());
            continue;
        }
        let p = format!("%p{index}_{d}");
        emit!(
            offsets,
            "{p}_lo = arith.maxsi {s}, %c0 : index\n\
             {p}_end = arith.addi {s}, %c{size} : index\n\
             {p}_hi = arith.minsi {p}_end, %c{extent} : index\n\
             {p}_len = arith.subi {p}_hi, {p}_lo : index\n\
             {p}_n = arith.maxsi {p}_len, %c0 : index\n\
             {p}_at = arith.subi {p}_lo, {s} : index\n",
            extent = operand.shape[d],
        );
        src_offsets.push(format!("{p}_lo"));
        src_sizes.push(format!("{p}_n"));
        dst_offsets.push(format!("{p}_at"));
        dst_sizes.push(format!("{p}_n"));
    }
    // Whole where every blocked dimension's in-bounds length is the block's.
    let whole_lengths: Vec<String> = (dst_sizes.iter().enumerate())
        .map(|(k, length)| {
            emit_line!(offsets, "%w{index}_{k} = arith.cmpi eq, {length}, %c{} : index", sizes[kept[k]]);
            format!("%w{index}_{k}")
        })
        .collect();
    let is_whole = emit_conjunction(&mut offsets, &whole_lengths, &format!("%w{index}_all"));
    let dynamic: Vec<String> = kept.iter().map(|_| "?".to_string()).collect();
    let src_type = memref_text(&dynamic, element, Some(&kept_strides));
    let buffer_type = memref_text(&kernel_shape, element, None);
    let buffer_strides = strides(&kept.iter().map(|&d| sizes[d]).collect::<Vec<_>>());
    // A local buffer of the block shape: padded, then given the in-bounds
    // part.
    let allocate = |buffer: &str| {
        format!(
            "{buffer} = memref.alloc() : {buffer_type}\n\
             %pad{index} = arith.constant {}\n\
             linalg.fill ins(%pad{index} : {element}) outs({buffer} : {buffer_type})\n",
            poison.constant(element)
        )
    };
    // The in-bounds part of the array (`%<name>_src`) and where it sits in
    // `buffer` (`%<name>_dst`).
    let parts = |name: &str, buffer: &str, buffer_type: &str, dst_type: &str| {
        format!(
            "%{name}_src = memref.subview {array}[{}] [{}] [{}] : {array_type} to {src_type}\n\
             %{name}_dst = memref.subview {buffer}[{}] [{}] [{}] : {buffer_type} to {dst_type}\n",
            join(&src_offsets),
            join(&src_sizes),
            unit_strides(src_sizes.len()),
            join(&dst_offsets),
            join(&dst_sizes),
            unit_strides(dst_sizes.len()),
        )
    };
    let fill_in = |buffer: &str, dst_type: &str| {
        parts(&format!("in{index}"), buffer, &buffer_type, dst_type)
            + &format!("memref.copy %in{index}_src, %in{index}_dst : {src_type} to {dst_type}\n")
    };
    // An output revisited by consecutive programs: one buffer outside the
    // revisiting loops, padded and filled where they are all at 0 (the
    // block's first visit); later visits find what the last one left.
    let kept = (is_output && !revisits.is_empty()).then(|| {
        let first = emit_first_visit(&mut offsets, revisits, &format!("%first{index}"));
        let outermost_axis = revisits.iter().copied().min().unwrap_or_default();
        (KeptBlock { outermost_axis, allocation: format!("%kept{index} = memref.alloc() : {buffer_type}\n") }, first)
    });
    // The staged block in `buffer`: a fresh one, or the kept one
    // (`buffer` then names it).
    let (kept, first_visit) = kept.unzip();
    let stage = |buffer: &str, dst_type: &str| match &first_visit {
        None => allocate(buffer) + &fill_in(buffer, dst_type),
        Some(first) => {
            let kept = format!("%kept{index}");
            format!(
                "scf.if {first} {{\n\
                 %pad{index} = arith.constant {}\n\
                 linalg.fill ins(%pad{index} : {element}) outs({kept} : {buffer_type})\n{}}}\n\
                 {buffer} = memref.cast {kept} : {buffer_type} to {buffer_type}\n",
                poison.constant(element),
                fill_in(&kept, dst_type)
            )
        }
    };
    // Staged: every block (no block can be whole), or on a GPU the
    // kernel version for partial blocks, beside the whole blocks' view.
    let is_whole = match is_whole {
        Some(is_whole) if !versioned => is_whole,
        is_whole => {
            let dst_type = memref_text(&dynamic, element, Some(&buffer_strides));
            let buffer = format!("%r{index}");
            before.push_str(&stage(&buffer, &dst_type));
            let mut after = String::new();
            if is_output && first_visit.is_none() {
                emit_line!(after, "memref.copy %in{index}_dst, %in{index}_src : {dst_type} to {src_type}");
            } else if is_output {
                // The fill's views are inside its `scf.if`.
                emit!(
                    after,
                    "{}memref.copy %back{index}_dst, %back{index}_src : {dst_type} to {src_type}\n",
                    parts(&format!("back{index}"), &buffer, &buffer_type, &dst_type)
                );
            }
            // (Not for a kept block: views past the end keep nothing there.)
            let past_end = poison == Fill::Unset
                && first_visit.is_none()
                && !spec.unblocked
                && spec.index_function.is_none()
                && spec.block_shape[0].is_some()
                && (1..sizes.len()).all(|d| operand.shape[d] % sizes[d] == 0);
            let whole = is_whole.map(|is_whole| WholeRef {
                is_whole,
                past_end,
                before: view(&format!("%v{index}")),
                value: format!("%v{index}"),
                r#type: view_type.clone(),
            });
            return RefText {
                offsets,
                in_bounds,
                before,
                after,
                value: format!("%r{index}"),
                r#type: buffer_type,
                whole,
                kept,
            };
        }
    };
    // Whole blocks (every program's but the edges') are views of the
    // array, as when the blocks divide it; only a partial one is staged.
    // The kernel takes either as one type: the strides the two share,
    // the others and the offset dynamic.
    let ref_strides: Vec<i64> =
        kept_strides.iter().zip(&buffer_strides).map(|(&a, &b)| if a == b { a } else { i64::MIN }).collect();
    let ref_type = memref_text(&kernel_shape, element, Some(&ref_strides));
    let dst_type = memref_text(&dynamic, element, Some(&ref_strides));
    emit!(
        before,
        "%r{index} = scf.if {is_whole} -> ({ref_type}) {{\n{}\
         %view{index}_ref = memref.cast %view{index} : {view_type} to {ref_type}\n\
         scf.yield %view{index}_ref : {ref_type}\n\
         }} else {{\n{}\
         %staged{index}_ref = memref.cast %staged{index} : {buffer_type} to {ref_type}\n\
         scf.yield %staged{index}_ref : {ref_type}\n}}\n",
        view(&format!("%view{index}")),
        stage(&format!("%staged{index}"), &memref_text(&dynamic, element, Some(&buffer_strides))),
    );
    let mut after = String::new();
    if is_output {
        emit!(
            after,
            "scf.if {is_whole} {{\n}} else {{\n{}\
             memref.copy %back{index}_dst, %back{index}_src : {dst_type} to {src_type}\n}}\n",
            parts(&format!("back{index}"), &format!("%r{index}"), &ref_type, &dst_type)
        );
    }
    RefText { offsets, in_bounds, before, after, value: format!("%r{index}"), r#type: ref_type, whole: None, kept }
}
