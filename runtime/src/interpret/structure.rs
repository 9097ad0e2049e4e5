//! The interpreter's tensor ops that move elements without computing:
//! `linalg.transpose`, `tensor.extract_slice`, `tensor.insert_slice`.

use super::{
    Op, Result, fail, scalar, tensor,
    value::{Tensor, Val, for_each_index},
};

/// MLIR's marker of a dynamic entry in `static_offsets` and friends.
const DYNAMIC: i64 = i64::MIN;

/// Offsets, sizes and strides of a slice op: its `static_*` attributes,
/// dynamic entries taken in order from `dynamic` (the operands after the
/// tensors).
fn slice_of(op: &Op, dynamic: &[Val]) -> Result<[Vec<usize>; 3]> {
    let mut dynamic = dynamic.iter();
    let mut mixed = |name: &str| -> Result<Vec<usize>> {
        op.integers(name)
            .into_iter()
            .map(|value| {
                let value = if value == DYNAMIC {
                    scalar(dynamic.next().ok_or_else(|| super::InterpretError(format!("{name}: missing operand")))?)?
                        .i()
                } else {
                    value
                };
                usize::try_from(value).map_err(|_| super::InterpretError(format!("{name}: negative entry {value}")))
            })
            .collect()
    };
    Ok([mixed("static_offsets")?, mixed("static_sizes")?, mixed("static_strides")?])
}

/// Where element `index` of a slice (of the slice's full rank) is in the
/// sliced tensor, row-major; `None` out of bounds.
fn sliced(index: &[usize], [offsets, _, strides]: &[Vec<usize>; 3], shape: &[usize]) -> Option<usize> {
    let mut at = 0;
    for (d, &i) in index.iter().enumerate() {
        let position = offsets[d] + i * strides[d];
        if position >= shape[d] {
            return None;
        }
        at = at * shape[d] + position;
    }
    Some(at)
}

pub(super) fn structure_op(op: &Op, name: &str, operands: &[Val]) -> Result<Val> {
    match name {
        "linalg.transpose" => {
            let input = tensor(&operands[0])?;
            let permutation: Vec<usize> = op.integers("permutation").into_iter().map(|p| p as usize).collect();
            if permutation.len() != input.shape.len() || permutation.iter().any(|&p| p >= input.shape.len()) {
                return fail("linalg.transpose: bad permutation");
            }
            let shape: Vec<usize> = permutation.iter().map(|&p| input.shape[p]).collect();
            let strides = Tensor::strides(&input.shape);
            let mut data = Vec::with_capacity(input.data.len());
            // Result element r is input element i with i[permutation[d]] = r[d].
            for_each_index(&shape, |index| {
                let at: usize = index.iter().zip(&permutation).map(|(&i, &p)| i * strides[p]).sum();
                data.push(input.data[at]);
            });
            Ok(Val::Tensor(Tensor { element: input.element, shape, data }))
        }
        "tensor.extract_slice" => {
            let input = tensor(&operands[0])?;
            let slice = slice_of(op, &operands[1..])?;
            let (element, shape) = super::value_type(op.results()[0])?;
            let mut data = Vec::with_capacity(shape.iter().product());
            let mut outside = false;
            // The slice's full-rank index space in row-major order is the
            // (possibly rank-reduced) result's.
            for_each_index(&slice[1], |index| match sliced(index, &slice, &input.shape) {
                Some(at) => data.push(input.data[at]),
                None => outside = true,
            });
            if outside {
                return fail("tensor.extract_slice out of bounds");
            }
            Ok(Val::Tensor(Tensor { element, shape, data }))
        }
        "tensor.insert_slice" => {
            let source = tensor(&operands[0])?;
            let mut dest = tensor(&operands[1])?.clone();
            let slice = slice_of(op, &operands[2..])?;
            let mut next = source.data.iter();
            let mut outside = false;
            for_each_index(&slice[1], |index| match (sliced(index, &slice, &dest.shape), next.next()) {
                (Some(at), Some(&value)) => dest.data[at] = value,
                _ => outside = true,
            });
            if outside {
                return fail("tensor.insert_slice out of bounds");
            }
            Ok(Val::Tensor(dest))
        }
        _ => fail(format!("the interpreter does not support '{name}'")),
    }
}
