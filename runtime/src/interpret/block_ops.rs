//! The interpreter's `block`, `tensor` and `memref` ops.

use super::{
    Interpreter, Op, Result, fail, scalar, tensor,
    value::{Num, Tensor, Val, for_each_index, normalize, poison, read, write},
    value_type,
};
use crate::ElementType;
use tessel_dialects::{AtomicKind, AtomicUpdate, Identity, ReduceKind};

fn buffer(val: &Val) -> Result<usize> {
    match val {
        Val::Ref(id) => Ok(*id),
        _ => fail("expected a memref"),
    }
}

fn linear(index: &[usize], strides: &[usize]) -> usize {
    index.iter().zip(strides).map(|(i, s)| i * s).sum()
}

/// The element of the ref at `offsets + index`, if in bounds.
fn ref_index(shape: &[usize], offsets: &[i64], index: &[usize]) -> Option<usize> {
    flat_position(shape, &window_positions(offsets, index))
}

/// Where block element `index` of a window at `offsets` (none: 0) lies.
fn window_positions(offsets: &[i64], index: &[usize]) -> Vec<i64> {
    index.iter().enumerate().map(|(d, &i)| offsets.get(d).copied().unwrap_or(0) + i as i64).collect()
}

/// The row-major element at `positions` of an array of `shape`, if inside.
fn flat_position(shape: &[usize], positions: &[i64]) -> Option<usize> {
    if positions.len() != shape.len() {
        return None;
    }
    let strides = Tensor::strides(shape);
    let mut at = 0;
    for d in 0..shape.len() {
        if positions[d] < 0 || positions[d] >= shape[d] as i64 {
            return None;
        }
        at += positions[d] as usize * strides[d];
    }
    Some(at)
}

/// A gather's or scatter's indices along one dimension of the ref.
struct Indexed<'t> {
    dim: usize,
    indices: &'t Tensor,
}

impl Indexed<'_> {
    /// The ref element block element `index` reads (a gather, `clamp`ed
    /// into the ref as JAX's gathers are) or writes (a scatter: `None`
    /// outside the ref, where JAX's scatters drop the element).
    fn position(&self, shape: &[usize], offsets: &[i64], index: &[usize], clamp: bool) -> Option<usize> {
        let mut positions = window_positions(offsets, index);
        let along = offsets.get(self.dim).copied().unwrap_or(0) + self.indices.data[index[self.dim]].i();
        positions[self.dim] = if clamp { along.clamp(0, shape[self.dim] as i64 - 1) } else { along };
        flat_position(shape, &positions)
    }
}

/// A combiner's identity for `element`.
fn identity(identity: Identity, element: ElementType) -> Num {
    let float = element.is_float();
    match identity {
        Identity::Zero if float => Num::F(0.0),
        Identity::One if float => Num::F(1.0),
        Identity::Lowest if float => Num::F(f64::NEG_INFINITY),
        Identity::Highest if float => Num::F(f64::INFINITY),
        Identity::Zero | Identity::UnsignedLowest => Num::I(0),
        Identity::One => Num::I(1),
        // The signed extremes of the element's width (i1's are -1 and 0).
        Identity::Lowest => {
            Num::I(normalize(element, Num::I(i64::MIN >> (64 - super::elementwise::bits(element)))).i())
        }
        Identity::Highest => {
            Num::I(normalize(element, Num::I(i64::MAX >> (64 - super::elementwise::bits(element)))).i())
        }
        // All ones: the largest unsigned value.
        Identity::UnsignedHighest => Num::I(normalize(element, Num::I(-1)).i()),
    }
}

/// A `block.reduce` of `kind` combining `x` into `acc`.
fn combine(kind: ReduceKind, element: ElementType, x: Num, acc: Num) -> Result<Num> {
    let name = kind.combiner().op(element.is_float()).ok_or_else(|| {
        super::InterpretError(format!("block.reduce: '{}' is not defined on {element:?}", kind.keyword()))
    })?;
    super::elementwise::evaluate(name, element, element, 0, &[x, acc]).map_err(super::InterpretError)
}

