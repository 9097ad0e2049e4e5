//! `tessel-check-bounds`: with `tessel run --bounds-checks` (the module's
//! `tessel.bounds_checks`), every load and store of CPU code checks that
//! it stays inside the memory it addresses (`support/bounds_checks.rs`);
//! without it, nothing changes.
//!
//! An access past an array's end whose values a mask then discards gives
//! the right numbers and reads memory it does not own, which faults when
//! the array ends at a page: the differential suite's CPU runs use the
//! checks to find such accesses. Runs last in the loops stage, once the
//! contractions' tiles, vector transfers and copies are loops of loads and
//! stores, before the LLVM dialect.

use crate::support::bounds_checks::{check_accesses, listed_sites, record_sites};
use crate::support::handles::raw_op;
use crate::support::ir::collect_operations;
use crate::{PassDefinition, PassError};
use melior::ir::OperationRef;
use tessel_dialects::BOUNDS_CHECKS;

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-check-bounds",
    name: "TesselCheckBounds",
    description: "Under tessel.bounds_checks, check every load and store against the extent of the memory it addresses",
    anchor: "builtin.module",
    run,
};

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    if !raw_op(module.to_raw()).has(BOUNDS_CHECKS) {
        return Ok(());
    }
    let mut sites = listed_sites(module);
    for (function, _) in collect_operations(module, |name| name == "func.func") {
        check_accesses(function, None, &mut sites)?;
    }
    record_sites(module, &sites)
}
