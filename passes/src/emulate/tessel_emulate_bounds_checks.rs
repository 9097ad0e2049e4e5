//! `tessel-emulate-bounds-checks`: every load and store of a `gpu.launch`
//! kernel checks, when the emulator runs it, that it stays inside the
//! memory it addresses (`support/bounds_checks.rs`).
//!
//! On the CPU an access past the end of a buffer reads whatever lies there
//! (often a neighbour's data, which a masked result then hides) or
//! corrupts the host's memory; on a GPU it faults, or reads or writes
//! another kernel's data. Either way the emulator's results could not be
//! trusted: an access outside is skipped and fails the run, naming it.
//!
//! Runs after the other emulation passes that make accesses
//! (`tessel-emulate-buffers`, `-matrix-cores`, `-subgroups`) and before
//! `tessel-emulate-gpu`, while kernels are still launches and attributions
//! still have their own sizes. Attributions are used only as
//! `tessel-emulate-gpu` expects them to be (through views and casts): their
//! extents are static and read from their types.

use crate::support::bounds_checks::{check_accesses, listed_sites, record_sites};
use crate::support::ir::collect_operations;
use crate::{PassDefinition, PassError};
use melior::ir::OperationRef;

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-emulate-bounds-checks",
    name: "TesselEmulateBoundsChecks",
    description: "Check every load and store of gpu.launch kernels against the extent of the memory it addresses",
    anchor: "builtin.module",
    run,
};

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    let launches = collect_operations(module, |name| name == "gpu.launch");
    if launches.is_empty() {
        return Ok(());
    }
    let mut sites = listed_sites(module);
    for (launch, _) in launches {
        check_accesses(launch, Some(launch), &mut sites)?;
    }
    record_sites(module, &sites)
}
