//! Integer families: division, remainder and shifts where arith leaves
//! them undefined (tessel-total-division and tessel-saturating-shifts
//! define them as XLA does).

use super::Case;
use rand::{Rng, rngs::StdRng};

/// One integer division, remainder or shift of two random blocks (values
/// -8..8: zero and -1 divisors are common; shift amounts are scaled by 5,
/// so -40..35 reaches past the width both ways), the first operand's -8s
/// replaced by INT_MIN so INT_MIN / -1 occurs too. Before
/// tessel-total-division a zero divisor killed the process with SIGFPE on
/// x86; before tessel-saturating-shifts a shift by 32 or more was poison.
pub(super) fn integer_edges(rng: &mut StdRng) -> Case {
    let ops = [
        "arith.divsi",
        "arith.remsi",
        "arith.divui",
        "arith.remui",
        "arith.floordivsi",
        "arith.ceildivsi",
        "arith.shli",
        "arith.shrsi",
        "arith.shrui",
    ];
    let op = ops[rng.random_range(0..ops.len())];
    let n = rng.random_range(1..=40usize);
    let block = rng.random_range(1..=n);
    let programs = n.div_ceil(block);
    let t = format!("tensor<{block}xi32>");
    let scale = if op.contains("sh") { 5 } else { 1 };
    let text = format!(
        "func.func @kernel(%x: memref<{block}xi32>, %y: memref<{block}xi32>, %o: memref<{block}xi32>) {{\n\
         %x0 = block.load %x : memref<{block}xi32> -> {t}\n\
         %b = block.load %y : memref<{block}xi32> -> {t}\n\
         %minus_eight = arith.constant dense<-8> : {t}\n\
         %lowest = arith.constant dense<-2147483648> : {t}\n\
         %is_lowest = arith.cmpi eq, %x0, %minus_eight : {t}\n\
         %a = arith.select %is_lowest, %lowest, %x0 : tensor<{block}xi1>, {t}\n\
         %scale = arith.constant dense<{scale}> : {t}\n\
         %scaled = arith.muli %b, %scale : {t}\n\
         %r = {op} %a, %scaled : {t}\n\
         block.store %r, %o : {t}, memref<{block}xi32>\nreturn\n}}\n\
         func.func @main(%x: memref<{n}xi32>, %y: memref<{n}xi32>, %o: memref<{n}xi32>) {{\n\
         grid.call @kernel grid [{programs}] ins(%x, %y : memref<{n}xi32>, memref<{n}xi32>) outs(%o : memref<{n}xi32>)\n\
         in_specs [#grid.block<[{block}], (i) -> (i)>, #grid.block<[{block}], (i) -> (i)>]\n\
         out_specs [#grid.block<[{block}], (i) -> (i)>]\nreturn\n}}\n"
    );
    let description = format!("{op} of {n} i32 in blocks of {block} (second operand times {scale})");
    let reference = move |inputs: &[Vec<f64>]| -> Vec<Vec<f64>> {
        let quotients = inputs[0]
            .iter()
            .zip(&inputs[1])
            .map(|(&x, &y)| {
                let a = if x as i32 == -8 { i32::MIN } else { x as i32 };
                f64::from(defined(op, a, y as i32 * scale))
            })
            .collect();
        vec![quotients]
    };
    Case { text, inputs: 2, arguments: 3, reference: Box::new(reference), description, gpu_args: Vec::new() }
}

/// `op` on i32 as XLA defines it: x / 0 = -1 (all ones), x % 0 = x,
/// INT_MIN / -1 = INT_MIN, INT_MIN % -1 = 0; shifts by 32 or more (the
/// amount unsigned) give 0 or the sign; unsigned ops on the bits.
fn defined(op: &str, a: i32, b: i32) -> i32 {
    let (ua, ub) = (a as u32, b as u32);
    match op {
        "arith.shli" => a.checked_shl(ub).unwrap_or(0),
        "arith.shrui" => ua.checked_shr(ub).unwrap_or(0) as i32,
        "arith.shrsi" => a >> ub.min(31),
        "arith.remsi" | "arith.remui" if b == 0 => a,
        _ if b == 0 => -1,
        "arith.divsi" => a.wrapping_div(b),
        "arith.remsi" => a.wrapping_rem(b),
        "arith.divui" => (ua / ub) as i32,
        "arith.remui" => (ua % ub) as i32,
        "arith.floordivsi" => {
            let (q, r) = (a.wrapping_div(b), a.wrapping_rem(b));
            if r != 0 && ((r < 0) != (b < 0)) { q - 1 } else { q }
        }
        "arith.ceildivsi" => {
            let (q, r) = (a.wrapping_div(b), a.wrapping_rem(b));
            if r != 0 && ((r > 0) == (b > 0)) { q + 1 } else { q }
        }
        _ => unreachable!("not a division: {op}"),
    }
}

