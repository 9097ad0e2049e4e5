//! Differential tests: random Pallas configurations (shapes not divisible
//! by their blocks, identity / transposed / constant index maps, revisited
//! outputs on arbitrary axes, masked stores, blocked matmuls, matmuls on
//! the GPUs' matrix cores, unsigned arrays, gathers and scatters, loads
//! followed by writes to the loaded ref, sibling reductions, index
//! functions with scalar prefetch, grids sized by values) are compiled
//! and run with `tessel run --check` (compiled code against the reference
//! interpreter), and the results are compared exactly with a plain Rust
//! reference computed here from the dumped inputs.

use rand::{Rng, SeedableRng, rngs::StdRng};
use std::{fmt::Write, path::Path, process::Command};

/// Every output's expected contents, computed from the inputs.
type Reference = Box<dyn Fn(&[Vec<f64>]) -> Vec<Vec<f64>>>;

/// One random configuration and the module text that runs it.
struct Case {
    text: String,
    /// Leading arguments filled with random data; the rest are outputs.
    inputs: usize,
    arguments: usize,
    reference: Reference,
    description: String,
    /// Extra `tessel run` arguments on the emulated GPU (the chip).
    gpu_args: Vec<String>,
}

fn elementwise(rng: &mut StdRng) -> Case {
    let float = rng.random_bool(0.5);
    let element = if float { "f32" } else { "i32" };
    let (m, n) = (rng.random_range(1..=17usize), rng.random_range(1..=17usize));
    let (bm, bn) = (rng.random_range(1..=6usize), rng.random_range(1..=6usize));
    let (gm, gn) = (m.div_ceil(bm), n.div_ceil(bn));
    let transposed = rng.random_bool(0.3);
    let constant_y = rng.random_bool(0.3);
    let revisits = if rng.random_bool(0.4) { rng.random_range(2..=3usize) } else { 1 };
    let threshold = rng.random_bool(0.4).then(|| rng.random_range(0..=n + 1));
    // The revisit axis innermost, or outermost (semantics [arbitrary,
    // parallel, parallel]: ordered launches on the GPU).
    let outer = revisits > 1 && rng.random_bool(0.5);
    let description = format!(
        "{element} {m}x{n} blocks {bm}x{bn} transposed={transposed} constant_y={constant_y} revisits={revisits} \
         outer={outer} mask={threshold:?}"
    );

    // Grid axes (i over rows, j over columns), maybe swapped; a revisit
    // axis last or first.
    let mut grid = if transposed { vec![gn, gm] } else { vec![gm, gn] };
    let (mut i_axis, mut j_axis) = if transposed { (1, 0) } else { (0, 1) };
    let mut revisit_axis = 2;
    if revisits > 1 && outer {
        grid.insert(0, revisits);
        (i_axis, j_axis, revisit_axis) = (i_axis + 1, j_axis + 1, 0);
    } else if revisits > 1 {
        grid.push(revisits);
    }
    let dims = (0..grid.len()).map(|d| format!("d{d}")).collect::<Vec<_>>().join(", ");
    let (di, dj) = (format!("d{i_axis}"), format!("d{j_axis}"));
    let block = format!("{bm}x{bn}x{element}");
    let array = format!("memref<{m}x{n}x{element}>");
    let spec = format!("#grid.block<[{bm}, {bn}], ({dims}) -> ({di}, {dj})>");
    let y_spec = if constant_y { format!("#grid.block<[{bm}, {bn}], ({dims}) -> (0, {dj})>") } else { spec.clone() };
    let (mul, add, two, zero) =
        if float { ("arith.mulf", "arith.addf", "2.0", "0.0") } else { ("arith.muli", "arith.addi", "2", "0") };

    let mut kernel = format!(
        "func.func @kernel(%x: memref<{block}>, %y: memref<{block}>, %o: memref<{block}>) {{\n\
         %a = block.load %x : memref<{block}> -> tensor<{block}>\n\
         %b = block.load %y : memref<{block}> -> tensor<{block}>\n\
         %two = arith.constant dense<{two}> : tensor<{block}>\n\
         %t = {mul} %a, %two : tensor<{block}>\n\
         %v = {add} %t, %b : tensor<{block}>\n"
    );
    let mask = match threshold {
        Some(t) => {
            write!(
                kernel,
                "%col = block.iota dim 1 : tensor<{bm}x{bn}xi32>\n\
                 %j = grid.program_id {j_axis}\n\
                 %cbn = arith.constant {bn} : index\n\
                 %start = arith.muli %j, %cbn : index\n\
                 %start32 = arith.index_cast %start : index to i32\n\
                 %starts = tensor.splat %start32 : tensor<{bm}x{bn}xi32>\n\
                 %global = arith.addi %col, %starts : tensor<{bm}x{bn}xi32>\n\
                 %limit = arith.constant dense<{t}> : tensor<{bm}x{bn}xi32>\n\
                 %m = arith.cmpi slt, %global, %limit : tensor<{bm}x{bn}xi32>\n"
            )
            .unwrap();
            " mask %m"
        }
        None => "",
    };
    let stored = if revisits > 1 {
        write!(
            kernel,
            "%k = grid.program_id {revisit_axis}\n%c0 = arith.constant 0 : index\n%first = arith.cmpi eq, %k, %c0 : index\n\
             scf.if %first {{\n%z = arith.constant dense<{zero}> : tensor<{block}>\nblock.store %z, %o{mask} : tensor<{block}>, memref<{block}>\n}}\n\
             %old = block.load %o : memref<{block}> -> tensor<{block}>\n%sum = {add} %old, %v : tensor<{block}>\n"
        )
        .unwrap();
        "%sum"
    } else {
        "%v"
    };
    writeln!(kernel, "block.store {stored}, %o{mask} : tensor<{block}>, memref<{block}>\nreturn\n}}").unwrap();
    let grid_text = grid.iter().map(usize::to_string).collect::<Vec<_>>().join(", ");
    let text = format!(
        "{kernel}func.func @main(%x: {array}, %y: {array}, %o: {array}) {{\n\
         grid.call @kernel grid [{grid_text}] ins(%x, %y : {array}, {array}) outs(%o : {array})\n\
         in_specs [{spec}, {y_spec}] out_specs [{spec}]\nreturn\n}}\n"
    );

    let reference = move |inputs: &[Vec<f64>]| -> Vec<Vec<f64>> {
        let (x, y) = (&inputs[0], &inputs[1]);
        let mut out = vec![0.0; m * n];
        for r in 0..m {
            for c in 0..n {
                if threshold.is_some_and(|t| c >= t) {
                    continue;
                }
                let yr = if constant_y { r % bm } else { r };
                let value = if float {
                    let v = (x[r * n + c] as f32) * 2.0 + y[yr * n + c] as f32;
                    let mut acc = 0.0f32;
                    for _ in 0..revisits {
                        acc += v;
                    }
                    if revisits == 1 { v as f64 } else { acc as f64 }
                } else {
                    let v = (x[r * n + c] as i32).wrapping_mul(2).wrapping_add(y[yr * n + c] as i32);
                    v.wrapping_mul(revisits as i32) as f64
                };
                out[r * n + c] = value;
            }
        }
        vec![out]
    };
    Case { text, inputs: 2, arguments: 3, reference: Box::new(reference), description, gpu_args: Vec::new() }
}

