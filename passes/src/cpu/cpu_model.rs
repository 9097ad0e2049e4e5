//! What register tiling needs to know about a CPU: its vector width, its
//! number of vector registers, how many FMAs it needs in flight, and the
//! rules, shared by `tessel-tile` and the tuner's space, for which register
//! tiles fit and which one a contraction gets.
//!
//! A register tile of `rows x vectors` accumulators lives in registers for
//! a contraction's whole k loop; each k step also loads a row of B
//! (`vectors` registers) and broadcasts one element of A (one more). It
//! fits when all of these are registers at once; a tile that does not fit
//! spills at every k step, which is never faster.
//!
//! The tile is derived as in BLIS's analytical model (Low et al., "Analytical
//! Modeling Is Enough for High-Performance BLIS", ACM TOMS 2016): each
//! accumulator is a chain of dependent FMAs, so the FMA units stay busy
//! only with at least latency x throughput accumulators (the CPU's FMA
//! latency and reciprocal throughput come from LLVM's scheduling model of
//! it), and half as many again give the out-of-order core slack (measured:
//! module docs of `register_tile_of`); among the tiles that fit the
//! registers, and whose rows of B are whole cache lines, those whose rows
//! divide the block (no remainder strip) and then the one with the most
//! FMAs per load (rows x vectors / (rows + vectors)) win.
//!
//! Its caches (`caches.rs`) decide how deep a contraction's k blocks are.

use crate::cpu::caches::{self, Caches};

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
    /// Whether the CPU has x86's `vpmaddwd` (SSE2 on, so every x86-64):
    /// two 16-bit products summed into each 32-bit lane, the 8-bit
    /// contractions' instruction where there is no VNNI (`tessel-vnni`).
    pub pmaddwd: bool,
    /// FMAs that must be in flight to keep the FMA units busy (latency
    /// over reciprocal throughput in LLVM's model), for 128-, 256- and
    /// 512-bit vectors.
    pub fma_in_flight: [i64; 3],
    /// Data cache sizes: the k blocks of contractions (`Caches::k_block`).
    pub caches: Caches,
}

/// FMAs in flight when LLVM has no scheduling model of the CPU (a latency
/// of 4 cycles, two FMAs a cycle).
const DEFAULT_IN_FLIGHT: i64 = 8;

/// Bytes of a cache line: a register tile's rows of B are whole lines.
const LINE_BYTES: i64 = 64;