/// The new element of a `block.atomic_rmw` of `kind` combining `x` into
/// `current` (`x` itself for xchg).
fn atomic_update(kind: AtomicKind, element: ElementType, x: Num, current: Num) -> Result<Num> {
    let update = kind.update(element.is_float()).ok_or_else(|| {
        super::InterpretError(format!("block.atomic_rmw: '{}' is not defined on {element:?}", kind.keyword()))
    })?;
    let AtomicUpdate::Combine(name) = update else { return Ok(x) };
    super::elementwise::evaluate(name, element, element, 0, &[x, current]).map_err(super::InterpretError)
}

/// Whether two elements are equal bit for bit (`block.atomic_cas`).
fn same_bits(element: ElementType, a: Num, b: Num) -> bool {
    if element.is_float() { a.f().to_bits() == b.f().to_bits() } else { a.i() == b.i() }
}

impl Interpreter {
    pub(super) fn block_op(&mut self, op: &Op, name: &str, operands: &[Val]) -> Result<Option<Val>> {
        let result_type = op.results().first().map(|&r| value_type(r)).transpose()?;
        Ok(Some(match name {
            "block.load" => {
                let segments = op.segments();
                let (element, shape) = result_type.unwrap();
                let id = buffer(&operands[0])?;
                let offsets: Vec<i64> =
                    operands[1..1 + segments[1]].iter().map(|v| scalar(v).map(Num::i)).collect::<Result<_>>()?;
                let mask = (segments[2] == 1).then(|| tensor(&operands[1 + segments[1]])).transpose()?;
                let other = (segments[3] == 1).then(|| scalar(&operands[1 + segments[1] + segments[2]])).transpose()?;
                let gather = match segments.get(4) {
                    Some(1) => Some(Indexed {
                        dim: op.integer("gather_dim") as usize,
                        indices: tensor(&operands[operands.len() - 1])?,
                    }),
                    _ => None,
                };
                let source = &self.buffers[id];
                let mut data = Vec::new();
                let mut error = None;
                let mut k = 0;
                for_each_index(&shape, |index| {
                    let masked_off = mask.is_some_and(|m| m.data[k].i() == 0);
                    k += 1;
                    if masked_off {
                        data.push(normalize(element, other.unwrap_or(poison(element))));
                        return;
                    }
                    let at = match &gather {
                        Some(gather) => gather.position(&source.shape, &offsets, index, true),
                        None => ref_index(&source.shape, &offsets, index),
                    };
                    match at {
                        Some(at) => data.push(read(source, at)),
                        None => {
                            error = Some(format!("block.load reads out of bounds at {index:?} + {offsets:?}"));
                            data.push(poison(element));
                        }
                    }
                });
                if let Some(error) = error {
                    return fail(error);
                }
                Val::Tensor(Tensor { element, shape, data })
            }
            "block.atomic_cas_element" => {
                let (expected, new) = (scalar(&operands[0])?, scalar(&operands[1])?);
                let id = buffer(&operands[2])?;
                let indices: Vec<i64> = operands[3..].iter().map(|v| scalar(v).map(Num::i)).collect::<Result<_>>()?;
                let target = &mut self.buffers[id];
                let shape = target.shape.clone();
                let Some(at) = ref_index(&shape, &indices, &vec![0; shape.len()]) else {
                    return fail(format!("{name} at {indices:?} is out of bounds"));
                };
                let (element, current) = (target.element, read(target, at));
                if same_bits(element, current, expected) {
                    write(target, at, new);
                }
                Val::Scalar(element, current)
            }
            "block.store" | "block.atomic_rmw" | "block.atomic_cas" => {
                // Operands: [compare,] value, ref, offsets, mask.
                let segments = op.segments();
                let cas = name == "block.atomic_cas";
                let first = cas as usize;
                let compare = if cas { Some(tensor(&operands[0])?.clone()) } else { None };
                let value = tensor(&operands[first])?.clone();
                let id = buffer(&operands[first + 1])?;
                let offsets: Vec<i64> = operands[first + 2..first + 2 + segments[first + 2]]
                    .iter()
                    .map(|v| scalar(v).map(Num::i))
                    .collect::<Result<_>>()?;
                let after_offsets = first + 2 + segments[first + 2];
                let mask = (segments[first + 3] == 1).then(|| tensor(&operands[after_offsets])).transpose()?;
                let scatter = match segments.get(first + 4) {
                    Some(1) => Some(Indexed {
                        dim: op.integer("scatter_dim") as usize,
                        indices: tensor(&operands[operands.len() - 1])?,
                    }),
                    _ => None,
                };
                let atomic = (name == "block.atomic_rmw")
                    .then(|| {
                        AtomicKind::of(*op)
                            .ok_or_else(|| super::InterpretError("block.atomic_rmw: unknown kind".into()))
                    })
                    .transpose()?;
                // The elements as they were, for atomics that return them
                // (zero where masked off).
                let mut olds = vec![normalize(value.element, Num::I(0)); value.data.len()];
                let target = &mut self.buffers[id];
                let shape = target.shape.clone();
                let mut k = 0;
                let mut error = None;
                for_each_index(&value.shape.clone(), |index| {
                    let (x, masked_off) = (value.data[k], mask.is_some_and(|m| m.data[k].i() == 0));
                    k += 1;
                    if masked_off || error.is_some() {
                        return;
                    }
                    let at = match &scatter {
                        Some(scatter) => match scatter.position(&shape, &offsets, index, false) {
                            Some(at) => at,
                            // Outside the ref: dropped.
                            None => return,
                        },
                        None => match ref_index(&shape, &offsets, index) {
                            Some(at) => at,
                            None => {
                                error = Some(format!("{name} writes out of bounds at {index:?} + {offsets:?}"));
                                return;
                            }
                        },
                    };
                    let current = read(target, at);
                    olds[k - 1] = current;
                    let stored = match (&compare, atomic) {
                        (Some(compare), _) => {
                            if same_bits(value.element, current, compare.data[k - 1]) {
                                x
                            } else {
                                current
                            }
                        }
                        (None, Some(kind)) => match atomic_update(kind, value.element, x, current) {
                            Ok(v) => v,
                            Err(e) => {
                                error = Some(e.0);
                                return;
                            }
                        },
                        (None, None) => x,
                    };
                    write(target, at, stored);
                });
                if let Some(error) = error {
                    return fail(error);
                }
                if op.results().is_empty() {
                    return Ok(None);
                }
                Val::Tensor(Tensor { element: value.element, shape: value.shape, data: olds })
            }
            "block.dot" => {
                let (element, shape) = result_type.unwrap();
                let (a, b) = (tensor(&operands[0])?, tensor(&operands[1])?);
                let batched = shape.len() == 3;
                let (m, n) = (shape[shape.len() - 2], shape[shape.len() - 1]);
                // A transposed operand holds its matrix with the last two
                // dimensions swapped: lhs K x M, rhs N x K.
                let (transpose_a, transpose_b) = (op.has("transpose_lhs"), op.has("transpose_rhs"));
                let k = if transpose_a { a.shape[a.shape.len() - 2] } else { a.shape[a.shape.len() - 1] };
                let batches = if batched { shape[0] } else { 1 };
                let mut data = match operands.get(2) {
                    Some(acc) => tensor(acc)?.data.clone(),
                    None => vec![normalize(element, Num::I(0)); batches * m * n],
                };
                let eval = |name, args: &[Num]| {
                    super::elementwise::evaluate(name, element, element, 0, args).map_err(super::InterpretError)
                };
                // One step of the sum: a fused multiply-add for floats (one
                // rounding, as the compiled FMA outer products), wrapping
                // integer arithmetic otherwise.
                let step = |acc: Num, x: Num, y: Num| -> Result<Num> {
                    match element {
                        ElementType::F32 => Ok(Num::F((x.f() as f32).mul_add(y.f() as f32, acc.f() as f32) as f64)),
                        _ if element.is_float() => eval("math.fma", &[x, y, acc]),
                        _ => eval("arith.addi", &[acc, eval("arith.muli", &[x, y])?]),
                    }
                };
                for batch in 0..batches {
                    for i in 0..m {
                        for j in 0..n {
                            let out = batch * m * n + i * n + j;
                            let mut acc = data[out];
                            for p in 0..k {
                                // Operands widen to the result type first.
                                let a_at = if transpose_a { p * m + i } else { i * k + p };
                                let b_at = if transpose_b { j * k + p } else { p * n + j };
                                let x = normalize(element, a.data[batch * m * k + a_at]);
                                let y = normalize(element, b.data[batch * k * n + b_at]);
                                acc = step(acc, x, y)?;
                            }
                            data[out] = acc;
                        }
                    }
                }
                Val::Tensor(Tensor { element, shape, data })
            }
            "block.reduce" => {
                let (element, shape) = result_type.unwrap();
                let input = tensor(&operands[0])?;
                let kind =
                    ReduceKind::of(*op).ok_or_else(|| super::InterpretError("block.reduce: unknown kind".into()))?;
                let dims = op.integers("dims");
                let strides = Tensor::strides(&shape);
                let mut data = vec![identity(kind.identity(), element); shape.iter().product::<usize>().max(1)];
                let mut k = 0;
                let mut outcome = Ok(());
                for_each_index(&input.shape, |index| {
                    let kept: Vec<usize> = index
                        .iter()
                        .enumerate()
                        .filter(|(d, _)| !dims.contains(&(*d as i64)))
                        .map(|(_, &i)| i)
                        .collect();
                    let out = linear(&kept, &strides);
                    match combine(kind, element, input.data[k], data[out]) {
                        Ok(v) => data[out] = v,
                        Err(e) => outcome = Err(e),
                    }
                    k += 1;
                });
                outcome?;
                Val::Tensor(Tensor { element, shape, data })
            }
            "block.broadcast" => {
                let (element, shape) = result_type.unwrap();
                let input = tensor(&operands[0])?;
                let added = op.integers("dims");
                let input_strides = Tensor::strides(&input.shape);
                let mut data = Vec::new();
                for_each_index(&shape, |index| {
                    let mut at = 0;
                    let mut d_in = 0;
                    for (d, &i) in index.iter().enumerate() {
                        if added.contains(&(d as i64)) {
                            continue;
                        }
                        let i = if input.shape[d_in] == 1 { 0 } else { i };
                        at += i * input_strides[d_in];
                        d_in += 1;
                    }
                    data.push(input.data[at]);
                });
                Val::Tensor(Tensor { element, shape, data })
            }
            "block.iota" => {
                let (element, shape) = result_type.unwrap();
                let dim = op.integer("dim") as usize;
                let mut data = Vec::new();
                for_each_index(&shape, |index| data.push(normalize(element, Num::I(index[dim] as i64))));
                Val::Tensor(Tensor { element, shape, data })
            }
            "tensor.splat" => {
                let (element, shape) = result_type.unwrap();
                Val::Tensor(Tensor::filled(element, &shape, scalar(&operands[0])?))
            }
            "tensor.empty" => {
                let (element, shape) = result_type.unwrap();
                Val::Tensor(Tensor::filled(element, &shape, poison(element)))
            }
            "tensor.extract" => {
                let input = tensor(&operands[0])?;
                let index: Vec<usize> =
                    operands[1..].iter().map(|v| scalar(v).map(|n| n.i() as usize)).collect::<Result<_>>()?;
                let at = linear(&index, &Tensor::strides(&input.shape));
                Val::Scalar(
                    input.element,
                    *input.data.get(at).ok_or_else(|| super::InterpretError("tensor.extract out of bounds".into()))?,
                )
            }
            "tensor.from_elements" => {
                let (element, shape) = result_type.unwrap();
                Val::Tensor(Tensor { element, shape, data: operands.iter().map(scalar).collect::<Result<_>>()? })
            }
            "tensor.expand_shape" | "tensor.collapse_shape" | "tensor.reshape" => {
                let (element, shape) = result_type.unwrap();
                Val::Tensor(Tensor { element, shape, data: tensor(&operands[0])?.data.clone() })
            }
            "memref.load" => {
                let id = buffer(&operands[0])?;
                let source = &self.buffers[id];
                let index: Vec<usize> =
                    operands[1..].iter().map(|v| scalar(v).map(|n| n.i() as usize)).collect::<Result<_>>()?;
                let at = ref_index(&source.shape, &[], &index)
                    .ok_or_else(|| super::InterpretError("memref.load out of bounds".into()))?;
                Val::Scalar(source.element, read(source, at))
            }
            "memref.store" => {
                let id = buffer(&operands[1])?;
                let index: Vec<usize> =
                    operands[2..].iter().map(|v| scalar(v).map(|n| n.i() as usize)).collect::<Result<_>>()?;
                let target = &mut self.buffers[id];
                let at = ref_index(&target.shape, &[], &index)
                    .ok_or_else(|| super::InterpretError("memref.store out of bounds".into()))?;
                write(target, at, scalar(&operands[0])?);
                return Ok(None);
            }
            _ => return fail(format!("the interpreter does not support '{name}'")),
        }))
    }
}
