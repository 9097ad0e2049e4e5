//! Calling lowered modules through MLIR's ExecutionEngine (LLVM ORC JIT).

use crate::HostArray;
use melior::{StringRef, ir::Module};
use mlir_sys::{
    MlirExecutionEngine, mlirExecutionEngineCreate, mlirExecutionEngineDestroy, mlirExecutionEngineInvokePacked,
    mlirExecutionEngineLookup, mlirExecutionEngineLookupPacked, mlirStringRefCreateFromCString,
};
use std::ffi::c_void;

use tessel_dialects::OUT_OF_BOUNDS_FLAG;

/// Runtime libraries the compiled code calls into: OpenMP for the parallel
/// grid, MLIR's C runner utilities for strided `memref.copy`.
const LIBRARIES: &[&str] = &["/usr/lib/llvm-22/lib/libomp.so", "/usr/lib/llvm-22/lib/libmlir_c_runner_utils.so"];

#[derive(Debug, thiserror::Error)]
pub enum JitError {
    #[error("the JIT could not compile the module")]
    Compile,
    #[error("no function @{0} with a C interface")]
    UnknownEntry(String),
    #[error("calling @{0} failed")]
    Call(String),
    #[error("a program's block had no element in bounds (Pallas requires one); those programs were skipped")]
    OutOfBounds,
}

/// A JIT-compiled module (in the LLVM dialect, C interfaces emitted).
pub struct Jit {
    engine: MlirExecutionEngine,
}

impl Jit {
    pub fn new(module: &Module, optimization_level: usize) -> Result<Self, JitError> {
        // The C API hands these to LLVM as C strings: keep them NUL-terminated.
        let paths: Vec<std::ffi::CString> =
            LIBRARIES.iter().map(|path| std::ffi::CString::new(*path).unwrap()).collect();
        let libraries: Vec<_> =
            // SAFETY: each path is NUL-terminated and outlives the engine's creation.
            paths.iter().map(|path| unsafe { mlirStringRefCreateFromCString(path.as_ptr()) }).collect();
        // SAFETY: `module` is a live module in the LLVM dialect; `libraries`
        // (and the strings it refers to) outlive the call; a null engine is
        // handled below.
        let engine = unsafe {
            mlirExecutionEngineCreate(
                module.to_raw(),
                optimization_level as i32,
                libraries.len() as i32,
                libraries.as_ptr(),
                false,
                false,
            )
        };
        if engine.ptr.is_null() {
            return Err(JitError::Compile);
        }
        Ok(Self { engine })
    }

    /// Calls `entry(memref, ...)` with one host array per argument, in place.
    /// The arrays must have the element types and shapes of `entry`'s memref
    /// arguments, in order (callers make them from the function's signature,
    /// as `tessel run` does): the engine cannot check what compiled code reads.
    pub fn call(&self, entry: &str, arrays: &mut [HostArray]) -> Result<(), JitError> {
        let wrapper = format!("_mlir_ciface_{entry}");
        // SAFETY: the engine is live (owned by `self`); the name outlives the call.
        let found = unsafe { mlirExecutionEngineLookupPacked(self.engine, StringRef::new(&wrapper).to_raw()) };
        if found.is_null() {
            return Err(JitError::UnknownEntry(entry.to_string()));
        }
        // A ranked memref descriptor: {allocated, aligned, offset, sizes[r],
        // strides[r]}, all 64-bit; the C interface takes a pointer to it and
        // the packed call a pointer to that pointer.
        let mut descriptors: Vec<Vec<i64>> = arrays
            .iter_mut()
            .map(|array| {
                let pointer = array.as_mut_ptr() as i64;
                let shape: Vec<i64> = array.shape.iter().map(|&d| d as i64).collect();
                let mut strides = vec![1i64; shape.len()];
                for d in (0..shape.len().saturating_sub(1)).rev() {
                    strides[d] = strides[d + 1] * shape[d + 1];
                }
                [pointer, pointer, 0].into_iter().chain(shape).chain(strides).collect()
            })
            .collect();
        let mut pointers: Vec<*mut c_void> = descriptors.iter_mut().map(|d| d.as_mut_ptr().cast()).collect();
        let mut arguments: Vec<*mut c_void> = pointers.iter_mut().map(|p| (p as *mut *mut c_void).cast()).collect();
        // Compiled code raises this flag for blocks it could only check at run
        // time (see grid-to-loops).
        let name = StringRef::new(OUT_OF_BOUNDS_FLAG).to_raw();
        // SAFETY: as for the entry's lookup.
        let flag = unsafe { mlirExecutionEngineLookup(self.engine, name) } as *mut i32;
        if !flag.is_null() {
            // SAFETY: the symbol is the compiled module's i32 global.
            unsafe { flag.write(0) };
        }
        // InvokePacked adds the `_mlir_ciface_` prefix itself.
        // SAFETY: `arguments` holds one pointer per array to a pointer to
        // its memref descriptor, all alive until the call returns; each
        // descriptor describes its array's own buffer (shape and row-major
        // strides), which matches the argument per `call`'s contract.
        let result = unsafe {
            mlirExecutionEngineInvokePacked(self.engine, StringRef::new(entry).to_raw(), arguments.as_mut_ptr())
        };
        if result.value == 0 {
            return Err(JitError::Call(entry.to_string()));
        }
        // SAFETY: as for the write above.
        if !flag.is_null() && unsafe { flag.read() } != 0 {
            return Err(JitError::OutOfBounds);
        }
        Ok(())
    }
}

impl Drop for Jit {
    fn drop(&mut self) {
        // SAFETY: `Jit` owns the engine; it is destroyed once.
        unsafe { mlirExecutionEngineDestroy(self.engine) }
    }
}
