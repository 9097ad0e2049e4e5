//! The LLVM targets Tessel generates CPU code for (x86-64 and AArch64), and
//! what LLVM knows about a CPU: the host's name and features, and an
//! instruction's latency and throughput in the CPU's scheduling model.
//!
//! LLVM's C API is linked already (statically, with MLIR); the few entry
//! points used here are declared below rather than pulling in a second copy
//! of LLVM through another crate.

use std::ffi::{CStr, c_char};

unsafe extern "C" {
    fn LLVMDisposeMessage(message: *mut c_char);
    fn LLVMGetDefaultTargetTriple() -> *mut c_char;
    fn LLVMGetHostCPUName() -> *mut c_char;
    fn LLVMGetHostCPUFeatures() -> *mut c_char;
    fn LLVMInitializeX86TargetInfo();
    fn LLVMInitializeX86Target();
    fn LLVMInitializeX86TargetMC();
    fn LLVMInitializeX86AsmPrinter();
    fn LLVMInitializeAArch64TargetInfo();
    fn LLVMInitializeAArch64Target();
    fn LLVMInitializeAArch64TargetMC();
    fn LLVMInitializeAArch64AsmPrinter();
}

/// Registers the x86-64 and AArch64 targets with LLVM (idempotent).
pub fn initialize() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    // SAFETY: LLVM's target initializers only register the targets in
    // LLVM's registry; `Once` runs them one time.
    ONCE.call_once(|| unsafe {
        LLVMInitializeX86TargetInfo();
        LLVMInitializeX86Target();
        LLVMInitializeX86TargetMC();
        LLVMInitializeX86AsmPrinter();
        LLVMInitializeAArch64TargetInfo();
        LLVMInitializeAArch64Target();
        LLVMInitializeAArch64TargetMC();
        LLVMInitializeAArch64AsmPrinter();
    });
}

/// An LLVM-owned string, copied and disposed of.
///
/// # Safety
/// `text` is a NUL-terminated string LLVM allocated, not used afterwards.
unsafe fn owned(text: *mut c_char) -> String {
    // SAFETY: as the caller promises.
    unsafe {
        let copy = CStr::from_ptr(text).to_string_lossy().into_owned();
        LLVMDisposeMessage(text);
        copy
    }
}

/// The host CPU's name and features as LLVM sees them (what host code is
/// compiled for), detected once.
pub fn host_cpu() -> (String, String) {
    static HOST: std::sync::OnceLock<(String, String)> = std::sync::OnceLock::new();
    // SAFETY: both calls return fresh LLVM-owned strings, copied and
    // disposed of once.
    HOST.get_or_init(|| unsafe { (owned(LLVMGetHostCPUName()), owned(LLVMGetHostCPUFeatures())) }).clone()
}

/// The host's target triple.
pub fn host_triple() -> String {
    static TRIPLE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    // SAFETY: a fresh LLVM-owned string, copied and disposed of once.
    TRIPLE.get_or_init(|| unsafe { owned(LLVMGetDefaultTargetTriple()) }).clone()
}

/// Answers already given, by question: LLVM's lookups scan every opcode or
/// build subtargets, and the model asks the same questions over and over.
type Answers<K, V> = std::sync::Mutex<Vec<(K, V)>>;

/// The answer to `key` in `known`, asking `answer` the first time.
fn remembered<K: PartialEq, V: Clone>(known: &Answers<K, V>, key: K, answer: impl FnOnce() -> V) -> V {
    let mut known = known.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((_, value)) = known.iter().find(|(seen, _)| *seen == key) {
        return value.clone();
    }
    let value = answer();
    known.push((key, value.clone()));
    value
}

/// The latency (cycles) and reciprocal throughput (cycles per
/// instruction) of `instruction` (an LLVM opcode name such as
/// `VFMADD231PSZr`) in LLVM's scheduling model of `cpu` (with `features`)
/// on `triple`; `None` when LLVM has no such model or instruction.
pub fn instruction_timing(triple: &str, cpu: &str, features: &str, instruction: &str) -> Option<(i64, f64)> {
    static KNOWN: Answers<[String; 4], Option<(i64, f64)>> = std::sync::Mutex::new(Vec::new());
    let key = [triple, cpu, features, instruction].map(str::to_string);
    remembered(&KNOWN, key, || look_up_timing(triple, cpu, features, instruction))
}

