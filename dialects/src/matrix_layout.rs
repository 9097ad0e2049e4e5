//! The AMD matrix instructions Tessel uses, and where their operands live:
//! which lane (and which element of that lane's fragment) holds each entry
//! of A, B, C and D.
//!
//! Two descriptions of the same layouts are kept apart on purpose:
//!
//! - the *placement* rules (`input_lanes`, `output_place`): matrix entry to
//!   lane and register, written from AMD's Matrix Instruction Calculator's
//!   rules for CDNA (gfx9 MFMA, any shape and block count, 32- and 64-bit
//!   outputs) and RDNA 3 (gfx11 WMMA, wave32); the tests check them against
//!   the calculator's documented examples. The GPU emulator computes
//!   matrix instructions from tables made by these rules.
//! - the *fragment* rules (`fragment_outer`, `fragment_k`, `result_row`,
//!   `result_column`): lane and register to matrix entry, closed forms for
//!   the instructions Tessel emits; `tessel-matrix-cores` writes them as
//!   index arithmetic. The tests check them against the placement rules
//!   for every lane and register.
//!
//! So a kernel's fragment loads and the emulator's idea of the instruction
//! come from two independent descriptions that must agree.

/// The two kinds of matrix instructions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// CDNA's matrix fused multiply-add (`amdgpu.mfma`), wave64.
    Mfma,
    /// RDNA 3's wave matrix multiply-accumulate (`amdgpu.wmma`), wave32.
    Wmma,
}

/// One matrix instruction: a wave computes `D = A·B + C` for `blocks`
/// independent `m`×`n` results, `k` steps deep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatrixInstruction {
    pub mnemonic: &'static str,
    pub family: Family,
    pub m: i64,
    pub n: i64,
    pub k: i64,
    pub blocks: i64,
    /// Bits of an A/B element and of a C/D element.
    pub input_bits: i64,
    pub output_bits: i64,
    /// Cycles the SIMD's matrix pipe is busy with one instruction (4 per
    /// pass; AMD's CDNA 2/3 ISA guides, RDNA 3's WMMA rate): what a
    /// software pipeline's interval is made of.
    pub issue_cycles: i64,
}

/// `v_mfma_f32_16x16x4f32` (gfx90a; `_f32` suffix on gfx942): f32 inputs,
/// each result one fused multiply-add per k step, in k order.
pub const MFMA_F32_16X16X4: MatrixInstruction = MatrixInstruction {
    mnemonic: "v_mfma_f32_16x16x4f32",
    family: Family::Mfma,
    m: 16,
    n: 16,
    k: 4,
    blocks: 1,
    input_bits: 32,
    output_bits: 32,
    issue_cycles: 32,
};

/// `v_mfma_i32_16x16x16i8` (gfx90a): signed 8-bit inputs, i32 sums.
pub const MFMA_I32_16X16X16_I8: MatrixInstruction = MatrixInstruction {
    mnemonic: "v_mfma_i32_16x16x16i8",
    family: Family::Mfma,
    m: 16,
    n: 16,
    k: 16,
    blocks: 1,
    input_bits: 8,
    output_bits: 32,
    issue_cycles: 32,
};

/// `v_mfma_i32_16x16x32_i8` (gfx942, which dropped the x16 form).
pub const MFMA_I32_16X16X32_I8: MatrixInstruction = MatrixInstruction {
    mnemonic: "v_mfma_i32_16x16x32_i8",
    family: Family::Mfma,
    m: 16,
    n: 16,
    k: 32,
    blocks: 1,
    input_bits: 8,
    output_bits: 32,
    issue_cycles: 16,
};

/// `v_wmma_i32_16x16x16_iu8` (gfx1100, wave32): 8-bit inputs (signed here),
/// i32 sums.
pub const WMMA_I32_16X16X16_IU8: MatrixInstruction = MatrixInstruction {
    mnemonic: "v_wmma_i32_16x16x16_iu8",
    family: Family::Wmma,
    m: 16,
    n: 16,
    k: 16,
    blocks: 1,
    input_bits: 8,
    output_bits: 32,
    issue_cycles: 32,
};

impl MatrixInstruction {
    pub fn wave_size(&self) -> i64 {
        match self.family {
            Family::Mfma => 64,
            Family::Wmma => 32,
        }
    }

