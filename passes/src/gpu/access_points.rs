//! Accesses of a memory buffer evaluated at every point of their iteration
//! spaces, for grid-to-gpu's private buffers: which element each access
//! touches, by which work-item, at which of the item's trips and loop
//! counters. Index computations are evaluated as integers (constants,
//! `arith` and `affine` index arithmetic), views followed to the buffer
//! (subviews, reshapes, casts); anything else is not followed (None).

use crate::gpu::work_items::freely_unrolled_trips;
use crate::support::handles::{raw_op, result_of, value_type};
use crate::support::ir::{block_arguments, constant_integer, defining_op, strides_and_offset};
use mlir_sys::*;
use std::collections::HashMap;
use tessel_dialects::IndexMap;

/// Points of one access's iteration space evaluated at most.
const MAX_POINTS: usize = 1 << 16;

/// What an access does.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Kind {
    Load,
    Store,
    /// A vector of this many lanes read or written (contiguous elements).
    VectorLoad(i64),
    VectorStore(i64),
}

impl Kind {
    /// Elements an access touches at once.
    pub(super) fn lanes(self) -> i64 {
        match self {
            Kind::VectorLoad(lanes) | Kind::VectorStore(lanes) => lanes,
            Kind::Load | Kind::Store => 1,
        }
    }
}

impl Found {
    /// Every element the access touches, at all of its points.
    pub(super) fn elements(&self) -> Vec<i64> {
        let lanes = self.kind.lanes();
        self.points.iter().flat_map(|point| (0..lanes).map(move |lane| point.element + lane)).collect()
    }
}

/// One evaluated point of an access: the item, its trip, the access's loop
/// counters and the first element touched.
pub(super) struct Point {
    pub(super) item: i64,
    pub(super) trip: i64,
    pub(super) counters: Vec<i64>,
    pub(super) element: i64,
}

/// An access, evaluated.
pub(super) struct Found {
    pub(super) op: MlirOperation,
    pub(super) kind: Kind,
    /// The block work (`scf.parallel`) the access belongs to.
    pub(super) parallel: MlirOperation,
    /// The loops between the access and its block work, outermost first.
    pub(super) counters: Vec<MlirValue>,
    /// Under a conditional inside its block work (it may not run).
    pub(super) conditional: bool,
    pub(super) points: Vec<Point>,
}

