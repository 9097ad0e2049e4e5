//! Run time of every example kernel, compiled once (JIT, all cores), called
//! on random inputs; the peer comparison is benchmarks/run.py.

use criterion::{Criterion, criterion_group, criterion_main};
use melior::ir::Module;
use std::time::Duration;
use tessel_benchmarks::{EXAMPLES, example_path, example_source};
use tessel_lowering::cpu::{self, Padding};
use tessel_runtime::{HostArray, Jit};

fn kernels(c: &mut Criterion) {
    let mut group = c.benchmark_group("run");
    group.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(5));
    for name in EXAMPLES {
        let context = tessel_dialects::create_context();
        let mut module = Module::parse(&context, &example_source(name)).expect("parses");
        let file = example_path(name).display().to_string();
        let signature = tessel_driver::run::signature(&module, name, &file).expect("an entry named after the file");
        let mut arrays: Vec<HostArray> = signature
            .iter()
            .enumerate()
            .map(|(index, (_, element, shape))| {
                HostArray::random(*element, shape, index as u64 + 1).expect("allocates")
            })
            .collect();
        cpu::lower(&context, &mut module, Padding::Zero).expect("lowers");
        let jit = Jit::new(&module, 3).expect("compiles");
        group.bench_function(*name, |b| b.iter(|| jit.call(name, &mut arrays).expect("runs")));
    }
    group.finish();
}

criterion_group!(benches, kernels);
criterion_main!(benches);
