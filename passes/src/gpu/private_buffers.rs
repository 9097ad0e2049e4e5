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
//! space (constant loop bounds, small buffers; `access_points.rs`), not
//! by pattern: a buffer with any other use (an access outside block work,
//! a view or an index the evaluator does not follow, a masked vector
//! access) keeps its slot.
//!
//! The same layout keeps reads of global memory: a program's block of a
//! kernel argument nothing writes, read by several block works (the
//! one-row softmax's x: by the max, then by exp(x - max)), comes from
//! memory once when the first of them loads every element the later ones
//! read, each by the same item: it keeps what it loads in the item's
//! private memory, and they read it there.

use crate::gpu::access_points::{Found, Kind, find_access, step_of};
use crate::gpu::memory_roots::is_read;
use crate::gpu::replicated_buffers;
use crate::support::handles::{context_of, next_of, raw_op, result_of, value_type};
use crate::support::ir::{collect_operations, erase, inline_template, print_type, users};
use crate::support::template::{self, emit_line};
use mlir_sys::*;
use std::collections::HashMap;

/// At most this many bytes per item: registers an item can spare (the
/// one-row softmax's row of 4096 floats over 256 items needs 64).
const MAX_PRIVATE_BYTES: i64 = 128;

/// The private memory space of `gpu.launch`'s private attributions.
pub(super) const PRIVATE_SPACE: &str = "#gpu.address_space<private>";

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

/// What a private buffer holds.
enum Source {
    /// A local buffer (this allocation), whose slot in LDS goes: every
    /// access goes to the item's private memory.
    Local(MlirOperation),
    /// A block of a kernel argument nothing writes: the first block work
    /// reading it (this `scf.parallel`) keeps what each item loads, and
    /// the later ones read the kept values instead of global memory.
    Kept(MlirOperation),
    /// A small local buffer (this allocation, of this shape and element
    /// type) that every item computes itself (`replicated_buffers.rs`).
    Replicated(MlirOperation, Vec<i64>, MlirType),
}

/// A buffer in the items' private memory.
pub(super) struct PrivateBuffer {
    source: Source,
    /// `memref<NxE, #gpu.address_space<private>>`.
    pub(super) private_type: String,
    /// Bytes per item.
    bytes: i64,
    /// Views of the buffer, in the order they were found (a view before
    /// the views of it).
    views: Vec<MlirOperation>,
    accesses: Vec<Access>,
}

/// Private bytes per item at most, for all of a kernel's private buffers:
/// the one-row softmax on RDNA 3's 128 items keeps 32 floats of x and of
/// exp(x) each, and its reductions' partials and results (4 floats).
const MAX_TOTAL_PRIVATE_BYTES: i64 = 288;

/// The buffers of `nest` that can live in the items' private memory, with
/// `threads` items per workgroup — local buffers and blocks of arguments
/// read by several block works — the largest first (each saves LDS, or a
/// second read of global memory, in proportion), while they fit the
/// items' registers: a one-row softmax's rows of x and exp(x) before its
/// reductions' one-float partials where not all fit.
pub(super) fn plan(nest: MlirOperation, threads: i64) -> Vec<PrivateBuffer> {
    let nest_ref = crate::support::handles::operation_ref(nest);
    let local = collect_operations(nest_ref, |name| name == "memref.alloc" || name == "memref.alloca")
        .into_iter()
        .filter_map(|(alloc, _)| plan_buffer(alloc, threads));
    let kept = collect_operations(nest_ref, |name| name == "memref.subview")
        .into_iter()
        .filter_map(|(view, _)| plan_kept_reads(view, threads));
    let mut candidates: Vec<PrivateBuffer> = local.chain(kept).collect();
    for (alloc, shape, element, bytes) in replicated_buffers::plan(nest) {
        if candidates.iter().any(|buffer| buffer.alloc().is_some_and(|local| local.ptr == alloc.ptr)) {
            continue;
        }
        let elements = shape.iter().product();
        let private_type = replicated_buffers::private_type(elements, element);
        let source = Source::Replicated(alloc, shape, element);
        candidates.push(PrivateBuffer { source, private_type, bytes, views: Vec::new(), accesses: Vec::new() });
    }
    // Stable: equal sizes keep the order they were found in.
    candidates.sort_by_key(|buffer| std::cmp::Reverse(buffer.bytes));
    let mut total = 0;
    let mut chosen: Vec<PrivateBuffer> = candidates
        .into_iter()
        .filter(|buffer| {
            let fits = total + buffer.bytes <= MAX_TOTAL_PRIVATE_BYTES;
            if fits {
                total += buffer.bytes;
            }
            fits
        })
        .collect();
    // Code writing a replicated buffer and one the budget left out runs on
    // item 0 after all: the buffers it writes may no longer be replicated.
    let replicated: Vec<MlirOperation> = chosen.iter().filter_map(PrivateBuffer::replicated).collect();
    let still = replicated_buffers::replicable(nest, &replicated);
    chosen.retain(|buffer| buffer.replicated().is_none_or(|alloc| still.iter().any(|kept| kept.ptr == alloc.ptr)));
    chosen
}

