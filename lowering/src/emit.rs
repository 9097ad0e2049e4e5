//! Code emission for the host: LLVM IR, assembly, object files and shared
//! libraries from a module lowered to the LLVM dialect.
//!
//! LLVM's C API is linked already (statically, with MLIR); the few entry
//! points used here are declared below rather than pulling in a second
//! copy of LLVM through another crate.

use melior::ir::Module;
use std::{
    ffi::{CStr, CString, c_char, c_void},
    path::Path,
    process::Command,
};

type Handle = *mut c_void;

unsafe extern "C" {
    fn LLVMContextCreate() -> Handle;
    fn LLVMContextDispose(context: Handle);
    fn LLVMDisposeModule(module: Handle);
    fn LLVMPrintModuleToString(module: Handle) -> *mut c_char;
    fn LLVMDisposeMessage(message: *mut c_char);
    fn LLVMSetTarget(module: Handle, triple: *const c_char);
    fn LLVMSetModuleDataLayout(module: Handle, layout: Handle);
    fn LLVMCreateTargetDataLayout(machine: Handle) -> Handle;
    fn LLVMDisposeTargetData(layout: Handle);
    fn LLVMGetDefaultTargetTriple() -> *mut c_char;
    fn LLVMGetHostCPUName() -> *mut c_char;
    fn LLVMGetHostCPUFeatures() -> *mut c_char;
    fn LLVMGetTargetFromTriple(triple: *const c_char, target: *mut Handle, error: *mut *mut c_char) -> i32;
    fn LLVMCreateTargetMachine(
        target: Handle,
        triple: *const c_char,
        cpu: *const c_char,
        features: *const c_char,
        level: i32,
        relocation: i32,
        code_model: i32,
    ) -> Handle;
    fn LLVMDisposeTargetMachine(machine: Handle);
    fn LLVMTargetMachineEmitToFile(
        machine: Handle,
        module: Handle,
        path: *const c_char,
        kind: i32,
        error: *mut *mut c_char,
    ) -> i32;
    fn LLVMCreatePassBuilderOptions() -> Handle;
    fn LLVMDisposePassBuilderOptions(options: Handle);
    fn LLVMRunPasses(module: Handle, passes: *const c_char, machine: Handle, options: Handle) -> Handle;
    fn LLVMGetErrorMessage(error: Handle) -> *mut c_char;
    fn LLVMDisposeErrorMessage(message: *mut c_char);
    fn mlirTranslateModuleToLLVMIR(module: mlir_sys::MlirOperation, context: Handle) -> Handle;
    fn LLVMCreateMemoryBufferWithMemoryRangeCopy(data: *const c_char, length: usize, name: *const c_char) -> Handle;
    fn LLVMDisposeMemoryBuffer(buffer: Handle);
    fn LLVMParseBitcodeInContext2(context: Handle, buffer: Handle, module: *mut Handle) -> i32;
}

/// The host CPU's name and features as LLVM sees them (what host code is
/// compiled for; part of the tuner's cache key).
pub fn host_cpu() -> (String, String) {
    tessel_dialects::llvm_target::host_cpu()
}

/// LLVM bitcode as textual LLVM IR.
pub fn bitcode_to_text(bitcode: &[u8]) -> Result<String, EmitError> {
    // SAFETY: the buffer copies `bitcode` (pointer and length of a live
    // slice); the context, buffer and module made here are each disposed
    // of once, on every path, and nothing escapes but the copied text.
    unsafe {
        let context = LLVMContextCreate();
        let name = CString::new("bitcode").unwrap();
        let buffer =
            LLVMCreateMemoryBufferWithMemoryRangeCopy(bitcode.as_ptr() as *const c_char, bitcode.len(), name.as_ptr());
        let mut module = std::ptr::null_mut();
        let failed = LLVMParseBitcodeInContext2(context, buffer, &mut module) != 0;
        LLVMDisposeMemoryBuffer(buffer);
        if failed {
            LLVMContextDispose(context);
            return Err(EmitError::Llvm("invalid bitcode".into()));
        }
        let text = message(LLVMPrintModuleToString(module));
        LLVMDisposeModule(module);
        LLVMContextDispose(context);
        Ok(text)
    }
}

