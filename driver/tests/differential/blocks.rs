//! Differential cases: Element-wise kernels, masked and wide windows, control flow, loads
//! before writes to the loaded ref, sibling reductions.

use super::Case;
use rand::{Rng, rngs::StdRng};
use std::fmt::Write;

pub(super) fn elementwise(rng: &mut StdRng) -> Case {
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

/// A masked window wider than its ref (Pallas-Triton kernels load
/// `x_ref.at[pl.ds(0, next_pow2(n))]`): the lanes past the ref read
/// `other`, are counted by a max reduction, and are never stored.
pub(super) fn wide_window(rng: &mut StdRng) -> Case {
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
pub(super) fn control_flow(rng: &mut StdRng) -> Case {
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

/// A mask used twice: a masked load (masked-off lanes read `other`), a row
/// sum of what was loaded, and a masked store of it. The mask is computed
/// from `block.iota` or read from a bool input array (`i1` in memory), row
/// blocks may be partial. Masks materialized in memory once and read back
/// in vectors lost lanes on the ROCm path.
pub(super) fn masked_rows(rng: &mut StdRng) -> Case {
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

/// A kernel that loads from an output ref (a masked window or a gather),
/// then overwrites the ref (a store or a scatter of zeros), then uses what
/// it loaded: a load reads the ref as it is at the load, so the later
/// writes must not show in the loaded value.
pub(super) fn overwrite_after_load(rng: &mut StdRng) -> Case {
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
pub(super) fn sibling_reductions(rng: &mut StdRng) -> Case {
    let float = rng.random_bool(0.5);
    let e = if float { "f32" } else { "i32" };
    // Small square blocks; wide ones whose reductions give every work-item
    // of the emulated GPU one partial (rows x columns = 512 on up to 256
    // work-items): their first combine runs across lanes
    // (tessel-cross-lane-reductions), in clusters of 2 to 64 lanes; or
    // blocks of 128 KiB, more than LDS holds: the float kernels' element-
    // wise value used by every reduction and the doubling is recomputed
    // by each (tessel-recompute-large-values).
    let (rows, cols, g) = match rng.random_range(0..6) {
        0..3 => {
            let b = rng.random_range(1..=6usize);
            (b, b, rng.random_range(1..=3usize))
        }
        3..5 => {
            let rows = [1, 2, 4, 8][rng.random_range(0..4)];
            (rows, 512 / rows, rng.random_range(1..=2usize))
        }
        _ => {
            let rows = [2, 4, 8][rng.random_range(0..3)];
            (rows, 32768 / rows, 1)
        }
    };
    let n = rows * g;
    let block = format!("{rows}x{cols}x{e}");
    // Float sums depend on the order: floats take max/min only.
    let kinds: &[&str] = if float { &["max", "min"] } else { &["sum", "max", "min"] };
    let picks: Vec<(&str, usize)> =
        (0..rng.random_range(2..=3usize)).map(|r| (kinds[rng.random_range(0..kinds.len())], r % 2)).collect();
    // Float blocks hold NaNs, -inf and zeros of both signs as well (made
    // from the random inputs in the kernel): max/min must propagate NaN and
    // order -0 below +0 (arith.maximumf/minimumf) on every path.
    let chip = ["gfx90a", "gfx942", "gfx1100"][rng.random_range(0..3)];
    let warps = [1, 2, 4][rng.random_range(0..3)];
    // Blocks of one sign too: a partial's neutral element (-inf for max,
    // +inf for min) then differs from any element, so a wrong one shows.
    let sign = ["mixed", "nonnegative", "nonpositive"][rng.random_range(0..3)];
    let description = format!(
        "{e} reductions {picks:?} of {rows}x{cols} {sign} blocks with NaN/-inf/±0, {g} programs, {chip} x{warps}"
    );
    // The block loaded as `name`, of one sign where wanted.
    let load = |name: &str| {
        let t = format!("tensor<{block}>");
        let load = |to: &str| format!("{to} = block.load %x : memref<{block}> -> {t}\n");
        let absolute = |to: &str| {
            let op = if float { "math.absf" } else { "math.absi" };
            format!("{}{to} = {op} %in : {t}\n", load("%in"))
        };
        match sign {
            "mixed" => load(name),
            "nonnegative" => absolute(name),
            _ if float => format!("{}{name} = arith.negf %abs_in : {t}\n", absolute("%abs_in")),
            _ => format!(
                "{}%zeros_in = arith.constant dense<0> : {t}\n{name} = arith.subi %zeros_in, %abs_in : {t}\n",
                absolute("%abs_in")
            ),
        }
    };
    let length = |dim: usize| if dim == 1 { rows } else { cols };
    let mut kernel = format!(
        "func.func @kernel(%x: memref<{block}>, %doubled: memref<{block}>{}) {{\n",
        picks
            .iter()
            .enumerate()
            .map(|(r, &(_, dim))| format!(", %r{r}: memref<{}x{e}>", length(dim)))
            .collect::<String>()
    );
    if float {
        let t = format!("tensor<{rows}x{cols}xf32>");
        let i1 = format!("tensor<{rows}x{cols}xi1>");
        write!(
            kernel,
            "{}%nan = arith.constant dense<0x7FC00000> : {t}\n\
             %ninf = arith.constant dense<0xFF800000> : {t}\n\
             %hi = arith.constant dense<{SPECIAL_NAN_ABOVE:?}> : {t}\n\
             %lo = arith.constant dense<{SPECIAL_NEG_INF_BELOW:?}> : {t}\n\
             %half = arith.constant dense<{SPECIAL_ZERO_WITHIN:?}> : {t}\n\
             %zero = arith.constant dense<0.0> : {t}\n\
             %abs = math.absf %x0 : {t}\n\
             %small = arith.cmpf olt, %abs, %half : {t}\n\
             %signed_zero = arith.mulf %x0, %zero : {t}\n\
             %s1 = arith.select %small, %signed_zero, %x0 : {i1}, {t}\n\
             %below = arith.cmpf olt, %x0, %lo : {t}\n\
             %s2 = arith.select %below, %ninf, %s1 : {i1}, {t}\n\
             %above = arith.cmpf ogt, %x0, %hi : {t}\n\
             %a = arith.select %above, %nan, %s2 : {i1}, {t}\n",
            load("%x0")
        )
        .unwrap();
    } else {
        kernel.push_str(&load("%a"));
    }
    for (r, (kind, dim)) in picks.iter().enumerate() {
        writeln!(
            kernel,
            "%v{r} = block.reduce {kind} %a dims [{dim}] : tensor<{block}> -> tensor<{length}x{e}>\n\
             block.store %v{r}, %r{r} : tensor<{length}x{e}>, memref<{length}x{e}>",
            length = length(*dim)
        )
        .unwrap();
    }
    let add = if float { "arith.addf" } else { "arith.addi" };
    writeln!(
        kernel,
        "%d = {add} %a, %a : tensor<{block}>\nblock.store %d, %doubled : tensor<{block}>, memref<{block}>\n\
         return\n}}"
    )
    .unwrap();
    let outputs = (0..picks.len()).map(|r| format!("%r{r}")).collect::<Vec<_>>().join(", ");
    let output_types = picks.iter().map(|&(_, dim)| format!("memref<{}x{e}>", length(dim) * g)).collect::<Vec<_>>();
    let output_specs =
        picks.iter().map(|&(_, dim)| format!("#grid.block<[{}], (i) -> (i)>", length(dim))).collect::<Vec<_>>();
    let (output_types, output_specs) = (output_types.join(", "), output_specs.join(", "));
    let whole = format!("{}x{cols}x{e}", n);
    let text = format!(
        "{kernel}func.func @main(%x: memref<{whole}>, %doubled: memref<{whole}>, {}) {{\n\
         grid.call @kernel grid [{g}] ins(%x : memref<{whole}>) outs(%doubled, {outputs} : memref<{whole}>, \
         {output_types})\n\
         in_specs [#grid.block<[{rows}, {cols}], (i) -> (i, 0)>] out_specs [#grid.block<[{rows}, {cols}], (i) -> (i, 0)>, \
         {output_specs}]\nreturn\n}}\n",
        output_types.split(", ").enumerate().map(|(r, t)| format!("%r{r}: {t}")).collect::<Vec<_>>().join(", ")
    );
    let arguments = 2 + picks.len();
    let reference = move |inputs: &[Vec<f64>]| -> Vec<Vec<f64>> {
        let signed = |v: f64| match sign {
            "mixed" => v,
            "nonnegative" if float => f64::from((v as f32).abs()),
            "nonnegative" => f64::from((v as i32).wrapping_abs()),
            _ if float => f64::from(-(v as f32).abs()),
            _ => f64::from(0i32.wrapping_sub((v as i32).wrapping_abs())),
        };
        let x: Vec<f64> = if float {
            inputs[0].iter().map(|&v| f64::from(with_specials(signed(v) as f32))).collect()
        } else {
            inputs[0].iter().map(|&v| signed(v)).collect()
        };
        let doubled = x.iter().map(|v| if float { f64::from(*v as f32 * 2.0) } else { v * 2.0 }).collect();
        let mut outputs = vec![doubled];
        for &(kind, dim) in &picks {
            // Lines kept, and elements per reduced line.
            let (kept, reduced) = if dim == 1 { (rows, cols) } else { (cols, rows) };
            let mut out = vec![0.0; kept * g];
            for block in 0..g {
                for k in 0..kept {
                    // Element `l` of the reduced line `k` of this block.
                    let line = (0..reduced).map(|l| {
                        let (row, column) = if dim == 1 { (k, l) } else { (l, k) };
                        x[(block * rows + row) * cols + column]
                    });
                    out[block * kept + k] = match kind {
                        "sum" => line.sum(),
                        "max" => line.fold(f64::NEG_INFINITY, |a, b| extreme(a, b, true)),
                        _ => line.fold(f64::INFINITY, |a, b| extreme(a, b, false)),
                    };
                }
            }
            outputs.push(out);
        }
        outputs
    };
    let gpu_args = vec!["--chip".into(), chip.into(), "--num-warps".into(), warps.to_string()];
    Case { text, inputs: 1, arguments, reference: Box::new(reference), description, gpu_args }
}

/// Inputs (uniform in [-1, 1)) above this become NaN in float reductions.
const SPECIAL_NAN_ABOVE: f32 = 0.9;
/// Below this, -inf.
const SPECIAL_NEG_INF_BELOW: f32 = -0.9;
/// Of magnitude below this, a zero of the input's sign.
const SPECIAL_ZERO_WITHIN: f32 = 0.5;

/// What `sibling_reductions`' kernels make of a random float input.
fn with_specials(x: f32) -> f32 {
    if x > SPECIAL_NAN_ABOVE {
        f32::NAN
    } else if x < SPECIAL_NEG_INF_BELOW {
        f32::NEG_INFINITY
    } else if x.abs() < SPECIAL_ZERO_WITHIN {
        x * 0.0
    } else {
        x
    }
}

/// `arith.maximumf` (`largest`) or `minimumf`: NaN if either is, and -0
/// below +0.
fn extreme(a: f64, b: f64, largest: bool) -> f64 {
    if a.is_nan() || b.is_nan() {
        return f64::NAN;
    }
    // Equal values differ at most in the sign of a zero: max takes +0, min -0.
    let a_first = if a == b { a.is_sign_negative() != largest } else { (a > b) == largest };
    if a_first { a } else { b }
}

/// Element-wise blocks of more than eight 16-byte vectors per work-item
/// on the GPU (9 to 36 per item of 256): tessel-batch-loads unrolls each
/// item's loop and issues its reads first. Plain (o = 2x + y), in place
/// (the output revisited along an arbitrary axis: its reads must stay
/// after the writes before them), or reading the output a first call
/// wrote (o = 2o + y after o = 3y).
pub(super) fn long_rows(rng: &mut StdRng) -> Case {
    let float = rng.random_bool(0.5);
    let e = if float { "f32" } else { "i32" };
    let (mul, add, zero) = if float { ("arith.mulf", "arith.addf", "0.0") } else { ("arith.muli", "arith.addi", "0") };
    let per_item = [9usize, 10, 11, 12, 16, 20, 24, 32, 36][rng.random_range(0..9)];
    let rows = [1usize, 2, 4, 8][rng.random_range(0..4)];
    let columns = per_item * 256 * 4 / rows;
    let programs = rng.random_range(1..=2usize);
    let variant = rng.random_range(0..3);
    let description =
        format!("{e} blocks {rows}x{columns} ({per_item} vectors per item) x {programs}, variant {variant}");
    let block = format!("{rows}x{columns}x{e}");
    let array = format!("memref<{}x{columns}x{e}>", rows * programs);
    let (revisits, dims, map) = if variant == 1 { (2, "i, k", "(i, 0)") } else { (1, "i", "(i, 0)") };
    let spec = format!("#grid.block<[{rows}, {columns}], ({dims}) -> {map}>");
    let mut kernel = format!(
        "func.func @kernel(%x: memref<{block}>, %y: memref<{block}>, %o: memref<{block}>) {{\n\
         %a = block.load %x : memref<{block}> -> tensor<{block}>\n\
         %b = block.load %y : memref<{block}> -> tensor<{block}>\n\
         %two = arith.constant dense<2> : tensor<{block}>\n\
         %t = {mul} %a, %two : tensor<{block}>\n\
         %v = {add} %t, %b : tensor<{block}>\n"
    );
    if variant == 1 {
        write!(
            kernel,
            "%k = grid.program_id 1\n%c0 = arith.constant 0 : index\n%first = arith.cmpi eq, %k, %c0 : index\n\
             scf.if %first {{\n%z = arith.constant dense<{zero}> : tensor<{block}>\n\
             block.store %z, %o : tensor<{block}>, memref<{block}>\n}}\n\
             %old = block.load %o : memref<{block}> -> tensor<{block}>\n%sum = {add} %old, %v : tensor<{block}>\n\
             block.store %sum, %o : tensor<{block}>, memref<{block}>\nreturn\n}}\n"
        )
        .unwrap();
    } else {
        writeln!(kernel, "block.store %v, %o : tensor<{block}>, memref<{block}>\nreturn\n}}").unwrap();
    }
    let kernel = kernel.replace("dense<2>", if float { "dense<2.0>" } else { "dense<2>" });
    let grid = if variant == 1 { format!("{programs}, {revisits}") } else { programs.to_string() };
    let call = |ins: &str| {
        format!(
            "grid.call @kernel grid [{grid}] ins({ins} : {array}, {array}) outs(%o : {array})\n\
             in_specs [{spec}, {spec}] out_specs [{spec}]\n"
        )
    };
    let text = if variant == 2 {
        // A first call writes o = 2y + y; the second reads it as x.
        format!(
            "{kernel}func.func @main(%x: {array}, %y: {array}, %o: {array}) {{\n{}{}return\n}}\n",
            call("%y, %y"),
            call("%o, %y")
        )
    } else {
        format!("{kernel}func.func @main(%x: {array}, %y: {array}, %o: {array}) {{\n{}return\n}}\n", call("%x, %y"))
    };
    let reference = move |inputs: &[Vec<f64>]| -> Vec<Vec<f64>> {
        let (x, y) = (&inputs[0], &inputs[1]);
        let step = |a: f64, b: f64| -> f64 {
            if float {
                ((a as f32) * 2.0 + b as f32) as f64
            } else {
                (a as i32).wrapping_mul(2).wrapping_add(b as i32) as f64
            }
        };
        let out = (0..x.len())
            .map(|i| match variant {
                1 => {
                    let v = step(x[i], y[i]);
                    if float { ((v as f32) + (v as f32)) as f64 } else { (v as i32).wrapping_mul(2) as f64 }
                }
                2 => step(step(y[i], y[i]), y[i]),
                _ => step(x[i], y[i]),
            })
            .collect();
        vec![out]
    };
    Case { text, inputs: 2, arguments: 3, reference: Box::new(reference), description, gpu_args: Vec::new() }
}
