//! Shared by the criterion benches: the examples/ kernels, each with its
//! entry function (named after the file).

use std::path::PathBuf;

/// The benchmark workloads of examples/ (file stem = entry function).
pub const EXAMPLES: &[&str] = &[
    "matmul_1024",
    "matmul_2048",
    "matmul_bias_relu_2048",
    "softmax_4096",
    "layernorm_4096",
    "attention_2048",
    "elementwise_16m",
    "sum_64m",
];

pub fn example_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples").join(format!("{name}.mlir"))
}

pub fn example_source(name: &str) -> String {
    std::fs::read_to_string(example_path(name)).expect("the example exists")
}
