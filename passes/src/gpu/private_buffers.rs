//! Private buffers of grid-to-gpu: a program's local buffer whose every
//! element only one work-item ever touches lives in that item's private
//! memory (registers, once its loops unroll) instead of a slot of the
//! workgroup's LDS — rows kept in registers.
//!
//! Block work is shared out cyclically (item t runs linear iterations t,
//! t + T, t + 2T, ...: work_items.rs), so which item touches an element is
//! fixed by the loops. A buffer qualifies when, for some c, element e is
//! touched only by item (e div c) mod T: the one-row softmax's exp(x),
//! written as vector<4> by a 1024-iteration loop and read by the sum's
//! loops over [4, 256, 4], is such a buffer (c = 4, 16 floats per item).
//! Item t's share is then laid out densely, element e at private index
//! (e div cT) * c + e mod c, which must be an affine function of the
//! item's trip k (iteration = k T + t) and the access's own loop counters
//! alone: the same on every item, so no access needs the item's id and,
//! once LLVM unrolls the loops, every index is a constant.
//!
//! Checked by evaluating every access at every point of its iteration
//! space (constant loop bounds, small buffers), not by pattern: a buffer
//! with any other use (an access outside block work, a view or an index
//! the evaluator does not follow, a masked vector access) keeps its slot.

use crate::gpu::work_items::freely_unrolled_trips;
use crate::support::handles::{context_of, raw_op, result_of, value_type};
use crate::support::ir::{
    block_arguments, collect_operations, constant_integer, defining_op, erase, inline_template, print_type,
    strides_and_offset, users,
};
use crate::support::template::{self, emit_line};
use mlir_sys::*;
use std::collections::HashMap;
use tessel_dialects::IndexMap;

/// At most this many bytes per item: registers an item can spare (the
/// one-row softmax's row of 4096 floats over 256 items needs 64).
const MAX_PRIVATE_BYTES: i64 = 128;

/// Points of one access's iteration space evaluated at most.
const MAX_POINTS: usize = 1 << 16;

/// The private memory space of `gpu.launch`'s private attributions.
pub(super) const PRIVATE_SPACE: &str = "#gpu.address_space<private>";

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Load,
    Store,
    /// A vector of this many lanes read or written (contiguous elements).
    VectorLoad(i64),
    VectorStore(i64),
}

/// One access of a private buffer, with its private index
/// `constant + per_trip * k + sum(coefficient * counter)`.
struct Access {
    op: MlirOperation,
    kind: Kind,
    /// The block work (`scf.parallel`) the access belongs to.
    parallel: MlirOperation,
    constant: i64,
    per_trip: i64,
    counters: Vec<(MlirValue, i64)>,
}

/// A local buffer that moves to private memory.
pub(super) struct PrivateBuffer {
    pub(super) alloc: MlirOperation,
    /// `memref<NxE, #gpu.address_space<private>>`.
    pub(super) private_type: String,
    /// Views of the buffer, in the order they were found (a view before
    /// the views of it).
    views: Vec<MlirOperation>,
    accesses: Vec<Access>,
}

/// The local buffers of `nest` that can live in the items' private memory,
/// with `threads` items per workgroup.
pub(super) fn plan(nest: MlirOperation, threads: i64) -> Vec<PrivateBuffer> {
    let nest_ref = crate::support::handles::operation_ref(nest);
    collect_operations(nest_ref, |name| name == "memref.alloc" || name == "memref.alloca")
        .into_iter()
        .filter_map(|(alloc, _)| plan_buffer(alloc, threads))
        .collect()
}

/// One evaluated point of an access: the item, its trip, the access's loop
/// counters and the first element touched.
struct Point {
    item: i64,
    trip: i64,
    counters: Vec<i64>,
    element: i64,
}

/// An access as found, before the layout is chosen.
struct Found {
    op: MlirOperation,
    kind: Kind,
    parallel: MlirOperation,
    counters: Vec<MlirValue>,
    points: Vec<Point>,
}