fn matmul(rng: &mut StdRng) -> Case {
    let (m, n) = (rng.random_range(1..=20usize), rng.random_range(1..=20usize));
    let k = [4usize, 8, 12, 16][rng.random_range(0..4)];
    let (bm, bn) = (rng.random_range(1..=7usize), rng.random_range(1..=7usize));
    let bk = [2usize, 4][rng.random_range(0..2)];
    let (gm, gn, gk) = (m.div_ceil(bm), n.div_ceil(bn), k / bk);
    // A random register tile (or the host default): every schedule must
    // give the reference's bits.
    let tiles = [None, Some((1, 1)), Some((2, 3)), Some((3, 5)), Some((4, 64)), Some((8, 32))];
    let tile = tiles[rng.random_range(0..tiles.len())];
    let stages = rng.random_range(1..=3i64);
    let pad = rng.random_bool(0.5);
    // Operands stored transposed (`pl.dot(trans_a, trans_b)`): x is k x m,
    // y is n x k, and block.dot reads them marked `transposed`.
    let (ta, tb) = (rng.random_bool(0.25), rng.random_bool(0.25));
    let description = format!(
        "matmul {m}x{k}x{n} blocks {bm}x{bk}x{bn} register tile {tile:?} stages {stages} padded tiles {pad} \
         transposed lhs {ta} rhs {tb}"
    );
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
    let (t_lhs, t_rhs) = (if ta { " transposed" } else { "" }, if tb { " transposed" } else { "" });
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
            "func.func @kernel(%x: memref<{x_block}xf32>, %y: memref<{y_block}xf32>, %o: memref<{bm}x{bn}xf32>) {{\n\
         %k = grid.program_id 2\n%c0 = arith.constant 0 : index\n%first = arith.cmpi eq, %k, %c0 : index\n\
         scf.if %first {{\n%z = arith.constant dense<0.0> : tensor<{bm}x{bn}xf32>\n\
         block.store %z, %o : tensor<{bm}x{bn}xf32>, memref<{bm}x{bn}xf32>\n}}\n\
         %a = block.load %x : memref<{x_block}xf32> -> tensor<{x_block}xf32>\n\
         %b = block.load %y : memref<{y_block}xf32> -> tensor<{y_block}xf32>\n\
         %acc = block.load %o : memref<{bm}x{bn}xf32> -> tensor<{bm}x{bn}xf32>\n\
         %c = block.dot %a{t_lhs}, %b{t_rhs} acc %acc : tensor<{x_block}xf32>, tensor<{y_block}xf32>, tensor<{bm}x{bn}xf32> -> tensor<{bm}x{bn}xf32>\n\
         block.store %c, %o : tensor<{bm}x{bn}xf32>, memref<{bm}x{bn}xf32>\nreturn\n}}\n\
         func.func @main(%x: memref<{x_shape}xf32>, %y: memref<{y_shape}xf32>, %o: memref<{m}x{n}xf32>) {{\n\
         grid.call @kernel grid [{gm}, {gn}, {gk}] ins(%x, %y : memref<{x_shape}xf32>, memref<{y_shape}xf32>) outs(%o : memref<{m}x{n}xf32>)\n\
         in_specs [#grid.block<{x_map}>, #grid.block<{y_map}>]\n\
         out_specs [#grid.block<[{bm}, {bn}], (i, j, k) -> (i, j)>]\nreturn\n}}\n"
        )
        + close;
    let reference = move |inputs: &[Vec<f64>]| -> Vec<Vec<f64>> {
        let (x, y) = (&inputs[0], &inputs[1]);
        let mut out = vec![0.0; m * n];
        for i in 0..m {
            for j in 0..n {
                let mut acc = 0.0f32;
                for p in 0..k {
                    let a = if ta { x[p * m + i] } else { x[i * k + p] };
                    let b = if tb { y[j * k + p] } else { y[p * n + j] };
                    acc = (a as f32).mul_add(b as f32, acc);
                }
                out[i * n + j] = acc as f64;
            }
        }
        vec![out]
    };
    Case { text, inputs: 2, arguments: 3, reference: Box::new(reference), description, gpu_args: Vec::new() }
}

/// A masked window wider than its ref (Pallas-Triton kernels load
/// `x_ref.at[pl.ds(0, next_pow2(n))]`): the lanes past the ref read
/// `other`, are counted by a max reduction, and are never stored.
fn wide_window(rng: &mut StdRng) -> Case {
    let float = rng.random_bool(0.5);
    let element = if float { "f32" } else { "i32" };
    let n = rng.random_range(1..=20usize);
    let w = if rng.random_bool(0.5) { n.next_power_of_two() } else { n + rng.random_range(0..=9usize) };
    let other =
        if float { ["0.0", "7.5", "-3.0"][rng.random_range(0..3)] } else { ["0", "9", "-4"][rng.random_range(0..3)] };
    let other_value: f64 = other.parse().unwrap();
    let description = format!("{element} window of {w} over a ref of {n}, other {other}");
    let (add, one) = if float { ("arith.addf", "1.0") } else { ("arith.addi", "1") };
    let text = format!(
        "func.func @kernel(%x: memref<{n}x{element}>, %s: memref<1x{element}>, %o: memref<{n}x{element}>) {{\n\
         %c0 = arith.constant 0 : index\n\
         %col = block.iota dim 0 : tensor<{w}xi32>\n\
         %limit = arith.constant dense<{n}> : tensor<{w}xi32>\n\
         %m = arith.cmpi slt, %col, %limit : tensor<{w}xi32>\n\
         %other = arith.constant {other} : {element}\n\
         %v = block.load %x[%c0] [{w}] mask %m other %other : memref<{n}x{element}> -> tensor<{w}x{element}>\n\
         %r = block.reduce max %v dims [0] : tensor<{w}x{element}> -> tensor<{element}>\n\
         %r1 = tensor.expand_shape %r [] output_shape [1] : tensor<{element}> into tensor<1x{element}>\n\
         block.store %r1, %s : tensor<1x{element}>, memref<1x{element}>\n\
         %ones = arith.constant dense<{one}> : tensor<{w}x{element}>\n\
         %d = {add} %v, %ones : tensor<{w}x{element}>\n\
         block.store %d, %o[%c0] mask %m : tensor<{w}x{element}>, memref<{n}x{element}>\nreturn\n}}\n\
         func.func @main(%x: memref<{n}x{element}>, %s: memref<1x{element}>, %o: memref<{n}x{element}>) {{\n\
         grid.call @kernel grid [] ins(%x : memref<{n}x{element}>) outs(%s, %o : memref<1x{element}>, memref<{n}x{element}>)\n\
         in_specs [#grid.block<full>] out_specs [#grid.block<full>, #grid.block<full>]\nreturn\n}}\n"
    );
    let reference = move |inputs: &[Vec<f64>]| -> Vec<Vec<f64>> {
        let x = &inputs[0];
        let lanes = x.iter().copied().chain(std::iter::repeat_n(other_value, w - n));
        let max = lanes.fold(f64::NEG_INFINITY, f64::max);
        let plus_one = x
            .iter()
            .map(|&v| if float { (v as f32 + 1.0) as f64 } else { (v as i32).wrapping_add(1) as f64 })
            .collect();
        vec![vec![max], plus_one]
    };
    Case { text, inputs: 1, arguments: 3, reference: Box::new(reference), description, gpu_args: Vec::new() }
}

/// Control flow on block values inside kernels: an `scf.while` carrying a
/// block and a counter (the block tripled `limit` times), then an
/// `scf.index_switch` on the program id choosing what to do with it.
fn control_flow(rng: &mut StdRng) -> Case {
    // One-element blocks too: their loops fold away, leaving control flow
    // that writes and yields buffers, which the ROCm path once refused.
    let (b, g) = (rng.random_range(1..=8usize), rng.random_range(1..=5usize));
    let n = b * g;
    let limit = rng.random_range(0..=4i32);
    let (add, xor) = (rng.random_range(-9..=9i32), rng.random_range(0..=15i32));
    let description = format!("scf.while x{limit} then scf.index_switch over {g} blocks of {b}");
    let t = format!("tensor<{b}xi32>");
    let text = format!(
        "func.func @kernel(%x: memref<{b}xi32>, %o: memref<{b}xi32>) {{\n\
         %pid = grid.program_id 0\n\
         %v = block.load %x : memref<{b}xi32> -> {t}\n\
         %zero = arith.constant 0 : i32\n%one = arith.constant 1 : i32\n%limit = arith.constant {limit} : i32\n\
         %r:2 = scf.while (%acc = %v, %n = %zero) : ({t}, i32) -> ({t}, i32) {{\n\
         %c = arith.cmpi slt, %n, %limit : i32\nscf.condition(%c) %acc, %n : {t}, i32\n}} do {{\n\
         ^bb0(%acc: {t}, %n: i32):\n\
         %three = arith.constant dense<3> : {t}\n%next = arith.muli %acc, %three : {t}\n\
         %n1 = arith.addi %n, %one : i32\nscf.yield %next, %n1 : {t}, i32\n}}\n\
         %c3 = arith.constant 3 : index\n%case = arith.remui %pid, %c3 : index\n\
         %w = scf.index_switch %case -> {t}\n\
         case 0 {{\n%k = arith.constant dense<{add}> : {t}\n%a = arith.addi %r#0, %k : {t}\nscf.yield %a : {t}\n}}\n\
         case 1 {{\n%k = arith.constant dense<{xor}> : {t}\n%a = arith.xori %r#0, %k : {t}\nscf.yield %a : {t}\n}}\n\
         default {{\nscf.yield %r#0 : {t}\n}}\n\
         block.store %w, %o : {t}, memref<{b}xi32>\nreturn\n}}\n\
         func.func @main(%x: memref<{n}xi32>, %o: memref<{n}xi32>) {{\n\
         grid.call @kernel grid [{g}] ins(%x : memref<{n}xi32>) outs(%o : memref<{n}xi32>)\n\
         in_specs [#grid.block<[{b}], (i) -> (i)>] out_specs [#grid.block<[{b}], (i) -> (i)>]\nreturn\n}}\n"
    );
    let reference = move |inputs: &[Vec<f64>]| -> Vec<Vec<f64>> {
        let out = inputs[0]
            .iter()
            .enumerate()
            .map(|(at, &x)| {
                let tripled = (0..limit).fold(x as i32, |v, _| v.wrapping_mul(3));
                (match (at / b) % 3 {
                    0 => tripled.wrapping_add(add),
                    1 => tripled ^ xor,
                    _ => tripled,
                }) as f64
            })
            .collect();
        vec![out]
    };
    Case { text, inputs: 1, arguments: 2, reference: Box::new(reference), description, gpu_args: Vec::new() }
}

