//! The XLA FFI handler that runs Tessel kernels inside a `jax.jit`
//! program: XLA's typed custom-call ABI (`xla/ffi/api/c_api.h`, API 0.x),
//! declared here for the few structures the handler reads.
//!
//! A call names its kernel by a content hash (`kernel`) and carries the
//! module text (`module`) and the entry (`entry`) as attributes: kernels
//! prepared while lowering are found in the registry; a program loaded
//! from JAX's persistent cache or `jax.export` compiles its kernel from the
//! text on first use.

use crate::compiler::{self, Compiled};
use std::{
    collections::HashMap,
    ffi::{CString, c_char, c_void},
    sync::{Arc, LazyLock, RwLock},
};
use tessel_dialects::knobs::Settings;
use tessel_runtime::{ElementType, RawBuffer, openmp, pages};

/// The FFI API version this handler is written against.
const API_MAJOR: i32 = 0;
const API_MINOR: i32 = 1;
const EXTENSION_METADATA: i32 = 1;
const STAGE_EXECUTE: i32 = 3;
const ATTRIBUTE_STRING: i32 = 4;
const ERROR_INVALID_ARGUMENT: i32 = 3;
const ERROR_INTERNAL: i32 = 13;

#[repr(C)]
struct ExtensionBase {
    struct_size: usize,
    kind: i32,
    next: *mut ExtensionBase,
}

#[repr(C)]
struct ApiVersion {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    major_version: i32,
    minor_version: i32,
}

#[repr(C)]
struct Metadata {
    struct_size: usize,
    api_version: ApiVersion,
    traits: u32,
    state_type_id: i64,
}

#[repr(C)]
struct MetadataExtension {
    extension_base: ExtensionBase,
    metadata: *mut Metadata,
}

#[repr(C)]
struct ErrorCreateArgs {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    message: *const c_char,
    errc: i32,
}

#[repr(C)]
struct Api {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    api_version: ApiVersion,
    internal_api: *const c_void,
    error_create: unsafe extern "C" fn(*mut ErrorCreateArgs) -> *mut c_void,
}

#[repr(C)]
struct Buffer {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    dtype: i32,
    data: *mut c_void,
    rank: i64,
    dims: *const i64,
}

/// Arguments and results have the same layout.
#[repr(C)]
struct Buffers {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    size: i64,
    types: *const i32,
    buffers: *const *mut Buffer,
}

#[repr(C)]
struct ByteSpan {
    ptr: *const u8,
    len: usize,
}

#[repr(C)]
struct Attributes {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    size: i64,
    types: *const i32,
    names: *const *const ByteSpan,
    values: *const *const c_void,
}

#[repr(C)]
pub struct CallFrame {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    api: *const Api,
    ctx: *mut c_void,
    stage: i32,
    args: Buffers,
    rets: Buffers,
    attrs: Attributes,
    future: *mut c_void,
}

/// A compiled kernel and the entry XLA calls.
pub struct Kernel {
    compiled: Compiled,
    entry: String,
}

/// Kernels by content hash.
static KERNELS: LazyLock<RwLock<HashMap<String, Arc<Kernel>>>> = LazyLock::new(Default::default);

/// Compiles `text` and registers it as kernel `id` (once: a registered id
/// is not compiled again).
pub fn prepare(id: &str, text: &str, name: &str, entry: &str) -> Result<(), compiler::CompileFailure> {
    if KERNELS.read().expect("registry lock").contains_key(id) {
        return Ok(());
    }
    let compiled = compiler::compile(text, name, &Settings::default())?;
    if !compiled.entries.contains_key(entry) {
        return Err(compiler::CompileFailure::Diagnostics(vec![format!(
            "{name}: error: the module has no entry @{entry}"
        )]));
    }
    let kernel = Arc::new(Kernel { compiled, entry: entry.to_string() });
    KERNELS.write().expect("registry lock").entry(id.to_string()).or_insert(kernel);
    Ok(())
}

/// Whether kernel `id` is compiled (tests check the cache is used).
pub fn is_prepared(id: &str) -> bool {
    KERNELS.read().expect("registry lock").contains_key(id)
}

fn element_type(dtype: i32) -> Option<ElementType> {
    Some(match dtype {
        1 => ElementType::I1,
        2 => ElementType::I8,
        3 => ElementType::I16,
        4 => ElementType::I32,
        5 => ElementType::I64,
        6 => ElementType::U8,
        7 => ElementType::U16,
        8 => ElementType::U32,
        9 => ElementType::U64,
        10 => ElementType::F16,
        11 => ElementType::F32,
        12 => ElementType::F64,
        16 => ElementType::BF16,
        _ => return None,
    })
}

