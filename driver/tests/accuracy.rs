//! Accuracy of the compiled elementary functions: a kernel applying
//! `math.<function>` to an f32 sweep (a dense grid over [low, high], values
//! near the interesting boundaries and the special values) runs through
//! `tessel run`, and every result is compared with the f64 function. The
//! error is measured in units in the last place of the f32 result
//! (subnormal spacing below the normal range); NaN must give NaN, and
//! infinities and signed zeros must match exactly.

use npyz::WriterBuilder;
use std::{path::Path, process::Command};

fn field(source: &str, name: &str) -> String {
    source
        .lines()
        .find_map(|line| {
            let (key, value) = line.split_once('=')?;
            (key.trim() == name).then(|| value.trim().trim_matches('"').to_string())
        })
        .unwrap_or_else(|| panic!("missing '{name} = ...'"))
}

/// The spacing of f32 values around `value` (the ulp of its magnitude).
fn ulp(value: f32) -> f64 {
    let magnitude = value.abs();
    if !magnitude.is_finite() {
        return f64::INFINITY;
    }
    let next = f32::from_bits(magnitude.to_bits() + 1);
    (next as f64) - (magnitude as f64)
}

fn sweep(low: f32, high: f32) -> Vec<f32> {
    let count = 1 << 18;
    let mut values: Vec<f32> = (0..count).map(|i| low + (high - low) * (i as f32) / (count - 1) as f32).collect();
    // Near the edges of the range and of the approximations.
    for center in [-103.97f32, -87.34, -87.0, -1.0, -0.625, -0.5, 0.0, 0.5, 0.625, 1.0, 9.0, 88.7, 88.72283] {
        let mut value = center;
        for _ in 0..64 {
            values.extend([value, -value]);
            value = f32::from_bits(value.to_bits() + 1);
        }
    }
    values.extend([
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        0.0,
        -0.0,
        f32::MIN_POSITIVE,
        1e-30,
        -1e-30,
        1e-40,
        3e-45,
    ]);
    values.extend([f32::MAX, f32::MIN, 1e-7, -1e-7, 1e-4, -1e-4]);
    values
}

fn reference(function: &str, x: f64) -> f64 {
    match function {
        "exp" => x.exp(),
        "tanh" => x.tanh(),
        "expm1" => x.exp_m1(),
        "log1p" => x.ln_1p(),
        "cbrt" => x.cbrt(),
        other => panic!("no reference for '{other}'"),
    }
}

pub fn accuracy(path: &Path, source: String) -> datatest_stable::Result<()> {
    let function = field(&source, "function");
    let (low, high): (f32, f32) = (field(&source, "low").parse()?, field(&source, "high").parse()?);
    let max_ulp: f64 = field(&source, "max_ulp").parse()?;
    let inputs = sweep(low, high);
    let n = inputs.len();
    let dir = std::env::temp_dir().join(format!("tessel-accuracy-{function}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let input_path = dir.join("x.npy");
    let mut writer = npyz::WriteOptions::<f32>::new()
        .default_dtype()
        .shape(&[n as u64])
        .writer(std::fs::File::create(&input_path)?)
        .begin_nd()?;
    writer.extend(inputs.iter().copied())?;
    writer.finish()?;
    let block = 1024;
    let text = format!(
        "func.func @kernel(%x: memref<{block}xf32>, %y: memref<{block}xf32>) {{\n\
         %v = block.load %x : memref<{block}xf32> -> tensor<{block}xf32>\n\
         %r = math.{function} %v : tensor<{block}xf32>\n\
         block.store %r, %y : tensor<{block}xf32>, memref<{block}xf32>\nreturn\n}}\n\
         func.func @main(%x: memref<{n}xf32>, %y: memref<{n}xf32>) {{\n\
         grid.call @kernel grid [{}] ins(%x : memref<{n}xf32>) outs(%y : memref<{n}xf32>)\n\
         in_specs [#grid.block<[{block}], (i) -> (i)>] out_specs [#grid.block<[{block}], (i) -> (i)>]\nreturn\n}}\n",
        n.div_ceil(block)
    );
    let file = dir.join("case.mlir");
    std::fs::write(&file, &text)?;
    let output = Command::new(env!("CARGO_BIN_EXE_tessel"))
        .args(["run", file.to_str().unwrap(), "--entry", "main", "--dump"])
        .arg(dir.join("out"))
        .arg(format!("--arg=0={}", input_path.display()))
        .output()?;
    if !output.status.success() {
        return Err(
            format!("{}: tessel run failed:\n{}", path.display(), String::from_utf8_lossy(&output.stderr)).into()
        );
    }
    let bytes = std::fs::read(dir.join("out/arg1.npy"))?;
    let results: Vec<f32> = npyz::NpyFile::new(&bytes[..])?.into_vec::<f32>()?;
    let mut worst = (0.0f64, 0usize);
    for (i, (&x, &y)) in inputs.iter().zip(&results).enumerate() {
        let exact = reference(&function, x as f64);
        let rounded = exact as f32;
        let ok = if exact.is_nan() {
            y.is_nan()
        } else if rounded.is_infinite() || rounded == 0.0 {
            // Overflow and underflow: the exact f32 answer, sign included,
            // or its neighbour toward zero / the largest finite value.
            y.to_bits() == rounded.to_bits() || (y as f64 - exact).abs() <= ulp(y) * max_ulp
        } else {
            let error = (y as f64 - exact).abs() / ulp(rounded);
            if error > worst.0 {
                worst = (error, i);
            }
            error <= max_ulp
        };
        if !ok {
            return Err(format!(
                "{}: {function}({x:e}) = {y:e}, but the f64 reference is {exact:e} ({} ulp allowed)",
                path.display(),
                max_ulp
            )
            .into());
        }
    }
    eprintln!("{function}: worst error {:.3} ulp at x = {:e} over {n} inputs", worst.0, inputs[worst.1]);
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
