//! Differential cases: blocked matmuls on the CPU, on the GPUs' matrix cores and on their register tiles.

use super::Case;
use rand::{Rng, rngs::StdRng};

/// A blocked matmul: f32, or i8 x i8 -> i32 (VNNI's vpdpbusd on CPUs that
/// have it), the 8-bit operands scaled in the kernel (wrapping) so they
/// span all of i8.
pub(super) fn matmul(rng: &mut StdRng) -> Case {
    let int8 = rng.random_bool(0.3);
    let (input, output, zero) = if int8 { ("i8", "i32", "0") } else { ("f32", "f32", "0.0") };
    let (m, n) = (rng.random_range(1..=20usize), rng.random_range(1..=20usize));
    let k = [4usize, 8, 12, 16, 24, 32][rng.random_range(0..if int8 { 6 } else { 4 })];
    let (bm, bn) = (rng.random_range(1..=7usize), rng.random_range(1..=7usize));
    let depths: Vec<usize> =
        [2usize, 4, 8, 12].into_iter().filter(|&bk| k.is_multiple_of(bk) && (int8 || bk <= 4)).collect();
    let bk = depths[rng.random_range(0..depths.len())];
    let (gm, gn, gk) = (m.div_ceil(bm), n.div_ceil(bn), k / bk);
    // A random register tile (or the host default): every schedule must
    // give the reference's bits.
    // Rows that do not divide the block leave a remainder strip (or, with
    // `pad`, a padded one).
    let tiles =
        [None, Some((1, 1)), Some((2, 3)), Some((3, 5)), Some((4, 64)), Some((8, 32)), Some((2, 16)), Some((6, 16))];
    let tile = tiles[rng.random_range(0..tiles.len())];
    let stages = rng.random_range(1..=3i64);
    let pad = rng.random_bool(0.5);
    // Operands stored transposed (`pl.dot(trans_a, trans_b)`): x is k x m,
    // y is n x k, and block.dot reads them marked `transposed`.
    let (ta, tb) = (rng.random_bool(0.25), rng.random_bool(0.25));
    // JAX's TPU matmul form: the sum accumulates in a scratch block, copied
    // to the output block at every k step (grid-to-loops keeps only the
    // last visit's copy and updates the scratch in place).
    let scratch = rng.random_bool(0.5);
    // Pallas' `acc += jnp.dot(x, y)`: each k step's dot from zeros, then
    // added to the accumulator (CPU tiles compute the add as their
    // epilogue), rather than accumulated into it.
    let plus_equals = rng.random_bool(0.5);
    // ... with each step's dot masked first to the block's first `limit`
    // columns (a select on an i1 mask, as attention's causal masks).
    let limit = (plus_equals && rng.random_bool(0.5)).then(|| rng.random_range(0..=bn));
    // 8-bit operands times a scale (random inputs are -8..7; x 16 reaches
    // -128, x 17 wraps).
    let scales = [1i64, 16, 17];
    let (sa, sb) = if int8 { (scales[rng.random_range(0..3)], scales[rng.random_range(0..3)]) } else { (1, 1) };
    let description = format!(
        "matmul {input} {m}x{k}x{n} blocks {bm}x{bk}x{bn} register tile {tile:?} stages {stages} padded tiles {pad} \
         transposed lhs {ta} rhs {tb} scratch accumulator {scratch} acc += dot {plus_equals} \
         masked to columns {limit:?} scales {sa} {sb}"
    );
    let block = format!("memref<{bm}x{bn}x{output}>");
    let (scratch_argument, scratch_operand, sum, copy_out) = if scratch {
        (
            format!(", %s: {block}"),
            format!(" scratch({block})"),
            "%s",
            format!(
                "%sum = block.load %s : {block} -> tensor<{bm}x{bn}x{output}>\n\
                 block.store %sum, %o : tensor<{bm}x{bn}x{output}>, {block}\n"
            ),
        )
    } else {
        (String::new(), String::new(), "%o", String::new())
    };
    let (x_shape, x_block, x_map) = if ta {
        (format!("{k}x{m}"), format!("{bk}x{bm}"), format!("[{bk}, {bm}], (i, j, k) -> (k, i)"))
    } else {
        (format!("{m}x{k}"), format!("{bm}x{bk}"), format!("[{bm}, {bk}], (i, j, k) -> (i, k)"))
    };
    let (y_shape, y_block, y_map) = if tb {
        (format!("{n}x{k}"), format!("{bn}x{bk}"), format!("[{bn}, {bk}], (i, j, k) -> (j, k)"))
    } else {
        (format!("{k}x{n}"), format!("{bk}x{bn}"), format!("[{bk}, {bn}], (i, j, k) -> (k, j)"))
    };
    // Loaded as %a / %b, or as %a0 / %b0 then scaled into %a / %b.
    let scaled = |name: &str, shape: &str, scale: i64| {
        if scale == 1 {
            (format!("%{name}"), String::new())
        } else {
            (
                format!("%{name}0"),
                format!(
                    "%{name}_scale = arith.constant dense<{scale}> : tensor<{shape}x{input}>\n\
                     %{name} = arith.muli %{name}0, %{name}_scale : tensor<{shape}x{input}>\n"
                ),
            )
        }
    };
    let ((a_load, a_scaled), (b_load, b_scaled)) = (scaled("a", &x_block, sa), scaled("b", &y_block, sb));
    let (t_lhs, t_rhs) = (if ta { " transposed" } else { "" }, if tb { " transposed" } else { "" });
    let operand_types = format!("tensor<{x_block}x{input}>, tensor<{y_block}x{input}>");
    let result = format!("tensor<{bm}x{bn}x{output}>");
    let contraction = if plus_equals {
        let add = if int8 { "arith.addi" } else { "arith.addf" };
        let masked = match limit {
            Some(limit) => format!(
                "%columns = block.iota dim 1 : tensor<{bm}x{bn}xi32>\n\
                 %limit = arith.constant dense<{limit}> : tensor<{bm}x{bn}xi32>\n\
                 %mask = arith.cmpi slt, %columns, %limit : tensor<{bm}x{bn}xi32>\n\
                 %nothing = arith.constant dense<{zero}> : {result}\n\
                 %kept = arith.select %mask, %dot, %nothing : tensor<{bm}x{bn}xi1>, {result}\n"
            ),
            None => String::new(),
        };
        let step = if limit.is_some() { "%kept" } else { "%dot" };
        format!(
            "%dot = block.dot %a{t_lhs}, %b{t_rhs} : {operand_types} -> {result}\n\
             {masked}%c = {add} %acc, {step} : {result}\n"
        )
    } else {
        format!("%c = block.dot %a{t_lhs}, %b{t_rhs} acc %acc : {operand_types}, {result} -> {result}\n")
    };
    let tile_attribute = tile.map(|(rows, columns)| format!("tessel.register_tile = array<i64: {rows}, {columns}>, "));
    let (open, close) = (
        format!(
            "module attributes {{{}tessel.num_stages = {stages} : i64, tessel.pad_tiles = {} : i64}} {{\n",
            tile_attribute.unwrap_or_default(),
            pad as i64
        ),
        "}\n",
    );
    let text = open
        + &format!(
            "func.func @kernel(%x: memref<{x_block}x{input}>, %y: memref<{y_block}x{input}>, %o: {block}{scratch_argument}) {{\n\
         %k = grid.program_id 2\n%c0 = arith.constant 0 : index\n%first = arith.cmpi eq, %k, %c0 : index\n\
         scf.if %first {{\n%z = arith.constant dense<{zero}> : tensor<{bm}x{bn}x{output}>\n\
         block.store %z, {sum} : tensor<{bm}x{bn}x{output}>, {block}\n}}\n\
         {a_load} = block.load %x : memref<{x_block}x{input}> -> tensor<{x_block}x{input}>\n\
         {b_load} = block.load %y : memref<{y_block}x{input}> -> tensor<{y_block}x{input}>\n\
         {a_scaled}{b_scaled}\
         %acc = block.load {sum} : {block} -> tensor<{bm}x{bn}x{output}>\n\
         {contraction}\
         block.store %c, {sum} : tensor<{bm}x{bn}x{output}>, {block}\n{copy_out}return\n}}\n\
         func.func @main(%x: memref<{x_shape}x{input}>, %y: memref<{y_shape}x{input}>, %o: memref<{m}x{n}x{output}>) {{\n\
         grid.call @kernel grid [{gm}, {gn}, {gk}] ins(%x, %y : memref<{x_shape}x{input}>, memref<{y_shape}x{input}>) outs(%o : memref<{m}x{n}x{output}>){scratch_operand}\n\
         in_specs [#grid.block<{x_map}>, #grid.block<{y_map}>]\n\
         out_specs [#grid.block<[{bm}, {bn}], (i, j, k) -> (i, j)>]\nreturn\n}}\n"
        )
        + close;
    let reference = move |inputs: &[Vec<f64>]| -> Vec<Vec<f64>> {
        let (x, y) = (&inputs[0], &inputs[1]);
        let mut out = vec![0.0; m * n];
        for i in 0..m {
            for j in 0..n {
                let (mut acc, mut sum) = (0.0f32, 0i32);
                // `acc += dot`: each k step's dot from zero (integer sums
                // wrap alike either way).
                let mut step = 0.0f32;
                for p in 0..k {
                    let a = if ta { x[p * m + i] } else { x[i * k + p] };
                    let b = if tb { y[j * k + p] } else { y[p * n + j] };
                    if int8 {
                        let wrap = |value: f64, scale: i64| i32::from((value as i8).wrapping_mul(scale as i8));
                        sum = sum.wrapping_add(wrap(a, sa) * wrap(b, sb));
                    } else if plus_equals {
                        step = (a as f32).mul_add(b as f32, step);
                        if (p + 1) % bk == 0 {
                            (acc, step) = (acc + step, 0.0);
                        }
                    } else {
                        acc = (a as f32).mul_add(b as f32, acc);
                    }
                }
                out[i * n + j] = if limit.is_some_and(|limit| j % bn >= limit) {
                    0.0
                } else if int8 {
                    f64::from(sum)
                } else {
                    f64::from(acc)
                };
            }
        }
        vec![out]
    };
    Case { text, inputs: 2, arguments: 3, reference: Box::new(reference), description, gpu_args: Vec::new() }
}