/// What `tessel compile --target cpu` can write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Artifact {
    LlvmIr,
    Assembly,
    Object,
    SharedLibrary,
}

#[derive(Debug, thiserror::Error)]
pub enum EmitError {
    #[error("translation to LLVM IR failed")]
    Translate,
    #[error("LLVM: {0}")]
    Llvm(String),
    #[error("linking failed: {0}")]
    Link(String),
}

/// Takes an LLVM-owned message.
///
/// # Safety
/// `text` is a NUL-terminated string LLVM allocated for the caller (from
/// `LLVMPrintModuleToString`, an error out-parameter, ...), not used after.
unsafe fn message(text: *mut c_char) -> String {
    // SAFETY: the caller passes a live NUL-terminated LLVM string.
    let owned = unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned();
    // SAFETY: LLVM allocated it for us; it is disposed of once, here.
    unsafe { LLVMDisposeMessage(text) };
    owned
}

/// What code is generated for: the host, or `cpu` (LLVM's name) on
/// `triple` (default: the host's triple).
#[derive(Clone, Copy, Debug, Default)]
pub struct CodeTarget<'a> {
    pub triple: Option<&'a str>,
    pub cpu: Option<&'a str>,
}

impl CodeTarget<'_> {
    /// Whether the code runs on this machine's architecture.
    pub fn is_host_arch(&self) -> bool {
        self.triple.is_none_or(|triple| triple.starts_with(std::env::consts::ARCH))
    }
}

/// An LLVM module for its target, optimized at O3, and its target machine.
struct HostModule {
    context: Handle,
    module: Handle,
    machine: Handle,
}

impl HostModule {
    fn new(lowered: &Module, target_of: CodeTarget) -> Result<Self, EmitError> {
        let text =
            |value: Option<&str>| value.map(|value| CString::new(value).map_err(|e| EmitError::Llvm(e.to_string())));
        let (triple_name, cpu_name) = (text(target_of.triple).transpose()?, text(target_of.cpu).transpose()?);
        tessel_dialects::llvm_target::initialize();
        // SAFETY: `lowered` is a live module in the LLVM dialect; every
        // string passed is NUL-terminated and outlives the call; each LLVM
        // object made here is disposed of once (on failure here, on success
        // by `HostModule`'s Drop).
        unsafe {
            let context = LLVMContextCreate();
            let module = mlirTranslateModuleToLLVMIR(lowered.as_operation().to_raw(), context);
            if module.is_null() {
                LLVMContextDispose(context);
                return Err(EmitError::Translate);
            }
            let host_triple = LLVMGetDefaultTargetTriple();
            let triple = triple_name.as_ref().map_or(host_triple as *const c_char, |name| name.as_ptr());
            let mut target = std::ptr::null_mut();
            let mut error = std::ptr::null_mut();
            if LLVMGetTargetFromTriple(triple, &mut target, &mut error) != 0 {
                LLVMDisposeMessage(host_triple);
                LLVMDisposeModule(module);
                LLVMContextDispose(context);
                return Err(EmitError::Llvm(message(error)));
            }
            // A named CPU brings its own features; the host's are detected.
            let (host_cpu, host_features) = (LLVMGetHostCPUName(), LLVMGetHostCPUFeatures());
            let empty = c"";
            let (cpu, features) = match &cpu_name {
                Some(name) => (name.as_ptr(), empty.as_ptr()),
                None if triple_name.is_some() => (c"generic".as_ptr(), empty.as_ptr()),
                None => (host_cpu as *const c_char, host_features as *const c_char),
            };
            // Aggressive optimization, position-independent code (for .so).
            let machine = LLVMCreateTargetMachine(target, triple, cpu, features, 3, 2, 0);
            LLVMSetTarget(module, triple);
            let layout = LLVMCreateTargetDataLayout(machine);
            LLVMSetModuleDataLayout(module, layout);
            LLVMDisposeTargetData(layout);
            for text in [host_triple, host_cpu, host_features] {
                LLVMDisposeMessage(text);
            }
            let host = HostModule { context, module, machine };
            let options = LLVMCreatePassBuilderOptions();
            let passes = CString::new("default<O3>").unwrap();
            let failed = LLVMRunPasses(module, passes.as_ptr(), machine, options);
            LLVMDisposePassBuilderOptions(options);
            if !failed.is_null() {
                let text = LLVMGetErrorMessage(failed);
                let owned = CStr::from_ptr(text).to_string_lossy().into_owned();
                LLVMDisposeErrorMessage(text);
                return Err(EmitError::Llvm(owned));
            }
            Ok(host)
        }
    }

