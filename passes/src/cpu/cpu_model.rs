//! What register tiling needs to know about a CPU: its vector width and its
//! number of vector registers, and the one rule, shared by `tessel-tile`
//! and the tuner's space, for which register tiles fit and which is the
//! default.
//!
//! A register tile of `rows x vectors` accumulators lives in registers for
//! a contraction's whole k loop; each k step also loads a row of B
//! (`vectors` registers) and broadcasts one element of A (one more). It
//! fits when all of these are registers at once; a tile that does not fit
//! spills at every k step, which is never faster.

/// A CPU as register tiling sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuModel {
    /// Bits of the widest vector registers.
    pub vector_bits: i64,
    /// Vector registers (of any width the code uses: AVX-512's 32 are
    /// there for 256-bit code too).
    pub vector_registers: i64,
    /// Whether the CPU has VNNI's `vpdpbusd` (AVX-512 VNNI, or AVX-VNNI
    /// for 256-bit vectors): four 8-bit products summed into each 32-bit
    /// lane, the 8-bit contractions' instruction (`tessel-vnni`).
    pub vnni: bool,
}

/// x86 CPUs (LLVM's names) with AVX-512: 512-bit vectors, 32 registers.
const AVX512_CPUS: &[&str] = &[
    "x86-64-v4",
    "skylake-avx512",
    "cascadelake",
    "cooperlake",
    "cannonlake",
    "icelake-client",
    "icelake-server",
    "tigerlake",
    "rocketlake",
    "sapphirerapids",
    "emeraldrapids",
    "graniterapids",
    "graniterapids-d",
    "diamondrapids",
    "znver4",
    "znver5",
];

/// x86 CPUs with AVX (most with AVX2 and FMA): 256-bit vectors, 16
/// registers (modelled as AVX2's).
const AVX_CPUS: &[&str] = &[
    "x86-64-v3",
    "sandybridge",
    "ivybridge",
    "haswell",
    "broadwell",
    "skylake",
    "alderlake",
    "raptorlake",
    "meteorlake",
    "arrowlake",
    "arrowlake-s",
    "lunarlake",
    "gracemont",
    "znver1",
    "znver2",
    "znver3",
    "bdver4",
];

/// The AVX-512 CPUs without VNNI's `vpdpbusd` (the others have it from
/// Cascade Lake and Zen 4 on; the x86-64 levels never: v4 is AVX-512
/// without VNNI).
const AVX512_WITHOUT_VNNI: &[&str] = &["x86-64-v4", "skylake-avx512", "cannonlake"];

/// The AVX2 CPUs with AVX-VNNI (256-bit `vpdpbusd`): the hybrid cores
/// since Alder Lake.
const AVX_WITH_VNNI: &[&str] =
    &["alderlake", "raptorlake", "meteorlake", "arrowlake", "arrowlake-s", "lunarlake", "gracemont"];

/// x86 CPUs with SSE only: 128-bit vectors, 16 registers.
const SSE_CPUS: &[&str] = &["x86-64", "x86-64-v2", "nehalem", "westmere", "core2", "btver1", "generic"];

/// Rows of the default register tile at most (measured best on AVX-512:
/// 4 x 4 vectors against 8 x 2, 2 x 8 and 16 x 2 on the 2048 matmul).
const DEFAULT_ROWS: i64 = 4;
/// Vectors per row of the default register tile: a k step reads whole
/// cache lines of the packed B panel.
const DEFAULT_VECTORS: i64 = 4;

impl CpuModel {
    /// AArch64's NEON: 128-bit vectors, 32 registers.
    pub const NEON: CpuModel = CpuModel { vector_bits: 128, vector_registers: 32, vnni: false };

    /// The model of an x86 CPU with (or without) AVX-512 and AVX2 (SSE
    /// only: 128-bit vectors, 16 registers), without VNNI.
    pub fn x86(avx512: bool, avx2: bool) -> Self {
        let (vector_bits, vector_registers) = match (avx512, avx2) {
            (true, _) => (512, 32),
            (false, true) => (256, 16),
            (false, false) => (128, 16),
        };
        CpuModel { vector_bits, vector_registers, vnni: false }
    }

    /// This model with (or without) VNNI.
    pub fn with_vnni(self, vnni: bool) -> Self {
        CpuModel { vnni, ..self }
    }

