//! `tessel._tessel`: the native half of the `tessel` Python package.
//! Compiles Tessel modules in process and calls their entries on buffers
//! the Python half has checked; exposes the XLA FFI handler that runs
//! kernels inside `jax.jit` programs.

#![deny(clippy::undocumented_unsafe_blocks)]

mod compiler;
mod knobs;
mod tuning;
mod xla_ffi;

use compiler::{CompileFailure, Compiled};
use pyo3::{exceptions::PyValueError, prelude::*, types::PyDict};
use std::sync::Arc;
use tessel_runtime::RawBuffer;

/// Raises `tessel.CompileError(message, diagnostics)` (defined in Python).
fn compile_error(py: Python<'_>, failure: CompileFailure) -> PyErr {
    let CompileFailure::Diagnostics(diagnostics) = &failure;
    let raised = py
        .import("tessel._errors")
        .and_then(|module| module.getattr("CompileError"))
        .and_then(|class| class.call1((failure.to_string(), diagnostics.clone())));
    match raised {
        Ok(error) => PyErr::from_value(error),
        Err(error) => error,
    }
}

/// One argument as Python sees it: MLIR element type name and shape.
type ArgumentSignature = (String, Vec<i64>);

/// A compiled module: its entries' signatures and a way to call them.
#[pyclass(frozen, module = "tessel._tessel")]
struct NativeModule {
    compiled: Arc<Compiled>,
}

#[pymethods]
impl NativeModule {
    /// `{entry: [(mlir element type, shape), ...]}` in module order.
    fn signatures(&self) -> Vec<(String, Vec<ArgumentSignature>)> {
        self.compiled
            .entries
            .iter()
            .map(|(name, entry)| {
                let arguments = entry
                    .arguments
                    .iter()
                    .map(|argument| (argument.element.mlir_name().to_string(), argument.shape.clone()))
                    .collect();
                (name.clone(), arguments)
            })
            .collect()
    }

    /// Calls `entry` on buffers given as addresses. The caller (the Python
    /// half) has checked each buffer's dtype, shape, contiguity and
    /// writability against the signature and keeps it alive for the call.
    fn call_addresses(&self, py: Python<'_>, entry: &str, addresses: Vec<usize>) -> PyResult<()> {
        let point = self
            .compiled
            .entries
            .get(entry)
            .ok_or_else(|| PyValueError::new_err(format!("the module has no entry @{entry}")))?;
        if addresses.len() != point.arguments.len() {
            return Err(PyValueError::new_err(format!(
                "@{entry} takes {} arrays, got {}",
                point.arguments.len(),
                addresses.len()
            )));
        }
        let compiled = self.compiled.clone();
        let entry = entry.to_string();
        py.detach(move || {
            let point = &compiled.entries[&entry];
            let buffers: Vec<RawBuffer> = addresses
                .iter()
                .zip(&point.arguments)
                .map(|(&address, argument)| RawBuffer { data: address as *mut u8, shape: &argument.shape })
                .collect();
            // SAFETY: `compiled` keeps the engine alive; per this method's
            // contract each address is a live, writable, C-contiguous buffer
            // of the argument's element type and shape.
            unsafe { point.point.call(&buffers) }.map_err(|error| compiled.describe(error))
        })
        .map_err(|error| pyo3::exceptions::PyRuntimeError::new_err(error.to_string()))
    }
}

/// Compiles module `text` (named `name` in diagnostics) for the host CPU
/// with the schedule `knobs` (`{"register_tile": (4, 16), ...}`).
#[pyfunction]
#[pyo3(signature = (text, name, knobs=None))]
fn compile(py: Python<'_>, text: &str, name: &str, knobs: Option<&Bound<'_, PyDict>>) -> PyResult<NativeModule> {
    let settings = match knobs {
        Some(knobs) => knobs::settings(knobs)?,
        None => Default::default(),
    };
    let text = text.to_string();
    let name = name.to_string();
    let compiled = py.detach(move || compiler::compile(&text, &name, &settings)).map_err(|f| compile_error(py, f))?;
    Ok(NativeModule { compiled: Arc::new(compiled) })
}

/// Tunes `entry` of module `text` (`tessel tune`'s search and cache) with
/// `search` = (budget seconds, beam width, use the cache, compile timeout
/// seconds); returns its JSON line.
#[pyfunction]
fn tune(py: Python<'_>, text: &str, name: &str, entry: &str, search: (f64, usize, bool, f64)) -> PyResult<String> {
    let (budget, beam, use_cache, compile_timeout) = search;
    let seconds = |value: f64, what: &str| {
        std::time::Duration::try_from_secs_f64(value)
            .map_err(|_| PyValueError::new_err(format!("{what} must be a non-negative number of seconds")))
    };
    if beam == 0 {
        return Err(PyValueError::new_err("beam must be at least 1"));
    }
    let (budget, compile_timeout) = (seconds(budget, "budget")?, seconds(compile_timeout, "compile_timeout")?);
    let (text, name, entry) = (text.to_string(), name.to_string(), entry.to_string());
    let outcome = py.detach(move || {
        tuning::tune(&tuning::Request {
            text: &text,
            name: &name,
            entry: &entry,
            budget,
            beam,
            use_cache,
            compile_timeout,
        })
    });
    outcome.map_err(|failure| match failure {
        tuning::TuneFailure::Compile(failure) => compile_error(py, failure),
        tuning::TuneFailure::Entry(message) => PyValueError::new_err(message),
        tuning::TuneFailure::Search(error) => pyo3::exceptions::PyRuntimeError::new_err(error.to_string()),
    })
}

/// Compiles kernel module `text` for XLA calls naming `id` (no-op when
/// `id` is compiled already).
#[pyfunction]
fn prepare_kernel(py: Python<'_>, id: &str, text: &str, name: &str, entry: &str) -> PyResult<()> {
    let (id, text, name, entry) = (id.to_string(), text.to_string(), name.to_string(), entry.to_string());
    py.detach(move || xla_ffi::prepare(&id, &text, &name, &entry)).map_err(|f| compile_error(py, f))
}

/// Whether kernel `id` is compiled in this process.
#[pyfunction]
fn is_prepared(id: &str) -> bool {
    xla_ffi::is_prepared(id)
}

/// The XLA FFI handler, for `jax.ffi.pycapsule`: its address.
#[pyfunction]
fn ffi_handler_address() -> usize {
    xla_ffi::handler as *const () as usize
}

/// Names of the schedule knobs `compile` accepts.
#[pyfunction]
fn knob_names() -> Vec<String> {
    knobs::names()
}

#[pymodule]
fn _tessel(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<NativeModule>()?;
    module.add_function(wrap_pyfunction!(compile, module)?)?;
    module.add_function(wrap_pyfunction!(tune, module)?)?;
    module.add_function(wrap_pyfunction!(prepare_kernel, module)?)?;
    module.add_function(wrap_pyfunction!(is_prepared, module)?)?;
    module.add_function(wrap_pyfunction!(ffi_handler_address, module)?)?;
    module.add_function(wrap_pyfunction!(knob_names, module)?)?;
    Ok(())
}
