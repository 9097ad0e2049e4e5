//! `tessel-fast-math`: `math.exp` and `math.tanh` on f32 (scalars or
//! vectors) as polynomial approximations in plain arith/math ops.
//!
//! Lowered as they are, both become calls of libm's `expf`/`tanhf`, and a
//! call in a loop body stops LLVM from vectorizing the loop: softmax and
//! attention spent most of their time there. Written as FMAs, `floor`,
//! integer shifts and bitcasts, the loops vectorize to the host's width.
//!
//! - exp: x clamped to [-104, 89]; n = x log2(e) rounded to an integer;
//!   r = x - n ln 2 (two-part ln 2, Cody-Waite); e^r by a degree-7
//!   polynomial (Cephes coefficients) in Horner form with FMAs; times 2^n
//!   applied as two powers of two, so overflow gives inf and small results
//!   underflow gradually. NaN is passed through. Within 1.5 ulp of e^x over
//!   the whole f32 range (test/accuracy's bound; 0.98 ulp measured).
//!   n is rounded by adding the magic number 1.5 * 2^23 (an FMA), whose
//!   sum's bits give n as an integer without a conversion: a NaN stays NaN
//!   through every step, with no select for it (an fptosi would be poison).
//!   On AVX-512 targets 2^n is `llvm.ldexp`, one `vscalefps` per vector
//!   (which rounds gradual underflow, overflows to inf and propagates NaN
//!   by itself; n = floor(x log2(e) + 1/2), converted with a NaN-free
//!   bound): the exponent's integer arithmetic and two multiplies go.
//!   Elsewhere ldexp expands to a long sequence, so other targets keep
//!   the two powers of two.
//! - tanh: |x| < 0.625 by an odd polynomial (x + x^3 P(x^2)); otherwise
//!   sign(x) (1 - 2 / (e^{2|x|} + 1)) with the exp above.
//!
//! `math.rsqrt` is left alone: it already lowers to vector square roots and
//! divisions at full vector rate.

use crate::cpu::cpu_model::CpuModel;
use crate::support::handles::{raw_op, value_type};
use crate::support::template::{emit, emit_line};
use crate::{PassDefinition, PassError, support::ir::print_type, support::template};
use melior::ir::OperationRef;
use mlir_sys::*;
use tessel_dialects::knobs;

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-fast-math",
    name: "TesselFastMath",
    description: "Expand f32 math.exp and math.tanh into vectorizable polynomial approximations",
    anchor: "builtin.module",
    run,
};

/// The f32 type, or vector of f32, of an op's operand; its i32 and i1
/// counterparts and how to spell a constant of it.
struct Shape {
    float: String,
    int: String,
    mask: String,
    vector: bool,
    /// Lanes of a 1-D vector.
    lanes: Option<i64>,
}

impl Shape {
    fn of(value: MlirValue) -> Option<Shape> {
        // SAFETY: live IR (crate invariant, support/handles.rs); a value is read only after its kind is checked
        unsafe {
            let raw = value_type(value);
            let f32_type = mlirF32TypeGet(mlirTypeGetContext(raw));
            if mlirTypeEqual(raw, f32_type) {
                return Some(Shape {
                    float: "f32".into(),
                    int: "i32".into(),
                    mask: "i1".into(),
                    vector: false,
                    lanes: None,
                });
            }
            if mlirTypeIsAVector(raw) && mlirTypeEqual(mlirShapedTypeGetElementType(raw), f32_type) {
                let float = print_type(raw);
                let (int, mask) = (float.replace("xf32>", "xi32>"), float.replace("xf32>", "xi1>"));
                let lanes = (mlirShapedTypeGetRank(raw) == 1).then(|| mlirShapedTypeGetDimSize(raw, 0));
                return Some(Shape { float, int, mask, vector: true, lanes });
            }
            None
        }
    }

    /// The op computing `llvm.ldexp` on this shape: the LLVM dialect's
    /// for scalars, which takes no vector exponent, the intrinsic's call
    /// for 1-D vectors (LLVM's vector form).
    fn ldexp(&self) -> String {
        match self.lanes {
            None => "llvm.intr.ldexp".into(),
            Some(lanes) => format!("llvm.call_intrinsic \"llvm.ldexp.v{lanes}f32.v{lanes}i32\""),
        }
    }

