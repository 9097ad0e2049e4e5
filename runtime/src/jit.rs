//! Calling lowered modules through MLIR's ExecutionEngine (LLVM ORC JIT).

use crate::HostArray;
use melior::{StringRef, ir::Module};
use mlir_sys::{
    MlirExecutionEngine, mlirExecutionEngineCreate, mlirExecutionEngineDestroy, mlirExecutionEngineLookup,
    mlirExecutionEngineLookupPacked, mlirExecutionEngineRegisterSymbol, mlirStringRefCreateFromCString,
};
use std::ffi::c_void;

use tessel_dialects::{
    ACCESS_FAULT, BLOCK_OPERANDS, BOUNDS_FAULT, CHECKED_ACCESSES, OUT_OF_BOUNDS_FLAG, PRINT_FORMATS, PRINT_FUNCTIONS,
    RACE_SITES, REF_ACCESSES, SEMAPHORE_WAITS, WAIT_FAULT,
};

/// OpenMP, which runs the parallel grid of compiled code.
pub const OPENMP: &str = "/usr/lib/llvm-22/lib/libomp.so";
/// MLIR's C runner utilities (strided `memref.copy` of lowerings Tessel
/// does not rewrite). They link libMLIR and libLLVM: processes that hold
/// an LLVM of their own (a JAX process) must not load them.
pub const RUNNER_UTILS: &str = "/usr/lib/llvm-22/lib/libmlir_c_runner_utils.so";
/// What `Jit::new` loads.
const LIBRARIES: &[&str] = &[OPENMP, RUNNER_UTILS];

#[derive(Debug, thiserror::Error)]
pub enum JitError {
    #[error("the JIT could not compile the module")]
    Compile,
    #[error("no function @{0} with a C interface")]
    UnknownEntry(String),
    #[error("calling @{0} failed")]
    Call(String),
    /// A program's block had no element in its array (the flag holds the
    /// operand's code in the module's `BLOCK_OPERANDS`).
    #[error(
        "Out-of-bounds block index in a program for {}: its block has no element in the array (Pallas \
         requires one); those programs were skipped",
        .operand.as_deref().unwrap_or("an operand")
    )]
    OutOfBounds { code: i32, operand: Option<String> },
    /// A kernel's ref access fell outside the ref, under
    /// `tessel.out_of_bounds_reads` (the site's text says which and where).
    #[error("{}", .access.as_deref().unwrap_or("Out-of-bounds access of a ref (an unlisted access)"))]
    AccessOutOfBounds { site: i64, access: Option<String> },
    /// `TESSEL_CPU` names a CPU the JIT cannot target on this host.
    #[error("{0}")]
    Cpu(String),
    /// A checked load or store (the emulated GPU's kernels; CPU code under
    /// `tessel run --bounds-checks`) fell outside the memory it addresses:
    /// a bug of the compiler.
    #[error(
        "compiled code accessed memory outside its buffer (a compiler bug; the access was skipped): {}",
        .access.as_deref().unwrap_or("an unlisted access")
    )]
    BoundsFault { site: i64, access: Option<String> },
    /// A semaphore wait (a DMA's, or `pl.semaphore_wait`) found its
    /// worker's count short, and nothing else can signal it: the kernel
    /// would have waited forever (the wait was skipped).
    #[error(
        "a semaphore wait can never be satisfied (its count is short and nothing else signals it): {}",
        .wait.as_deref().unwrap_or("an unlisted wait")
    )]
    UnsatisfiedWait { site: i64, wait: Option<String> },
    /// A core mesh's semaphore wait did not see its count reach what it
    /// needs before the wait timeout (`TESSEL_WAIT_TIMEOUT`) passed: no
    /// core signalled it enough.
    #[error(
        "a semaphore wait timed out after {seconds} s (no core signalled it enough; TESSEL_WAIT_TIMEOUT sets \
         the limit): {}",
        .wait.as_deref().unwrap_or("an unlisted wait")
    )]
    WaitTimedOut { site: i64, wait: Option<String>, seconds: f64 },
}

