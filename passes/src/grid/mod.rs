//! Pallas semantics: grid calls checked and run as loops over blocks, and the
//! prefetching of later blocks along ordered (arbitrary) axes.

pub(crate) mod block_refs;
pub(crate) mod cores;
mod fills;
pub mod grid_to_loops;
pub mod grid_verify_specs;
pub mod in_place;
pub mod last_visit;
pub mod tessel_prefetch;