/// Atomics returning their old values: programs, in order (the shared
/// output block is revisited, so the axis is arbitrary), combine their
/// block of v into one block of o under a data-dependent mask, with a random
/// kind, and store the old elements.
fn atomics(rng: &mut StdRng) -> Case {
    let (b, g) = (rng.random_range(1..=8usize), rng.random_range(1..=4usize));
    let n = b * g;
    let kinds = ["add", "max", "min", "xchg", "and", "or", "xor"];
    let kind = rng.random_range(0..kinds.len());
    let description = format!("atomic_rmw {} of {g} blocks of {b} into one, old values kept", kinds[kind]);
    let text = format!(
        "func.func @kernel(%v: memref<{b}xi32>, %o: memref<{b}xi32>, %olds: memref<{b}xi32>) {{\n\
         %x = block.load %v : memref<{b}xi32> -> tensor<{b}xi32>\n\
         %zero = arith.constant dense<0> : tensor<{b}xi32>\n\
         %m = arith.cmpi sgt, %x, %zero : tensor<{b}xi32>\n\
         %old = block.atomic_rmw {} %x, %o mask %m : tensor<{b}xi32>, memref<{b}xi32> -> tensor<{b}xi32>\n\
         block.store %old, %olds : tensor<{b}xi32>, memref<{b}xi32>\nreturn\n}}\n\
         func.func @main(%v: memref<{n}xi32>, %o: memref<{b}xi32>, %olds: memref<{n}xi32>) {{\n\
         grid.call @kernel grid [{g}] ins(%v : memref<{n}xi32>) outs(%o, %olds : memref<{b}xi32>, memref<{n}xi32>)\n\
         in_specs [#grid.block<[{b}], (i) -> (i)>] out_specs [#grid.block<[{b}], (i) -> (0)>, #grid.block<[{b}], (i) -> (i)>]\n\
         return\n}}\n",
        kinds[kind]
    );
    let reference = move |inputs: &[Vec<f64>]| -> Vec<Vec<f64>> {
        let v: Vec<i32> = inputs[0].iter().map(|&x| x as i32).collect();
        let (mut o, mut olds) = (vec![0i32; b], vec![0i32; n]);
        for (at, &x) in v.iter().enumerate() {
            if x <= 0 {
                continue;
            }
            let lane = at % b;
            let current = o[lane];
            olds[at] = current;
            o[lane] = match kind {
                0 => current.wrapping_add(x),
                1 => current.max(x),
                2 => current.min(x),
                3 => x,
                4 => current & x,
                5 => current | x,
                _ => current ^ x,
            };
        }
        vec![o.iter().map(|&x| x as f64).collect(), olds.iter().map(|&x| x as f64).collect()]
    };
    Case { text, inputs: 1, arguments: 3, reference: Box::new(reference), description, gpu_args: Vec::new() }
}

/// Unsigned arrays (`ui8`/`ui16`/`ui32` in the entry function): wrapped
/// differences, unsigned division, remainder, shift, comparison and
/// conversion, row maxima/minima by `umax`/`umin` reductions, and the
/// column maxima over all rows by `umax` atomics.
fn unsigned(rng: &mut StdRng) -> Case {
    let bits = [8u32, 16, 32][rng.random_range(0..3)];
    let (bm, g, n) = (rng.random_range(1..=4usize), rng.random_range(1..=3usize), rng.random_range(1..=9usize));
    let m = bm * g;
    let minimum = rng.random_bool(0.5);
    let reduce = if minimum { "umin" } else { "umax" };
    let description = format!("ui{bits} {m}x{n} in blocks of {bm} rows, row {reduce}");
    let (e, u) = (format!("i{bits}"), format!("ui{bits}"));
    let (block, row) = (format!("{bm}x{n}x{e}"), format!("{bm}x{e}"));
    let text = format!(
        "func.func @kernel(%x: memref<{block}>, %y: memref<{block}>, %q: memref<{block}>, %r: memref<{block}>, \
         %h: memref<{block}>, %below: memref<{bm}x{n}xi1>, %f: memref<{bm}x{n}xf32>, %rows: memref<{row}>, \
         %top: memref<{n}x{e}>) {{\n\
         %a = block.load %x : memref<{block}> -> tensor<{block}>\n\
         %b = block.load %y : memref<{block}> -> tensor<{block}>\n\
         %s = arith.subi %a, %b : tensor<{block}>\n\
         %one = arith.constant dense<1> : tensor<{block}>\n\
         %d = arith.ori %b, %one : tensor<{block}>\n\
         %qv = arith.divui %s, %d : tensor<{block}>\n\
         block.store %qv, %q : tensor<{block}>, memref<{block}>\n\
         %rv = arith.remui %s, %d : tensor<{block}>\n\
         block.store %rv, %r : tensor<{block}>, memref<{block}>\n\
         %hv = arith.shrui %s, %one : tensor<{block}>\n\
         block.store %hv, %h : tensor<{block}>, memref<{block}>\n\
         %lt = arith.cmpi ult, %s, %a : tensor<{block}>\n\
         block.store %lt, %below : tensor<{bm}x{n}xi1>, memref<{bm}x{n}xi1>\n\
         %fv = arith.uitofp %s : tensor<{block}> to tensor<{bm}x{n}xf32>\n\
         block.store %fv, %f : tensor<{bm}x{n}xf32>, memref<{bm}x{n}xf32>\n\
         %red = block.reduce {reduce} %s dims [1] : tensor<{block}> -> tensor<{row}>\n\
         block.store %red, %rows : tensor<{row}>, memref<{row}>\n\
         %cols = block.reduce umax %s dims [0] : tensor<{block}> -> tensor<{n}x{e}>\n\
         block.atomic_rmw umax %cols, %top : tensor<{n}x{e}>, memref<{n}x{e}>\n\
         return\n}}\n\
         func.func @main(%x: memref<{m}x{n}x{u}>, %y: memref<{m}x{n}x{u}>, %q: memref<{m}x{n}x{u}>, \
         %r: memref<{m}x{n}x{u}>, %h: memref<{m}x{n}x{u}>, %below: memref<{m}x{n}xi1>, %f: memref<{m}x{n}xf32>, \
         %rows: memref<{m}x{u}>, %top: memref<{n}x{u}>) {{\n\
         grid.call @kernel grid [{g}] ins(%x, %y : memref<{m}x{n}x{u}>, memref<{m}x{n}x{u}>) \
         outs(%q, %r, %h, %below, %f, %rows, %top : memref<{m}x{n}x{u}>, memref<{m}x{n}x{u}>, memref<{m}x{n}x{u}>, \
         memref<{m}x{n}xi1>, memref<{m}x{n}xf32>, memref<{m}x{u}>, memref<{n}x{u}>)\n\
         in_specs [#grid.block<[{bm}, {n}], (i) -> (i, 0)>, #grid.block<[{bm}, {n}], (i) -> (i, 0)>]\n\
         out_specs [#grid.block<[{bm}, {n}], (i) -> (i, 0)>, #grid.block<[{bm}, {n}], (i) -> (i, 0)>, \
         #grid.block<[{bm}, {n}], (i) -> (i, 0)>, #grid.block<[{bm}, {n}], (i) -> (i, 0)>, \
         #grid.block<[{bm}, {n}], (i) -> (i, 0)>, #grid.block<[{bm}], (i) -> (i)>, #grid.block<full>]\n\
         return\n}}\n"
    );
    let reference = move |inputs: &[Vec<f64>]| -> Vec<Vec<f64>> {
        let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
        let s: Vec<u64> =
            inputs[0].iter().zip(&inputs[1]).map(|(&a, &b)| (a as u64).wrapping_sub(b as u64) & mask).collect();
        let d: Vec<u64> = inputs[1].iter().map(|&b| b as u64 | 1).collect();
        let all = |f: &dyn Fn(usize) -> f64| (0..m * n).map(f).collect::<Vec<f64>>();
        let rows = (0..m)
            .map(|r| {
                let row = s[r * n..(r + 1) * n].iter();
                (if minimum { row.min() } else { row.max() }).copied().unwrap_or(0) as f64
            })
            .collect();
        let top = (0..n).map(|c| (0..m).map(|r| s[r * n + c]).max().unwrap_or(0) as f64).collect();
        vec![
            all(&|i| (s[i] / d[i]) as f64),
            all(&|i| (s[i] % d[i]) as f64),
            all(&|i| (s[i] >> 1) as f64),
            all(&|i| f64::from(u8::from(s[i] < inputs[0][i] as u64))),
            all(&|i| f64::from(s[i] as f32)),
            rows,
            top,
        ]
    };
    Case { text, inputs: 2, arguments: 9, reference: Box::new(reference), description, gpu_args: Vec::new() }
}