fn plan_buffer(alloc: MlirOperation, threads: i64) -> Option<PrivateBuffer> {
    let buffer = result_of(alloc, 0);
    let memref = value_type(buffer);
    // SAFETY: types live in the context; shape queries run on a memref type
    let element = unsafe {
        if !mlirTypeIsAMemRef(memref) || !mlirShapedTypeHasStaticShape(memref) {
            return None;
        }
        mlirShapedTypeGetElementType(memref)
    };
    // SAFETY: as above, on the element type
    if unsafe { !mlirTypeIsAInteger(element) && !mlirTypeIsAFloat(element) } || !raw_op(alloc).operands().is_empty() {
        return None;
    }
    if !crate::support::ir::has_identity_layout(memref) {
        return None;
    }
    let mut views = Vec::new();
    let mut found = Vec::new();
    let mut pending = vec![buffer];
    while let Some(memref) = pending.pop() {
        for user in users(memref) {
            let name = raw_op(user).name();
            match name.as_str() {
                "memref.subview" | "memref.expand_shape" | "memref.collapse_shape" | "memref.cast" => {
                    views.push(user);
                    pending.push(result_of(user, 0));
                }
                "memref.dealloc" => {}
                _ => found.push(find_access(user, memref, buffer, threads)?),
            }
        }
    }
    if found.is_empty() {
        return None;
    }
    let elements = crate::support::ir::static_bytes(memref)? / crate::support::ir::element_bytes(memref);
    let bytes = crate::support::ir::element_bytes(memref);
    let (accesses, size) = std::iter::successors(Some(1i64), |chunk| Some(chunk * 2))
        .take_while(|&chunk| chunk <= elements)
        .find_map(|chunk| layout(&found, chunk, threads))?;
    if size * bytes > MAX_PRIVATE_BYTES {
        return None;
    }
    let private_type = format!("memref<{size}x{}, {PRIVATE_SPACE}>", print_type(element));
    Some(PrivateBuffer { alloc, private_type, views, accesses })
}