impl PrivateBuffer {
    /// The local buffer this replaces (None for kept reads).
    pub(super) fn alloc(&self) -> Option<MlirOperation> {
        match self.source {
            Source::Local(alloc) | Source::Replicated(alloc, ..) => Some(alloc),
            Source::Kept(_) => None,
        }
    }

    /// The allocation of a replicated buffer (None for the others).
    pub(super) fn replicated(&self) -> Option<MlirOperation> {
        match self.source {
            Source::Replicated(alloc, ..) => Some(alloc),
            _ => None,
        }
    }
}

/// The views of `buffer` and its accesses, evaluated; None when some use
/// is neither.
fn accesses_of(buffer: MlirValue, threads: i64) -> Option<(Vec<MlirOperation>, Vec<Found>)> {
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
    (!found.is_empty()).then_some((views, found))
}

/// The layout of the smallest chunk (a power of two up to `elements`)
/// under which every access in `found` is its item's own, and the private
/// type for it, within `MAX_PRIVATE_BYTES`.
fn smallest_layout(
    found: &[Found],
    elements: i64,
    element: MlirType,
    threads: i64,
) -> Option<(Vec<Access>, String, i64)> {
    let (accesses, size) = std::iter::successors(Some(1i64), |chunk| Some(chunk * 2))
        .take_while(|&chunk| chunk <= elements)
        .find_map(|chunk| layout(found, chunk, threads))?;
    let bytes = size * crate::support::ir::element_bytes(element);
    (bytes <= MAX_PRIVATE_BYTES)
        .then(|| (accesses, format!("memref<{size}x{}, {PRIVATE_SPACE}>", print_type(element)), bytes))
}

/// Does nothing write the memory of `memref` (reads and views of it only)?
fn read_only(memref: MlirValue) -> bool {
    users(memref).into_iter().all(|user| {
        let raw = raw_op(user);
        if is_read(user) {
            // Through its first operand only (memory_roots' reads).
            return raw.operands()[0].ptr == memref.ptr;
        }
        match raw.name().as_str() {
            "memref.dim" | "memref.extract_strided_metadata" => true,
            name if crate::support::ir::VIEWS.contains(&name) || name == "memref.memory_space_cast" => {
                read_only(result_of(user, 0))
            }
            _ => false,
        }
    })
}

/// A program's block of a kernel argument (`view`, a subview of it
/// outside block work) that nothing writes and several block works read,
/// each element by one item: the first of them keeps what it loads in the
/// item's private memory, the later ones read that — the row of a one-row
/// softmax, read by its max and again by exp(x - max), comes from memory
/// once. The first must run before the others (they follow it in one
/// block) and load, unconditionally, every element they read.
fn plan_kept_reads(view: MlirOperation, threads: i64) -> Option<PrivateBuffer> {
    let source = raw_op(view).operands()[0];
    let (owner, _) = crate::support::handles::argument_owner(source)?;
    if raw_op(owner).name() != "func.func"
        || crate::support::ir::enclosing(view, |op| raw_op(op).name() == "scf.parallel").is_some()
        || !read_only(source)
    {
        return None;
    }
    let buffer = result_of(view, 0);
    let (_, found) = accesses_of(buffer, threads)?;
    // The block works, in the order their block runs them.
    // SAFETY: live ops of the nest (crate invariant, support/handles.rs)
    let block = unsafe { mlirOperationGetBlock(found[0].parallel) };
    let order = crate::support::ir::block_operations(block);
    let position = |op: MlirOperation| order.iter().position(|&other| other.ptr == op.ptr);
    let positions: Vec<usize> = found.iter().map(|access| position(access.parallel)).collect::<Option<_>>()?;
    let first = found[positions.iter().enumerate().min_by_key(|&(_, &at)| at)?.0].parallel;
    if positions.iter().all(|&at| Some(at) == position(first)) {
        return None;
    }
    // Every element read later is loaded by the first block work.
    let loaded: std::collections::HashSet<i64> =
        found.iter().filter(|access| access.parallel.ptr == first.ptr).flat_map(Found::elements).collect();
    let first_reads_all =
        found.iter().filter(|access| access.parallel.ptr == first.ptr).all(|access| !access.conditional);
    if !first_reads_all || !found.iter().flat_map(Found::elements).all(|element| loaded.contains(&element)) {
        return None;
    }
    let elements = loaded.iter().max()? + 1;
    // SAFETY: a memref type (a subview's result)
    let element = unsafe { mlirShapedTypeGetElementType(value_type(buffer)) };
    let (accesses, private_type, bytes) = smallest_layout(&found, elements, element, threads)?;
    Some(PrivateBuffer { source: Source::Kept(first), private_type, bytes, views: Vec::new(), accesses })
}