/// Gathers and scatters of a table's indices (random in [-8, 8): many
/// fall outside the ref, where gathers clamp and scatters drop) along
/// either dimension, maybe masked, one table row per program. What is
/// scattered is what was gathered, so equal indices write equal values
/// and the result does not depend on the order of writes.
fn gather_scatter(rng: &mut StdRng) -> Case {
    let float = rng.random_bool(0.5);
    let e = if float { "f32" } else { "i32" };
    let (p, c) = (rng.random_range(1..=8usize), rng.random_range(1..=4usize));
    let (g, t) = (rng.random_range(1..=3usize), rng.random_range(1..=6usize));
    let dim = rng.random_range(0..2usize);
    let masked = rng.random_bool(0.5);
    let description =
        format!("{e} gather/scatter along dim {dim} of {p} positions x {c}, {g}x{t} indices, masked={masked}");
    // Shapes with the indexed dimension first or second.
    let shape = |along: usize| if dim == 0 { format!("{along}x{c}") } else { format!("{c}x{along}") };
    let (x, block) = (shape(p), shape(t));
    let gathered = shape(g * t);
    let (zero, mask_dims) = (if float { "0.0" } else { "0" }, if dim == 0 { "[1]" } else { "[0]" });
    let (mask_ops, mask, other) = if masked {
        (
            format!(
                "%limit = arith.constant dense<-4> : tensor<{t}xi32>\n\
                 %keep = arith.cmpi sgt, %t, %limit : tensor<{t}xi32>\n\
                 %m = block.broadcast %keep dims {mask_dims} : tensor<{t}xi1> -> tensor<{block}xi1>\n\
                 %zero = arith.constant {zero} : {e}\n"
            ),
            " mask %m",
            " other %zero",
        )
    } else {
        (String::new(), "", "")
    };
    let out_map = if dim == 0 { "(i) -> (i, 0)" } else { "(i) -> (0, i)" };
    let out_block = if dim == 0 { format!("[{t}, {c}]") } else { format!("[{c}, {t}]") };
    let text = format!(
        "func.func @kernel(%x: memref<{x}x{e}>, %table: memref<1x{t}xi32>, %g: memref<{block}x{e}>, \
         %s: memref<{x}x{e}>) {{\n\
         %row = block.load %table : memref<1x{t}xi32> -> tensor<1x{t}xi32>\n\
         %t = tensor.collapse_shape %row [[0, 1]] : tensor<1x{t}xi32> into tensor<{t}xi32>\n\
         {mask_ops}\
         %v = block.load %x gather %t dim {dim}{mask}{other} : memref<{x}x{e}>, tensor<{t}xi32> -> tensor<{block}x{e}>\n\
         block.store %v, %g : tensor<{block}x{e}>, memref<{block}x{e}>\n\
         block.store %v, %s scatter %t dim {dim}{mask} : tensor<{block}x{e}>, memref<{x}x{e}>, tensor<{t}xi32>\n\
         return\n}}\n\
         func.func @main(%x: memref<{x}x{e}>, %tables: memref<{g}x{t}xi32>, %g: memref<{gathered}x{e}>, \
         %s: memref<{x}x{e}>) {{\n\
         grid.call @kernel grid [{g}] ins(%x, %tables : memref<{x}x{e}>, memref<{g}x{t}xi32>) \
         outs(%g, %s : memref<{gathered}x{e}>, memref<{x}x{e}>)\n\
         in_specs [#grid.block<full>, #grid.block<[1, {t}], (i) -> (i, 0)>]\n\
         out_specs [#grid.block<{out_block}, {out_map}>, #grid.block<full>]\n\
         return\n}}\n"
    );
    let reference = move |inputs: &[Vec<f64>]| -> Vec<Vec<f64>> {
        let (x, tables) = (&inputs[0], &inputs[1]);
        // Element (position along the indexed dimension, k across it).
        let at = |position: usize, k: usize| if dim == 0 { position * c + k } else { k * p + position };
        let mut gathered = vec![0.0; g * t * c];
        let mut scattered = vec![0.0; p * c];
        for (slot, &index) in tables.iter().enumerate() {
            let index = index as i64;
            let kept = !masked || index > -4;
            for k in 0..c {
                let out = if dim == 0 { slot * c + k } else { k * g * t + slot };
                let value = if kept { x[at(index.clamp(0, p as i64 - 1) as usize, k)] } else { 0.0 };
                gathered[out] = value;
                if kept && (0..p as i64).contains(&index) {
                    scattered[at(index as usize, k)] = value;
                }
            }
        }
        vec![gathered, scattered]
    };
    Case { text, inputs: 2, arguments: 4, reference: Box::new(reference), description, gpu_args: Vec::new() }
}

/// A kernel that loads from an output ref (a masked window or a gather),
/// then overwrites the ref (a store or a scatter of zeros), then uses what
/// it loaded: a load reads the ref as it is at the load, so the later
/// writes must not show in the loaded value.
fn overwrite_after_load(rng: &mut StdRng) -> Case {
    let float = rng.random_bool(0.5);
    let e = if float { "f32" } else { "i32" };
    let (zero, two) = if float { ("0.0", "2.0") } else { ("0", "2") };
    let n = rng.random_range(1..=12usize);
    let gather = rng.random_bool(0.5);
    let (off, w) = (rng.random_range(0..n), rng.random_range(1..=8usize));
    let indices: Vec<i64> = (0..w).map(|_| rng.random_range(-2..=n as i64 + 1)).collect();
    let description = if gather {
        format!("{e} gather of {indices:?} from {n}, then a scatter of zeros there")
    } else {
        format!("{e} masked window [{off}, +{w}) of {n}, then a store of zeros")
    };
    let (read, overwrite) = if gather {
        let list = indices.iter().map(i64::to_string).collect::<Vec<_>>().join(", ");
        (
            format!(
                "%idx = arith.constant dense<[{list}]> : tensor<{w}xi32>\n\
                 %v = block.load %o gather %idx dim 0 : memref<{n}x{e}>, tensor<{w}xi32> -> tensor<{w}x{e}>\n"
            ),
            format!(
                "%zeros = arith.constant dense<{zero}> : tensor<{w}x{e}>\n\
                 block.store %zeros, %o scatter %idx dim 0 : tensor<{w}x{e}>, memref<{n}x{e}>, tensor<{w}xi32>\n"
            ),
        )
    } else {
        (
            format!(
                "%c = arith.constant {off} : index\n\
                 %col = block.iota dim 0 : tensor<{w}xi32>\n\
                 %start = arith.constant dense<{off}> : tensor<{w}xi32>\n\
                 %at = arith.addi %col, %start : tensor<{w}xi32>\n\
                 %size = arith.constant dense<{n}> : tensor<{w}xi32>\n\
                 %m = arith.cmpi slt, %at, %size : tensor<{w}xi32>\n\
                 %other = arith.constant {zero} : {e}\n\
                 %v = block.load %o[%c] [{w}] mask %m other %other : memref<{n}x{e}> -> tensor<{w}x{e}>\n"
            ),
            format!(
                "%zeros = arith.constant dense<{zero}> : tensor<{n}x{e}>\n\
                 block.store %zeros, %o : tensor<{n}x{e}>, memref<{n}x{e}>\n"
            ),
        )
    };
    let text = format!(
        "func.func @kernel(%x: memref<{n}x{e}>, %o: memref<{n}x{e}>, %p: memref<{w}x{e}>) {{\n\
         %xv = block.load %x : memref<{n}x{e}> -> tensor<{n}x{e}>\n\
         block.store %xv, %o : tensor<{n}x{e}>, memref<{n}x{e}>\n\
         {read}{overwrite}\
         %two = arith.constant dense<{two}> : tensor<{w}x{e}>\n\
         %d = arith.mulf %v, %two : tensor<{w}x{e}>\n\
         block.store %d, %p : tensor<{w}x{e}>, memref<{w}x{e}>\n\
         return\n}}\n\
         func.func @main(%x: memref<{n}x{e}>, %o: memref<{n}x{e}>, %p: memref<{w}x{e}>) {{\n\
         grid.call @kernel grid [] ins(%x : memref<{n}x{e}>) outs(%o, %p : memref<{n}x{e}>, memref<{w}x{e}>)\n\
         in_specs [#grid.block<full>] out_specs [#grid.block<full>, #grid.block<full>]\n\
         return\n}}\n"
    )
    .replace("arith.mulf", if float { "arith.mulf" } else { "arith.muli" });
    let reference = move |inputs: &[Vec<f64>]| -> Vec<Vec<f64>> {
        let x = &inputs[0];
        let (mut o, mut p) = (x.clone(), vec![0.0; w]);
        for i in 0..w {
            p[i] = 2.0
                * if gather {
                    x[indices[i].clamp(0, n as i64 - 1) as usize]
                } else if off + i < n {
                    x[off + i]
                } else {
                    0.0
                };
        }
        if gather {
            indices.iter().filter(|&&index| (0..n as i64).contains(&index)).for_each(|&index| o[index as usize] = 0.0);
        } else {
            o.iter_mut().for_each(|value| *value = 0.0);
        }
        vec![o, p]
    };
    Case { text, inputs: 1, arguments: 3, reference: Box::new(reference), description, gpu_args: Vec::new() }
}

