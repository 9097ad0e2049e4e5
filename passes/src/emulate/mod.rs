//! The GPU emulator: launches and matrix-core fragment exchanges as CPU
//! loops, with per-work-item values privatized across barriers.

pub mod privatize;
pub mod tessel_emulate_gpu;
pub mod tessel_emulate_matrix_cores;
