//! Compile time of every example, per pipeline stage (lowering/src/cpu.rs
//! `stages`), plus parsing and LLVM code generation, in the release build.

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use melior::ir::Module;
use std::time::Duration;
use tessel_benchmarks::{EXAMPLES, example_source};
use tessel_lowering::{
    cpu::{self, Padding},
    emit::{Artifact, emit},
};

fn compile_stages(c: &mut Criterion) {
    tessel_lowering::register_everything();
    let stages = cpu::stages();
    for name in EXAMPLES {
        let source = example_source(name);
        let mut group = c.benchmark_group(format!("compile/{name}"));
        group.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(2));
        group.bench_function("parse", |b| {
            let context = tessel_dialects::create_context();
            b.iter(|| Module::parse(&context, &source).expect("parses"))
        });
        for (index, (stage, passes)) in stages.iter().enumerate() {
            // The module as the earlier stages leave it, made afresh per run.
            group.bench_function(*stage, |b| {
                let context = tessel_dialects::create_context();
                b.iter_batched(
                    || {
                        let mut module = Module::parse(&context, &source).expect("parses");
                        cpu::prepare(&context, &mut module, Padding::Zero);
                        for (_, earlier) in &stages[..index] {
                            tessel_lowering::run_passes(&context, &mut module, &earlier.join(",")).expect("lowers");
                        }
                        module
                    },
                    |mut module| tessel_lowering::run_passes(&context, &mut module, &passes.join(",")).expect("lowers"),
                    BatchSize::PerIteration,
                )
            });
        }
        group.bench_function("llvm-codegen", |b| {
            let context = tessel_dialects::create_context();
            let mut module = Module::parse(&context, &source).expect("parses");
            cpu::lower(&context, &mut module, Padding::Zero).expect("lowers");
            let out = std::env::temp_dir().join(format!("tessel-bench-{name}.o"));
            b.iter(|| emit(&module, Artifact::Object, &out, Default::default()).expect("emits"))
        });
        group.finish();
    }
}

criterion_group!(benches, compile_stages);
criterion_main!(benches);
