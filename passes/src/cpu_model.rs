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
}

/// Rows of the default register tile at most (measured best on AVX-512:
/// 4 x 4 vectors against 8 x 2, 2 x 8 and 16 x 2 on the 2048 matmul).
const DEFAULT_ROWS: i64 = 4;
/// Vectors per row of the default register tile: a k step reads whole
/// cache lines of the packed B panel.
const DEFAULT_VECTORS: i64 = 4;

impl CpuModel {
    /// The model of an x86 CPU with (or without) AVX-512 and AVX2; other
    /// CPUs get 128-bit vectors and 32 registers (NEON).
    pub fn x86(avx512: bool, avx2: bool) -> Self {
        match (avx512, avx2) {
            (true, _) => CpuModel { vector_bits: 512, vector_registers: 32 },
            (false, true) => CpuModel { vector_bits: 256, vector_registers: 16 },
            (false, false) => CpuModel { vector_bits: 128, vector_registers: 16 },
        }
    }

    /// The CPU this process runs on.
    pub fn host() -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            CpuModel::x86(std::arch::is_x86_feature_detected!("avx512f"), std::arch::is_x86_feature_detected!("avx2"))
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            CpuModel { vector_bits: 128, vector_registers: 32 }
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
    use super::CpuModel;

    #[test]
    fn defaults_fit_on_every_width() {
        let avx512 = CpuModel::x86(true, true);
        let avx2 = CpuModel::x86(false, true);
        assert_eq!(avx512.default_tile(512, 32), (4, 64));
        // AVX-512 hosts running 256-bit code keep their 32 registers.
        assert_eq!(avx512.default_tile(256, 32), (4, 32));
        assert_eq!(avx2.default_tile(256, 32), (2, 32));
        assert_eq!(avx2.default_tile(256, 64), (2, 16));
        for model in [avx512, avx2, CpuModel::x86(false, false)] {
            let (rows, vectors) = model.default_tile_vectors();
            assert!(model.fits(rows, vectors), "{model:?}: the default {rows}x{vectors} does not fit");
        }
        assert!(!avx2.fits(4, 4), "16 accumulators spill with 16 registers");
    }
}
