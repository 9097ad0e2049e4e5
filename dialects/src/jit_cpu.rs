//! Which CPU JIT-compiled code is generated for: the host's, or an x86-64
//! microarchitecture level the host can run, named by `TESSEL_CPU`.
//!
//! `TESSEL_CPU=x86-64-v3` makes every JIT-compiled kernel (`tessel run`,
//! `tessel tune`, the Python package, the test suites) AVX2 code with
//! AVX2's 16 registers in the register-tile model, on any host that has
//! AVX2: an AVX-512 machine tests the AVX2 path. Only the levels are
//! accepted (not CPU names such as `znver3`), because the JIT must be sure
//! the host runs every instruction the named CPU has.

/// The environment variable naming the JIT's CPU.
pub const VARIABLE: &str = "TESSEL_CPU";

/// The x86-64 levels the JIT can target (LLVM's names), least first.
pub const LEVELS: &[&str] = &["x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"];

/// Whether this host runs code for `level` (one of `LEVELS`).
pub fn host_runs(level: &str) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        let v2 = has!("sse4.2") && has!("popcnt") && has!("ssse3") && has!("cmpxchg16b");
        let v3 = v2 && has!("avx2") && has!("fma") && has!("bmi1") && has!("bmi2") && has!("f16c") && has!("lzcnt");
        let v4 = v3 && has!("avx512f") && has!("avx512bw") && has!("avx512cd") && has!("avx512dq") && has!("avx512vl");
        match level {
            "x86-64" => true,
            "x86-64-v2" => v2,
            "x86-64-v3" => v3,
            "x86-64-v4" => v4,
            _ => false,
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = level;
        false
    }
}

/// Why a name cannot be the JIT's CPU.
#[derive(Debug, PartialEq, Eq)]
pub enum LevelError {
    /// Not one of `LEVELS`.
    Unknown,
    /// A level this host cannot run.
    NotRunnable(&'static str),
}

/// What the JIT can target, for messages: "the host or one of x86-64, ...".
pub fn choices() -> String {
    format!("the host or one of {}", LEVELS.join(", "))
}

/// The level `name` names, if the JIT can generate code for it here (the
/// one check behind `TESSEL_CPU` and `tessel run/tune --cpu`).
pub fn check(name: &str) -> Result<&'static str, LevelError> {
    let &level = LEVELS.iter().find(|&&level| level == name).ok_or(LevelError::Unknown)?;
    if host_runs(level) { Ok(level) } else { Err(LevelError::NotRunnable(level)) }
}

/// The level `TESSEL_CPU` names (`Ok(None)` when it is unset or empty), or
/// why it cannot be used on this host.
pub fn requested() -> Result<Option<&'static str>, String> {
    let Ok(name) = std::env::var(VARIABLE) else { return Ok(None) };
    if name.is_empty() {
        return Ok(None);
    }
    check(&name).map(Some).map_err(|error| match error {
        LevelError::Unknown => format!("{VARIABLE}={name}: the JIT targets {}", choices()),
        LevelError::NotRunnable(level) => format!("{VARIABLE}={name}: this host cannot run {level} code"),
    })
}

/// LLVM function attributes that make a function `level` code whatever
/// the JIT's target machine is (the host): its CPU, and a feature list,
/// which replaces the host's (AVX-512 is switched off below v4, with
/// everything that depends on it).
pub fn function_attributes(level: &str) -> (String, String) {
    let features = if level == "x86-64-v4" { "+avx512f" } else { "-avx512f" };
    (format!("\"{level}\""), format!("#llvm.target_features<[\"{features}\"]>"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_baseline_runs_everywhere_and_names_are_checked() {
        assert!(host_runs("x86-64") || !cfg!(target_arch = "x86_64"));
        assert!(!host_runs("znver3"));
        // A level implies the ones below it.
        for pair in LEVELS.windows(2) {
            assert!(!host_runs(pair[1]) || host_runs(pair[0]), "{} without {}", pair[1], pair[0]);
        }
        assert_eq!(check("znver3"), Err(LevelError::Unknown));
        assert!(cfg!(not(target_arch = "x86_64")) || check("x86-64") == Ok("x86-64"));
        for level in LEVELS {
            assert_eq!(check(level).is_ok(), host_runs(level));
        }
    }

    #[test]
    fn attributes_switch_avx512_off_below_v4() {
        assert_eq!(function_attributes("x86-64-v3").1, "#llvm.target_features<[\"-avx512f\"]>");
        assert_eq!(function_attributes("x86-64-v4").0, "\"x86-64-v4\"");
    }
}