    /// The CPU this process's JIT-compiled code runs as: the host's, or
    /// the x86-64 level `TESSEL_CPU` names (see `tessel_dialects::jit_cpu`;
    /// an unusable value is reported when the JIT compiles).
    pub fn host() -> Self {
        if let Ok(Some(level)) = tessel_dialects::jit_cpu::requested()
            && let Some(model) = CpuModel::named(None, level)
        {
            return model;
        }
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            let avx512 = has!("avx512f");
            // 512-bit vpdpbusd needs AVX-512 VNNI; AVX-VNNI has the 256-bit one.
            let vnni = if avx512 { has!("avx512vnni") && has!("avx512vl") } else { has!("avxvnni") };
            CpuModel::x86(avx512, has!("avx2")).with_vnni(vnni)
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            CpuModel::NEON
        }
    }

    /// The model of the CPU LLVM calls `cpu` on `triple` (an x86-64 triple
    /// when `None`); `None` for a CPU this table does not know. AArch64
    /// CPUs get NEON's 128-bit vectors and 32 registers.
    pub fn named(triple: Option<&str>, cpu: &str) -> Option<Self> {
        let arch = triple.map_or("x86_64", |triple| triple.split('-').next().unwrap_or(""));
        match arch {
            "x86_64" if AVX512_CPUS.contains(&cpu) => {
                Some(CpuModel::x86(true, true).with_vnni(!AVX512_WITHOUT_VNNI.contains(&cpu)))
            }
            "x86_64" if AVX_CPUS.contains(&cpu) => {
                Some(CpuModel::x86(false, true).with_vnni(AVX_WITH_VNNI.contains(&cpu)))
            }
            "x86_64" if SSE_CPUS.contains(&cpu) => Some(CpuModel::x86(false, false)),
            "aarch64" | "arm64" => Some(CpuModel::NEON),
            _ => None,
        }
    }

    /// Whether `rows x vectors` accumulators, a row of B and a broadcast of
    /// A are all registers at once.
    pub fn fits(self, rows: i64, vectors: i64) -> bool {
        rows * vectors + vectors < self.vector_registers
    }

    /// The default register tile, in vectors of `vector_bits`: four
    /// vectors a row and as many rows as fit, at most four (AVX-512: 4 x 4;
    /// 16 registers: 2 x 4).
    pub fn default_tile_vectors(self) -> (i64, i64) {
        let rows = (1..=DEFAULT_ROWS).rev().find(|&rows| self.fits(rows, DEFAULT_VECTORS)).unwrap_or(1);
        (rows, DEFAULT_VECTORS)
    }

    /// The default register tile of a contraction whose result elements
    /// are `element_bits` wide, in vectors of `vector_bits`: (rows,
    /// columns).
    pub fn default_tile(self, vector_bits: i64, element_bits: i64) -> (i64, i64) {
        let (rows, vectors) = self.default_tile_vectors();
        (rows, vectors * vector_bits / element_bits.max(8))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_fit_on_every_width() {
        let avx512 = CpuModel::x86(true, true);
        let avx2 = CpuModel::x86(false, true);
        assert_eq!(avx512.default_tile(512, 32), (4, 64));
        // AVX-512 hosts running 256-bit code keep their 32 registers.
        assert_eq!(avx512.default_tile(256, 32), (4, 32));
        assert_eq!(avx2.default_tile(256, 32), (2, 32));
        assert_eq!(avx2.default_tile(256, 64), (2, 16));
        assert_eq!(CpuModel::named(None, "x86-64-v3"), Some(avx2));
        assert_eq!(CpuModel::named(None, "sapphirerapids"), Some(avx512.with_vnni(true)));
        assert_eq!(CpuModel::named(None, "skylake-avx512"), Some(avx512));
        assert_eq!(CpuModel::named(None, "x86-64-v4"), Some(avx512), "the levels have no VNNI");
        assert_eq!(CpuModel::named(None, "alderlake"), Some(avx2.with_vnni(true)));
        assert_eq!(CpuModel::named(None, "znver3"), Some(avx2));
        assert!(AVX512_WITHOUT_VNNI.iter().all(|cpu| AVX512_CPUS.contains(cpu)));
        assert!(AVX_WITH_VNNI.iter().all(|cpu| AVX_CPUS.contains(cpu)));
        assert_eq!(CpuModel::named(Some("aarch64-linux-gnu"), "neoverse-v2").map(|m| m.vector_registers), Some(32));
        assert_eq!(CpuModel::named(None, "no-such-cpu"), None);
        for model in [avx512, avx2, CpuModel::x86(false, false)] {
            let (rows, vectors) = model.default_tile_vectors();
            assert!(model.fits(rows, vectors), "{model:?}: the default {rows}x{vectors} does not fit");
        }
        assert!(!avx2.fits(4, 4), "16 accumulators spill with 16 registers");
    }
}