/// The element type of `alloc`'s buffer when it may move to private
/// memory at all: a static-shaped memref of integers or floats with the
/// identity layout, sized without operands.
pub(super) fn plain_element(alloc: MlirOperation) -> Option<MlirType> {
    let memref = value_type(result_of(alloc, 0));
    // SAFETY: types live in the context; shape queries run on a memref type
    let element = unsafe {
        if !mlirTypeIsAMemRef(memref) || !mlirShapedTypeHasStaticShape(memref) {
            return None;
        }
        mlirShapedTypeGetElementType(memref)
    };
    // SAFETY: as above, on the element type
    let scalar = unsafe { mlirTypeIsAInteger(element) || mlirTypeIsAFloat(element) };
    let plain = scalar && raw_op(alloc).operands().is_empty() && crate::support::ir::has_identity_layout(memref);
    plain.then_some(element)
}

/// `private` (a launch's private attribution) seen through the generic
/// address space, as LDS is: LLVM's address space inference gives the
/// accesses back to the private alloca, which SROA then keeps in registers.
/// The view, made at the top of the launch's body, and its type.
pub(super) fn generic_view(private: MlirValue) -> Result<(MlirValue, String), String> {
    let private_type = print_type(value_type(private));
    let generic_type = private_type.replace(&format!(", {PRIVATE_SPACE}"), "");
    let cast = format!(
        "func.func @template(%p: {private_type}) -> {generic_type} {{\n\
         %g = memref.memory_space_cast %p : {private_type} to {generic_type}\nreturn %g : {generic_type}\n}}"
    );
    // SAFETY: `private` is a live block argument (of the launch's body)
    let first = unsafe { mlirBlockGetFirstOperation(mlirBlockArgumentGetOwner(private)) };
    let (generic, _) = inline_template(first, &cast, &[private])?;
    Ok((generic[0], generic_type))
}

fn plan_buffer(alloc: MlirOperation, threads: i64) -> Option<PrivateBuffer> {
    let element = plain_element(alloc)?;
    let buffer = result_of(alloc, 0);
    let memref = value_type(buffer);
    let (views, found) = accesses_of(buffer, threads)?;
    let elements = crate::support::ir::static_bytes(memref)? / crate::support::ir::element_bytes(memref);
    let (accesses, private_type, bytes) = smallest_layout(&found, elements, element, threads)?;
    Some(PrivateBuffer { source: Source::Local(alloc), private_type, bytes, views, accesses })
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
        let lanes = access.kind.lanes();
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

impl PrivateBuffer {
    /// Rewrites the accesses of this buffer to its private memory `private`
    /// once the block work is shared out: `trips` gives each block work's
    /// trip counter (None: one trip per item).
    pub(super) fn rewrite(&self, private: MlirValue, trips: &HashMap<usize, Option<MlirValue>>) -> Result<(), String> {
        if let Source::Replicated(alloc, shape, element) = &self.source {
            return replicated_buffers::rewrite(*alloc, shape, *element, private);
        }
        let (private, generic_type) = generic_view(private)?;
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
            let memref = &generic_type;
            let loaded = || result_of(access.op, 0);
            match (&self.source, access.kind) {
                // The first block work keeps what it loads.
                (Source::Kept(first), _) if access.parallel.ptr == first.ptr => {
                    let text = template::load_or_store(memref, 1, &print_type(value_type(loaded())), true);
                    inline_template(next_of(access.op), &text, &[loaded(), private, index[0]])?;
                }
                (_, Kind::Load | Kind::VectorLoad(_)) => {
                    let text = template::load_or_store(memref, 1, &print_type(value_type(loaded())), false);
                    template::replace(context_of(access.op), access.op, &text, &[private, index[0]])
                        .map_err(|error| error.0)?;
                }
                (_, Kind::Store | Kind::VectorStore(_)) => {
                    let value = raw_op(access.op).operands()[0];
                    let text = template::load_or_store(memref, 1, &print_type(value_type(value)), true);
                    template::replace(context_of(access.op), access.op, &text, &[value, private, index[0]])
                        .map_err(|error| error.0)?;
                }
            }
        }
        // A local buffer's views and allocation are unused now.
        if let Source::Local(alloc) = self.source {
            for &view in self.views.iter().rev() {
                erase(view);
            }
            for user in users(result_of(alloc, 0)) {
                erase(user);
            }
            erase(alloc);
        }
        Ok(())
    }
}