/// A contraction the ROCm pipeline puts on matrix cores (blocks multiples
/// of 16, k a multiple of the instructions'): f32 or 8-bit integers, on a
/// random chip (MFMA on gfx90a/gfx942, WMMA for i8 on gfx1100, FMAs for
/// f32 there), blocks (16 to 128), wave count and pipelining depth,
/// arrays not divisible by the blocks or divisible (then the output block
/// stays in registers across the k axis), k on an arbitrary axis, several
/// LDS chunks per k step (the pipelined chunk loop).
pub(super) fn matrix_core_matmul(rng: &mut StdRng) -> Case {
    let float = rng.random_bool(0.5);
    // Blocks of 16 to 64, or 128: one or two waves then hold more than 16
    // tiles of 16 each (up to 128 accumulator registers a lane), or walk
    // the block in sub-blocks.
    let extent = |rng: &mut StdRng| 16 * [1, 2, 3, 4, 8][rng.random_range(0..5)];
    let (bm, bn) = (extent(rng), extent(rng));
    let bk = if float { 4 * rng.random_range(1..=16usize) } else { 32 * rng.random_range(1..=3usize) };
    let (gm, gn, gk) = (rng.random_range(1..=2usize), rng.random_range(1..=2usize), rng.random_range(1..=3usize));
    // The last block row and column partial (at least one element in), or
    // whole.
    let partial = rng.random_bool(0.5);
    let short = |block: usize, rng: &mut StdRng| if partial { rng.random_range(0..block) } else { 0 };
    let (m, n, k) = (bm * gm - short(bm, rng), bn * gn - short(bn, rng), bk * gk);
    let chip = ["gfx90a", "gfx942", "gfx1100"][rng.random_range(0..3)];
    let warps = [1, 2, 4][rng.random_range(0..3)];
    let stages = rng.random_range(1..=2i64);
    let (input, output, zero) = if float { ("f32", "f32", "0.0") } else { ("i8", "i32", "0") };
    let attributes = format!("tessel.num_warps = {warps} : i64, tessel.num_stages = {stages} : i64");
    let (text, whole_k, first, epilogue) =
        accumulating_matmul(rng, &attributes, (m, n, k), (bm, bn, bk), (gm, gn, gk), (input, output, zero));
    let description =
        format!("{input} matmul {m}x{k}x{n} blocks {bm}x{bk}x{bn} on {chip}, {warps} waves, {stages} stages{whole_k}");
    let reference = move |inputs: &[Vec<f64>]| -> Vec<Vec<f64>> {
        let (x, y) = (&inputs[0], &inputs[1]);
        let sum = |i: usize, j: usize, depth: usize| {
            if float {
                let mut acc = first as f32;
                for p in 0..depth {
                    acc = (x[i * k + p] as f32).mul_add(y[p * n + j] as f32, acc);
                }
                acc as f64
            } else {
                let mut acc = first as i32;
                for p in 0..depth {
                    acc = acc.wrapping_add((x[i * k + p] as i32).wrapping_mul(y[p * n + j] as i32));
                }
                acc as f64
            }
        };
        vec![reference_output((m, n, k, bk), sum, &epilogue, output)]
    };
    Case {
        text,
        inputs: 2,
        arguments: 3,
        reference: Box::new(reference),
        description,
        gpu_args: vec!["--chip".into(), chip.into()],
    }
}

