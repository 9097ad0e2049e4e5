//! Differential cases: Index functions with scalar prefetch, and grids sized by values.

use super::Case;
use rand::{Rng, rngs::StdRng};

/// Index maps that are functions: a lookup in a scalar-prefetch table
/// (wrapped into range with `remsi`, the kernel also reading the table),
/// or causal attention's clamp `select(j > i, i, j)` with the output
/// accumulated along j.
pub(super) fn index_functions(rng: &mut StdRng) -> Case {
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
pub(super) fn dynamic_grid(rng: &mut StdRng) -> Case {
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

/// Arrays whose blocks do not divide them, where the programs with whole
/// blocks work on views of the array and only the edge ones on padded
/// copies (grid-to-loops), or, on the GPU, on views past the array's end
/// where only the rows are partial: an array updated in place (the same
/// memref in and out) in 2-D blocks, or an output block accumulated across
/// an arbitrary k axis from a 3-D input's squeezed slices.
pub(super) fn partial_blocks(rng: &mut StdRng) -> Case {
    if rng.random_bool(0.25) {
        return revisited_partial_blocks(rng);
    }
    let float = rng.random_bool(0.5);
    let e = if float { "f32" } else { "i32" };
    let (mut rows, mut columns) = (rng.random_range(1..=12usize), rng.random_range(1..=12usize));
    let (br, mut bc) = (rng.random_range(1..=5usize), rng.random_range(1..=5usize));
    // A third of the cases have blocks of whole rows of whole 16-byte
    // vectors, partial along the rows only: on the GPU each item then
    // moves vectors (contiguous rows), and where one array maps into
    // another (neither accumulated nor updated in place) every program
    // runs on views past the arrays' ends (tessel-past-end-views; zero
    // padding only: the plain emulated run, not `--check`'s).
    if rng.random_bool(1.0 / 3.0) {
        columns = 4 * rng.random_range(1..=3usize);
        bc = columns;
        rows = br * rng.random_range(1..=3usize) + rng.random_range(0..br);
    }
    let (gr, gc) = (rows.div_ceil(br), columns.div_ceil(bc));
    let array = format!("memref<{rows}x{columns}x{e}>");
    let block = format!("{br}x{bc}x{e}");
    let accumulate = rng.random_bool(0.5);
    if accumulate {
        let k = rng.random_range(1..=4usize);
        let input = format!("memref<{k}x{rows}x{columns}x{e}>");
        let (add, zero) = if float { ("arith.addf", "0.0") } else { ("arith.addi", "0") };
        let text = format!(
            "func.func @kernel(%x: memref<{block}>, %o: memref<{block}>) {{\n\
             %k = grid.program_id 2\n%c0 = arith.constant 0 : index\n%first = arith.cmpi eq, %k, %c0 : index\n\
             scf.if %first {{\n%zeros = arith.constant dense<{zero}> : tensor<{block}>\n\
             block.store %zeros, %o : tensor<{block}>, memref<{block}>\n}}\n\
             %v = block.load %x : memref<{block}> -> tensor<{block}>\n\
             %acc = block.load %o : memref<{block}> -> tensor<{block}>\n\
             %s = {add} %acc, %v : tensor<{block}>\n\
             block.store %s, %o : tensor<{block}>, memref<{block}>\n\
             return\n}}\n\
             func.func @main(%x: {input}, %o: {array}) {{\n\
             grid.call @kernel grid [{gr}, {gc}, {k}] ins(%x : {input}) outs(%o : {array})\n\
             in_specs [#grid.block<[squeezed, {br}, {bc}], (i, j, k) -> (k, i, j)>]\n\
             out_specs [#grid.block<[{br}, {bc}], (i, j, k) -> (i, j)>]\n\
             return\n}}\n"
        );
        let reference = move |inputs: &[Vec<f64>]| -> Vec<Vec<f64>> {
            let x = &inputs[0];
            let out = (0..rows * columns)
                .map(|at| {
                    let slices = (0..k).map(|slice| x[slice * rows * columns + at]);
                    if float {
                        f64::from(slices.fold(0.0f32, |sum, value| sum + value as f32))
                    } else {
                        f64::from(slices.fold(0i32, |sum, value| sum.wrapping_add(value as i32)))
                    }
                })
                .collect();
            vec![out]
        };
        let description = format!("{e} {rows}x{columns} in {br}x{bc} blocks accumulated over {k} k steps");
        return Case {
            text,
            inputs: 1,
            arguments: 2,
            reference: Box::new(reference),
            description,
            gpu_args: Vec::new(),
        };
    }
    // (v + 3/2) v for floats, (v + 3) v (wrapping) for integers: either
    // from one array into another (programs on views past the arrays' ends
    // on the GPU, with zero padding: the differential's plain emulated run),
    // or copied whole into the output first, then updated in place there
    // (partial blocks staged).
    let (add, mul, three) = if float { ("arith.addf", "arith.mulf", "1.5") } else { ("arith.addi", "arith.muli", "3") };
    let in_place = rng.random_bool(0.5);
    let (copy, input) = if in_place {
        (
            format!(
                "grid.call @copy grid [] ins(%x : {array}) outs(%o : {array})\n\
                 in_specs [#grid.block<full>] out_specs [#grid.block<full>]\n"
            ),
            "%o",
        )
    } else {
        (String::new(), "%x")
    };
    let text = format!(
        "func.func @copy(%x: {array}, %o: {array}) {{\n\
         %v = block.load %x : {array} -> tensor<{rows}x{columns}x{e}>\n\
         block.store %v, %o : tensor<{rows}x{columns}x{e}>, {array}\n\
         return\n}}\n\
         func.func @kernel(%x: memref<{block}>, %o: memref<{block}>) {{\n\
         %v = block.load %x : memref<{block}> -> tensor<{block}>\n\
         %c = arith.constant dense<{three}> : tensor<{block}>\n\
         %s = {add} %v, %c : tensor<{block}>\n\
         %p = {mul} %s, %v : tensor<{block}>\n\
         block.store %p, %o : tensor<{block}>, memref<{block}>\n\
         return\n}}\n\
         func.func @main(%x: {array}, %o: {array}) {{\n\
         {copy}grid.call @kernel grid [{gr}, {gc}] ins({input} : {array}) outs(%o : {array})\n\
         in_specs [#grid.block<[{br}, {bc}], (i, j) -> (i, j)>] out_specs [#grid.block<[{br}, {bc}], (i, j) -> (i, j)>]\n\
         return\n}}\n"
    );
    let reference = move |inputs: &[Vec<f64>]| -> Vec<Vec<f64>> {
        let out = inputs[0]
            .iter()
            .map(|&value| {
                if float {
                    let v = value as f32;
                    f64::from((v + 1.5) * v)
                } else {
                    let v = value as i32;
                    f64::from(v.wrapping_add(3).wrapping_mul(v))
                }
            })
            .collect();
        vec![out]
    };
    let how = if in_place { "updated in place" } else { "mapped" };
    let description = format!("{e} {rows}x{columns} {how} in {br}x{bc} blocks");
    Case { text, inputs: 1, arguments: 2, reference: Box::new(reference), description, gpu_args: Vec::new() }
}

/// Output blocks, partial or whole, revisited along an arbitrary k axis
/// and read back whole: the first visit writes `7 r + c` over the block
/// (row r, column c of the block), each later one adds each element's row
/// and column sums over the whole block, the part past the array's end
/// included. A TPU keeps a revisited block in VMEM between visits (so does
/// JAX's interpreter); Tessel staged partial blocks afresh at each visit,
/// losing that part.
fn revisited_partial_blocks(rng: &mut StdRng) -> Case {
    let (br, bc) = (rng.random_range(1..=5usize), rng.random_range(1..=5usize));
    let (rows, columns) = (rng.random_range(1..=3 * br), rng.random_range(1..=3 * bc));
    let (gr, gc, k) = (rows.div_ceil(br), columns.div_ceil(bc), rng.random_range(2..=4usize));
    let block = format!("{br}x{bc}xi32");
    let array = format!("memref<{rows}x{columns}xi32>");
    let semantics = if rng.random_bool(0.5) { "semantics [parallel, parallel, arbitrary]" } else { "" };
    let text = format!(
        "func.func @kernel(%o: memref<{block}>) {{\n\
         %k = grid.program_id 2\n%c0 = arith.constant 0 : index\n%first = arith.cmpi eq, %k, %c0 : index\n\
         scf.if %first {{\n\
         %r = block.iota dim 0 : tensor<{block}>\n%c = block.iota dim 1 : tensor<{block}>\n\
         %seven = arith.constant dense<7> : tensor<{block}>\n\
         %r7 = arith.muli %r, %seven : tensor<{block}>\n%v = arith.addi %r7, %c : tensor<{block}>\n\
         block.store %v, %o : tensor<{block}>, memref<{block}>\n\
         }} else {{\n\
         %v = block.load %o : memref<{block}> -> tensor<{block}>\n\
         %rs = block.reduce sum %v dims [1] : tensor<{block}> -> tensor<{br}xi32>\n\
         %cs = block.reduce sum %v dims [0] : tensor<{block}> -> tensor<{bc}xi32>\n\
         %rb = block.broadcast %rs dims [1] : tensor<{br}xi32> -> tensor<{block}>\n\
         %cb = block.broadcast %cs dims [0] : tensor<{bc}xi32> -> tensor<{block}>\n\
         %a = arith.addi %v, %rb : tensor<{block}>\n%s = arith.addi %a, %cb : tensor<{block}>\n\
         block.store %s, %o : tensor<{block}>, memref<{block}>\n\
         }}\nreturn\n}}\n\
         func.func @main(%o: {array}) {{\n\
         grid.call @kernel grid [{gr}, {gc}, {k}] ins() outs(%o : {array})\n\
         in_specs [] out_specs [#grid.block<[{br}, {bc}], (i, j, k) -> (i, j)>] {semantics}\n\
         return\n}}\n"
    );
    let reference = move |_: &[Vec<f64>]| -> Vec<Vec<f64>> {
        // Every block goes through the same visits.
        let mut b: Vec<i32> = (0..br * bc).map(|at| (7 * (at / bc) + at % bc) as i32).collect();
        for _ in 1..k {
            let row = |r: usize| (0..bc).fold(0i32, |sum, c| sum.wrapping_add(b[r * bc + c]));
            let column = |c: usize| (0..br).fold(0i32, |sum, r| sum.wrapping_add(b[r * bc + c]));
            b = (0..br * bc).map(|at| b[at].wrapping_add(row(at / bc)).wrapping_add(column(at % bc))).collect();
        }
        vec![(0..rows * columns).map(|at| f64::from(b[(at / columns) % br * bc + (at % columns) % bc])).collect()]
    };
    let description = format!("i32 {rows}x{columns} in {br}x{bc} blocks revisited {k} times, read back whole");
    Case { text, inputs: 0, arguments: 1, reference: Box::new(reference), description, gpu_args: Vec::new() }
}

/// Splash attention's shape: a running sum kept in an output whose block
/// never changes (zeroed at j = 0, added to along j, copied out at the
/// last j), under a head axis written `parallel`. A TPU core keeps that
/// block in its VMEM while it runs the programs; Tessel ran the heads in
/// threads sharing the array's block, which summed other heads' blocks in.
/// The shared block ends as the last program left it. (Blocks this size:
/// in small ones a head finished before the next thread started.)
pub(super) fn shared_statistics(rng: &mut StdRng) -> Case {
    let float = rng.random_bool(0.5);
    let e = if float { "f32" } else { "i32" };
    // Threads overlap only when a head's programs take a while: at 64x256
    // blocks and 16 steps, 4 runs in 6 of the unfixed code went wrong.
    let (heads, rows, steps) =
        (rng.random_range(2..=3usize), rng.random_range(1..=2usize), rng.random_range(6..=16usize));
    let (b, c) = (rng.random_range(16..=64usize), 128 * rng.random_range(1..=2usize));
    let (add, zero) = if float { ("arith.addf", "0.0") } else { ("arith.addi", "0") };
    let block = format!("{b}x{c}x{e}");
    let (n, w) = (rows * b, steps * c);
    let text = format!(
        "func.func @kernel(%x: memref<{block}>, %m: memref<{block}>, %o: memref<{block}>) {{\n\
         %j = grid.program_id 2\n%c0 = arith.constant 0 : index\n%last = arith.constant {last} : index\n\
         %first = arith.cmpi eq, %j, %c0 : index\n\
         scf.if %first {{\n%zero = arith.constant dense<{zero}> : tensor<{block}>\n\
         block.store %zero, %m : tensor<{block}>, memref<{block}>\n}}\n\
         %v = block.load %x : memref<{block}> -> tensor<{block}>\n\
         %acc = block.load %m : memref<{block}> -> tensor<{block}>\n\
         %sum = {add} %acc, %v : tensor<{block}>\n\
         block.store %sum, %m : tensor<{block}>, memref<{block}>\n\
         %done = arith.cmpi eq, %j, %last : index\n\
         scf.if %done {{\n%total = block.load %m : memref<{block}> -> tensor<{block}>\n\
         block.store %total, %o : tensor<{block}>, memref<{block}>\n}}\nreturn\n}}\n\
         func.func @main(%x: memref<{heads}x{n}x{w}x{e}>, %m: memref<{b}x{c}x{e}>, %o: memref<{heads}x{n}x{c}x{e}>) {{\n\
         grid.call @kernel grid [{heads}, {rows}, {steps}] ins(%x : memref<{heads}x{n}x{w}x{e}>)\n\
         outs(%m, %o : memref<{b}x{c}x{e}>, memref<{heads}x{n}x{c}x{e}>)\n\
         in_specs [#grid.block<[squeezed, {b}, {c}], (h, i, j) -> (h, i, j)>]\n\
         out_specs [#grid.block<[{b}, {c}], (h, i, j) -> (0, 0)>, #grid.block<[squeezed, {b}, {c}], (h, i, j) -> (h, i, 0)>]\n\
         semantics [parallel, arbitrary, arbitrary]\nreturn\n}}\n",
        last = steps - 1,
    );
    let reference = move |inputs: &[Vec<f64>]| -> Vec<Vec<f64>> {
        let x = &inputs[0];
        // Sums along j in program order, in the element type.
        let total = |h: usize, r: usize, col: usize| -> f64 {
            let at = |j: usize| x[(h * n + r) * w + j * c + col];
            if float {
                f64::from((0..steps).fold(0f32, |sum, j| sum + at(j) as f32))
            } else {
                f64::from((0..steps).fold(0i32, |sum, j| sum.wrapping_add(at(j) as i32)))
            }
        };
        let o = (0..heads * n * c).map(|at| total(at / (n * c), at / c % n, at % c)).collect();
        let m = (0..b * c).map(|at| total(heads - 1, (rows - 1) * b + at / c, at % c)).collect();
        vec![m, o]
    };
    let description =
        format!("{e} running sums of {b}x{c} blocks kept in a shared output, grid [{heads}, {rows}, {steps}]");
    Case { text, inputs: 1, arguments: 3, reference: Box::new(reference), description, gpu_args: Vec::new() }
}
