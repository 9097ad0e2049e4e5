//! Host buffers (`.npy` in and out, random and zero fills), numpy-style
//! printing, and calling JIT-compiled kernels on them (on the CPU, or on
//! an AMD GPU through HIP with the `hip` feature).

#![deny(clippy::undocumented_unsafe_blocks)]

mod array;
pub mod debug_print;
mod dma_queue;
pub mod hip;
pub mod interpret;
mod jit;
mod kernel_alloc;
pub mod openmp;
pub mod pages;
mod print;
pub mod race_detection;
pub mod semaphore_waits;

pub use array::{ArrayError, ElementType, HostArray, compare};
pub use debug_print::{PrintRecord, PrintValue, format_line, take_printed};
pub use jit::{EntryPoint, Jit, JitError, OPENMP, RUNNER_UTILS, RawBuffer};
pub use print::format_numpy;