/// A contraction the ROCm pipeline computes with FMAs on a register tile
/// per work-item (what matrix cores leave): f32 on gfx1100 or with matrix
/// cores off, f16 and bf16 widened to f32, f64, i8 x i8 -> i32 with matrix
/// cores off; blocks of 8 to 128 on 1, 2
/// or 4 waves (too few results for the work-items: the plain FMA path), a
/// random register tile (taken where it fits the block), one or two
/// stages, LDS chunks of 4 to 16 k (several per k step), partial edge
/// blocks, k on an arbitrary axis.
pub(super) fn register_tile_matmul(rng: &mut StdRng) -> Case {
    let types = [("f32", "f32"), ("f16", "f32"), ("bf16", "f32"), ("f64", "f64"), ("i8", "i32")];
    let (input, output) = types[rng.random_range(0..types.len())];
    // 128 x 128 blocks: RDNA 3's 8x16 tiles (128 accumulators per item);
    // 24 and 48 columns: CPU register tiles whose rows are not a power of
    // two long (three vectors of AVX2 or AVX-512).
    let extents = [8usize, 16, 32, 64, 128];
    let columns = [8usize, 16, 24, 32, 48, 64, 128];
    let (bm, bn) = (extents[rng.random_range(0..5)], columns[rng.random_range(0..columns.len())]);
    let bk = [4usize, 8, 16, 32, 48][rng.random_range(0..5)];
    let (gm, gn, gk) = (rng.random_range(1..=2usize), rng.random_range(1..=2usize), rng.random_range(1..=3usize));
    let partial = rng.random_bool(0.5);
    let short = |block: usize, rng: &mut StdRng| if partial { rng.random_range(0..block) } else { 0 };
    let (m, n, k) = (bm * gm - short(bm, rng), bn * gn - short(bn, rng), bk * gk);
    let chip = ["gfx90a", "gfx942", "gfx1100"][rng.random_range(0..3)];
    // f32 on CDNA and i8 everywhere go to the matrix instructions unless
    // they are switched off.
    let matrix_cores = if (input == "f32" && chip != "gfx1100") || input == "i8" { 0 } else { rng.random_range(0..=1) };
    let warps = [1, 2, 4][rng.random_range(0..3)];
    let stages = rng.random_range(1..=2i64);
    let chunk = [4, 8, 16][rng.random_range(0..3)];
    let tiles = [
        None,
        Some((1, 1)),
        Some((2, 4)),
        Some((4, 4)),
        Some((4, 8)),
        Some((8, 8)),
        Some((8, 2)),
        Some((2, 24)),
        Some((3, 20)),
        Some((4, 48)),
    ];
    let tile = tiles[rng.random_range(0..tiles.len())];
    // Tiles kept whole where they do not divide the block (CPU only).
    let pad_tiles = rng.random_bool(0.3);
    let description = format!(
        "{input} matmul {m}x{k}x{n} blocks {bm}x{bk}x{bn} on {chip}, matrix cores {matrix_cores}, {warps} waves, \
         {stages} stages, chunk {chunk}, register tile {tile:?}, padded tiles {pad_tiles}"
    );
    let tile_attribute = tile
        .map(|(rows, columns)| format!(", tessel.register_tile = array<i64: {rows}, {columns}>"))
        .unwrap_or_default();
    let attributes = format!(
        "tessel.num_warps = {warps} : i64, tessel.num_stages = {stages} : i64, tessel.lds_chunk = {chunk} : i64, \
         tessel.matrix_cores = {matrix_cores} : i64, tessel.pad_tiles = {} : i64{tile_attribute}",
        pad_tiles as i64
    );
    let zero = if input == "i8" { "0" } else { "0.0" };
    let (text, whole_k, first, epilogue) =
        accumulating_matmul(rng, &attributes, (m, n, k), (bm, bn, bk), (gm, gn, gk), (input, output, zero));
    let description = format!("{description}{whole_k}");
    // bf16 arrays are dumped as their bits (`<u2`).
    let value = move |raw: f64| if input == "bf16" { f64::from(f32::from_bits((raw as u32) << 16)) } else { raw };
    let reference = move |inputs: &[Vec<f64>]| -> Vec<Vec<f64>> {
        let (x, y) = (&inputs[0], &inputs[1]);
        let sum = |i: usize, j: usize, depth: usize| {
            let (a, b) = (|p: usize| value(x[i * k + p]), |p: usize| value(y[p * n + j]));
            if output == "i32" {
                f64::from((0..depth).fold(first as i32, |acc, p| acc.wrapping_add(a(p) as i32 * b(p) as i32)))
            } else if output == "f64" {
                (0..depth).fold(first, |acc, p| a(p).mul_add(b(p), acc))
            } else {
                f64::from((0..depth).fold(first as f32, |acc, p| (a(p) as f32).mul_add(b(p) as f32, acc)))
            }
        };
        vec![reference_output((m, n, k, bk), sum, &epilogue, output)]
    };
    Case {
        text,
        inputs: 2,
        arguments: 3,
        reference: Box::new(reference),
        description,
        gpu_args: vec!["--chip".into(), chip.into()],
    }
}