/// `op`'s access of `memref` (a view of `buffer`) with every point of its
/// iteration space evaluated; None when it is not an access this module
/// follows.
pub(super) fn find_access(op: MlirOperation, memref: MlirValue, buffer: MlirValue, threads: i64) -> Option<Found> {
    let raw = raw_op(op);
    let operands = raw.operands();
    let memref_type = value_type(memref);
    // SAFETY: types live in the context; the rank is read from a memref type
    let rank = unsafe { mlirShapedTypeGetRank(memref_type) } as usize;
    let vector_lanes = |value: MlirValue| -> Option<i64> {
        let r#type = value_type(value);
        // SAFETY: as above, shape queries on a vector type
        unsafe {
            (mlirTypeIsAVector(r#type) && mlirShapedTypeGetRank(r#type) == 1)
                .then(|| mlirShapedTypeGetDimSize(r#type, 0))
        }
    };
    // (kind, index operands); the memref must be the accessed operand.
    let (kind, indices) = match raw.name().as_str() {
        "memref.load" if operands[0].ptr == memref.ptr => (Kind::Load, &operands[1..]),
        "memref.store" if operands[1].ptr == memref.ptr => (Kind::Store, &operands[2..]),
        "vector.load" if operands[0].ptr == memref.ptr => {
            (Kind::VectorLoad(vector_lanes(result_of(op, 0))?), &operands[1..])
        }
        "vector.store" if operands[1].ptr == memref.ptr => {
            (Kind::VectorStore(vector_lanes(operands[0])?), &operands[2..])
        }
        // Unmasked, in bounds, along the innermost dimension.
        "vector.transfer_read" if operands[0].ptr == memref.ptr && operands.len() == rank + 2 => {
            in_bounds_minor(op)?;
            (Kind::VectorLoad(vector_lanes(result_of(op, 0))?), &operands[1..=rank])
        }
        "vector.transfer_write" if operands[1].ptr == memref.ptr && operands.len() == rank + 2 => {
            in_bounds_minor(op)?;
            (Kind::VectorStore(vector_lanes(operands[0])?), &operands[2..])
        }
        _ => return None,
    };
    if indices.len() != rank {
        return None;
    }
    let (strides, _) = strides_and_offset(memref_type)?;
    // A vector's lanes must be consecutive elements.
    if matches!(kind, Kind::VectorLoad(_) | Kind::VectorStore(_)) && strides.last() != Some(&1) {
        return None;
    }
    // The loops between the access and its block work.
    let mut loops = Vec::new();
    let mut parent = crate::support::handles::parent_of(op);
    let mut conditional = false;
    loop {
        let parent_raw = raw_op(parent);
        match parent_raw.name().as_str() {
            "scf.parallel" => break,
            "scf.if" => conditional = true,
            "scf.for" => {
                let bounds = parent_raw.operands();
                let (lower, upper, step) =
                    (constant_integer(bounds[0])?, constant_integer(bounds[1])?, constant_integer(bounds[2])?);
                if step <= 0 {
                    return None;
                }
                loops.push((block_arguments(parent_raw.region_block(0))[0], lower, upper, step));
            }
            _ => return None,
        }
        parent = crate::support::handles::parent_of(parent);
    }
    let parallel = parent;
    loops.reverse();
    let parallel_raw = raw_op(parallel);
    let bounds = parallel_raw.operands();
    let parallel_rank = bounds.len() / 3;
    let ivs = block_arguments(parallel_raw.region_block(0));
    let dims: Vec<(i64, i64, i64)> = (0..parallel_rank)
        .map(|d| {
            let (lower, upper, step) = (
                constant_integer(bounds[d])?,
                constant_integer(bounds[parallel_rank + d])?,
                constant_integer(bounds[2 * parallel_rank + d])?,
            );
            (step > 0).then_some((lower, (upper - lower + step - 1) / step, step))
        })
        .collect::<Option<_>>()?;
    // The item must run its iterations as a loop LLVM unrolls.
    freely_unrolled_trips(parallel, threads)?;
    let total: i64 = dims.iter().map(|&(_, trips, _)| trips).product();
    let inner: i64 = loops.iter().map(|&(_, lower, upper, step)| ((upper - lower + step - 1) / step).max(0)).product();
    if total.checked_mul(inner)? as usize > MAX_POINTS {
        return None;
    }
    let mut points = Vec::new();
    let mut environment: HashMap<usize, i64> = HashMap::new();
    for linear in 0..total {
        let mut rest = linear;
        for d in (0..parallel_rank).rev() {
            let (lower, trips, step) = dims[d];
            environment.insert(ivs[d].ptr as usize, lower + (rest % trips) * step);
            rest /= trips;
        }
        for counter in 0..inner {
            let mut rest = counter;
            let mut values = vec![0; loops.len()];
            for (position, &(iv, lower, upper, step)) in loops.iter().enumerate().rev() {
                let trips = (upper - lower + step - 1) / step;
                values[position] = lower + (rest % trips) * step;
                rest /= trips;
                environment.insert(iv.ptr as usize, values[position]);
            }
            let element = element_of(memref, indices, buffer, &strides, &environment)?;
            points.push(Point { item: linear % threads, trip: linear / threads, counters: values, element });
        }
    }
    Some(Found { op, kind, parallel, counters: loops.iter().map(|&(iv, ..)| iv).collect(), conditional, points })
}

/// A transfer's vector is unmasked, in bounds and along the innermost
/// dimension.
fn in_bounds_minor(op: MlirOperation) -> Option<()> {
    let raw = raw_op(op);
    // SAFETY: attributes of a live op, read after their kinds are checked
    unsafe {
        let map = raw.attribute("permutation_map");
        if map.ptr.is_null() || !mlirAttributeIsAAffineMap(map) {
            return None;
        }
        let map = mlirAffineMapAttrGetValue(map);
        if !mlirAffineMapIsMinorIdentity(map) || mlirAffineMapGetNumResults(map) != 1 {
            return None;
        }
        let in_bounds = raw.attribute("in_bounds");
        if in_bounds.ptr.is_null() || !mlirAttributeIsAArray(in_bounds) {
            return None;
        }
        (0..mlirArrayAttrGetNumElements(in_bounds))
            .all(|index| mlirBoolAttrGetValue(mlirArrayAttrGetElement(in_bounds, index)))
            .then_some(())
    }
}

/// The element of `buffer` at `indices` of its view `memref`.
fn element_of(
    memref: MlirValue,
    indices: &[MlirValue],
    buffer: MlirValue,
    strides: &[i64],
    environment: &HashMap<usize, i64>,
) -> Option<i64> {
    let mut element = view_offset(memref, buffer, environment)?;
    for (&index, &stride) in indices.iter().zip(strides) {
        element = element.checked_add(evaluate(index, environment)?.checked_mul(stride)?)?;
    }
    Some(element)
}

/// The element of `buffer` where its view `view` starts.
fn view_offset(view: MlirValue, buffer: MlirValue, environment: &HashMap<usize, i64>) -> Option<i64> {
    if view.ptr == buffer.ptr {
        return Some(0);
    }
    let op = defining_op(view)?;
    let raw = raw_op(op);
    let operands = raw.operands();
    let source = view_offset(operands[0], buffer, environment)?;
    if raw.name() != "memref.subview" {
        return Some(source);
    }
    let (strides, _) = strides_and_offset(value_type(operands[0]))?;
    // Dynamic offsets are the operands after the source, in order.
    let mut dynamic = operands[1..].iter();
    let mut offset = source;
    for (position, &static_offset) in raw.integers("static_offsets").iter().enumerate() {
        let value = if static_offset == tessel_dialects::DYNAMIC {
            evaluate(*dynamic.next()?, environment)?
        } else {
            static_offset
        };
        offset = offset.checked_add(value.checked_mul(*strides.get(position)?)?)?;
    }
    Some(offset)
}

/// The value of an index computation at a point (`environment`: the loop
/// counters); None for anything but constants and integer arithmetic.
fn evaluate(value: MlirValue, environment: &HashMap<usize, i64>) -> Option<i64> {
    if let Some(&known) = environment.get(&(value.ptr as usize)) {
        return Some(known);
    }
    if let Some(constant) = constant_integer(value) {
        return Some(constant);
    }
    let op = defining_op(value)?;
    let raw = raw_op(op);
    let operands = raw.operands();
    let operand = |index: usize| evaluate(operands[index], environment);
    let name = raw.name();
    match name.as_str() {
        "arith.addi" => operand(0)?.checked_add(operand(1)?),
        "arith.subi" => operand(0)?.checked_sub(operand(1)?),
        "arith.muli" => operand(0)?.checked_mul(operand(1)?),
        // Divisions of indices (not negative, by positive divisors: where
        // their unsigned, signed, floor and ceiling forms are what they
        // say); anything else is not followed.
        "arith.divui" | "arith.divsi" | "arith.floordivsi" => {
            let (a, b) = natural_operands(operand(0)?, operand(1)?)?;
            Some(a / b)
        }
        "arith.remui" | "arith.remsi" => {
            let (a, b) = natural_operands(operand(0)?, operand(1)?)?;
            Some(a % b)
        }
        "arith.ceildivsi" | "arith.ceildivui" => {
            let (a, b) = natural_operands(operand(0)?, operand(1)?)?;
            Some((a + b - 1) / b)
        }
        "arith.index_cast" | "arith.index_castui" => operand(0),
        "affine.apply" => {
            // SAFETY: the attribute of a live op, read after its kind is checked
            let map = unsafe {
                let attribute = raw.attribute("map");
                if attribute.ptr.is_null() || !mlirAttributeIsAAffineMap(attribute) {
                    return None;
                }
                let map = mlirAffineMapAttrGetValue(attribute);
                if mlirAffineMapGetNumSymbols(map) != 0 {
                    return None;
                }
                IndexMap::from_raw(map)
            };
            let arguments: Vec<i64> = (0..operands.len()).map(operand).collect::<Option<_>>()?;
            map.eval(&arguments)?.first().copied()
        }
        "affine.delinearize_index" => {
            // The sizes of the results after the first (the basis may
            // leave the outermost out).
            let basis = static_basis(raw)?;
            let results = raw.results().len();
            // SAFETY: `value` is a result of `op`
            let position = unsafe { mlirOpResultGetResultNumber(value) } as usize;
            let inner = &basis[basis.len() + 1 - results.min(basis.len() + 1)..];
            let below: i64 = inner[position.min(inner.len())..].iter().product();
            let quotient = operand(0)?.checked_div_euclid(below)?;
            if position == 0 { Some(quotient) } else { quotient.checked_rem_euclid(inner[position - 1]) }
        }
        "affine.linearize_index" => {
            let basis = static_basis(raw)?;
            let indices = operands.len();
            // The sizes of the indices after the first.
            let inner = &basis[basis.len() + 1 - indices.min(basis.len() + 1)..];
            let mut linear = operand(0)?;
            for (index, &size) in inner.iter().enumerate() {
                linear = linear.checked_mul(size)?.checked_add(operand(index + 1)?)?;
            }
            Some(linear)
        }
        _ => None,
    }
}

/// A dividend that is not negative and a positive divisor.
fn natural_operands(dividend: i64, divisor: i64) -> Option<(i64, i64)> {
    (dividend >= 0 && divisor > 0).then_some((dividend, divisor))
}

/// A delinearization's or linearization's static basis (None when some
/// size is a value).
fn static_basis(raw: tessel_dialects::RawOp) -> Option<Vec<i64>> {
    let basis = raw.integers("static_basis");
    basis.iter().all(|&size| size > 0).then_some(basis)
}

/// The step of the access's loop `position`.
pub(super) fn step_of(access: &Found, position: usize) -> Option<i64> {
    let iv = access.counters[position];
    // SAFETY: a live block argument of an scf.for (find_access)
    let owner = unsafe { mlirBlockGetParentOperation(mlirBlockArgumentGetOwner(iv)) };
    constant_integer(raw_op(owner).operands()[2])
}