/// `TESSEL_JIT_OBJECT`: where to write the JIT's object code once an entry
/// is looked up (to read what the JIT generated, e.g. under `TESSEL_CPU`).
fn object_dump() -> Option<String> {
    std::env::var("TESSEL_JIT_OBJECT").ok().filter(|path| !path.is_empty())
}

/// Makes every function defined in `module` code for the CPU `name`
/// (`TESSEL_CPU`), through the LLVM function attributes that override the
/// JIT's host target machine.
fn target_cpu(module: &Module, name: &str) -> Result<(), JitError> {
    use mlir_sys::*;
    let (cpu, features) = tessel_dialects::jit_cpu::function_attributes(name);
    // SAFETY: `module` is a live module the caller hands over for
    // compilation: its context parses the attributes (null when they do
    // not parse, checked), its body's ops are walked in order, and setting
    // an attribute on one neither moves nor erases any op.
    unsafe {
        let context = mlirModuleGetContext(module.to_raw());
        let parse = |text: &str| {
            let attribute = mlirAttributeParseGet(context, StringRef::new(text).to_raw());
            if attribute.ptr.is_null() { Err(JitError::Cpu(format!("bad attribute {text}"))) } else { Ok(attribute) }
        };
        let (cpu, features) = (parse(&cpu)?, parse(&features)?);
        let mut operation = mlirBlockGetFirstOperation(mlirModuleGetBody(module.to_raw()));
        while !operation.ptr.is_null() {
            let name = mlirIdentifierStr(mlirOperationGetName(operation));
            let is_function = std::slice::from_raw_parts(name.data.cast::<u8>(), name.length) == b"llvm.func";
            let is_definition = mlirOperationGetNumRegions(operation) > 0
                && !mlirRegionGetFirstBlock(mlirOperationGetRegion(operation, 0)).ptr.is_null();
            if is_function && is_definition {
                mlirOperationSetAttributeByName(operation, StringRef::new("target_cpu").to_raw(), cpu);
                mlirOperationSetAttributeByName(operation, StringRef::new("target_features").to_raw(), features);
            }
            operation = mlirOperationGetNextInBlock(operation);
        }
    }
    Ok(())
}

/// A buffer an entry is called on: row-major, of the entry's element type.
#[derive(Clone, Copy, Debug)]
pub struct RawBuffer<'a> {
    pub data: *mut u8,
    pub shape: &'a [i64],
}

/// A compiled entry, looked up once: calling it costs no symbol lookup.
#[derive(Clone, Copy, Debug)]
pub struct EntryPoint {
    packed: unsafe extern "C" fn(*mut *mut c_void),
    out_of_bounds: *mut i32,
    /// The bounds checks' fault global (null when the module has none).
    fault: *mut i64,
    /// The ref access checks' fault global (null when the module has none).
    access_fault: *mut i64,
    /// The semaphore waits' fault global (null when the module has none).
    wait_fault: *mut i64,
    /// Whether the module prints (`block.print`): its calls run one at a
    /// time and leave their lines to the caller (`take_printed`).
    prints: bool,
}

// SAFETY: an entry point is a code address and the addresses of the module's
// flag globals, all immutable for the engine's life; compiled code takes
// no thread-local state, so any thread may call it.
unsafe impl Send for EntryPoint {}
// SAFETY: as for Send: nothing is mutated through `&EntryPoint`.
unsafe impl Sync for EntryPoint {}