/// Two or three reductions of one square block along different
/// dimensions, of random kinds (results of one type, whose identity fills
/// CSE merges), each stored to its own output, plus an element-wise
/// result: no stored result may share another's buffer.
fn sibling_reductions(rng: &mut StdRng) -> Case {
    let float = rng.random_bool(0.5);
    let e = if float { "f32" } else { "i32" };
    let (b, g) = (rng.random_range(1..=6usize), rng.random_range(1..=3usize));
    let n = b * g;
    // Float sums depend on the order: floats take max/min only.
    let kinds: &[&str] = if float { &["max", "min"] } else { &["sum", "max", "min"] };
    let picks: Vec<(&str, usize)> =
        (0..rng.random_range(2..=3usize)).map(|r| (kinds[rng.random_range(0..kinds.len())], r % 2)).collect();
    let description = format!("{e} reductions {picks:?} of {b}x{b} blocks, {g} programs");
    let mut kernel = format!(
        "func.func @kernel(%x: memref<{b}x{b}x{e}>, %doubled: memref<{b}x{b}x{e}>{}) {{\n\
         %a = block.load %x : memref<{b}x{b}x{e}> -> tensor<{b}x{b}x{e}>\n",
        (0..picks.len()).map(|r| format!(", %r{r}: memref<{b}x{e}>")).collect::<String>()
    );
    for (r, (kind, dim)) in picks.iter().enumerate() {
        writeln!(
            kernel,
            "%v{r} = block.reduce {kind} %a dims [{dim}] : tensor<{b}x{b}x{e}> -> tensor<{b}x{e}>\n\
             block.store %v{r}, %r{r} : tensor<{b}x{e}>, memref<{b}x{e}>"
        )
        .unwrap();
    }
    let add = if float { "arith.addf" } else { "arith.addi" };
    writeln!(
        kernel,
        "%d = {add} %a, %a : tensor<{b}x{b}x{e}>\nblock.store %d, %doubled : tensor<{b}x{b}x{e}>, memref<{b}x{b}x{e}>\n\
         return\n}}"
    )
    .unwrap();
    let outputs = (0..picks.len()).map(|r| format!("%r{r}")).collect::<Vec<_>>().join(", ");
    let output_types = vec![format!("memref<{n}x{e}>"); picks.len()].join(", ");
    let output_specs = vec![format!("#grid.block<[{b}], (i) -> (i)>"); picks.len()].join(", ");
    let text = format!(
        "{kernel}func.func @main(%x: memref<{n}x{b}x{e}>, %doubled: memref<{n}x{b}x{e}>, {}) {{\n\
         grid.call @kernel grid [{g}] ins(%x : memref<{n}x{b}x{e}>) outs(%doubled, {outputs} : memref<{n}x{b}x{e}>, \
         {output_types})\n\
         in_specs [#grid.block<[{b}, {b}], (i) -> (i, 0)>] out_specs [#grid.block<[{b}, {b}], (i) -> (i, 0)>, \
         {output_specs}]\nreturn\n}}\n",
        (0..picks.len()).map(|r| format!("%r{r}: memref<{n}x{e}>")).collect::<Vec<_>>().join(", ")
    );
    let arguments = 2 + picks.len();
    let reference = move |inputs: &[Vec<f64>]| -> Vec<Vec<f64>> {
        let x = &inputs[0];
        let doubled = x.iter().map(|v| if float { f64::from(*v as f32 * 2.0) } else { v * 2.0 }).collect();
        let mut outputs = vec![doubled];
        for &(kind, dim) in &picks {
            let mut out = vec![0.0; n];
            for block in 0..g {
                for k in 0..b {
                    // Element `l` of the reduced line `k` of this block.
                    let line = (0..b).map(|l| {
                        let (row, column) = if dim == 1 { (k, l) } else { (l, k) };
                        x[(block * b + row) * b + column]
                    });
                    out[block * b + k] = match kind {
                        "sum" => line.sum(),
                        "max" => line.fold(f64::NEG_INFINITY, f64::max),
                        _ => line.fold(f64::INFINITY, f64::min),
                    };
                }
            }
            outputs.push(out);
        }
        outputs
    };
    Case { text, inputs: 1, arguments, reference: Box::new(reference), description, gpu_args: Vec::new() }
}

