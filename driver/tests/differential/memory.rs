//! Differential cases: Atomics, unsigned arrays, gathers and scatters, blocks rewritten in place, blocks carried through loops.

use super::Case;
use rand::{Rng, rngs::StdRng};

/// Atomics returning their old values: programs, in order (the shared
/// output block is revisited, so the axis is arbitrary), combine their
/// block of v into one block of o under a data-dependent mask, with a random
/// kind, and store the old elements.
pub(super) fn atomics(rng: &mut StdRng) -> Case {
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
pub(super) fn unsigned(rng: &mut StdRng) -> Case {
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
pub(super) fn gather_scatter(rng: &mut StdRng) -> Case {
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

/// A block rewritten in place from itself: x copied to o, then o loaded
/// and its transpose (`linalg.transpose`), that plus o itself, or o times
/// itself (`block.dot`) stored back to o. Bufferization must not compute
/// into the ref what a later read of the block still needs (an in-place
/// transpose read elements it had already overwritten).
pub(super) fn rewrite_in_place(rng: &mut StdRng) -> Case {
    let float = rng.random_bool(0.5);
    let e = if float { "f32" } else { "i32" };
    let n = rng.random_range(1..=12usize);
    let kind = rng.random_range(0..3);
    let block = format!("tensor<{n}x{n}x{e}>");
    let (description, rewrite) = match kind {
        0 => (
            "its transpose",
            String::from("%new = linalg.transpose ins(%acc : BLOCK) outs(%init : BLOCK) permutation = [1, 0]\n"),
        ),
        1 => (
            "its transpose plus itself",
            String::from(
                "%t = linalg.transpose ins(%acc : BLOCK) outs(%init : BLOCK) permutation = [1, 0]\n\
                 %new = ADD %t, %acc : BLOCK\n",
            ),
        ),
        _ => ("its square (a dot with itself)", String::from("%new = block.dot %acc, %acc : BLOCK, BLOCK -> BLOCK\n")),
    };
    let add = if float { "arith.addf" } else { "arith.addi" };
    let rewrite = rewrite.replace("BLOCK", &block).replace("ADD", add);
    let text = format!(
        "func.func @kernel(%x: memref<{n}x{n}x{e}>, %o: memref<{n}x{n}x{e}>) {{\n\
         %xv = block.load %x : memref<{n}x{n}x{e}> -> {block}\n\
         block.store %xv, %o : {block}, memref<{n}x{n}x{e}>\n\
         %acc = block.load %o : memref<{n}x{n}x{e}> -> {block}\n\
         %init = tensor.empty() : {block}\n\
         {rewrite}\
         block.store %new, %o : {block}, memref<{n}x{n}x{e}>\n\
         return\n}}\n\
         func.func @main(%x: memref<{n}x{n}x{e}>, %o: memref<{n}x{n}x{e}>) {{\n\
         grid.call @kernel grid [] ins(%x : memref<{n}x{n}x{e}>) outs(%o : memref<{n}x{n}x{e}>)\n\
         in_specs [#grid.block<full>] out_specs [#grid.block<full>]\n\
         return\n}}\n"
    );
    let reference = move |inputs: &[Vec<f64>]| -> Vec<Vec<f64>> {
        let x = &inputs[0];
        let at = |i: usize, j: usize| x[i * n + j];
        let out = (0..n * n)
            .map(|index| {
                let (i, j) = (index / n, index % n);
                match (kind, float) {
                    (0, _) => at(j, i),
                    (1, true) => f64::from(at(j, i) as f32 + at(i, j) as f32),
                    (1, false) => f64::from((at(j, i) as i32).wrapping_add(at(i, j) as i32)),
                    (_, true) => {
                        f64::from((0..n).fold(0.0f32, |sum, p| (at(i, p) as f32).mul_add(at(p, j) as f32, sum)))
                    }
                    (_, false) => f64::from(
                        (0..n).fold(0i32, |sum, p| sum.wrapping_add((at(i, p) as i32).wrapping_mul(at(p, j) as i32))),
                    ),
                }
            })
            .collect();
        vec![out]
    };
    Case {
        text,
        inputs: 1,
        arguments: 2,
        reference: Box::new(reference),
        description: format!("{e} {n}x{n} block rewritten in place as {description}"),
        gpu_args: Vec::new(),
    }
}

/// A block carried through an `scf.for` and rewritten element-wise on
/// every trip from itself, the input block and a per-row scale (Pallas'
/// flash-attention accumulator, in integers so every path is exact),
/// then the input block used again after the loop. Which of these results
/// are computed in an operand's buffer is bufferization's choice
/// (`tessel-elementwise-in-place` offers the operand): a wrong choice
/// overwrites the input block or a value read on the next trip.
pub(super) fn loop_carried(rng: &mut StdRng) -> Case {
    let (b, g, n) = (rng.random_range(1..=6usize), rng.random_range(1..=3usize), rng.random_range(1..=9usize));
    let trips = rng.random_range(0..=3usize);
    let kind = rng.random_range(0..3);
    let m = b * g;
    let t = format!("tensor<{b}x{n}xi32>");
    let update = match kind {
        0 => format!("%scaled = arith.muli %a, %sb : {t}\n%next = arith.addi %scaled, %xv : {t}\n"),
        1 => format!(
            "%less = arith.subi %a, %xv : {t}\n%three = arith.constant dense<3> : {t}\n%next = arith.muli %less, %three : {t}\n"
        ),
        _ => format!("%twice = arith.addi %a, %a : {t}\n%next = arith.xori %twice, %xv : {t}\n"),
    };
    let text = format!(
        "func.func @kernel(%x: memref<{b}x{n}xi32>, %s: memref<{b}xi32>, %o: memref<{b}x{n}xi32>, %p: memref<{b}x{n}xi32>) {{\n\
         %xv = block.load %x : memref<{b}x{n}xi32> -> {t}\n\
         %sv = block.load %s : memref<{b}xi32> -> tensor<{b}xi32>\n\
         %sb = block.broadcast %sv dims [1] : tensor<{b}xi32> -> {t}\n\
         %one = arith.constant dense<1> : {t}\n\
         %start = arith.addi %xv, %one : {t}\n\
         %c0 = arith.constant 0 : index\n%c1 = arith.constant 1 : index\n%trips = arith.constant {trips} : index\n\
         %acc = scf.for %i = %c0 to %trips step %c1 iter_args(%a = %start) -> ({t}) {{\n\
         {update}scf.yield %next : {t}\n}}\n\
         block.store %acc, %o : {t}, memref<{b}x{n}xi32>\n\
         %after = arith.muli %xv, %sb : {t}\n\
         block.store %after, %p : {t}, memref<{b}x{n}xi32>\n\
         return\n}}\n\
         func.func @main(%x: memref<{m}x{n}xi32>, %s: memref<{m}xi32>, %o: memref<{m}x{n}xi32>, %p: memref<{m}x{n}xi32>) {{\n\
         grid.call @kernel grid [{g}] ins(%x, %s : memref<{m}x{n}xi32>, memref<{m}xi32>) outs(%o, %p : memref<{m}x{n}xi32>, memref<{m}x{n}xi32>)\n\
         in_specs [#grid.block<[{b}, {n}], (i) -> (i, 0)>, #grid.block<[{b}], (i) -> (i)>]\n\
         out_specs [#grid.block<[{b}, {n}], (i) -> (i, 0)>, #grid.block<[{b}, {n}], (i) -> (i, 0)>]\n\
         return\n}}\n"
    );
    let reference = move |inputs: &[Vec<f64>]| -> Vec<Vec<f64>> {
        let (x, s) = (&inputs[0], &inputs[1]);
        let (mut out, mut after) = (Vec::new(), Vec::new());
        for (at, &value) in x.iter().enumerate() {
            let (xi, si) = (value as i32, s[at / n] as i32);
            let acc = (0..trips).fold(xi.wrapping_add(1), |a, _| match kind {
                0 => a.wrapping_mul(si).wrapping_add(xi),
                1 => a.wrapping_sub(xi).wrapping_mul(3),
                _ => a.wrapping_add(a) ^ xi,
            });
            out.push(f64::from(acc));
            after.push(f64::from(xi.wrapping_mul(si)));
        }
        vec![out, after]
    };
    Case {
        text,
        inputs: 2,
        arguments: 4,
        reference: Box::new(reference),
        description: format!("{m}x{n} i32 carried through {trips} trips (update {kind}) in {g} blocks of {b} rows"),
        gpu_args: Vec::new(),
    }
}

/// An input that is also the call's output (`input_output_aliases`), in
/// whole or partial blocks, read again after the program wrote the output:
/// `o = k x`, then `o = x + o` with x read again (or read once, before the
/// write). A TPU copies the input block in before the kernel runs, so the
/// second read still sees x; compiled code read the array and saw `k x`.
pub(super) fn aliased_inputs(rng: &mut StdRng) -> Case {
    let float = rng.random_bool(0.5);
    let e = if float { "f32" } else { "i32" };
    let (br, bc) = (rng.random_range(1..=8usize), rng.random_range(1..=8usize));
    let (rows, columns) = (rng.random_range(1..=3 * br), rng.random_range(1..=3 * bc));
    let (gr, gc) = (rows.div_ceil(br), columns.div_ceil(bc));
    let k = rng.random_range(2..=5i32);
    let read_again = rng.random_bool(0.75);
    let (add, mul, kk) = if float {
        ("arith.addf", "arith.mulf", format!("{k}.0"))
    } else {
        ("arith.addi", "arith.muli", k.to_string())
    };
    let array = format!("memref<{rows}x{columns}x{e}>");
    let whole = format!("tensor<{rows}x{columns}x{e}>");
    let block = format!("{br}x{bc}x{e}");
    let second = if read_again {
        format!("%again = block.load %x : memref<{block}> -> tensor<{block}>\n")
    } else {
        "%again = arith.addf %v, %zero : tensor<BLOCK>\n".replace("BLOCK", &block).replace("arith.addf", add)
    };
    let text = format!(
        "func.func @copy(%x: {array}, %o: {array}) {{\n\
         %v = block.load %x : {array} -> {whole}\nblock.store %v, %o : {whole}, {array}\nreturn\n}}\n\
         func.func @kernel(%x: memref<{block}>, %o: memref<{block}>) {{\n\
         %v = block.load %x : memref<{block}> -> tensor<{block}>\n\
         %zero = arith.constant dense<0{point}> : tensor<{block}>\n\
         %k = arith.constant dense<{kk}> : tensor<{block}>\n\
         %d = {mul} %v, %k : tensor<{block}>\n\
         block.store %d, %o : tensor<{block}>, memref<{block}>\n\
         {second}\
         %s = {add} %again, %d : tensor<{block}>\n\
         block.store %s, %o : tensor<{block}>, memref<{block}>\n\
         return\n}}\n\
         func.func @main(%x: {array}, %o: {array}) {{\n\
         grid.call @copy grid [] ins(%x : {array}) outs(%o : {array})\n\
         in_specs [#grid.block<full>] out_specs [#grid.block<full>]\n\
         grid.call @kernel grid [{gr}, {gc}] ins(%o : {array}) outs(%o : {array})\n\
         in_specs [#grid.block<[{br}, {bc}], (i, j) -> (i, j)>] out_specs [#grid.block<[{br}, {bc}], (i, j) -> (i, j)>]\n\
         return\n}}\n",
        point = if float { ".0" } else { "" },
    );
    let reference = move |inputs: &[Vec<f64>]| -> Vec<Vec<f64>> {
        let out = inputs[0]
            .iter()
            .map(|&x| {
                if float {
                    let x = x as f32;
                    f64::from(x + x * k as f32)
                } else {
                    let x = x as i32;
                    f64::from(x.wrapping_add(x.wrapping_mul(k)))
                }
            })
            .collect();
        vec![out]
    };
    let how = if read_again { "read again after the write" } else { "read once" };
    let description = format!("{e} {rows}x{columns} input aliased to the output in {br}x{bc} blocks, {how}");
    Case { text, inputs: 1, arguments: 2, reference: Box::new(reference), description, gpu_args: Vec::new() }
}