    /// `%name = arith.constant <value> : <float or int type>`.
    fn constant(&self, body: &mut String, name: &str, value: &str, integer: bool) {
        let ty = if integer { &self.int } else { &self.float };
        let value = if self.vector { format!("dense<{value}>") } else { value.to_string() };
        emit_line!(body, "%{name} = arith.constant {value} : {ty}");
    }
}

/// e^%x into %exp (the names of the body's values are prefixed with `p`);
/// `scalef`: 2^n by `llvm.ldexp` (AVX-512's `vscalefps`).
fn exp_body(shape: &Shape, body: &mut String, x: &str, p: &str, scalef: bool) {
    let f = &shape.float;
    let constants = [
        ("low", "-104.0"),
        ("high", "89.0"),
        ("log2e", "1.44269504088896341"),
        ("ln2_hi", "-0.693359375"),
        ("ln2_lo", "2.12194440e-4"),
        ("one", "1.0"),
        ("c7", "1.9875691500e-4"),
        ("c6", "1.3981999507e-3"),
        ("c5", "8.3334519073e-3"),
        ("c4", "4.1665795894e-2"),
        ("c3", "1.6666665459e-1"),
        ("c2", "5.0000001201e-1"),
    ];
    for (name, value) in constants {
        shape.constant(body, &format!("{p}{name}"), value, false);
    }
    emit!(
        body,
        "%{p}xl = arith.maximumf {x}, %{p}low : {f}\n\
         %{p}xc = arith.minimumf %{p}xl, %{p}high : {f}\n"
    );
    if scalef {
        shape.constant(body, &format!("{p}half"), "0.5", false);
        emit!(
            body,
            "%{p}t = math.fma %{p}xc, %{p}log2e, %{p}half : {f}\n\
             %{p}n = math.floor %{p}t : {f}\n"
        );
    } else {
        // n = round(x log2(e)) by the magic number 1.5 * 2^23: the sum's
        // low mantissa bits hold n + 2^22, so n as an integer is the sum's
        // bits minus the magic's, not an fptosi, which is poison for a
        // NaN x (so the result needed a NaN select; now a NaN x is NaN all
        // along, through e and the two multiplies).
        shape.constant(body, &format!("{p}magic"), "12582912.0", false);
        emit!(
            body,
            "%{p}t = math.fma %{p}xc, %{p}log2e, %{p}magic : {f}\n\
             %{p}n = arith.subf %{p}t, %{p}magic : {f}\n"
        );
    }
    emit!(
        body,
        "%{p}r0 = math.fma %{p}n, %{p}ln2_hi, %{p}xc : {f}\n\
         %{p}r = math.fma %{p}n, %{p}ln2_lo, %{p}r0 : {f}\n\
         %{p}r2 = arith.mulf %{p}r, %{p}r : {f}\n\
         %{p}h1 = math.fma %{p}c7, %{p}r, %{p}c6 : {f}\n\
         %{p}h2 = math.fma %{p}h1, %{p}r, %{p}c5 : {f}\n\
         %{p}h3 = math.fma %{p}h2, %{p}r, %{p}c4 : {f}\n\
         %{p}h4 = math.fma %{p}h3, %{p}r, %{p}c3 : {f}\n\
         %{p}h5 = math.fma %{p}h4, %{p}r, %{p}c2 : {f}\n\
         %{p}q = math.fma %{p}h5, %{p}r2, %{p}r : {f}\n\
         %{p}e = arith.addf %{p}q, %{p}one : {f}\n"
    );
    let i = &shape.int;
    if scalef {
        // e * 2^n by llvm.ldexp, which x86 lowers to vscalefps with
        // AVX-512: rounded gradual underflow, inf on overflow, NaN kept.
        // The exponent is made NaN-free (maxnumf against a bound below
        // every clamped n) so its conversion is never poison; a NaN x is
        // already NaN in e.
        shape.constant(body, &format!("{p}nlow"), "-151.0", false);
        emit!(
            body,
            "%{p}nn = arith.maxnumf %{p}n, %{p}nlow : {f}\n\
             %{p}ni = arith.fptosi %{p}nn : {f} to {i}\n\
             %{p}exp = {ldexp}(%{p}e, %{p}ni) : ({f}, {i}) -> {f}\n",
            ldexp = shape.ldexp()
        );
        return;
    }
    shape.constant(body, &format!("{p}magic_bits"), "1262485504", true);
    shape.constant(body, &format!("{p}bias"), "127", true);
    shape.constant(body, &format!("{p}shift"), "23", true);
    shape.constant(body, &format!("{p}i1"), "1", true);
    emit!(
        body,
        "%{p}tb = arith.bitcast %{p}t : {f} to {i}\n\
         %{p}ni = arith.subi %{p}tb, %{p}magic_bits : {i}\n\
         %{p}n1 = arith.shrsi %{p}ni, %{p}i1 : {i}\n\
         %{p}n2 = arith.subi %{p}ni, %{p}n1 : {i}\n\
         %{p}k1 = arith.addi %{p}n1, %{p}bias : {i}\n\
         %{p}k2 = arith.addi %{p}n2, %{p}bias : {i}\n\
         %{p}s1 = arith.shli %{p}k1, %{p}shift : {i}\n\
         %{p}s2 = arith.shli %{p}k2, %{p}shift : {i}\n\
         %{p}m1 = arith.bitcast %{p}s1 : {i} to {f}\n\
         %{p}m2 = arith.bitcast %{p}s2 : {i} to {f}\n\
         %{p}y1 = arith.mulf %{p}e, %{p}m1 : {f}\n\
         %{p}exp = arith.mulf %{p}y1, %{p}m2 : {f}\n"
    );
}