/// Index maps that are functions: a lookup in a scalar-prefetch table
/// (wrapped into range with `remsi`, the kernel also reading the table),
/// or causal attention's clamp `select(j > i, i, j)` with the output
/// accumulated along j.
fn index_functions(rng: &mut StdRng) -> Case {
    let float = rng.random_bool(0.5);
    let e = if float { "f32" } else { "i32" };
    let (b, c, g, pages) = (
        rng.random_range(1..=4usize),
        rng.random_range(1..=4usize),
        rng.random_range(1..=4usize),
        rng.random_range(1..=5usize),
    );
    let causal = rng.random_bool(0.5);
    let description = format!("{e} index function, causal={causal}, blocks {b}x{c}, grid {g}, {pages} source blocks");
    let (add, zero) = if float { ("arith.addf", "0.0") } else { ("arith.addi", "0") };
    // The table entry as an element (i32 as it is).
    let (cast, entry) = if float { ("%te = arith.sitofp %t : i32 to f32\n", "%te") } else { ("", "%t") };
    let text = if causal {
        format!(
            "func.func @clamp(%i: index, %j: index) -> (index, index) {{\n\
             %later = arith.cmpi sgt, %j, %i : index\n%k = arith.select %later, %i, %j : index\n\
             %c0 = arith.constant 0 : index\nreturn %k, %c0 : index, index\n}}\n\
             func.func @kernel(%x: memref<{b}x{c}x{e}>, %o: memref<{b}x{c}x{e}>) {{\n\
             %j = grid.program_id 1\n%c0 = arith.constant 0 : index\n%first = arith.cmpi eq, %j, %c0 : index\n\
             scf.if %first {{\n%zero = arith.constant dense<{zero}> : tensor<{b}x{c}x{e}>\n\
             block.store %zero, %o : tensor<{b}x{c}x{e}>, memref<{b}x{c}x{e}>\n}}\n\
             %v = block.load %x : memref<{b}x{c}x{e}> -> tensor<{b}x{c}x{e}>\n\
             %acc = block.load %o : memref<{b}x{c}x{e}> -> tensor<{b}x{c}x{e}>\n\
             %sum = {add} %acc, %v : tensor<{b}x{c}x{e}>\n\
             block.store %sum, %o : tensor<{b}x{c}x{e}>, memref<{b}x{c}x{e}>\nreturn\n}}\n\
             func.func @main(%x: memref<{n}x{c}x{e}>, %o: memref<{n}x{c}x{e}>) {{\n\
             grid.call @kernel grid [{g}, {g}] ins(%x : memref<{n}x{c}x{e}>) outs(%o : memref<{n}x{c}x{e}>)\n\
             in_specs [#grid.block<[{b}, {c}], @clamp>] out_specs [#grid.block<[{b}, {c}], (i, j) -> (i, 0)>]\n\
             return\n}}\n",
            n = g * b,
        )
    } else {
        format!(
            "func.func @lookup(%i: index, %table: memref<{g}xi32>) -> (index, index) {{\n\
             %t = memref.load %table[%i] : memref<{g}xi32>\n%p = arith.constant {pages} : i32\n\
             %r = arith.remsi %t, %p : i32\n%s = arith.addi %r, %p : i32\n%w = arith.remsi %s, %p : i32\n\
             %k = arith.index_cast %w : i32 to index\n%c0 = arith.constant 0 : index\nreturn %k, %c0 : index, index\n}}\n\
             func.func @kernel(%table: memref<{g}xi32>, %x: memref<{b}x{c}x{e}>, %o: memref<{b}x{c}x{e}>) {{\n\
             %i = grid.program_id 0\n%t = memref.load %table[%i] : memref<{g}xi32>\n\
             {cast}%ts = tensor.splat {entry} : tensor<{b}x{c}x{e}>\n\
             %v = block.load %x : memref<{b}x{c}x{e}> -> tensor<{b}x{c}x{e}>\n\
             %sum = {add} %v, %ts : tensor<{b}x{c}x{e}>\n\
             block.store %sum, %o : tensor<{b}x{c}x{e}>, memref<{b}x{c}x{e}>\nreturn\n}}\n\
             func.func @main(%table: memref<{g}xi32>, %x: memref<{m}x{c}x{e}>, %o: memref<{n}x{c}x{e}>) {{\n\
             grid.call @kernel grid [{g}] scalars(%table : memref<{g}xi32>) ins(%x : memref<{m}x{c}x{e}>) \
             outs(%o : memref<{n}x{c}x{e}>)\n\
             in_specs [#grid.block<[{b}, {c}], @lookup>] out_specs [#grid.block<[{b}, {c}], (i) -> (i, 0)>]\n\
             return\n}}\n",
            m = pages * b,
            n = g * b,
        )
    };
    let reference = move |inputs: &[Vec<f64>]| -> Vec<Vec<f64>> {
        let mut out = vec![0.0; g * b * c];
        if causal {
            let x = &inputs[0];
            for i in 0..g {
                for k in 0..b * c {
                    let mut acc = 0.0f64;
                    for j in 0..g {
                        let v = x[i.min(j) * b * c + k];
                        acc = if float {
                            f64::from(acc as f32 + v as f32)
                        } else {
                            f64::from((acc as i32).wrapping_add(v as i32))
                        };
                    }
                    out[i * b * c + k] = acc;
                }
            }
        } else {
            let (table, x) = (&inputs[0], &inputs[1]);
            for i in 0..g {
                let page = (table[i] as i64).rem_euclid(pages as i64) as usize;
                for k in 0..b * c {
                    let v = x[page * b * c + k] + table[i];
                    out[i * b * c + k] = if float { f64::from(v as f32) } else { v };
                }
            }
        }
        vec![out]
    };
    let inputs = if causal { 1 } else { 2 };
    Case { text, inputs, arguments: inputs + 1, reference: Box::new(reference), description, gpu_args: Vec::new() }
}

/// Grid sizes that are values: `n` in 1..=limit computed on the host from
/// a random scalar array; parallel programs over the first n row blocks
/// (x * 2 + num_programs), or an ordered axis of n steps accumulating
/// column blocks.
fn dynamic_grid(rng: &mut StdRng) -> Case {
    let float = rng.random_bool(0.5);
    let e = if float { "f32" } else { "i32" };
    let (b, c, limit) = (rng.random_range(1..=3usize), rng.random_range(1..=4usize), rng.random_range(1..=4usize));
    let ordered = rng.random_bool(0.5);
    let description = format!("{e} dynamic grid up to {limit}, blocks {b}x{c}, ordered={ordered}");
    let (add, mul, zero, two) =
        if float { ("arith.addf", "arith.mulf", "0.0", "2.0") } else { ("arith.addi", "arith.muli", "0", "2") };
    // n = (t mod limit + limit) mod limit + 1, on the host.
    let count = format!(
        "%c0 = arith.constant 0 : index\n%t = memref.load %count[%c0] : memref<1xi32>\n\
         %l = arith.constant {limit} : i32\n%one = arith.constant 1 : i32\n%r = arith.remsi %t, %l : i32\n\
         %s = arith.addi %r, %l : i32\n%w = arith.remsi %s, %l : i32\n%n32 = arith.addi %w, %one : i32\n\
         %n = arith.index_cast %n32 : i32 to index\n"
    );
    let block = format!("{b}x{c}x{e}");
    let text = if ordered {
        format!(
            "func.func @kernel(%x: memref<{block}>, %o: memref<{block}>) {{\n\
             %j = grid.program_id 1\n%c0 = arith.constant 0 : index\n%first = arith.cmpi eq, %j, %c0 : index\n\
             scf.if %first {{\n%z = arith.constant dense<{zero}> : tensor<{block}>\n\
             block.store %z, %o : tensor<{block}>, memref<{block}>\n}}\n\
             %v = block.load %x : memref<{block}> -> tensor<{block}>\n\
             %acc = block.load %o : memref<{block}> -> tensor<{block}>\n\
             %sum = {add} %acc, %v : tensor<{block}>\n\
             block.store %sum, %o : tensor<{block}>, memref<{block}>\nreturn\n}}\n\
             func.func @main(%count: memref<1xi32>, %x: memref<{b}x{w}x{e}>, %o: memref<{block}>) {{\n{count}\
             grid.call @kernel grid [1, %n] ins(%x : memref<{b}x{w}x{e}>) outs(%o : memref<{block}>)\n\
             in_specs [#grid.block<[{b}, {c}], (i, j) -> (i, j)>] out_specs [#grid.block<[{b}, {c}], (i, j) -> (i, 0)>]\n\
             return\n}}\n",
            w = limit * c
        )
    } else {
        let cast = if float {
            "%nf = arith.index_cast %np : index to i32\n%nv = arith.sitofp %nf : i32 to f32\n"
        } else {
            "%nv = arith.index_cast %np : index to i32\n"
        };
        format!(
            "func.func @kernel(%x: memref<{block}>, %o: memref<{block}>) {{\n\
             %np = grid.num_programs 0\n{cast}%ns = tensor.splat %nv : tensor<{block}>\n\
             %v = block.load %x : memref<{block}> -> tensor<{block}>\n\
             %two = arith.constant dense<{two}> : tensor<{block}>\n%d = {mul} %v, %two : tensor<{block}>\n\
             %r = {add} %d, %ns : tensor<{block}>\n\
             block.store %r, %o : tensor<{block}>, memref<{block}>\nreturn\n}}\n\
             func.func @main(%count: memref<1xi32>, %x: memref<{h}x{c}x{e}>, %o: memref<{h}x{c}x{e}>) {{\n{count}\
             grid.call @kernel grid [%n] ins(%x : memref<{h}x{c}x{e}>) outs(%o : memref<{h}x{c}x{e}>)\n\
             in_specs [#grid.block<[{b}, {c}], (i) -> (i, 0)>] out_specs [#grid.block<[{b}, {c}], (i) -> (i, 0)>]\n\
             return\n}}\n",
            h = limit * b
        )
    };
    let reference = move |inputs: &[Vec<f64>]| -> Vec<Vec<f64>> {
        let n = (inputs[0][0] as i64).rem_euclid(limit as i64) as usize + 1;
        let x = &inputs[1];
        let round = |v: f64| if float { f64::from(v as f32) } else { f64::from(v as i32) };
        if ordered {
            // o[r][k] = sum over j < n of x[r][j * c + k], in order.
            let mut out = vec![0.0; b * c];
            for r in 0..b {
                for k in 0..c {
                    out[r * c + k] = (0..n).fold(0.0, |acc, j| round(acc + x[r * limit * c + j * c + k]));
                }
            }
            vec![out]
        } else {
            let out =
                (0..limit * b * c).map(|i| if i < n * b * c { round(x[i] * 2.0 + n as f64) } else { 0.0 }).collect();
            vec![out]
        }
    };
    Case { text, inputs: 2, arguments: 3, reference: Box::new(reference), description, gpu_args: Vec::new() }
}

