//! The AMD GPUs Tessel compiles for, and what each offers: wavefront size,
//! LDS per workgroup, and the matrix instructions that compute `block.dot`
//! exactly. Passes, the lowering, the tuner and the driver all ask here.

use crate::matrix_layout::{
    MFMA_F32_16X16X4, MFMA_I32_16X16X16_I8, MFMA_I32_16X16X32_I8, MatrixInstruction, WMMA_I32_16X16X16_IU8,
};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Chip {
    /// MI200 (CDNA2): wave64.
    #[default]
    Gfx90a,
    /// MI300 (CDNA3): wave64.
    Gfx942,
    /// RX 7900 (RDNA3): wave32.
    Gfx1100,
}

impl Chip {
    pub const ALL: [Chip; 3] = [Chip::Gfx90a, Chip::Gfx942, Chip::Gfx1100];

    /// LLVM's name of the chip (`--chip`, `tessel.chip`).
    pub fn name(self) -> &'static str {
        match self {
            Chip::Gfx90a => "gfx90a",
            Chip::Gfx942 => "gfx942",
            Chip::Gfx1100 => "gfx1100",
        }
    }

    /// The chip LLVM calls `name`, if Tessel compiles for it.
    pub fn from_name(name: &str) -> Option<Chip> {
        Chip::ALL.into_iter().find(|chip| chip.name() == name)
    }

    /// Work-items per wavefront.
    pub fn wave_size(self) -> i64 {
        if self == Chip::Gfx1100 { 32 } else { 64 }
    }

    /// Cycles a SIMD takes to issue one vector instruction for a whole
    /// wave: CDNA runs wave64 on 16-lane SIMDs (4 cycles), RDNA 3 wave32 on
    /// 32-lane ones (1).
    pub fn issue_cycles(self) -> i64 {
        if self == Chip::Gfx1100 { 1 } else { 4 }
    }

    /// Cycles from issuing a global load of a contraction's operands to its
    /// data in registers: an L2 hit, as tiles re-read mostly are (~300-500
    /// cycles on CDNA 3; `benchmarks/amdgpu/model.py` charges the same).
    pub fn global_latency(self) -> i64 {
        500
    }

    /// Cycles from an LDS access's issue to its completion (~64 on CDNA
    /// and RDNA 3 without bank conflicts).
    pub fn lds_latency(self) -> i64 {
        64
    }

    /// LDS bytes a workgroup may use.
    pub fn workgroup_memory(self) -> i64 {
        65536
    }

    /// The matrix instruction for a contraction of `input` elements into
    /// `output` ones, where it computes block.dot's meaning exactly.
    pub fn matrix_instruction(self, input: &str, output: &str) -> Option<MatrixInstruction> {
        match (self, input, output) {
            (Chip::Gfx90a | Chip::Gfx942, "f32", "f32") => Some(MFMA_F32_16X16X4),
            (Chip::Gfx90a, "i8", "i32") => Some(MFMA_I32_16X16X16_I8),
            (Chip::Gfx942, "i8", "i32") => Some(MFMA_I32_16X16X32_I8),
            (Chip::Gfx1100, "i8", "i32") => Some(WMMA_I32_16X16X16_IU8),
            _ => None,
        }
    }
}
