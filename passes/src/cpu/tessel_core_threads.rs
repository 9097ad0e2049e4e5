//! `tessel-core-threads`: the cores of a core mesh (`grid.call ... cores`)
//! as threads that all run at once.
//!
//! grid-to-loops makes a core axis an `scf.forall` marked `tessel.cores`.
//! A plain forall becomes an OpenMP loop whose iterations share however
//! many threads the schedule asks for (two on a two-core host), so a core
//! waiting for a signal from a core that has not started would wait
//! forever. Here the marked forall becomes `omp.parallel num_threads(N)`
//! over a worksharing loop of N iterations with static chunks of one:
//! each core its own thread (OpenMP gives a parallel region the threads
//! it asks for, more than the host has CPUs if need be). Should OpenMP
//! grant fewer (a region nested in another), the cores still all run,
//! some after others on one thread: right for cores that do not wait on
//! each other, and a wait that is never satisfied times out, located.
//!
//! Runs in the CPU pipeline's loop stage, before `scf-forall-to-parallel`
//! (whose conversion would drop the mark), after deallocation.

use crate::support::handles::{location_of, raw_op, replace_all_uses};
use crate::support::ir::{block_arguments, block_operations, collect_operations, erase, move_before};
use crate::support::template;
use crate::{PassDefinition, PassError};
use melior::ir::OperationRef;
use mlir_sys::*;

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-core-threads",
    name: "TesselCoreThreads",
    description: "Run the cores of a core mesh (scf.forall marked tessel.cores) on a thread each, all at once",
    anchor: "builtin.module",
    run,
};

/// The unit attribute grid-to-loops puts on a core axis' `scf.forall`.
pub const CORES: &str = "tessel.cores";

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    for (forall, _) in collect_operations(module, |name| name == "scf.forall") {
        if raw_op(forall).has(CORES) {
            threads_for_cores(forall).map_err(|message| PassError::at(location_of(forall), message))?;
        }
    }
    Ok(())
}

fn threads_for_cores(forall: MlirOperation) -> Result<(), String> {
    let op = raw_op(forall);
    // grid-to-loops writes `scf.forall (%c) in (N)`: one static extent.
    let operands = op.operands();
    let cores = match op.integers("staticUpperBound").as_slice() {
        [cores] if *cores > 0 && operands.is_empty() => *cores,
        _ => return Err("a core axis must be one static extent".into()),
    };
    let text = format!(
        "func.func @template() {{\n\
         %c0 = arith.constant 0 : index\n\
         %c1 = arith.constant 1 : index\n\
         %cores = arith.constant {cores} : index\n\
         %threads = arith.constant {cores} : i32\n\
         %chunk = arith.constant 1 : i32\n\
         omp.parallel num_threads(%threads : i32) {{\n\
           omp.wsloop schedule(static = %chunk : i32) {{\n\
             omp.loop_nest (%core) : index = (%c0) to (%cores) step (%c1) {{\n\
               omp.yield\n\
             }}\n\
           }}\n\
           omp.terminator\n\
         }}\n\
         return\n}}"
    );
    let context = crate::support::handles::context_of(forall);
    let inlined = template::inline_ops_before(context, forall, &text, &[]).map_err(|e| e.0)?;
    let parallel = *inlined.operations.last().ok_or("the core threads' template is empty")?;
    let (nest, _) =
        collect_operations(crate::support::handles::operation_ref(parallel), |name| name == "omp.loop_nest")
            .into_iter()
            .next()
            .ok_or("the core threads' template has no loop")?;
    let nest_body = raw_op(nest).region_block(0);
    let yield_op = *block_operations(nest_body).last().ok_or("an empty loop nest")?;
    // The cores' work moves into the loop, the core id with it.
    let forall_body = op.region_block(0);
    let mut work = block_operations(forall_body);
    work.pop(); // scf.forall.in_parallel
    move_before(&work, yield_op);
    let core = block_arguments(nest_body)[0];
    for iv in block_arguments(forall_body) {
        replace_all_uses(iv, core);
    }
    erase(forall);
    Ok(())
}