/// i1 blocks (signs of two random f32 blocks) through one signed or
/// unsigned op or reduction, widened with extsi: to the signed ops true
/// is -1, so a signed max of booleans is their `and`, and extsi makes
/// true -1. The reference interpreter once read true as +1 there (a
/// signed max of true and false was true; extsi gave 1).
pub(super) fn boolean_ops(rng: &mut StdRng) -> Case {
    let ops = [
        "arith.maxsi",
        "arith.minsi",
        "arith.maxui",
        "arith.minui",
        "arith.addi",
        "arith.muli",
        "arith.cmpi slt,",
        "arith.cmpi sge,",
        "arith.cmpi ugt,",
        "block.reduce max",
        "block.reduce min",
        "block.reduce umax",
        "block.reduce umin",
        "block.reduce sum",
    ];
    let op = ops[rng.random_range(0..ops.len())];
    let (rows, columns) = (rng.random_range(1..=6usize), rng.random_range(1..=9usize));
    let (f, b) = (format!("tensor<{rows}x{columns}xf32>"), format!("tensor<{rows}x{columns}xi1>"));
    let reduces = op.starts_with("block.reduce");
    let out_shape = if reduces { format!("{rows}") } else { format!("{rows}x{columns}") };
    let result = if reduces {
        format!("%r = {op} %a dims [1] : {b} -> tensor<{rows}xi1>")
    } else {
        format!("%r = {op} %a, %b : {b}")
    };
    let memref = |shape: &str, element: &str| format!("memref<{shape}x{element}>");
    let (input, output) = (memref(&format!("{rows}x{columns}"), "f32"), memref(&out_shape, "i32"));
    let text = format!(
        "func.func @kernel(%x: {input}, %y: {input}, %o: {output}) {{\n\
         %xs = block.load %x : {input} -> {f}\n\
         %ys = block.load %y : {input} -> {f}\n\
         %zero = arith.constant dense<0.0> : {f}\n\
         %a = arith.cmpf ogt, %xs, %zero : {f}\n\
         %b = arith.cmpf ogt, %ys, %zero : {f}\n\
         {result}\n\
         %w = arith.extsi %r : tensor<{out_shape}xi1> to tensor<{out_shape}xi32>\n\
         block.store %w, %o : tensor<{out_shape}xi32>, {output}\nreturn\n}}\n\
         func.func @main(%x: {input}, %y: {input}, %o: {output}) {{\n\
         grid.call @kernel grid [] ins(%x, %y : {input}, {input}) outs(%o : {output})\n\
         in_specs [#grid.block<full>, #grid.block<full>] out_specs [#grid.block<full>]\nreturn\n}}\n"
    );
    let description = format!("{op} of {rows}x{columns} i1, extsi to i32");
    let reference = move |inputs: &[Vec<f64>]| -> Vec<Vec<f64>> {
        // Booleans as i1's signed values (true = -1) and unsigned ones (1).
        let signed = |x: f64| -i64::from(x > 0.0);
        let (a, b): (Vec<i64>, Vec<i64>) =
            (inputs[0].iter().map(|&x| signed(x)).collect(), inputs[1].iter().map(|&x| signed(x)).collect());
        // An i1 result (0 or 1 as bits) sign-extended.
        let extend = |bit: bool| if bit { -1.0 } else { 0.0 };
        let unsigned = |v: i64| v & 1;
        let combine = |x: i64, y: i64| -> bool {
            match op {
                "arith.maxsi" | "block.reduce max" => x.max(y) != 0,
                "arith.minsi" | "block.reduce min" => x.min(y) != 0,
                "arith.maxui" | "block.reduce umax" => unsigned(x).max(unsigned(y)) != 0,
                "arith.minui" | "block.reduce umin" => unsigned(x).min(unsigned(y)) != 0,
                "arith.addi" | "block.reduce sum" => (unsigned(x) + unsigned(y)) & 1 != 0,
                "arith.muli" => unsigned(x) * unsigned(y) != 0,
                "arith.cmpi slt," => x < y,
                "arith.cmpi sge," => x >= y,
                "arith.cmpi ugt," => unsigned(x) > unsigned(y),
                _ => unreachable!("{op}"),
            }
        };
        if !reduces {
            return vec![a.iter().zip(&b).map(|(&x, &y)| extend(combine(x, y))).collect()];
        }
        let identity = match op {
            "block.reduce max" => -1,
            "block.reduce min" | "block.reduce umax" | "block.reduce sum" => 0,
            _ => -1,
        };
        let rows_of =
            a.chunks(columns).map(|row| extend(row.iter().fold(identity, |acc, &x| -i64::from(combine(x, acc))) != 0));
        vec![rows_of.collect()]
    };
    Case { text, inputs: 2, arguments: 3, reference: Box::new(reference), description, gpu_args: Vec::new() }
}