fn tanh_body(shape: &Shape, body: &mut String, scalef: bool) {
    let f = &shape.float;
    for (name, value) in [
        ("t5", "-5.70498872745e-3"),
        ("t4", "2.06390887954e-2"),
        ("t3", "-5.37397155531e-2"),
        ("t2", "1.33314422036e-1"),
        ("t1", "-3.33332819422e-1"),
        ("cut", "0.625"),
        ("two", "2.0"),
        ("one", "1.0"),
    ] {
        shape.constant(body, name, value, false);
    }
    emit!(
        body,
        "%z = arith.mulf %x, %x : {f}\n\
         %p1 = math.fma %t5, %z, %t4 : {f}\n\
         %p2 = math.fma %p1, %z, %t3 : {f}\n\
         %p3 = math.fma %p2, %z, %t2 : {f}\n\
         %p4 = math.fma %p3, %z, %t1 : {f}\n\
         %pz = arith.mulf %p4, %z : {f}\n\
         %small = math.fma %pz, %x, %x : {f}\n\
         %ax = math.absf %x : {f}\n\
         %ax2 = arith.mulf %ax, %two : {f}\n"
    );
    exp_body(shape, body, "%ax2", "e", scalef);
    emit!(
        body,
        "%ep1 = arith.addf %eexp, %one : {f}\n\
         %frac = arith.divf %two, %ep1 : {f}\n\
         %large = arith.subf %one, %frac : {f}\n\
         %signed = math.copysign %large, %x : {f}\n\
         %is_small = arith.cmpf olt, %ax, %cut : {f}\n\
         %r = arith.select %is_small, %small, %signed : {i1}, {f}\n",
        i1 = shape.mask
    );
}

/// Whether the code is for an x86 CPU with AVX-512 (`vscalefps`): 512-bit
/// vectors and x86's `vpmaddwd`, as recorded for a named CPU or the host's.
/// (Exp runs on scalars in loops LLVM vectorizes, so the vector width the
/// code is for, not the op's type, decides.)
fn targets_avx512(module: OperationRef<'static, '_>) -> bool {
    let (op, host) = (raw_op(module.to_raw()), CpuModel::host());
    knobs::VECTOR_BITS.integer_or(op, host.vector_bits) >= 512
        && knobs::PMADDWD.integer_or(op, i64::from(host.pmaddwd)) != 0
}

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    let avx512 = targets_avx512(module);
    let wanted = |name: &str| name == "math.exp" || name == "math.tanh";
    template::rewrite_each(module, wanted, |raw, name| {
        let operands = raw_op(raw).operands();
        let Some(shape) = Shape::of(operands[0]) else { return Ok(None) };
        // n-D vectors are no LLVM type the intrinsic takes.
        let scalef = avx512 && (!shape.vector || shape.lanes.is_some());
        let mut body = String::new();
        let result = if name == "math.exp" {
            exp_body(&shape, &mut body, "%x", "", scalef);
            "%exp"
        } else {
            tanh_body(&shape, &mut body, scalef);
            "%r"
        };
        let f = &shape.float;
        let text = format!("func.func @template(%x: {f}) -> {f} {{\n{body}return {result} : {f}\n}}\n");
        Ok(Some((text, operands[..1].to_vec())))
    })
}