fn look_up_timing(triple: &str, cpu: &str, features: &str, instruction: &str) -> Option<(i64, f64)> {
    initialize();
    let text = |value: &str| melior::StringRef::new(value).to_raw();
    let (mut latency, mut reciprocal) = (0i64, 0f64);
    // SAFETY: the strings outlive the call (the C++ side copies what it
    // keeps); the outputs are valid for writes; the targets are registered.
    let found = unsafe {
        crate::ffi::tesselInstructionTiming(
            text(triple),
            text(cpu),
            text(features),
            text(instruction),
            &mut latency,
            &mut reciprocal,
        )
    };
    (found && latency > 0 && reciprocal > 0.0).then_some((latency, reciprocal))
}

/// How the CPU LLVM calls `cpu` on `triple` differs from the host (its
/// features, `host_features` in LLVM's "+a,-b" form): the host's features
/// it lacks, and the features it has that the host lacks (only features
/// the host's list names). `None` when LLVM does not know the CPU.
pub fn cpu_differences(triple: &str, cpu: &str, host_features: &str) -> Option<CpuDifferences> {
    static KNOWN: Answers<[String; 3], Option<CpuDifferences>> = std::sync::Mutex::new(Vec::new());
    let key = [triple, cpu, host_features].map(str::to_string);
    remembered(&KNOWN, key, || compare_cpu(triple, cpu, host_features))
}

fn compare_cpu(triple: &str, cpu: &str, host_features: &str) -> Option<CpuDifferences> {
    unsafe extern "C" fn collect(feature: mlir_sys::MlirStringRef, host_has: bool, data: *mut std::ffi::c_void) {
        // SAFETY: `data` is the `CpuDifferences` `cpu_differences` passes,
        // alive and not otherwise borrowed during the call; `feature` points
        // at `length` bytes of the feature list, alive during the call.
        unsafe {
            let differences = &mut *(data as *mut CpuDifferences);
            let bytes = std::slice::from_raw_parts(feature.data as *const u8, feature.length);
            let name = String::from_utf8_lossy(bytes).into_owned();
            if host_has { differences.host_only.push(name) } else { differences.cpu_only.push(name) }
        }
    }
    initialize();
    let text = |value: &str| melior::StringRef::new(value).to_raw();
    let mut differences = CpuDifferences::default();
    // SAFETY: the strings outlive the call; `collect` gets a pointer to
    // `differences`, which lives across the call and is not used otherwise
    // until it returns.
    let known = unsafe {
        crate::ffi::tesselCompareCpuFeatures(
            text(triple),
            text(cpu),
            text(host_features),
            collect,
            &mut differences as *mut CpuDifferences as *mut std::ffi::c_void,
        )
    };
    known.then_some(differences)
}

/// See [`cpu_differences`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuDifferences {
    /// Features the host has and the CPU lacks.
    pub host_only: Vec<String>,
    /// Features the CPU has and the host lacks.
    pub cpu_only: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fma_timings_come_from_llvm_models() {
        let (latency, reciprocal) =
            instruction_timing("x86_64-unknown-linux-gnu", "znver3", "", "VFMADD231PSYr").expect("Zen 3's model");
        assert!((3..=6).contains(&latency), "{latency}");
        assert!(reciprocal <= 1.0, "{reciprocal}");
        assert!(instruction_timing("x86_64-unknown-linux-gnu", "skylake-avx512", "", "VFMADD231PSZr").is_some());
        assert!(instruction_timing("aarch64-linux-gnu", "neoverse-v2", "", "FMLAv4f32").is_some());
        assert_eq!(instruction_timing("x86_64-unknown-linux-gnu", "znver3", "", "NOT_AN_OPCODE"), None);
        assert_eq!(instruction_timing("not-a-triple", "znver3", "", "VFMADD231PSYr"), None);
    }

    #[test]
    fn cpus_compare_by_their_features() {
        let x86 = "x86_64-unknown-linux-gnu";
        let features = "+avx2,+fma,-avx512f,+sse4a,-amx-tile";
        let zen3 = cpu_differences(x86, "znver3", features).expect("LLVM knows znver3");
        assert!(zen3.cpu_only.is_empty() && zen3.host_only.is_empty(), "{zen3:?}");
        let haswell = cpu_differences(x86, "haswell", features).unwrap();
        assert_eq!(haswell.host_only, ["sse4a"]);
        let sapphire = cpu_differences(x86, "sapphirerapids", features).unwrap();
        assert_eq!(sapphire.cpu_only, ["avx512f", "amx-tile"]);
        assert_eq!(cpu_differences(x86, "pentium9", features), None);
    }
}