/// `op`'s access of `memref` (a view of `buffer`) with every point of its
/// iteration space evaluated; None when it is not an access this module
/// follows.
fn find_access(op: MlirOperation, memref: MlirValue, buffer: MlirValue, threads: i64) -> Option<Found> {
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
    loop {
        let parent_raw = raw_op(parent);
        match parent_raw.name().as_str() {
            "scf.parallel" => break,
            "scf.if" => {}
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
    Some(Found { op, kind, parallel, counters: loops.iter().map(|&(iv, ..)| iv).collect(), points })
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

/// The private layout of chunk `chunk`: element e, owned by item
/// (e div chunk) mod T, at (e div chunk T) chunk plus e mod chunk. The accesses with
/// their affine private indices, and the elements per item; None when some
/// access touches another item's element or its index is not affine in
/// the item's trip and its counters.
fn layout(found: &[Found], chunk: i64, threads: i64) -> Option<(Vec<Access>, i64)> {
    let owner = |element: i64| (element / chunk) % threads;
    let private = |element: i64| (element / (chunk * threads)) * chunk + element % chunk;
    let mut size = 0;
    let mut accesses = Vec::new();
    for access in found {
        let lanes = match access.kind {
            Kind::VectorLoad(lanes) | Kind::VectorStore(lanes) => lanes,
            Kind::Load | Kind::Store => 1,
        };
        // The private index of each (trip, counters), the same for every item.
        let mut indices: HashMap<Vec<i64>, i64> = HashMap::new();
        for point in &access.points {
            let first = private(point.element);
            for lane in 0..lanes {
                let element = point.element + lane;
                if owner(element) != point.item || private(element) != first + lane {
                    return None;
                }
            }
            size = size.max(first + lanes);
            let key: Vec<i64> = std::iter::once(point.trip).chain(point.counters.iter().copied()).collect();
            if *indices.entry(key).or_insert(first) != first {
                return None;
            }
        }
        // Affine: coefficients from steps away from the first point, then
        // every point checked.
        let first = access.points.first()?;
        let origin: Vec<i64> = std::iter::once(first.trip).chain(first.counters.iter().copied()).collect();
        let base = indices[&origin];
        let mut coefficients = vec![0i64; origin.len()];
        for (variable, coefficient) in coefficients.iter_mut().enumerate() {
            let step = if variable == 0 { 1 } else { step_of(access, variable - 1)? };
            let mut next = origin.clone();
            next[variable] += step;
            if let Some(&value) = indices.get(&next) {
                let difference = value - base;
                if difference % step != 0 {
                    return None;
                }
                *coefficient = difference / step;
            }
        }
        let constant = base - origin.iter().zip(&coefficients).map(|(v, c)| v * c).sum::<i64>();
        for (key, &value) in &indices {
            if constant + key.iter().zip(&coefficients).map(|(v, c)| v * c).sum::<i64>() != value {
                return None;
            }
        }
        accesses.push(Access {
            op: access.op,
            kind: access.kind,
            parallel: access.parallel,
            constant,
            per_trip: coefficients[0],
            counters: access.counters.iter().copied().zip(coefficients[1..].iter().copied()).collect(),
        });
    }
    Some((accesses, size))
}

/// The step of the access's loop `position`.
fn step_of(access: &Found, position: usize) -> Option<i64> {
    let iv = access.counters[position];
    // SAFETY: a live block argument of an scf.for (find_access)
    let owner = unsafe { mlirBlockGetParentOperation(mlirBlockArgumentGetOwner(iv)) };
    constant_integer(raw_op(owner).operands()[2])
}

impl PrivateBuffer {
    /// Rewrites the accesses of this buffer to its private memory `private`
    /// once the block work is shared out: `trips` gives each block work's
    /// trip counter (None: one trip per item).
    pub(super) fn rewrite(&self, private: MlirValue, trips: &HashMap<usize, Option<MlirValue>>) -> Result<(), String> {
        // Accessed through the generic address space, as LDS is: LLVM's
        // address space inference gives the accesses back to the private
        // alloca, which SROA then keeps in registers.
        let generic_type = self.private_type.replace(&format!(", {PRIVATE_SPACE}"), "");
        let cast = format!(
            "func.func @template(%p: {private}) -> {generic_type} {{\n\
             %g = memref.memory_space_cast %p : {private} to {generic_type}\nreturn %g : {generic_type}\n}}",
            private = self.private_type
        );
        // SAFETY: `private` is a live block argument (of the launch's body)
        let first = unsafe { mlirBlockGetFirstOperation(mlirBlockArgumentGetOwner(private)) };
        let (generic, _) = inline_template(first, &cast, &[private])?;
        let private = generic[0];
        for access in &self.accesses {
            let trip =
                *trips.get(&(access.parallel.ptr as usize)).ok_or("block work of a private buffer not shared out")?;
            // The private index, before the access.
            let mut text = String::from("func.func @template(");
            let mut arguments = Vec::new();
            let mut terms = Vec::new();
            if let (Some(trip), true) = (trip, access.per_trip != 0) {
                arguments.push(trip);
                terms.push(access.per_trip);
            }
            for &(counter, coefficient) in &access.counters {
                if coefficient != 0 {
                    arguments.push(counter);
                    terms.push(coefficient);
                }
            }
            text.push_str(&crate::support::ir::join((0..terms.len()).map(|k| format!("%v{k}: index"))));
            text.push_str(") -> index {\n");
            // The sum so far: None while it is zero.
            let mut sum: Option<String> = None;
            for (k, &coefficient) in terms.iter().enumerate() {
                let mut term = format!("%v{k}");
                if coefficient != 1 {
                    emit_line!(
                        text,
                        "%c{k} = arith.constant {coefficient} : index\n%m{k} = arith.muli %v{k}, %c{k} : index"
                    );
                    term = format!("%m{k}");
                }
                sum = Some(match sum {
                    None => term,
                    Some(previous) => {
                        emit_line!(text, "%s{k} = arith.addi {previous}, {term} : index");
                        format!("%s{k}")
                    }
                });
            }
            if access.constant != 0 || sum.is_none() {
                emit_line!(text, "%constant = arith.constant {} : index", access.constant);
                sum = Some(match sum {
                    None => "%constant".to_string(),
                    Some(previous) => {
                        emit_line!(text, "%total = arith.addi {previous}, %constant : index");
                        "%total".to_string()
                    }
                });
            }
            emit_line!(text, "return {} : index\n}}", sum.expect("a sum"));
            let (index, _) = inline_template(access.op, &text, &arguments)?;
            let operands = raw_op(access.op).operands();
            let memref = &generic_type;
            let (text, values) = match access.kind {
                Kind::Load => {
                    let element = print_type(value_type(result_of(access.op, 0)));
                    (
                        format!(
                            "func.func @template(%m: {memref}, %i: index) -> {element} {{\n\
                             %v = memref.load %m[%i] : {memref}\nreturn %v : {element}\n}}"
                        ),
                        vec![private, index[0]],
                    )
                }
                Kind::Store => {
                    let element = print_type(value_type(operands[0]));
                    (
                        format!(
                            "func.func @template(%v: {element}, %m: {memref}, %i: index) {{\n\
                             memref.store %v, %m[%i] : {memref}\nreturn\n}}"
                        ),
                        vec![operands[0], private, index[0]],
                    )
                }
                Kind::VectorLoad(_) => {
                    let vector = print_type(value_type(result_of(access.op, 0)));
                    (
                        format!(
                            "func.func @template(%m: {memref}, %i: index) -> {vector} {{\n\
                             %v = vector.load %m[%i] : {memref}, {vector}\nreturn %v : {vector}\n}}"
                        ),
                        vec![private, index[0]],
                    )
                }
                Kind::VectorStore(_) => {
                    let vector = print_type(value_type(operands[0]));
                    (
                        format!(
                            "func.func @template(%v: {vector}, %m: {memref}, %i: index) {{\n\
                             vector.store %v, %m[%i] : {memref}, {vector}\nreturn\n}}"
                        ),
                        vec![operands[0], private, index[0]],
                    )
                }
            };
            template::replace(context_of(access.op), access.op, &text, &values).map_err(|error| error.0)?;
        }
        // The views and the buffer are unused now.
        for &view in self.views.iter().rev() {
            erase(view);
        }
        for user in users(result_of(self.alloc, 0)) {
            erase(user);
        }
        erase(self.alloc);
        Ok(())
    }
}
