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
            paths.iter().map(|path| unsafe { mlirStringRefCreateFromCString(path.as_ptr()) }).collect();
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
    pub fn call(&self, entry: &str, arrays: &mut [HostArray]) -> Result<(), JitError> {
        let wrapper = format!("_mlir_ciface_{entry}");
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
        let flag =
            unsafe { mlirExecutionEngineLookup(self.engine, StringRef::new(OUT_OF_BOUNDS_FLAG).to_raw()) } as *mut i32;
        if !flag.is_null() {
            unsafe { flag.write(0) };
        }
        // InvokePacked adds the `_mlir_ciface_` prefix itself.
        let result = unsafe {
            mlirExecutionEngineInvokePacked(self.engine, StringRef::new(entry).to_raw(), arguments.as_mut_ptr())
        };
        if result.value == 0 {
            return Err(JitError::Call(entry.to_string()));
        }
        if !flag.is_null() && unsafe { flag.read() } != 0 {
            return Err(JitError::OutOfBounds);
        }
        Ok(())
    }
}

impl Drop for Jit {
    fn drop(&mut self) {
        unsafe { mlirExecutionEngineDestroy(self.engine) }
    }
}