impl EntryPoint {
    /// Calls the entry on `buffers`, in place.
    ///
    /// # Safety
    /// The engine that made this entry point is alive, and `buffers` has one
    /// buffer per argument of the entry, each of the argument's element type
    /// and shape, valid for reads and writes of its whole extent.
    pub unsafe fn call(&self, buffers: &[RawBuffer]) -> Result<(), JitError> {
        // A ranked memref descriptor: {allocated, aligned, offset, sizes[r],
        // strides[r]}, all 64-bit; the C interface takes a pointer to it and
        // the packed call a pointer to that pointer.
        let mut descriptors: Vec<Vec<i64>> = buffers
            .iter()
            .map(|buffer| {
                let pointer = buffer.data as i64;
                let mut strides = vec![1i64; buffer.shape.len()];
                for d in (0..buffer.shape.len().saturating_sub(1)).rev() {
                    strides[d] = strides[d + 1] * buffer.shape[d + 1];
                }
                [pointer, pointer, 0].into_iter().chain(buffer.shape.iter().copied()).chain(strides).collect()
            })
            .collect();
        let mut pointers: Vec<*mut c_void> = descriptors.iter_mut().map(|d| d.as_mut_ptr().cast()).collect();
        let mut arguments: Vec<*mut c_void> = pointers.iter_mut().map(|p| (p as *mut *mut c_void).cast()).collect();
        if !self.out_of_bounds.is_null() {
            // SAFETY: the flag is the live module's i32 global.
            unsafe { self.out_of_bounds.write(0) };
        }
        for fault in [self.fault, self.wait_fault, self.access_fault] {
            if !fault.is_null() {
                // SAFETY: a fault is one of the live module's i64 globals.
                unsafe { fault.write(0) };
            }
        }
        crate::dma_queue::begin_call();
        crate::race_detection::begin_call();
        let printing = self.prints.then(|| {
            let guard = crate::debug_print::PRINTING_CALL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            crate::debug_print::clear();
            guard
        });
        // SAFETY: `arguments` holds one pointer per buffer to a pointer to
        // its descriptor, alive until the call returns; per the contract the
        // buffers match the entry's arguments and the engine is alive.
        unsafe { (self.packed)(arguments.as_mut_ptr()) };
        if printing.is_some() {
            crate::debug_print::keep_for_caller();
        }
        drop(printing);
        // SAFETY: as for the write above.
        let code = if self.out_of_bounds.is_null() { 0 } else { unsafe { self.out_of_bounds.read() } };
        if code != 0 {
            return Err(JitError::OutOfBounds { code, operand: None });
        }
        // SAFETY: as for the write above.
        let site = if self.access_fault.is_null() { 0 } else { unsafe { self.access_fault.read() } };
        if site != 0 {
            return Err(JitError::AccessOutOfBounds { site, access: None });
        }
        // SAFETY: as for the write above.
        let site = if self.fault.is_null() { 0 } else { unsafe { self.fault.read() } };
        if site != 0 {
            return Err(JitError::BoundsFault { site, access: None });
        }
        // SAFETY: as for the write above.
        let site = if self.wait_fault.is_null() { 0 } else { unsafe { self.wait_fault.read() } };
        if site < 0 {
            let seconds = crate::semaphore_waits::timeout().as_secs_f64();
            return Err(JitError::WaitTimedOut { site: -site, wait: None, seconds });
        }
        if site != 0 {
            return Err(JitError::UnsatisfiedWait { site, wait: None });
        }
        Ok(())
    }
}

/// A JIT-compiled module (in the LLVM dialect, C interfaces emitted).
pub struct Jit {
    engine: MlirExecutionEngine,
    /// The module's checked accesses (its `tessel.checked_accesses`), by
    /// site - 1.
    accesses: Vec<String>,
    /// The module's semaphore waits (its `tessel.semaphore_waits`), by site - 1.
    waits: Vec<String>,
    /// The operands whose blocks are checked (`tessel.block_operands`), by code - 1.
    block_operands: Vec<String>,
    /// The checked ref accesses (`tessel.ref_accesses`), by site - 1.
    ref_accesses: Vec<String>,
    /// The module's print formats (its `tessel.print_formats`), by site.
    formats: Vec<String>,
    /// Whether the module detects races (`tessel.detect_races`).
    detects_races: bool,
    /// The accesses the race detector watches (`tessel.race_sites`), by site - 1.
    race_sites: Vec<String>,
    /// The print sites' value types (`tessel.print_types`), by site.
    print_types: Vec<String>,
}

