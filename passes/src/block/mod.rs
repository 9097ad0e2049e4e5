//! The block dialect's kernel bodies to tensors and linalg.

pub mod block_to_linalg;
mod dma_on_wait;
mod predicated;
mod prints;
mod semaphores;
pub mod tessel_check_ref_accesses;