/// A contraction the ROCm pipeline puts on matrix cores (blocks multiples
/// of 16, k a multiple of the instructions'): f32 or 8-bit integers, on a
/// random chip (MFMA on gfx90a/gfx942, WMMA for i8 on gfx1100, FMAs for
/// f32 there), wave count and pipelining depth, arrays not divisible by
/// the blocks, k on an arbitrary axis.
fn matrix_core_matmul(rng: &mut StdRng) -> Case {
    let float = rng.random_bool(0.5);
    let (bm, bn) = (16 * rng.random_range(1..=4usize), 16 * rng.random_range(1..=4usize));
    let bk = if float { 4 * rng.random_range(1..=8usize) } else { 32 * rng.random_range(1..=2usize) };
    let (gm, gn, gk) = (rng.random_range(1..=2usize), rng.random_range(1..=2usize), rng.random_range(1..=3usize));
    // The last block row and column partial (at least one element in).
    let (m, n, k) = (bm * gm - rng.random_range(0..bm), bn * gn - rng.random_range(0..bn), bk * gk);
    let chip = ["gfx90a", "gfx942", "gfx1100"][rng.random_range(0..3)];
    let warps = [1, 2, 4][rng.random_range(0..3)];
    let stages = rng.random_range(1..=2i64);
    let (input, output, zero) = if float { ("f32", "f32", "0.0") } else { ("i8", "i32", "0") };
    let description =
        format!("{input} matmul {m}x{k}x{n} blocks {bm}x{bk}x{bn} on {chip}, {warps} waves, {stages} stages");
    let text = format!(
        "module attributes {{tessel.num_warps = {warps} : i64, tessel.num_stages = {stages} : i64}} {{\n\
         func.func @kernel(%x: memref<{bm}x{bk}x{input}>, %y: memref<{bk}x{bn}x{input}>, %o: memref<{bm}x{bn}x{output}>) {{\n\
         %k = grid.program_id 2\n%c0 = arith.constant 0 : index\n%first = arith.cmpi eq, %k, %c0 : index\n\
         scf.if %first {{\n%z = arith.constant dense<{zero}> : tensor<{bm}x{bn}x{output}>\n\
         block.store %z, %o : tensor<{bm}x{bn}x{output}>, memref<{bm}x{bn}x{output}>\n}}\n\
         %a = block.load %x : memref<{bm}x{bk}x{input}> -> tensor<{bm}x{bk}x{input}>\n\
         %b = block.load %y : memref<{bk}x{bn}x{input}> -> tensor<{bk}x{bn}x{input}>\n\
         %acc = block.load %o : memref<{bm}x{bn}x{output}> -> tensor<{bm}x{bn}x{output}>\n\
         %c = block.dot %a, %b acc %acc : tensor<{bm}x{bk}x{input}>, tensor<{bk}x{bn}x{input}>, tensor<{bm}x{bn}x{output}> -> tensor<{bm}x{bn}x{output}>\n\
         block.store %c, %o : tensor<{bm}x{bn}x{output}>, memref<{bm}x{bn}x{output}>\nreturn\n}}\n\
         func.func @main(%x: memref<{m}x{k}x{input}>, %y: memref<{k}x{n}x{input}>, %o: memref<{m}x{n}x{output}>) {{\n\
         grid.call @kernel grid [{gm}, {gn}, {gk}] ins(%x, %y : memref<{m}x{k}x{input}>, memref<{k}x{n}x{input}>) outs(%o : memref<{m}x{n}x{output}>)\n\
         in_specs [#grid.block<[{bm}, {bk}], (i, j, k) -> (i, k)>, #grid.block<[{bk}, {bn}], (i, j, k) -> (k, j)>]\n\
         out_specs [#grid.block<[{bm}, {bn}], (i, j, k) -> (i, j)>]\nreturn\n}}\n}}\n"
    );
    let reference = move |inputs: &[Vec<f64>]| -> Vec<Vec<f64>> {
        let (x, y) = (&inputs[0], &inputs[1]);
        let mut out = vec![0.0; m * n];
        for i in 0..m {
            for j in 0..n {
                out[i * n + j] = if float {
                    let mut acc = 0.0f32;
                    for p in 0..k {
                        acc = (x[i * k + p] as f32).mul_add(y[p * n + j] as f32, acc);
                    }
                    acc as f64
                } else {
                    let mut acc = 0i32;
                    for p in 0..k {
                        acc = acc.wrapping_add((x[i * k + p] as i32).wrapping_mul(y[p * n + j] as i32));
                    }
                    acc as f64
                };
            }
        }
        vec![out]
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

/// A mask used twice: a masked load (masked-off lanes read `other`), a row
/// sum of what was loaded, and a masked store of it. The mask is computed
/// from `block.iota` or read from a bool input array (`i1` in memory), row
/// blocks may be partial. Masks materialized in memory once and read back
/// in vectors lost lanes on the ROCm path.
fn masked_rows(rng: &mut StdRng) -> Case {
    let float = rng.random_bool(0.5);
    let element = if float { "f32" } else { "i32" };
    let (m, n) = (rng.random_range(1..=17usize), rng.random_range(1..=17usize));
    let bm = rng.random_range(1..=6usize);
    let bool_input = rng.random_bool(0.5);
    let threshold = rng.random_range(0..=n + 1);
    let other =
        if float { ["0.0", "1.5", "-2.0"][rng.random_range(0..3)] } else { ["0", "3", "-7"][rng.random_range(0..3)] };
    let other_value: f64 = other.parse().unwrap();
    // Program 0's block doubled by an scf.if yielding block values (with a
    // partial last block, the padded output is one of the values).
    let conditional = rng.random_bool(0.5);
    let description = format!(
        "masked rows {element} {m}x{n} blocks {bm}x{n} other {other} mask {} conditional={conditional}",
        if bool_input { "from a bool array".to_string() } else { format!("column < {threshold}") }
    );
    let block = format!("{bm}x{n}x{element}");
    let array = format!("memref<{m}x{n}x{element}>");
    let spec = format!("#grid.block<[{bm}, {n}], (i) -> (i, 0)>");
    let mut kernel = String::from("func.func @kernel(%x: memref<");
    kernel += &block;
    kernel += ">";
    if bool_input {
        write!(
            kernel,
            ", %b: memref<{bm}x{n}xi1>, %s: memref<{bm}x{element}>, %o: memref<{block}>) {{\n\
             %m = block.load %b : memref<{bm}x{n}xi1> -> tensor<{bm}x{n}xi1>\n"
        )
        .unwrap();
    } else {
        write!(
            kernel,
            ", %s: memref<{bm}x{element}>, %o: memref<{block}>) {{\n\
             %col = block.iota dim 1 : tensor<{bm}x{n}xi32>\n\
             %limit = arith.constant dense<{threshold}> : tensor<{bm}x{n}xi32>\n\
             %m = arith.cmpi slt, %col, %limit : tensor<{bm}x{n}xi32>\n"
        )
        .unwrap();
    }
    write!(
        kernel,
        "%other = arith.constant {other} : {element}\n\
         %{loaded} = block.load %x mask %m other %other : memref<{block}> -> tensor<{block}>\n",
        loaded = if conditional { "loaded" } else { "q" }
    )
    .unwrap();
    let (mul, two) = if float { ("arith.mulf", "2.0") } else { ("arith.muli", "2") };
    if conditional {
        write!(
            kernel,
            "%p = grid.program_id 0\n%c0 = arith.constant 0 : index\n%is_first = arith.cmpi eq, %p, %c0 : index\n\
             %q = scf.if %is_first -> tensor<{block}> {{\n\
             %two = arith.constant dense<{two}> : tensor<{block}>\n\
             %doubled = {mul} %loaded, %two : tensor<{block}>\n\
             scf.yield %doubled : tensor<{block}>\n\
             }} else {{\nscf.yield %loaded : tensor<{block}>\n}}\n"
        )
        .unwrap();
    }
    write!(
        kernel,
        "%r = block.reduce sum %q dims [1] : tensor<{block}> -> tensor<{bm}x{element}>\n\
         block.store %r, %s : tensor<{bm}x{element}>, memref<{bm}x{element}>\n\
         block.store %q, %o mask %m : tensor<{block}>, memref<{block}>\n\
         return\n}}\n"
    )
    .unwrap();
    // The bool array, when there is one: a parameter of @main, an input of
    // the call (name and type) and its BlockSpec.
    let bools = format!("memref<{m}x{n}xi1>");
    let (parameter, name, operand_type, bool_spec) = if bool_input {
        (format!(", %b: {bools}"), ", %b".to_string(), format!(", {bools}"), format!(", {spec}"))
    } else {
        Default::default()
    };
    let grid = m.div_ceil(bm);
    let text = format!(
        "{kernel}func.func @main(%x: {array}{parameter}, %s: memref<{m}x{element}>, %o: {array}) {{\n\
         grid.call @kernel grid [{grid}] ins(%x{name} : {array}{operand_type}) \
         outs(%s, %o : memref<{m}x{element}>, {array})\n\
         in_specs [{spec}{bool_spec}] out_specs [#grid.block<[{bm}], (i) -> (i)>, {spec}]\nreturn\n}}\n"
    );
    let reference = move |inputs: &[Vec<f64>]| -> Vec<Vec<f64>> {
        let x = &inputs[0];
        let on = |r: usize, c: usize| if bool_input { inputs[1][r * n + c] != 0.0 } else { c < threshold };
        let mut sums = vec![0.0; m];
        let mut out = vec![0.0; m * n];
        for r in 0..m {
            let (mut float_sum, mut integer_sum) = (0.0f32, 0i32);
            for c in 0..n {
                let loaded = if on(r, c) { x[r * n + c] } else { other_value };
                let value = if conditional && r < bm { loaded * 2.0 } else { loaded };
                float_sum += value as f32;
                integer_sum = integer_sum.wrapping_add(value as i32);
                if on(r, c) {
                    out[r * n + c] = value;
                }
            }
            sums[r] = if float { float_sum as f64 } else { integer_sum as f64 };
        }
        vec![sums, out]
    };
    Case {
        text,
        inputs: 1 + bool_input as usize,
        arguments: 3 + bool_input as usize,
        reference: Box::new(reference),
        description,
        gpu_args: Vec::new(),
    }
}

fn read_npy(path: &Path) -> Result<Vec<f64>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let npy = npyz::NpyFile::new(&bytes[..]).map_err(|e| e.to_string())?;
    let descr = npy.header().dtype().descr();
    if descr.contains("f4") {
        Ok(npy.into_vec::<f32>().map_err(|e| e.to_string())?.into_iter().map(f64::from).collect())
    } else if descr.contains("b1") {
        Ok(npy.into_vec::<bool>().map_err(|e| e.to_string())?.into_iter().map(|b| f64::from(u8::from(b))).collect())
    } else if descr.contains("i1") {
        Ok(npy.into_vec::<i8>().map_err(|e| e.to_string())?.into_iter().map(f64::from).collect())
    } else if descr.contains("u1") {
        Ok(npy.into_vec::<u8>().map_err(|e| e.to_string())?.into_iter().map(f64::from).collect())
    } else if descr.contains("u2") {
        Ok(npy.into_vec::<u16>().map_err(|e| e.to_string())?.into_iter().map(f64::from).collect())
    } else if descr.contains("u4") {
        Ok(npy.into_vec::<u32>().map_err(|e| e.to_string())?.into_iter().map(f64::from).collect())
    } else {
        Ok(npy.into_vec::<i32>().map_err(|e| e.to_string())?.into_iter().map(f64::from).collect())
    }
}

/// Runs `count` configurations from `seed` (the file holds `seed = N` and
/// `count = N` lines), times `TESSEL_DIFFERENTIAL_SCALE`.
pub fn differential(path: &Path, source: String) -> datatest_stable::Result<()> {
    let field = |name: &str| -> u64 {
        source
            .lines()
            .find_map(|line| line.strip_prefix(name)?.trim().strip_prefix('=')?.trim().parse().ok())
            .unwrap_or_else(|| panic!("{}: missing '{name} = N'", path.display()))
    };
    // TESSEL_DIFFERENTIAL_SCALE=K runs K times as many cases per batch (a
    // longer hunt; batches' seeds are a million apart).
    let scale = match std::env::var("TESSEL_DIFFERENTIAL_SCALE") {
        Ok(text) => text.parse::<u64>().map_err(|_| format!("TESSEL_DIFFERENTIAL_SCALE={text}: expected a count"))?,
        Err(_) => 1,
    };
    let (seed, count) = (field("seed"), field("count") * scale);
    let work = std::env::temp_dir().join(format!("tessel-differential-{seed}"));
    for index in 0..count {
        let mut rng = StdRng::seed_from_u64(seed + index);
        let case = match rng.random_range(0..42) {
            0..12 => elementwise(&mut rng),
            12..17 => matmul(&mut rng),
            17..20 => matrix_core_matmul(&mut rng),
            20..24 => masked_rows(&mut rng),
            24..26 => atomics(&mut rng),
            26..28 => control_flow(&mut rng),
            28..30 => unsigned(&mut rng),
            30..32 => gather_scatter(&mut rng),
            32..34 => overwrite_after_load(&mut rng),
            34..36 => sibling_reductions(&mut rng),
            36..38 => index_functions(&mut rng),
            38..40 => dynamic_grid(&mut rng),
            _ => wide_window(&mut rng),
        };
        let dir = work.join(index.to_string());
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)?;
        let file = dir.join("case.mlir");
        std::fs::write(&file, &case.text)?;
        // The CPU pipeline and the ROCm pipeline's kernels (emulated) must
        // both match the interpreter and the Rust reference bit for bit.
        for device in DEVICES {
            let out = dir.join(format!("out-{device}"));
            let output = Command::new(env!("CARGO_BIN_EXE_tessel"))
                .env("TESSEL_CACHE_DIR", crate::empty_cache_dir())
                .args(["run", file.to_str().unwrap(), "--entry", "main", "--check", "--device", device, "--dump"])
                .arg(&out)
                .args(if device == "cpu" { &[][..] } else { &case.gpu_args[..] })
                .args((0..case.inputs).map(|a| format!("--arg={a}=random:{}", seed + index * 7 + a as u64)))
                .output()?;
            if !output.status.success() {
                return Err(format!(
                    "case {index} ({}): tessel run --check --device {device} failed:\n{}\n{}",
                    case.description,
                    String::from_utf8_lossy(&output.stderr),
                    case.text
                )
                .into());
            }
            compare_with_reference(&case, &out).map_err(|message| format!("case {index} on {device}: {message}"))?;
        }
        // And the ROCm pipeline all the way to a code object, for every
        // chip (what the emulator runs stops before ROCDL and codegen).
        for chip in CHIPS {
            let object = dir.join(format!("{chip}.hsaco"));
            let output = Command::new(env!("CARGO_BIN_EXE_tessel"))
                .env("TESSEL_CACHE_DIR", crate::empty_cache_dir())
                .args(["compile", file.to_str().unwrap(), "--target", "rocm", "--chip", chip, "--emit", "hsaco", "-o"])
                .arg(&object)
                .output()?;
            if !output.status.success() {
                return Err(format!(
                    "case {index} ({}): tessel compile --target rocm --chip {chip} failed:\n{}\n{}",
                    case.description,
                    String::from_utf8_lossy(&output.stderr),
                    case.text
                )
                .into());
            }
        }
        std::fs::remove_dir_all(&dir)?;
    }
    Ok(())
}

/// Where the differential cases run.
const DEVICES: [&str; 2] = ["cpu", "rocm-emulated"];

/// The chips every case also compiles for.
const CHIPS: [&str; 3] = ["gfx90a", "gfx942", "gfx1100"];

fn compare_with_reference(case: &Case, dir: &Path) -> Result<(), String> {
    let read = |a: usize| read_npy(&dir.join(format!("arg{a}.npy")));
    let inputs: Vec<Vec<f64>> = (0..case.inputs).map(read).collect::<Result<_, _>>()?;
    for (output, expected) in (case.inputs..case.arguments).zip((case.reference)(&inputs)) {
        let compiled = read(output)?;
        if let Some(at) = (0..expected.len()).find(|&i| compiled[i].to_bits() != expected[i].to_bits()) {
            return Err(format!(
                "({}): argument {output}, element {at} is {} but the Rust reference gives {}\n{}",
                case.description, compiled[at], expected[at], case.text
            ));
        }
    }
    Ok(())
}