    /// Elements of A (or B) one lane holds.
    pub fn input_elements(&self) -> i64 {
        match self.family {
            Family::Mfma => self.k * self.m * self.blocks / 64,
            Family::Wmma => self.k,
        }
    }

    /// Result registers (elements of D) one lane holds.
    pub fn output_elements(&self) -> i64 {
        self.m * self.n * self.blocks / self.wave_size()
    }

    // Placement rules: matrix entry -> lanes and element.

    /// The lanes holding A[outer][k] (or B[k][outer]) of `block`, and the
    /// element of their fragment that holds it.
    pub fn input_lanes(&self, outer: i64, k: i64, block: i64) -> (Vec<i64>, i64) {
        match self.family {
            Family::Mfma => {
                // A lane holds `per_lane` consecutive k of one row; rows of
                // every block fill 64 lanes before k moves to the next lanes.
                let per_lane = self.input_elements();
                let lane = block * self.m + (k / per_lane) * self.m * self.blocks + outer;
                (vec![lane], k % per_lane)
            }
            // Every k of a row in one lane, the 16 rows repeated in each
            // half-wave.
            Family::Wmma => ((0..self.wave_size() / 16).map(|copy| outer + 16 * copy).collect(), k),
        }
    }

    /// The lane and register holding C/D[i][j] of `block`.
    pub fn output_place(&self, i: i64, j: i64, block: i64) -> (i64, i64) {
        match self.family {
            Family::Mfma => {
                // Results fill registers in groups of rows (4 rows of 32-bit,
                // 1 of 64-bit values) that are n lanes wide.
                let group = if self.output_bits == 64 { 1 } else { 4 };
                let groups_per_register = 64 / self.n;
                let blocks_per_register = (64 + self.m * self.n / group - 1) / (self.m * self.n / group);
                let register = block * (self.m * self.n / 64) + (i / (group * groups_per_register)) * group + i % group;
                let lane = (block % blocks_per_register) * self.n
                    + ((i / group) % groups_per_register) * blocks_per_register * self.n
                    + j;
                (lane, register)
            }
            Family::Wmma => {
                let wave = self.wave_size();
                let rows_per_register = wave / 16;
                let rows_per_lane_sweep = wave * 16 / self.n;
                ((self.n * (i % rows_per_lane_sweep) + j) % wave, i / rows_per_register)
            }
        }
    }

    // Fragment rules: lane and element -> matrix entry (single-block
    // 16x16 instructions, the ones Tessel emits).

    /// The row of A (column of B) lane `lane` holds.
    pub fn fragment_outer(&self, lane: i64) -> i64 {
        lane % 16
    }

    /// How far apart the k of neighbouring half-waves' fragments are: lane
    /// `l` holds k = `(l / 16) * fragment_k_stride() + e` for element `e`.
    pub fn fragment_k_stride(&self) -> i64 {
        match self.family {
            Family::Mfma => self.input_elements(),
            Family::Wmma => 0,
        }
    }

    pub fn fragment_k(&self, lane: i64, element: i64) -> i64 {
        (lane / 16) * self.fragment_k_stride() + element
    }

    /// Register `r` of lane `l` holds D[(l / 16) * result_row_per_group()
    /// + r * result_row_per_register()][l % 16].
    pub fn result_row_per_group(&self) -> i64 {
        match self.family {
            Family::Mfma => 4,
            Family::Wmma => 1,
        }
    }

    pub fn result_row_per_register(&self) -> i64 {
        match self.family {
            Family::Mfma => 1,
            Family::Wmma => 2,
        }
    }

    pub fn result_row(&self, lane: i64, register: i64) -> i64 {
        (lane / 16) * self.result_row_per_group() + register * self.result_row_per_register()
    }