/// The string attribute `name` of `frame`.
///
/// # Safety
/// `frame` is a live call frame from XLA.
unsafe fn string_attribute<'a>(frame: &'a CallFrame, name: &str) -> Option<&'a str> {
    let attributes = &frame.attrs;
    for index in 0..attributes.size.max(0) as usize {
        // SAFETY: XLA's attribute arrays have `size` entries; names are byte
        // spans and string attributes byte spans, alive for the call.
        unsafe {
            let key = &**attributes.names.add(index);
            if std::slice::from_raw_parts(key.ptr, key.len) != name.as_bytes() {
                continue;
            }
            if *attributes.types.add(index) != ATTRIBUTE_STRING {
                return None;
            }
            let value = &*(*attributes.values.add(index) as *const ByteSpan);
            return std::str::from_utf8(std::slice::from_raw_parts(value.ptr, value.len)).ok();
        }
    }
    None
}

/// The buffers of `list` (arguments or results).
///
/// # Safety
/// `list` is a live call frame's argument or result list.
unsafe fn buffers(list: &Buffers) -> Vec<&Buffer> {
    // SAFETY: XLA's lists have `size` entries, each a buffer (the only
    // argument and result kind), alive for the call.
    (0..list.size.max(0) as usize).map(|index| unsafe { &**list.buffers.add(index) }).collect()
}

/// Runs the kernel the frame names on its buffers.
///
/// # Safety
/// `frame` is a live call frame from XLA at the execute stage.
unsafe fn execute(frame: &CallFrame) -> Result<(), (i32, String)> {
    // SAFETY: per the contract.
    let attribute = |name| unsafe { string_attribute(frame, name) };
    let id =
        attribute("kernel").ok_or((ERROR_INVALID_ARGUMENT, "tessel: the call has no `kernel` attribute".into()))?;
    let registered = KERNELS.read().expect("registry lock").get(id).cloned();
    let kernel = match registered {
        Some(kernel) => kernel,
        None => {
            let missing = |what| (ERROR_INVALID_ARGUMENT, format!("tessel: the call has no `{what}` attribute"));
            let text = attribute("module").ok_or_else(|| missing("module"))?;
            let entry = attribute("entry").ok_or_else(|| missing("entry"))?;
            prepare(id, text, "<tessel kernel>", entry).map_err(|failure| (ERROR_INTERNAL, failure.to_string()))?;
            KERNELS.read().expect("registry lock").get(id).cloned().expect("just prepared")
        }
    };
    let entry = &kernel.compiled.entries[&kernel.entry];
    // SAFETY: the frame's lists are live for the call.
    let all: Vec<&Buffer> = unsafe { buffers(&frame.args).into_iter().chain(buffers(&frame.rets)).collect() };
    if all.len() != entry.arguments.len() {
        return Err((
            ERROR_INVALID_ARGUMENT,
            format!("tessel: @{} takes {} buffers, the call passed {}", kernel.entry, entry.arguments.len(), all.len()),
        ));
    }
    let results = frame.rets.size.max(0) as usize;
    let first_result = all.len() - results;
    let mut raw = Vec::with_capacity(all.len());
    for (index, (buffer, argument)) in all.iter().zip(&entry.arguments).enumerate() {
        // SAFETY: `dims` has `rank` entries.
        let dims = unsafe { std::slice::from_raw_parts(buffer.dims, buffer.rank.max(0) as usize) };
        if element_type(buffer.dtype) != Some(argument.element) || dims != argument.shape.as_slice() {
            return Err((
                ERROR_INVALID_ARGUMENT,
                format!(
                    "tessel: buffer {index} of @{} is not {:?} {:?}",
                    kernel.entry, argument.element, argument.shape
                ),
            ));
        }
        if index >= first_result {
            let bytes =
                dims.iter().fold(argument.element.size(), |bytes, &extent| bytes.saturating_mul(extent as usize));
            pages::advise_huge_pages(buffer.data.cast(), bytes);
        }
        raw.push(RawBuffer { data: buffer.data.cast(), shape: dims });
    }
    // XLA's threads run the program's next ops right after this returns.
    openmp::spin_briefly_after_calls();
    // SAFETY: the registry keeps the engine alive; each buffer is XLA's
    // row-major device buffer of the argument's element type and shape
    // (checked above), valid for the call; aliased inputs and outputs are
    // the same buffer, which grid.call allows.
    let outcome = unsafe { entry.point.call(&raw) }
        .map_err(|error| (ERROR_INTERNAL, format!("tessel: {}", kernel.compiled.describe(error))));
    let printed = tessel_runtime::take_printed();
    if !printed.is_empty() {
        emit_printed(id, &printed).map_err(|error| (ERROR_INTERNAL, format!("tessel: printing: {error}")))?;
    }
    if kernel.compiled.detects_races() {
        let race = tessel_runtime::race_detection::take_race().map(|race| kernel.compiled.describe_race(&race));
        report_races(race).map_err(|error| (ERROR_INTERNAL, format!("tessel: reporting races: {error}")))?;
    }
    outcome
}