/// Rows and vectors of register tiles the model considers at most.
const MAX_ROWS: i64 = 16;
const MAX_VECTORS: i64 = 8;

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
    pub const NEON: CpuModel = CpuModel {
        vector_bits: 128,
        vector_registers: 32,
        vnni: false,
        pmaddwd: false,
        fma_in_flight: [DEFAULT_IN_FLIGHT; 3],
        caches: caches::DEFAULT,
    };

    /// The model of an x86 CPU with (or without) AVX-512 and AVX2 (SSE
    /// only: 128-bit vectors, 16 registers), without VNNI (with
    /// `vpmaddwd`, which every x86-64 has).
    pub fn x86(avx512: bool, avx2: bool) -> Self {
        let (vector_bits, vector_registers) = match (avx512, avx2) {
            (true, _) => (512, 32),
            (false, true) => (256, 16),
            (false, false) => (128, 16),
        };
        CpuModel {
            vector_bits,
            vector_registers,
            vnni: false,
            pmaddwd: true,
            fma_in_flight: [DEFAULT_IN_FLIGHT; 3],
            caches: caches::DEFAULT,
        }
    }

    /// This model with (or without) VNNI.
    pub fn with_vnni(self, vnni: bool) -> Self {
        CpuModel { vnni, ..self }
    }

    /// This model with the FMA timings of LLVM's scheduling model of `cpu`
    /// (with `features`) on `triple`, where LLVM has one.
    pub fn with_llvm_timings(self, triple: &str, cpu: &str, features: &str) -> Self {
        let aarch64 = triple.starts_with("aarch64") || triple.starts_with("arm64");
        let mut fma_in_flight = self.fma_in_flight;
        for (index, bits) in [128, 256, 512].into_iter().enumerate() {
            let instruction = match (aarch64, bits) {
                (true, 128) => "FMLAv4f32",
                (true, _) => continue,
                (false, 128) => "VFMADD231PSr",
                (false, 256) => "VFMADD231PSYr",
                (false, _) => "VFMADD231PSZr",
            };
            if let Some((latency, reciprocal)) =
                tessel_dialects::llvm_target::instruction_timing(triple, cpu, features, instruction)
            {
                fma_in_flight[index] = ((latency as f64) / reciprocal).ceil() as i64;
            }
        }
        CpuModel { fma_in_flight, ..self }
    }

    /// FMAs in flight needed with `vector_bits`-wide vectors.
    pub fn fma_in_flight_at(self, vector_bits: i64) -> i64 {
        let index = match vector_bits {
            ..=128 => 0,
            129..=256 => 1,
            _ => 2,
        };
        self.fma_in_flight[index]
    }

    /// The CPU this process's JIT-compiled code runs as: the host's, or
    /// the CPU `TESSEL_CPU` names (see `tessel_dialects::jit_cpu`; an
    /// unusable value is reported when the JIT compiles): the host's
    /// features as LLVM detects them, less those the named CPU lacks,
    /// LLVM's FMA timings for that CPU, and the host's caches (the code
    /// runs on the host).
    pub fn host() -> Self {
        use tessel_dialects::{jit_cpu, llvm_target};
        let (host_cpu, features) = llvm_target::host_cpu();
        let triple = llvm_target::host_triple();
        let requested = jit_cpu::requested().ok().flatten();
        let switched_off = requested.as_deref().map(jit_cpu::switched_off).unwrap_or_default();
        let has = |feature: &str| {
            features.split(',').any(|listed| listed.strip_prefix('+') == Some(feature))
                && !switched_off.iter().any(|off| off == feature)
        };
        let model = if triple.starts_with("x86_64") {
            let avx512 = has("avx512f");
            // 512-bit vpdpbusd needs AVX-512 VNNI; AVX-VNNI has the 256-bit one.
            let vnni = if avx512 { has("avx512vnni") && has("avx512vl") } else { has("avxvnni") };
            CpuModel::x86(avx512, has("avx2")).with_vnni(vnni)
        } else {
            CpuModel::NEON
        };
        let model = CpuModel { caches: Caches::host(&host_cpu), ..model };
        match &requested {
            Some(cpu) => model.with_llvm_timings(&triple, cpu, ""),
            None => model.with_llvm_timings(&triple, &host_cpu, &features),
        }
    }

    /// The model of the CPU LLVM calls `cpu` on `triple` (an x86-64 triple
    /// when `None`); `None` for a CPU this table does not know. AArch64
    /// CPUs get NEON's 128-bit vectors and 32 registers. Caches from the
    /// table (`caches::DEFAULT` for a CPU it lacks).
    pub fn named(triple: Option<&str>, cpu: &str) -> Option<Self> {
        let triple = triple.unwrap_or("x86_64-unknown-linux-gnu");
        let arch = triple.split('-').next().unwrap_or("");
        let model = match arch {
            "x86_64" if AVX512_CPUS.contains(&cpu) => {
                Some(CpuModel::x86(true, true).with_vnni(!AVX512_WITHOUT_VNNI.contains(&cpu)))
            }
            "x86_64" if AVX_CPUS.contains(&cpu) => {
                Some(CpuModel::x86(false, true).with_vnni(AVX_WITH_VNNI.contains(&cpu)))
            }
            "x86_64" if SSE_CPUS.contains(&cpu) => Some(CpuModel::x86(false, false)),
            "aarch64" | "arm64" => Some(CpuModel::NEON),
            _ => None,
        };
        let caches = Caches::named(cpu).unwrap_or(caches::DEFAULT);
        model.map(|model| CpuModel { caches, ..model.with_llvm_timings(triple, cpu, "") })
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

    /// The register tile of a contraction whose result block is `rows x
    /// columns` elements of `element_bits`, in vectors of `vector_bits`:
    /// (rows, columns) by the analytical model (module docs), among tiles
    /// whose columns divide the block and whose rows divide it or leave a
    /// remainder strip of fewer rows (`tessel-tile` splits it off);
    /// `default_tile` where none fits.
    pub fn register_tile(self, vector_bits: i64, element_bits: i64, rows: i64, columns: i64) -> (i64, i64) {
        let lanes = vector_bits / element_bits.max(8);
        let in_flight = self.fma_in_flight_at(vector_bits);
        // Exactly latency x throughput chains keep the FMA units busy only
        // if every FMA issues the cycle its chain allows; half as many
        // again leave the scheduler slack (measured on Zen 4, AVX2 code
        // in L2: 8 accumulators, 2 x 32, ran 88% of the FMA peak, 12,
        // 6 x 16, 94%; AVX-512's 16 against 4 in flight changed nothing
        // from 16 to 24).
        let slack = in_flight + in_flight / 2;
        let whole_lines = |vectors: i64| (vectors * vector_bits / 8) % LINE_BYTES == 0;
        let candidates = (1..=MAX_ROWS.min(rows))
            .flat_map(|tile_rows| (1..=MAX_VECTORS).map(move |vectors| (tile_rows, vectors)))
            .filter(|&(tile_rows, vectors)| {
                lanes >= 1 && columns % (vectors * lanes) == 0 && whole_lines(vectors) && self.fits(tile_rows, vectors)
            });
        // Latency covered first (else as many chains as there are), then
        // slack, then no remainder strip, then FMAs per load, then wider
        // rows of B (vectors decide every tie).
        let best = candidates.max_by_key(|&(tile_rows, vectors)| {
            let accumulators = tile_rows * vectors;
            (
                accumulators >= in_flight,
                accumulators.min(slack),
                rows % tile_rows == 0,
                accumulators * 1000 / (tile_rows + vectors),
                vectors,
            )
        });
        best.map_or_else(
            || self.default_tile(vector_bits, element_bits),
            |(tile_rows, vectors)| (tile_rows, vectors * lanes),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The model without its FMA timings (which LLVM supplies).
    fn shape(model: Option<CpuModel>) -> Option<(i64, i64, bool)> {
        model.map(|m| (m.vector_bits, m.vector_registers, m.vnni))
    }

    #[test]
    fn defaults_fit_on_every_width() {
        let avx512 = CpuModel::x86(true, true);
        let avx2 = CpuModel::x86(false, true);
        assert_eq!(avx512.default_tile(512, 32), (4, 64));
        // AVX-512 hosts running 256-bit code keep their 32 registers.
        assert_eq!(avx512.default_tile(256, 32), (4, 32));
        assert_eq!(avx2.default_tile(256, 32), (2, 32));
        assert_eq!(avx2.default_tile(256, 64), (2, 16));
        assert_eq!(shape(CpuModel::named(None, "x86-64-v3")), Some((256, 16, false)));
        assert_eq!(shape(CpuModel::named(None, "sapphirerapids")), Some((512, 32, true)));
        assert_eq!(shape(CpuModel::named(None, "skylake-avx512")), Some((512, 32, false)));
        assert_eq!(shape(CpuModel::named(None, "x86-64-v4")), Some((512, 32, false)), "the levels have no VNNI");
        assert_eq!(shape(CpuModel::named(None, "alderlake")), Some((256, 16, true)));
        assert_eq!(shape(CpuModel::named(None, "znver3")), Some((256, 16, false)));
        assert!(AVX512_WITHOUT_VNNI.iter().all(|cpu| AVX512_CPUS.contains(cpu)));
        assert!(AVX_WITH_VNNI.iter().all(|cpu| AVX_CPUS.contains(cpu)));
        assert_eq!(shape(CpuModel::named(Some("aarch64-linux-gnu"), "neoverse-v2")), Some((128, 32, false)));
        assert_eq!(CpuModel::named(None, "no-such-cpu"), None);
        for model in [avx512, avx2, CpuModel::x86(false, false)] {
            let (rows, vectors) = model.default_tile_vectors();
            assert!(model.fits(rows, vectors), "{model:?}: the default {rows}x{vectors} does not fit");
        }
        assert!(!avx2.fits(4, 4), "16 accumulators spill with 16 registers");
        // Every x86-64 has vpmaddwd (SSE2); AArch64 has neither 8-bit form.
        assert!(CpuModel::named(None, "x86-64").unwrap().pmaddwd);
        assert!(CpuModel::named(None, "x86-64-v3").unwrap().pmaddwd);
        assert!(!CpuModel::named(Some("aarch64-linux-gnu"), "neoverse-v2").unwrap().pmaddwd);
    }

    #[test]
    fn fma_timings_come_from_llvm() {
        let in_flight = |cpu: &str, bits: i64| CpuModel::named(None, cpu).unwrap().fma_in_flight_at(bits);
        // Zen 4 issues one 512-bit FMA a cycle (two 256-bit ones), latency 4.
        assert_eq!(in_flight("znver4", 512), 4);
        assert_eq!(in_flight("znver4", 256), 8);
        // Skylake-X: two 512-bit FMAs a cycle; Haswell: latency 5.
        assert_eq!(in_flight("skylake-avx512", 512), 8);
        assert_eq!(in_flight("haswell", 256), 10);
        let neoverse = CpuModel::named(Some("aarch64-linux-gnu"), "neoverse-v2").unwrap();
        assert!(neoverse.fma_in_flight_at(128) >= 8, "{neoverse:?}");
    }

    #[test]
    fn register_tiles_follow_the_analytical_model() {
        let timed = |model: CpuModel, in_flight: i64| CpuModel { fma_in_flight: [in_flight; 3], ..model };
        let (avx512, avx2) = (CpuModel::x86(true, true), CpuModel::x86(false, true));
        // Zen 4 and Skylake-X on 256 x 256 f32 blocks: 16 accumulators,
        // the most FMAs per load that fit 32 registers (the measured best).
        assert_eq!(timed(avx512, 4).register_tile(512, 32, 256, 256), (4, 64));
        assert_eq!(timed(avx512, 8).register_tile(512, 32, 256, 256), (4, 64));
        // AVX2's 16 registers: 12 accumulators, BLIS's Haswell tile (Zen 4
        // needs 8 in flight, Haswell 10), rows of B whole 64-byte lines; on
        // 256-row blocks with a 4-row remainder strip.
        assert_eq!(timed(avx2, 10).register_tile(256, 32, 256, 256), (6, 16));
        assert_eq!(timed(avx2, 8).register_tile(256, 32, 256, 256), (6, 16));
        assert_eq!(timed(avx2, 10).register_tile(256, 32, 96, 256), (6, 16));
        // Where a dividing tile has the slack, it wins: AVX-512 keeps 4 x 64.
        assert_eq!(timed(avx512, 8).register_tile(512, 32, 250, 256), (5, 64));
        // Too few accumulators never win where enough fit.
        let (rows, columns) = timed(avx2, 8).register_tile(256, 32, 128, 128);
        assert!(rows * columns / 8 >= 8, "{rows}x{columns}");
        // NEON's 32 registers: 24 accumulators of 4 lanes (16 in flight and
        // half again), rows of B a line.
        assert_eq!(timed(CpuModel::NEON, 16).register_tile(128, 32, 256, 256), (6, 16));
        // f64: half the lanes.
        assert_eq!(timed(avx512, 4).register_tile(512, 64, 256, 256), (4, 32));
        // No tile divides 20 columns: the default (the pass then shrinks it).
        assert_eq!(timed(avx512, 4).register_tile(512, 32, 256, 20), avx512.default_tile(512, 32));
        // Whatever the block, the model's tile fits the registers.
        for (model, bits) in [(avx512, 512), (avx2, 256), (CpuModel::NEON, 128)] {
            for extent in [1, 2, 3, 6, 8, 12, 16, 24, 48, 64, 96, 100, 128, 256] {
                let (rows, columns) = timed(model, 8).register_tile(bits, 32, extent, extent);
                assert!(model.fits(rows, (columns * 32 + bits - 1) / bits), "{model:?} {extent}: {rows}x{columns}");
            }
        }
    }
}
