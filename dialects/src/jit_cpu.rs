//! Which CPU JIT-compiled code is generated for: the host's, or another CPU
//! the host can run, named by `TESSEL_CPU` (LLVM's names: the x86-64 levels
//! `x86-64-v2`, `x86-64-v3`, `x86-64-v4`, or CPUs such as `haswell`).
//!
//! `TESSEL_CPU=x86-64-v3` makes every JIT-compiled kernel (`tessel run`,
//! `tessel tune`, the Python package, the test suites) AVX2 code with
//! AVX2's 16 registers in the register-tile model, on any host that has
//! AVX2: an AVX-512 machine tests the AVX2 path. A CPU is accepted when LLVM
//! knows it and the host has every feature it has (LLVM compares it with
//! the host's feature list), so the host runs every instruction its code
//! may use; the code then has that CPU's features only.

use crate::llvm_target;

/// The environment variable naming the JIT's CPU.
pub const VARIABLE: &str = "TESSEL_CPU";

/// The x86-64 levels (LLVM's names), least first: CPUs every x86-64 host
/// of that level runs.
pub const LEVELS: &[&str] = &["x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"];

/// Why a name cannot be the JIT's CPU.
#[derive(Debug, PartialEq, Eq)]
pub enum CpuError {
    /// LLVM knows no such CPU for the host's architecture.
    Unknown,
    /// A CPU with features this host lacks (some of them named).
    NotRunnable(Vec<String>),
}

impl std::fmt::Display for CpuError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CpuError::Unknown => write!(f, "not a CPU LLVM knows for this host's architecture"),
            CpuError::NotRunnable(missing) => {
                let shown: Vec<&str> = missing.iter().take(4).map(String::as_str).collect();
                let more = if missing.len() > shown.len() { ", ..." } else { "" };
                write!(f, "this host cannot run its code (it lacks {}{more})", shown.join(", "))
            }
        }
    }
}

/// What the JIT can target, for messages.
pub fn choices() -> String {
    format!("the host or a CPU this host runs (LLVM's names: {}, haswell, znver3, ...)", LEVELS.join(", "))
}

/// How `name` differs from the host, if LLVM knows it.
fn differences(name: &str) -> Option<llvm_target::CpuDifferences> {
    let (_, features) = llvm_target::host_cpu();
    llvm_target::cpu_differences(&llvm_target::host_triple(), name, &features)
}

/// `name`, if the JIT can generate code for it here (the one check behind
/// `TESSEL_CPU` and `tessel run/tune --cpu`).
pub fn check(name: &str) -> Result<String, CpuError> {
    let differences = differences(name).ok_or(CpuError::Unknown)?;
    if differences.cpu_only.is_empty() {
        Ok(name.to_string())
    } else {
        Err(CpuError::NotRunnable(differences.cpu_only))
    }
}

/// Whether this host runs code for the CPU `name`.
pub fn host_runs(name: &str) -> bool {
    check(name).is_ok()
}

/// The CPU `TESSEL_CPU` names (`Ok(None)` when it is unset or empty), or
/// why it cannot be used on this host.
pub fn requested() -> Result<Option<String>, String> {
    let Ok(name) = std::env::var(VARIABLE) else { return Ok(None) };
    if name.is_empty() {
        return Ok(None);
    }
    check(&name).map(Some).map_err(|error| match error {
        CpuError::Unknown => format!("{VARIABLE}={name}: the JIT targets {}", choices()),
        error => format!("{VARIABLE}={name}: {error}"),
    })
}

/// The host features code for `cpu` must not use: the host's features the
/// CPU lacks (empty for a CPU LLVM does not know).
pub fn switched_off(cpu: &str) -> Vec<String> {
    differences(cpu).map(|differences| differences.host_only).unwrap_or_default()
}

/// LLVM function attributes that make a function code for `cpu` whatever
/// the JIT's target machine is (the host): the CPU, and a feature list
/// that switches off every host feature the CPU lacks (the list replaces
/// the host's).
pub fn function_attributes(cpu: &str) -> (String, String) {
    let features: Vec<String> = switched_off(cpu).iter().map(|feature| format!("\"-{feature}\"")).collect();
    (format!("\"{cpu}\""), format!("#llvm.target_features<[{}]>", features.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_baseline_runs_everywhere_and_names_are_checked() {
        assert!(host_runs("x86-64") || !cfg!(target_arch = "x86_64"));
        // A level implies the ones below it.
        for pair in LEVELS.windows(2) {
            assert!(!host_runs(pair[1]) || host_runs(pair[0]), "{} without {}", pair[1], pair[0]);
        }
        assert_eq!(check("pentium9"), Err(CpuError::Unknown));
        // Diamond Rapids' APX and AVX10.2: no host of ours has them.
        assert!(matches!(check("diamondrapids"), Err(CpuError::NotRunnable(missing)) if !missing.is_empty()));
        assert!(cfg!(not(target_arch = "x86_64")) || check("nehalem") == Ok("nehalem".to_string()));
    }

    #[test]
    fn attributes_switch_off_what_the_cpu_lacks() {
        if !host_runs("x86-64-v3") {
            return;
        }
        let (cpu, features) = function_attributes("x86-64-v3");
        assert_eq!(cpu, "\"x86-64-v3\"");
        let host_avx512 = llvm_target::host_cpu().1.split(',').any(|feature| feature == "+avx512f");
        assert_eq!(features.contains("\"-avx512f\""), host_avx512, "{features}");
        assert!(!features.contains("-avx2"), "{features}");
    }
}
