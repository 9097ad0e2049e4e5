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