/// Hands a race-detecting call's outcome (its first race, in words, if it
/// raced) to Python, which records it where JAX's tests read it
/// (`tessel.jax._interpret.report_races`).
fn report_races(race: Option<String>) -> Result<(), String> {
    use pyo3::prelude::*;
    pyo3::Python::attach(|py| -> PyResult<()> {
        py.import("tessel.jax._interpret")?.call_method1("report_races", (race,))?;
        Ok(())
    })
    .map_err(|error| error.to_string())
}

/// Hands the lines a kernel printed (`pl.debug_print`) to Python, which
/// formats them as JAX's debug_print does (`tessel.jax._debug.emit`).
fn emit_printed(kernel: &str, printed: &[tessel_runtime::PrintRecord]) -> Result<(), String> {
    use pyo3::{IntoPyObjectExt, prelude::*};
    pyo3::Python::attach(|py| -> PyResult<()> {
        let lines = printed
            .iter()
            .map(|record| {
                let values = record
                    .values
                    .iter()
                    .map(|value| match *value {
                        tessel_runtime::PrintValue::Int(v) => v.into_py_any(py),
                        tessel_runtime::PrintValue::Float32(v) => v.into_py_any(py),
                        tessel_runtime::PrintValue::Float(v) => v.into_py_any(py),
                    })
                    .collect::<PyResult<Vec<_>>>()?;
                Ok((record.site, values))
            })
            .collect::<PyResult<Vec<_>>>()?;
        py.import("tessel.jax._debug")?.call_method1("emit", (kernel, lines))?;
        Ok(())
    })
    .map_err(|error| error.to_string())
}

/// The handler XLA calls (`jax.ffi.register_ffi_target`).
///
/// # Safety
/// Called by XLA with a live call frame.
pub unsafe extern "C" fn handler(frame: *mut CallFrame) -> *mut c_void {
    // SAFETY: XLA passes a live frame.
    let frame = unsafe { &*frame };
    // SAFETY: a non-null extension start points at an extension header.
    if !frame.extension_start.is_null() && unsafe { (*frame.extension_start).kind } == EXTENSION_METADATA {
        // SAFETY: a metadata extension carries a live metadata struct to fill.
        unsafe {
            let extension = &mut *(frame.extension_start as *mut MetadataExtension);
            let metadata = &mut *extension.metadata;
            metadata.api_version = ApiVersion {
                struct_size: std::mem::size_of::<ApiVersion>(),
                extension_start: std::ptr::null_mut(),
                major_version: API_MAJOR,
                minor_version: API_MINOR,
            };
            metadata.traits = 0;
        }
        return std::ptr::null_mut();
    }
    if frame.stage != STAGE_EXECUTE {
        return std::ptr::null_mut();
    }
    // SAFETY: an execute-stage frame, per the contract.
    let outcome = std::panic::catch_unwind(|| unsafe { execute(frame) })
        .unwrap_or_else(|_| Err((ERROR_INTERNAL, "tessel: the kernel call panicked".into())));
    match outcome {
        Ok(()) => std::ptr::null_mut(),
        Err((code, message)) => {
            let message = CString::new(message.replace('\0', " ")).expect("no NUL left");
            let mut args = ErrorCreateArgs {
                struct_size: std::mem::size_of::<ErrorCreateArgs>(),
                extension_start: std::ptr::null_mut(),
                message: message.as_ptr(),
                errc: code,
            };
            // SAFETY: the frame's API table is XLA's; the error copies the message.
            unsafe { ((*frame.api).error_create)(&mut args) }
        }
    }
}