/// A module (attributes `attributes`) whose `main` computes an m x k by k
/// x n matmul in bm x bk x bn blocks on a (gm, gn, gk) grid, the output
/// block zeroed at the first k step and accumulated into at each (k on
/// an arbitrary axis) — or, for three in ten, in bm x k x bn blocks on a
/// (gm, gn) grid, each block's dot accumulating from a splat constant
/// (`block.dot ... acc` of one: zeros, or 2, where a pipeline that started
/// the accumulators from zeros rather than from the constant would show).
/// With k on the grid, four in ten finish the output at the last k step
/// (`k == last ? max(2 * dot + column bias, 0) : dot`, Pallas' fused
/// epilogue, the dot read by both branches of an `scf.if`). Returns the
/// module, what to add to the case's description, the value every sum
/// starts from and the epilogue, if any.
fn accumulating_matmul(
    rng: &mut StdRng,
    attributes: &str,
    (m, n, k): (usize, usize, usize),
    (bm, bn, bk): (usize, usize, usize),
    (gm, gn, gk): (usize, usize, usize),
    (input, output, zero): (&str, &str, &str),
) -> (String, String, f64, Option<Epilogue>) {
    let head = format!("module attributes {{{attributes}}} {{\n");
    let starts = if zero.contains('.') { [("0.0", 0.0), ("2.0", 2.0)] } else { [("0", 0.0), ("2", 2.0)] };
    if rng.random_bool(0.3) {
        let (start, first) = starts[rng.random_range(0..2)];
        let text = head
            + &format!(
                "func.func @kernel(%x: memref<{bm}x{k}x{input}>, %y: memref<{k}x{bn}x{input}>, %o: memref<{bm}x{bn}x{output}>) {{\n\
                 %a = block.load %x : memref<{bm}x{k}x{input}> -> tensor<{bm}x{k}x{input}>\n\
                 %b = block.load %y : memref<{k}x{bn}x{input}> -> tensor<{k}x{bn}x{input}>\n\
                 %start = arith.constant dense<{start}> : tensor<{bm}x{bn}x{output}>\n\
                 %c = block.dot %a, %b acc %start : tensor<{bm}x{k}x{input}>, tensor<{k}x{bn}x{input}>, tensor<{bm}x{bn}x{output}> -> tensor<{bm}x{bn}x{output}>\n\
                 block.store %c, %o : tensor<{bm}x{bn}x{output}>, memref<{bm}x{bn}x{output}>\nreturn\n}}\n\
                 func.func @main(%x: memref<{m}x{k}x{input}>, %y: memref<{k}x{n}x{input}>, %o: memref<{m}x{n}x{output}>) {{\n\
                 grid.call @kernel grid [{gm}, {gn}] ins(%x, %y : memref<{m}x{k}x{input}>, memref<{k}x{n}x{input}>) outs(%o : memref<{m}x{n}x{output}>)\n\
                 in_specs [#grid.block<[{bm}, {k}], (i, j) -> (i, 0)>, #grid.block<[{k}, {bn}], (i, j) -> (0, j)>]\n\
                 out_specs [#grid.block<[{bm}, {bn}], (i, j) -> (i, j)>]\nreturn\n}}\n}}\n"
            );
        return (text, format!(", whole k from {start}"), first, None);
    }
    let epilogue = rng.random_bool(0.4).then(|| Epilogue {
        bias: (0..bn).map(|_| f64::from(rng.random_range(-4..=4i32))).collect(),
        integer: output == "i32",
        operands_first: rng.random_bool(0.5),
        reads_accumulator: rng.random_bool(0.3),
    });
    let (finish, stored, description) = match &epilogue {
        Some(epilogue) => {
            let place = if epilogue.operands_first { " (bias broadcast before the branch)" } else { "" };
            let minus = if epilogue.reads_accumulator { " - acc" } else { "" };
            (epilogue.text((bm, bn), output), "%out", format!(", relu(2 dot + bias){minus} at the last k{place}"))
        }
        None => (String::new(), "%c", String::new()),
    };
    let text = head
        + &format!(
            "func.func @kernel(%x: memref<{bm}x{bk}x{input}>, %y: memref<{bk}x{bn}x{input}>, %o: memref<{bm}x{bn}x{output}>) {{\n\
         %k = grid.program_id 2\n%c0 = arith.constant 0 : index\n%first = arith.cmpi eq, %k, %c0 : index\n\
         scf.if %first {{\n%z = arith.constant dense<{zero}> : tensor<{bm}x{bn}x{output}>\n\
         block.store %z, %o : tensor<{bm}x{bn}x{output}>, memref<{bm}x{bn}x{output}>\n}}\n\
         %a = block.load %x : memref<{bm}x{bk}x{input}> -> tensor<{bm}x{bk}x{input}>\n\
         %b = block.load %y : memref<{bk}x{bn}x{input}> -> tensor<{bk}x{bn}x{input}>\n\
         %acc = block.load %o : memref<{bm}x{bn}x{output}> -> tensor<{bm}x{bn}x{output}>\n\
         %c = block.dot %a, %b acc %acc : tensor<{bm}x{bk}x{input}>, tensor<{bk}x{bn}x{input}>, tensor<{bm}x{bn}x{output}> -> tensor<{bm}x{bn}x{output}>\n\
         {finish}\
         block.store {stored}, %o : tensor<{bm}x{bn}x{output}>, memref<{bm}x{bn}x{output}>\nreturn\n}}\n\
         func.func @main(%x: memref<{m}x{k}x{input}>, %y: memref<{k}x{n}x{input}>, %o: memref<{m}x{n}x{output}>) {{\n\
         grid.call @kernel grid [{gm}, {gn}, {gk}] ins(%x, %y : memref<{m}x{k}x{input}>, memref<{k}x{n}x{input}>) outs(%o : memref<{m}x{n}x{output}>)\n\
         in_specs [#grid.block<[{bm}, {bk}], (i, j, k) -> (i, k)>, #grid.block<[{bk}, {bn}], (i, j, k) -> (k, j)>]\n\
         out_specs [#grid.block<[{bm}, {bn}], (i, j, k) -> (i, j)>]\nreturn\n}}\n}}\n"
        );
    (text, description, 0.0, epilogue)
}

