//! Values of the reference interpreter: scalars and tensors of exact
//! numbers, rounded to their element type after every operation so results
//! match compiled code.

use crate::{ElementType, HostArray};
use half::{bf16, f16};

/// One number: floats as f64 rounded to their type, integers as i64
/// wrapped to their width (i1 as 0/1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Num {
    F(f64),
    I(i64),
}

impl Num {
    pub fn f(self) -> f64 {
        match self {
            Num::F(value) => value,
            Num::I(value) => value as f64,
        }
    }

    pub fn i(self) -> i64 {
        match self {
            Num::I(value) => value,
            Num::F(value) => value as i64,
        }
    }
}

/// Rounds or wraps `value` to `element`.
pub fn normalize(element: ElementType, value: Num) -> Num {
    match element {
        ElementType::F64 => Num::F(value.f()),
        ElementType::F32 => Num::F(value.f() as f32 as f64),
        ElementType::F16 => Num::F(f16::from_f64(value.f()).to_f64()),
        ElementType::BF16 => Num::F(bf16::from_f64(value.f()).to_f64()),
        ElementType::I1 => Num::I(value.i() & 1),
        ElementType::I8 => Num::I(value.i() as i8 as i64),
        ElementType::I16 => Num::I(value.i() as i16 as i64),
        ElementType::I32 => Num::I(value.i() as i32 as i64),
        ElementType::I64 | ElementType::Index => Num::I(value.i()),
        // Kernels compute on the signless type (two's complement values).
        unsigned => normalize(unsigned.signless(), value),
    }
}

/// The padding value: NaN for floats, the minimum for integers.
pub fn poison(element: ElementType) -> Num {
    match element {
        e if e.is_float() => Num::F(f64::NAN),
        ElementType::I1 => Num::I(0),
        ElementType::I8 => Num::I(i8::MIN as i64),
        ElementType::I16 => Num::I(i16::MIN as i64),
        ElementType::I32 => Num::I(i32::MIN as i64),
        ElementType::U8 | ElementType::U16 | ElementType::U32 => poison(element.signless()),
        _ => Num::I(i64::MIN),
    }
}

/// Element `i` as kernels see it (unsigned arrays as their signless type).
pub fn read(array: &HostArray, i: usize) -> Num {
    if array.element.is_float() { Num::F(array.get(i)) } else { normalize(array.element, Num::I(array.get_int(i))) }
}

pub fn write(array: &mut HostArray, i: usize, value: Num) {
    if array.element.is_float() { array.set(i, value.f()) } else { array.set_int(i, value.i()) }
}

/// A block value.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    pub element: ElementType,
    pub shape: Vec<usize>,
    pub data: Vec<Num>,
}

impl Tensor {
    pub fn filled(element: ElementType, shape: &[usize], value: Num) -> Self {
        Self { element, shape: shape.to_vec(), data: vec![normalize(element, value); shape.iter().product()] }
    }

    /// Row-major strides.
    pub fn strides(shape: &[usize]) -> Vec<usize> {
        let mut strides = vec![1; shape.len()];
        for d in (0..shape.len().saturating_sub(1)).rev() {
            strides[d] = strides[d + 1] * shape[d + 1];
        }
        strides
    }
}

/// Calls `f` with every multi-index of `shape`, in row-major order.
pub fn for_each_index(shape: &[usize], mut f: impl FnMut(&[usize])) {
    if shape.contains(&0) {
        return;
    }
    let mut index = vec![0; shape.len()];
    loop {
        f(&index);
        let mut d = shape.len();
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            index[d] += 1;
            if index[d] < shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
}

/// A value in the interpreter's environment.
#[derive(Clone, Debug)]
pub enum Val {
    Scalar(ElementType, Num),
    Tensor(Tensor),
    /// A memref: an index into the interpreter's buffers.
    Ref(usize),
}