    fn emit(&self, path: &Path, object: bool) -> Result<(), EmitError> {
        let path = CString::new(path.display().to_string()).map_err(|e| EmitError::Llvm(e.to_string()))?;
        let mut error = std::ptr::null_mut();
        let kind = if object { 1 } else { 0 };
        // SAFETY: machine and module live as long as `self`; `path` is a
        // NUL-terminated string; `error` is an out-parameter.
        if unsafe { LLVMTargetMachineEmitToFile(self.machine, self.module, path.as_ptr(), kind, &mut error) } != 0 {
            // SAFETY: on failure LLVM set `error` to a message it owns.
            return Err(EmitError::Llvm(unsafe { message(error) }));
        }
        Ok(())
    }
}

impl Drop for HostModule {
    fn drop(&mut self) {
        // SAFETY: `HostModule` owns the three, made in `new`; the module
        // goes before its context.
        unsafe {
            LLVMDisposeModule(self.module);
            LLVMDisposeTargetMachine(self.machine);
            LLVMContextDispose(self.context);
        }
    }
}

/// Writes `artifact` for a module lowered by `cpu::lower`. A shared library
/// links against LLVM 22's OpenMP runtime and MLIR's C runner utilities
/// (found through an rpath) and exports `_mlir_ciface_<name>` per public
/// function.
pub fn emit(lowered: &Module, artifact: Artifact, path: &Path, target: CodeTarget) -> Result<(), EmitError> {
    if artifact == Artifact::SharedLibrary && !target.is_host_arch() {
        return Err(EmitError::Link(format!(
            "shared libraries are linked for this machine's architecture only, not {}; emit obj instead",
            target.triple.unwrap_or("?")
        )));
    }
    let host = HostModule::new(lowered, target)?;
    match artifact {
        Artifact::LlvmIr => {
            // SAFETY: the module lives in `host`; the printed string is
            // LLVM's, handed to `message`.
            let text = unsafe { message(LLVMPrintModuleToString(host.module)) };
            std::fs::write(path, text).map_err(|e| EmitError::Llvm(e.to_string()))
        }
        Artifact::Assembly => host.emit(path, false),
        Artifact::Object => host.emit(path, true),
        Artifact::SharedLibrary => {
            let object = path.with_extension("tessel.o");
            host.emit(&object, true)?;
            let linked = Command::new("/usr/lib/llvm-22/bin/clang")
                .args(["-shared", "-fuse-ld=lld", "-o"])
                .arg(path)
                .arg(&object)
                .args(["-L/usr/lib/llvm-22/lib", "-lomp", "-lmlir_c_runner_utils", "-Wl,-rpath,/usr/lib/llvm-22/lib"])
                .output()
                .map_err(|e| EmitError::Link(e.to_string()));
            let _ = std::fs::remove_file(&object);
            let linked = linked?;
            if !linked.status.success() {
                return Err(EmitError::Link(String::from_utf8_lossy(&linked.stderr).into_owned()));
            }
            Ok(())
        }
    }
}