/// `max(2 * dot + bias[j], 0)`, the bias a constant per column of the
/// block, applied at the last k step; with `reads_accumulator`, minus the
/// accumulator block loaded at that step (the sum of the k steps before:
/// a merge of the k steps that ran the epilogue after all of them would
/// read the fill instead).
pub(super) struct Epilogue {
    bias: Vec<f64>,
    integer: bool,
    operands_first: bool,
    reads_accumulator: bool,
}

impl Epilogue {
    /// The epilogue's IR: `%out` from the dot `%c` and the k index `%k`.
    /// With `operands_first`, the bias broadcast and the constants come
    /// before the `scf.if` (between the dot and the branch), else inside
    /// the branch that uses them.
    fn text(&self, (bm, bn): (usize, usize), output: &str) -> String {
        let block = format!("tensor<{bm}x{bn}x{output}>");
        let (two, zero, ops) = if self.integer {
            ("2", "0", ["arith.muli", "arith.addi", "arith.maxsi", "arith.subi"])
        } else {
            ("2.0", "0.0", ["arith.mulf", "arith.addf", "arith.maximumf", "arith.subf"])
        };
        let (result, minus_accumulator) = if self.reads_accumulator {
            ("%final", format!("%final = {} %relu, %acc : {block}\n", ops[3]))
        } else {
            ("%relu", String::new())
        };
        let bias: Vec<String> =
            self.bias.iter().map(|&b| if self.integer { format!("{}", b as i64) } else { format!("{b:.1}") }).collect();
        let operands = format!(
            "%two = arith.constant dense<{two}> : {block}\n\
             %bias = arith.constant dense<[{}]> : tensor<{bn}x{output}>\n\
             %biases = block.broadcast %bias dims [0] : tensor<{bn}x{output}> -> {block}\n\
             %zero = arith.constant dense<{zero}> : {block}\n",
            bias.join(", ")
        );
        let (before, inside) = if self.operands_first { (operands, String::new()) } else { (String::new(), operands) };
        format!(
            "{before}%n = grid.num_programs 2\n%c1 = arith.constant 1 : index\n%lastk = arith.subi %n, %c1 : index\n\
             %last = arith.cmpi eq, %k, %lastk : index\n%out = scf.if %last -> ({block}) {{\n{inside}\
             %twice = {} %c, %two : {block}\n%biased = {} %twice, %biases : {block}\n\
             %relu = {} %biased, %zero : {block}\n{minus_accumulator}\
             scf.yield {result} : {block}\n}} else {{\nscf.yield %c : {block}\n}}\n",
            ops[0], ops[1], ops[2]
        )
    }