/// The text of site `site` (counted from 1) in a module's list `sites`.
fn listed(sites: &[String], site: i64) -> Option<String> {
    usize::try_from(site - 1).ok().and_then(|k| sites.get(k)).cloned()
}

/// The strings of `module`'s list attribute `name` (none without it).
fn module_strings(module: &Module, name: &str) -> Vec<String> {
    // SAFETY: the module's operation is live while `module` is borrowed.
    unsafe { tessel_dialects::RawOp::from_raw(module.as_operation().to_raw()) }.strings(name)
}

impl Jit {
    pub fn new(module: &Module, optimization_level: usize) -> Result<Self, JitError> {
        Self::with_libraries(module, optimization_level, LIBRARIES)
    }

    /// Like `new`, loading only `libraries` (shared objects) for the
    /// compiled code's external calls.
    pub fn with_libraries(module: &Module, optimization_level: usize, libraries: &[&str]) -> Result<Self, JitError> {
        if let Some(cpu) = tessel_dialects::jit_cpu::requested().map_err(JitError::Cpu)? {
            target_cpu(module, &cpu)?;
        }
        // The C API hands these to LLVM as C strings: keep them NUL-terminated.
        let paths: Vec<std::ffi::CString> =
            libraries.iter().map(|path| std::ffi::CString::new(*path).unwrap()).collect();
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
                object_dump().is_some(),
                false,
            )
        };
        if engine.ptr.is_null() {
            return Err(JitError::Compile);
        }
        let (accesses, waits) = (module_strings(module, CHECKED_ACCESSES), module_strings(module, SEMAPHORE_WAITS));
        let (block_operands, ref_accesses) =
            (module_strings(module, BLOCK_OPERANDS), module_strings(module, REF_ACCESSES));
        let formats = module_strings(module, PRINT_FORMATS);
        let print_types = module_strings(module, tessel_dialects::PRINT_TYPES);
        // SAFETY: the module's operation is live while `module` is borrowed.
        let module_op = unsafe { tessel_dialects::RawOp::from_raw(module.as_operation().to_raw()) };
        let detects_races = tessel_dialects::knobs::DETECT_RACES.integer_or(module_op, 0) == 1;
        let race_sites = module_strings(module, RACE_SITES);
        // Kernels allocate through a per-thread cache of freed blocks (see
        // kernel_alloc.rs). Registered before the first lookup, which is
        // when the module's references resolve.
        let allocators: [(&str, *mut c_void); 3] = [
            ("malloc", crate::kernel_alloc::kernel_malloc as *mut c_void),
            ("aligned_alloc", crate::kernel_alloc::kernel_aligned_alloc as *mut c_void),
            ("free", crate::kernel_alloc::kernel_free as *mut c_void),
        ];
        for (name, function) in allocators {
            // SAFETY: the engine is live and nothing was looked up yet; each
            // function has the C signature of the symbol it replaces.
            unsafe { mlirExecutionEngineRegisterSymbol(engine, StringRef::new(name).to_raw(), function) };
        }
        let [begin, int, single, double, end] = PRINT_FUNCTIONS;
        let printers: [(&str, *mut c_void); 5] = [
            (begin, crate::debug_print::print_begin as *mut c_void),
            (int, crate::debug_print::print_i64 as *mut c_void),
            (single, crate::debug_print::print_f32 as *mut c_void),
            (double, crate::debug_print::print_f64 as *mut c_void),
            (end, crate::debug_print::print_end as *mut c_void),
        ];
        for (name, function) in printers {
            // SAFETY: the engine is live and nothing was looked up yet; each
            // function has the C signature block-to-linalg declares for it
            // (`prints::declarations`).
            unsafe { mlirExecutionEngineRegisterSymbol(engine, StringRef::new(name).to_raw(), function) };
        }
        let [deadline, pause] = tessel_dialects::WAIT_FUNCTIONS;
        let waiters: [(&str, *mut c_void); 2] = [
            (deadline, crate::semaphore_waits::wait_deadline as *mut c_void),
            (pause, crate::semaphore_waits::wait_pause as *mut c_void),
        ];
        for (name, function) in waiters {
            // SAFETY: the engine is live and nothing was looked up yet; each
            // function has the C signature block-to-linalg declares for it
            // (`semaphores::wait_declarations`: `() -> i64`, `(i64) -> i1`).
            unsafe { mlirExecutionEngineRegisterSymbol(engine, StringRef::new(name).to_raw(), function) };
        }
        // DMAs that copy on waits: one start function per element type (one
        // C signature: the element's code is an argument), the wait and the
        // forgetting of a worker's queues.
        let [start, wait, forget] = tessel_dialects::DMA_FUNCTIONS;
        let mut queue: Vec<(String, *mut c_void)> = tessel_dialects::DMA_ELEMENTS
            .iter()
            .map(|element| (format!("{start}{element}"), crate::dma_queue::dma_start as *mut c_void))
            .collect();
        queue.push((wait.to_string(), crate::dma_queue::dma_wait as *mut c_void));
        queue.push((forget.to_string(), crate::dma_queue::dma_forget as *mut c_void));
        // The race detector's: one DMA and one access function per
        // element type (one C signature each), and the wait.
        let [race_dma, race_access, race_wait, race_signal] = tessel_dialects::RACE_FUNCTIONS;
        for element in tessel_dialects::DMA_ELEMENTS {
            queue.push((format!("{race_dma}{element}"), crate::race_detection::race_dma as *mut c_void));
            queue.push((format!("{race_access}{element}"), crate::race_detection::race_access as *mut c_void));
        }
        queue.push((race_wait.to_string(), crate::race_detection::race_wait as *mut c_void));
        queue.push((race_signal.to_string(), crate::race_detection::race_signal as *mut c_void));
        for (name, function) in &queue {
            // SAFETY: the engine is live and nothing was looked up yet; each
            // function has the C signature of its declaration (dma_on_wait.rs,
            // grid/cores.rs, tessel_detect_races.rs), unranked memrefs passed
            // as (rank, descriptor).
            unsafe { mlirExecutionEngineRegisterSymbol(engine, StringRef::new(name).to_raw(), *function) };
        }
        Ok(Self {
            engine,
            accesses,
            waits,
            block_operands,
            ref_accesses,
            formats,
            print_types,
            detects_races,
            race_sites,
        })
    }

    /// The compiled `entry` (a function with a C interface).
    pub fn entry(&self, entry: &str) -> Result<EntryPoint, JitError> {
        let wrapper = format!("_mlir_ciface_{entry}");
        // SAFETY: the engine is live (owned by `self`); the name outlives the call.
        let found = unsafe { mlirExecutionEngineLookupPacked(self.engine, StringRef::new(&wrapper).to_raw()) };
        if let Some(path) = object_dump().filter(|_| !found.is_null()) {
            // SAFETY: the engine is live and was created with object dumps
            // enabled (the variable is read the same way both times); the
            // path outlives the call.
            unsafe { mlir_sys::mlirExecutionEngineDumpToObjectFile(self.engine, StringRef::new(&path).to_raw()) };
        }
        if found.is_null() {
            return Err(JitError::UnknownEntry(entry.to_string()));
        }
        // Compiled code raises this flag for blocks it could only check at
        // run time (see grid-to-loops).
        // SAFETY: as for the entry's lookup.
        let flag = unsafe { mlirExecutionEngineLookup(self.engine, StringRef::new(OUT_OF_BOUNDS_FLAG).to_raw()) };
        // SAFETY: as for the entry's lookup.
        let fault = unsafe { mlirExecutionEngineLookup(self.engine, StringRef::new(BOUNDS_FAULT).to_raw()) };
        // SAFETY: as for the entry's lookup.
        let wait_fault = unsafe { mlirExecutionEngineLookup(self.engine, StringRef::new(WAIT_FAULT).to_raw()) };
        // SAFETY: as for the entry's lookup.
        let access_fault = unsafe { mlirExecutionEngineLookup(self.engine, StringRef::new(ACCESS_FAULT).to_raw()) };
        // SAFETY: the engine's packed wrappers (`_mlir_<name>`, which
        // LookupPacked finds) all have the signature `void(void**)`.
        let packed = unsafe { std::mem::transmute::<*mut c_void, unsafe extern "C" fn(*mut *mut c_void)>(found) };
        Ok(EntryPoint {
            packed,
            out_of_bounds: flag.cast(),
            fault: fault.cast(),
            wait_fault: wait_fault.cast(),
            access_fault: access_fault.cast(),
            prints: !self.formats.is_empty(),
        })
    }

    /// Calls `entry(memref, ...)` with one host array per argument, in place.
    /// The arrays must have the element types and shapes of `entry`'s memref
    /// arguments, in order (callers make them from the function's signature,
    /// as `tessel run` does): the engine cannot check what compiled code reads.
    pub fn call(&self, entry: &str, arrays: &mut [HostArray]) -> Result<(), JitError> {
        let point = self.entry(entry)?;
        let shapes: Vec<Vec<i64>> = arrays.iter().map(|a| a.shape.iter().map(|&d| d as i64).collect()).collect();
        let buffers: Vec<RawBuffer> = arrays
            .iter_mut()
            .zip(&shapes)
            .map(|(array, shape)| RawBuffer { data: array.as_mut_ptr(), shape })
            .collect();
        // SAFETY: `self` keeps the engine alive; each array owns a buffer of
        // its shape, which matches the entry's arguments per the contract above.
        let outcome = unsafe { point.call(&buffers) }.map_err(|error| self.describe(error));
        for record in crate::debug_print::take_printed() {
            println!("{}", self.format_printed(&record));
        }
        outcome
    }

    /// Whether the module detects races (`tessel.detect_races`): its calls
    /// report whether they raced (`race_detection::take_race`).
    pub fn detects_races(&self) -> bool {
        self.detects_races
    }

    /// What `race` was, in words: its two accesses and their lines.
    pub fn describe_race(&self, race: &crate::race_detection::Race) -> String {
        let site = |site: i64| listed(&self.race_sites, site).unwrap_or_else(|| format!("access #{site}"));
        let verb = |writes: bool| if writes { "writes" } else { "reads" };
        let unordered = if race.between_cores {
            "on another core, and no semaphore orders the two"
        } else {
            "before a wait on that DMA's semaphore saw it complete"
        };
        format!(
            "{} {} bytes that {} {}, {unordered}",
            site(race.later),
            verb(race.later_writes),
            site(race.earlier),
            verb(race.earlier_writes),
        )
    }

    /// A printed line as its site's format says.
    pub fn format_printed(&self, record: &crate::debug_print::PrintRecord) -> String {
        let types = self.print_types.get(record.site).map_or("", String::as_str);
        let texts = crate::debug_print::value_texts(&record.values, types);
        crate::debug_print::format_line(self.formats.get(record.site).map_or("", String::as_str), &texts)
    }

    /// `error` with the site of a fault described (an entry point's faults
    /// carry only the site's number).
    pub fn describe(&self, error: JitError) -> JitError {
        match error {
            JitError::BoundsFault { site, .. } => JitError::BoundsFault { site, access: listed(&self.accesses, site) },
            JitError::OutOfBounds { code, .. } => {
                JitError::OutOfBounds { code, operand: listed(&self.block_operands, code.into()) }
            }
            JitError::AccessOutOfBounds { site, .. } => {
                JitError::AccessOutOfBounds { site, access: listed(&self.ref_accesses, site) }
            }
            JitError::UnsatisfiedWait { site, .. } => {
                JitError::UnsatisfiedWait { site, wait: listed(&self.waits, site) }
            }
            JitError::WaitTimedOut { site, seconds, .. } => {
                JitError::WaitTimedOut { site, wait: listed(&self.waits, site), seconds }
            }
            other => other,
        }
    }
}

impl Drop for Jit {
    fn drop(&mut self) {
        // SAFETY: `Jit` owns the engine; it is destroyed once.
        unsafe { mlirExecutionEngineDestroy(self.engine) }
    }
}
