//! Differential cases: rows whose intermediate value later steps read back
//! (softmax's shape, exact): on the GPU, an intermediate that each
//! work-item alone touches lives in the items' private memory (grid-to-gpu's
//! private buffers), others in LDS.

use super::Case;
use rand::{Rng, rngs::StdRng};

/// `d = x - rowmax(x)`, `s = rowmin(d)` (floats) or `rowsum(d)` (integers,
/// wrapping), `o = d - s`: `d` has two consumers, so it is materialized.
/// Blocks of 1024 to 8192 elements in 1 to 4 rows split evenly over the
/// work-items (1 to 8 vectors each: `d` private), or rows of a width that
/// does not (`d` in LDS); or long rows, 4 to 16 of 1024 to 4096 elements
/// (the eight-row softmax's shape: each item's partial walks dozens of
/// vectors along its row and its share of the element-wise work is
/// longer still — the loops tessel-batch-loads batches); 1, 2 or 4 waves
/// on each chip.
pub(super) fn row_intermediates(rng: &mut StdRng) -> Case {
    let float = rng.random_bool(0.5);
    let e = if float { "f32" } else { "i32" };
    let (rows, cols) = if rng.random_bool(0.3) {
        let rows = [4usize, 8, 16][rng.random_range(0..3)];
        (rows, [1024usize, 2048, 4096][rng.random_range(0..3)].min(32768 / rows))
    } else {
        let rows = [1usize, 1, 2, 4][rng.random_range(0..4)];
        let cols = if rng.random_bool(0.75) {
            [1024usize, 2048, 4096, 8192][rng.random_range(0..4)] / rows
        } else {
            rng.random_range(1..=2100usize)
        };
        (rows, cols)
    };
    let programs = rng.random_range(1..=3usize);
    let chip = ["gfx90a", "gfx942", "gfx1100"][rng.random_range(0..3)];
    let warps = [1, 2, 4][rng.random_range(0..3)];
    let description = format!("{e} row intermediates of {rows}x{cols} blocks, {programs} programs, {chip} x{warps}");
    let block = format!("{rows}x{cols}x{e}");
    let t = format!("tensor<{block}>");
    let line = format!("tensor<{rows}x{e}>");
    let (subtract, second) = if float { ("arith.subf", "min") } else { ("arith.subi", "sum") };
    let kernel = format!(
        "func.func @kernel(%x: memref<{block}>, %o: memref<{block}>) {{\n\
         %v = block.load %x : memref<{block}> -> {t}\n\
         %m = block.reduce max %v dims [1] : {t} -> {line}\n\
         %mb = block.broadcast %m dims [1] : {line} -> {t}\n\
         %d = {subtract} %v, %mb : {t}\n\
         %s = block.reduce {second} %d dims [1] : {t} -> {line}\n\
         %sb = block.broadcast %s dims [1] : {line} -> {t}\n\
         %r = {subtract} %d, %sb : {t}\n\
         block.store %r, %o : {t}, memref<{block}>\nreturn\n}}\n"
    );
    let array = format!("memref<{}x{cols}x{e}>", rows * programs);
    let spec = format!("#grid.block<[{rows}, {cols}], (i) -> (i, 0)>");
    let text = format!(
        "{kernel}func.func @main(%x: {array}, %o: {array}) {{\n\
         grid.call @kernel grid [{programs}] ins(%x : {array}) outs(%o : {array})\n\
         in_specs [{spec}] out_specs [{spec}]\nreturn\n}}\n"
    );
    let reference = move |inputs: &[Vec<f64>]| -> Vec<Vec<f64>> {
        let mut out = Vec::with_capacity(inputs[0].len());
        for row in inputs[0].chunks(cols) {
            if float {
                let row: Vec<f32> = row.iter().map(|&v| v as f32).collect();
                let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                let d: Vec<f32> = row.iter().map(|&v| v - max).collect();
                let min = d.iter().copied().fold(f32::INFINITY, f32::min);
                out.extend(d.iter().map(|&v| f64::from(v - min)));
            } else {
                let row: Vec<i32> = row.iter().map(|&v| v as i32).collect();
                let max = row.iter().copied().max().expect("a nonempty row");
                let d: Vec<i32> = row.iter().map(|&v| v.wrapping_sub(max)).collect();
                let sum = d.iter().fold(0i32, |sum, &v| sum.wrapping_add(v));
                out.extend(d.iter().map(|&v| f64::from(v.wrapping_sub(sum))));
            }
        }
        vec![out]
    };
    let gpu_args = vec!["--chip".into(), chip.into(), "--num-warps".into(), warps.to_string()];
    Case { text, inputs: 1, arguments: 2, reference: Box::new(reference), description, gpu_args }
}