    pub fn result_column(&self, lane: i64) -> i64 {
        lane % 16
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mfma(m: i64, n: i64, k: i64, blocks: i64, input_bits: i64, output_bits: i64) -> MatrixInstruction {
        MatrixInstruction {
            mnemonic: "test",
            family: Family::Mfma,
            m,
            n,
            k,
            blocks,
            input_bits,
            output_bits,
            issue_cycles: 32,
        }
    }

    /// The register (of 32 bits) holding element `element` of a fragment.
    fn register_of(instruction: &MatrixInstruction, element: i64) -> i64 {
        element * instruction.input_bits / 32
    }

    #[test]
    fn placement_matches_the_calculators_documented_examples() {
        // v_mfma_f32_4x4x1f32 (16 blocks): A[i][k].block lane 4 * block + i;
        // C/D[i][j].block GPR i, lane 4 * block + j.
        let small = mfma(4, 4, 1, 16, 32, 32);
        for block in 0..16 {
            for i in 0..4 {
                assert_eq!(small.input_lanes(i, 0, block), (vec![4 * block + i], 0));
                for j in 0..4 {
                    assert_eq!(small.output_place(i, j, block), (4 * block + j, i));
                }
            }
        }
        // v_mfma_f32_4x4x4f16: A[1][2].B4 = v1{17}.[15:0];
        // D[3][2].B1 = v3{6}.
        let half = mfma(4, 4, 4, 16, 16, 32);
        let (lanes, element) = half.input_lanes(1, 2, 4);
        assert_eq!((lanes, register_of(&half, element), element % 2), (vec![17], 1, 0));
        assert_eq!(half.output_place(3, 2, 1), (6, 3));
        // v_mfma_f64_4x4x4f64, block 0: D[1][0] is v[1:0]{16}, D[3][3]
        // v[1:0]{51}.
        let double = mfma(4, 4, 4, 4, 64, 64);
        assert_eq!(double.output_place(1, 0, 0), (16, 0));
        assert_eq!(double.output_place(3, 3, 0), (51, 0));
        // The calculator's formulas for 32x32 and 16x16 results:
        // GPR 16 * block + 4 * floor(i / 8) + (i % 4), lane
        // (32 * floor(i / 4)) % 64 + j; GPR 4 * block + (i % 4), lane
        // 16 * floor(i / 4) + j.
        let wide = mfma(32, 32, 1, 2, 32, 32);
        let square = mfma(16, 16, 1, 4, 32, 32);
        for block in 0..4 {
            for i in 0..32 {
                for j in 0..32 {
                    if block < 2 {
                        assert_eq!(
                            wide.output_place(i, j, block),
                            ((32 * (i / 4)) % 64 + j, 16 * block + 4 * (i / 8) + i % 4)
                        );
                    }
                    if i < 16 && j < 16 {
                        assert_eq!(square.output_place(i, j, block), (16 * (i / 4) + j, 4 * block + i % 4));
                    }
                }
            }
        }
        // RDNA 3 WMMA (wave32): A[i][k] in lanes i and i + 16, element k;
        // D[i][j] in register floor(i / 2), lane 16 * (i % 2) + j.
        let wmma = WMMA_I32_16X16X16_IU8;
        assert_eq!(wmma.input_lanes(5, 9, 0), (vec![5, 21], 9));
        assert_eq!(wmma.output_place(5, 3, 0), (19, 2));
    }

    #[test]
    fn fragment_rules_invert_the_placement_of_every_emitted_instruction() {
        for instruction in [MFMA_F32_16X16X4, MFMA_I32_16X16X16_I8, MFMA_I32_16X16X32_I8, WMMA_I32_16X16X16_IU8] {
            let lanes = instruction.wave_size();
            for lane in 0..lanes {
                for element in 0..instruction.input_elements() {
                    let (outer, k) = (instruction.fragment_outer(lane), instruction.fragment_k(lane, element));
                    assert!(k < instruction.k, "{}: lane {lane} element {element}", instruction.mnemonic);
                    let (holders, held) = instruction.input_lanes(outer, k, 0);
                    assert!(holders.contains(&lane) && held == element, "{}: lane {lane}", instruction.mnemonic);
                }
                for register in 0..instruction.output_elements() {
                    let (i, j) = (instruction.result_row(lane, register), instruction.result_column(lane));
                    assert_eq!(instruction.output_place(i, j, 0), (lane, register), "{}", instruction.mnemonic);
                }
            }
            // Every entry is held somewhere: the fragments cover A and D.
            assert_eq!(
                lanes * instruction.input_elements(),
                instruction.m
                    * instruction.k
                    * instruction.blocks
                    * if instruction.family == Family::Wmma { lanes / 16 } else { 1 }
            );
            assert_eq!(lanes * instruction.output_elements(), instruction.m * instruction.n);
        }
    }
}