    /// The epilogue of the reference's sum `value` at column `j`, where
    /// the sum of the k steps before the last is `before`, in the output's
    /// type (`f32`, `f64` or `i32`).
    pub(super) fn apply(&self, value: f64, before: f64, j: usize, output: &str) -> f64 {
        let bias = self.bias[j % self.bias.len()];
        let before = if self.reads_accumulator { before } else { 0.0 };
        match output {
            "i32" => {
                f64::from((value as i32).wrapping_mul(2).wrapping_add(bias as i32).max(0).wrapping_sub(before as i32))
            }
            "f64" => (value * 2.0 + bias).max(0.0) - before,
            _ => f64::from((value as f32 * 2.0 + bias as f32).max(0.0) - before as f32),
        }
    }
}

/// An m x n reference: `sum(i, j, depth)` is element (i, j)'s sum over the
/// first `depth` k, in the output's type; `k` all of k and `bk` the k
/// steps' depth. With `epilogue`, the last k step's epilogue applied.
pub(super) fn reference_output(
    (m, n, k, bk): (usize, usize, usize, usize),
    sum: impl Fn(usize, usize, usize) -> f64,
    epilogue: &Option<Epilogue>,
    output: &str,
) -> Vec<f64> {
    let mut out = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            let value = sum(i, j, k);
            out[i * n + j] = match epilogue {
                Some(epilogue) => {
                    let before = if epilogue.reads_accumulator { sum(i, j, k - bk) } else { 0.0 };
                    epilogue.apply(value, before, j, output)
                }
                None => value,
            };
        }
    }
    out
}
