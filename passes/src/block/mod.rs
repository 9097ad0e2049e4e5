//! The block dialect's kernel bodies to tensors and linalg.

pub mod block_to_linalg;
mod dma_on_wait;
mod predicated;
mod prints;
mod semaphores;
pub mod tessel_check_ref_accesses;
pub mod tessel_detect_races;

use crate::support::handles::operation_ref;
use crate::support::ir::collect_operations;
use melior::ir::OperationRef;
use tessel_dialects::{GridCall, find_symbol};

/// The kernels of `module`: the functions its `grid.call`s call, once each.
fn kernels<'c, 'a>(module: OperationRef<'c, 'a>) -> Vec<OperationRef<'c, 'a>> {
    let mut names: Vec<String> = collect_operations(module, |name| name == GridCall::NAME)
        .into_iter()
        .filter_map(|(raw, _)| GridCall::new(operation_ref(raw)).map(|call| call.callee()))
        .collect();
    names.sort();
    names.dedup();
    names.iter().filter_map(|name| find_symbol(&module, name)).collect()
}

/// Adds `text` to a module's list of sites; its number (from 1), which
/// compiled code reports and the JIT looks up.
fn site(sites: &mut Vec<String>, text: String) -> i64 {
    sites.push(text);
    sites.len() as i64
}
