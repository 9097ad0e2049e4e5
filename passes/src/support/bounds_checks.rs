//! Bounds checks of loads and stores, as IR: each access first computes
//! the bytes it touches, relative to the allocation its memref views (a
//! function argument, an allocation, a GPU kernel's workgroup or private
//! attribution), and compares them with that allocation's extent. An
//! access outside is not made (a load gives zeros) and records its site in
//! `__tessel_bounds_fault`, which the JIT reports after the call as an
//! error naming the access and its location (the module lists the sites
//! in `tessel.checked_accesses`). Masked accesses check their active lanes
//! only (masked-off lanes may lie anywhere, as buffer instructions'
//! out-of-range elements do); a transfer's lanes that may run out of
//! bounds, those inside its memref.
//!
//! Used by `tessel-emulate-bounds-checks` (the emulated GPU's kernels) and
//! `tessel-check-bounds` (CPU code under `tessel run --bounds-checks`).

use crate::PassError;
use crate::support::handles::{
    context_of, is_memref, location_of, operation_ref, rank_of, raw_op, result_of, value_type,
};
use crate::support::ir::{
    VIEWS, collect_operations, constant_integer, defining_op, element_bytes, print_type, static_bytes,
    strides_and_offset,
};
use crate::support::template::{self, TemplateError};
use melior::ir::OperationRef;
use mlir_sys::*;
use std::fmt::Write;
use tessel_dialects::{BOUNDS_FAULT, CHECKED_ACCESSES};

/// Operands of `gpu.launch` before its attributions (grid and block sizes
/// and ids are block arguments 0-11).
const LAUNCH_IDS: usize = 12;

/// Checks every access nested in `scope` (`launch`: the kernel it is in,
/// whose attributions' extents come from their types), adding their sites
/// to `sites`.
pub(crate) fn check_accesses(
    scope: MlirOperation,
    launch: Option<MlirOperation>,
    sites: &mut Vec<String>,
) -> Result<(), PassError> {
    for (op, name) in collect_operations(operation_ref(scope), |name| ACCESSES.contains(&name)) {
        let accesses = accesses_of(op, &name);
        if accesses.is_empty() {
            continue;
        }
        let site = sites.len() as i64 + 1;
        let memrefs: Vec<String> = accesses.iter().map(|access| print_type(value_type(access.memref))).collect();
        sites.push(format!("{name} of {} at {}", memrefs.join(" and "), location_of(op)));
        check(op, &accesses, launch, site).map_err(|error| PassError::at(location_of(op), error.0))?;
    }
    Ok(())
}

/// The sites `module` lists already (an earlier bounds-check pass's: the
/// emulated GPU's kernels before its host code), which new sites follow.
pub(crate) fn listed_sites(module: OperationRef<'static, '_>) -> Vec<String> {
    raw_op(module.to_raw()).strings(CHECKED_ACCESSES)
}

/// Defines the fault global and lists `sites` on `module` (those of
/// `listed_sites` first).
pub(crate) fn record_sites(module: OperationRef<'static, '_>, sites: &[String]) -> Result<(), PassError> {
    let context = context_of(module.to_raw());
    let global = format!("memref.global @{BOUNDS_FAULT} : memref<i64> = dense<0>");
    template::define_symbol(context, module.to_raw(), BOUNDS_FAULT, &global)
        .map_err(|message| PassError::at(location_of(module.to_raw()), message))?;
    raw_op(module.to_raw()).set_strings(CHECKED_ACCESSES, sites);
    Ok(())
}

/// The accesses checked: every op that reads or writes memory at indices
/// once the emulator's or the CPU pipeline's loops are made.
const ACCESSES: &[&str] = &[
    "memref.load",
    "memref.store",
    "memref.atomic_rmw",
    "memref.generic_atomic_rmw",
    "vector.load",
    "vector.store",
    "vector.maskedload",
    "vector.maskedstore",
    "vector.transfer_read",
    "vector.transfer_write",
    "memref.copy",
];

/// How far an access reaches along one dimension of its memref.
#[derive(Clone, Copy)]
enum Extent {
    /// This many elements from the index (1: the index's element only).
    Fixed(i64),
    /// Up to this many, as far as the memref's size (a transfer's dimension
    /// that may run out of bounds: its lanes past the size are not made).
    InView(i64),
    /// The whole dimension (a copy).
    Whole,
}

/// One access of a memref: the index along each dimension (none: 0), how
/// far it reaches along each, and the mask of a masked access's lanes
/// (along the last dimension; their number).
struct Access {
    memref: MlirValue,
    indices: Vec<Option<MlirValue>>,
    extents: Vec<Extent>,
    mask: Option<(MlirValue, i64)>,
}

fn vector_shape(vector: MlirType) -> Vec<i64> {
    (0..rank_of(vector) as usize).map(|d| crate::support::handles::dim_size(vector, d)).collect()
}

/// An access of `operands[memref]` at the indices that follow it, reaching
/// `shape` (a vector's) along the memref's trailing dimensions.
fn trailing(operands: &[MlirValue], memref: usize, shape: &[i64]) -> Access {
    let rank = rank_of(value_type(operands[memref])) as usize;
    let mut extents = vec![Extent::Fixed(1); rank];
    for (extent, &size) in extents[rank.saturating_sub(shape.len())..].iter_mut().zip(shape) {
        *extent = Extent::Fixed(size);
    }
    let indices = operands[memref + 1..memref + 1 + rank].iter().copied().map(Some).collect();
    Access { memref: operands[memref], indices, extents, mask: None }
}

/// A transfer of `shape` at `operands[memref]` and the indices that follow
/// it, through its permutation map (broadcast dimensions read one element);
/// dimensions not `in_bounds` reach as far as the memref's size.
fn transfer(op: MlirOperation, operands: &[MlirValue], memref: usize, shape: &[i64]) -> Access {
    let raw = raw_op(op);
    let rank = rank_of(value_type(operands[memref])) as usize;
    let mut access = trailing(operands, memref, &[]);
    // SAFETY: the op's attributes live in the context; the map and the
    // flags are read only when present, as their kinds.
    unsafe {
        let in_bounds = raw.attribute("in_bounds");
        let inside = |k: usize| {
            !in_bounds.ptr.is_null()
                && mlirAttributeIsAArray(in_bounds)
                && mlirBoolAttrGetValue(mlirArrayAttrGetElement(in_bounds, k as isize))
        };
        let map = raw.attribute("permutation_map");
        for (k, &size) in shape.iter().enumerate() {
            let dimension = if map.ptr.is_null() {
                Some(rank - shape.len() + k)
            } else {
                let expression = mlirAffineMapGetResult(mlirAffineMapAttrGetValue(map), k as isize);
                mlirAffineExprIsADim(expression).then(|| mlirAffineDimExprGetPosition(expression) as usize)
            };
            if let Some(dimension) = dimension {
                access.extents[dimension] = if inside(k) { Extent::Fixed(size) } else { Extent::InView(size) };
            }
        }
    }
    access
}

/// The accesses `op` makes (none for one the check cannot read: a memref
/// of vectors).
fn accesses_of(op: MlirOperation, name: &str) -> Vec<Access> {
    let operands = raw_op(op).operands();
    let plain = |value: MlirValue| {
        // SAFETY: a memref type of the live context.
        let element = unsafe { mlirShapedTypeGetElementType(value_type(value)) };
        // SAFETY: as above.
        unsafe { mlirTypeIsAFloat(element) || mlirTypeIsAInteger(element) || mlirTypeIsAIndex(element) }
    };
    let result_shape = || vector_shape(value_type(result_of(op, 0)));
    let accesses = match name {
        "memref.load" | "memref.generic_atomic_rmw" => vec![trailing(&operands, 0, &[])],
        "memref.store" | "memref.atomic_rmw" => vec![trailing(&operands, 1, &[])],
        "vector.load" => vec![trailing(&operands, 0, &result_shape())],
        "vector.store" => vec![trailing(&operands, 1, &vector_shape(value_type(operands[0])))],
        "vector.maskedload" | "vector.maskedstore" => {
            let rank = rank_of(value_type(operands[0])) as usize;
            let vector =
                if name == "vector.maskedload" { value_type(result_of(op, 0)) } else { value_type(operands[rank + 2]) };
            let lanes = vector_shape(vector)[0];
            let mut access = trailing(&operands, 0, &[]);
            access.mask = Some((operands[rank + 1], lanes));
            vec![access]
        }
        "vector.transfer_read" => vec![transfer(op, &operands, 0, &result_shape())],
        "vector.transfer_write" if is_memref(value_type(operands[1])) => {
            vec![transfer(op, &operands, 1, &vector_shape(value_type(operands[0])))]
        }
        "memref.copy" => operands
            .iter()
            .map(|&memref| {
                let rank = rank_of(value_type(memref)) as usize;
                Access { memref, indices: vec![None; rank], extents: vec![Extent::Whole; rank], mask: None }
            })
            .collect(),
        _ => Vec::new(),
    };
    if accesses.iter().all(|access| plain(access.memref)) { accesses } else { Vec::new() }
}

/// The text of a check: template arguments bound to values, and `index`
/// arithmetic folded where operands are constants.
#[derive(Default)]
struct Check {
    parameters: Vec<String>,
    arguments: Vec<MlirValue>,
    body: String,
    names: usize,
}

/// An `index` operand of the check: a constant or a name in the template.
#[derive(Clone)]
enum Index {
    Constant(i64),
    Named(String),
}

impl Check {
    fn fresh(&mut self) -> String {
        self.names += 1;
        format!("%v{}", self.names)
    }

    fn argument(&mut self, value: MlirValue) -> String {
        let name = format!("%a{}", self.arguments.len());
        self.parameters.push(format!("{name}: {}", print_type(value_type(value))));
        self.arguments.push(value);
        name
    }

    /// An index value: its constant, or a template argument bound to it.
    fn index(&mut self, value: MlirValue) -> Index {
        match constant_integer(value) {
            Some(constant) => Index::Constant(constant),
            None => Index::Named(self.argument(value)),
        }
    }

    fn named(&mut self, index: &Index) -> String {
        match index {
            Index::Named(name) => name.clone(),
            Index::Constant(constant) => {
                let name = self.fresh();
                let _ = writeln!(self.body, "  {name} = arith.constant {constant} : index");
                name
            }
        }
    }

    fn binary(&mut self, op: &str, fold: fn(i64, i64) -> i64, a: &Index, b: &Index) -> Index {
        if let (Index::Constant(a), Index::Constant(b)) = (a, b) {
            return Index::Constant(fold(*a, *b));
        }
        let (a, b) = (self.named(a), self.named(b));
        let name = self.fresh();
        let _ = writeln!(self.body, "  {name} = arith.{op} {a}, {b} : index");
        Index::Named(name)
    }

    fn add(&mut self, a: &Index, b: &Index) -> Index {
        match (a, b) {
            (Index::Constant(0), other) | (other, Index::Constant(0)) => other.clone(),
            _ => self.binary("addi", i64::wrapping_add, a, b),
        }
    }

    fn mul(&mut self, a: &Index, b: &Index) -> Index {
        match (a, b) {
            (Index::Constant(1), other) | (other, Index::Constant(1)) => other.clone(),
            _ => self.binary("muli", i64::wrapping_mul, a, b),
        }
    }

    /// The offset, sizes and strides of `memref` (in elements): from its
    /// type when static, else from its descriptor.
    fn layout(&mut self, memref: MlirValue) -> (Index, Vec<Index>, Vec<Index>) {
        let r#type = value_type(memref);
        let rank = rank_of(r#type) as usize;
        let sizes: Vec<i64> = (0..rank).map(|d| crate::support::handles::dim_size(r#type, d)).collect();
        let (strides, offset) = strides_and_offset(r#type).unwrap_or((vec![i64::MIN; rank], i64::MIN));
        let dynamic = |value: i64| value == i64::MIN;
        if !dynamic(offset) && !sizes.iter().chain(&strides).copied().any(dynamic) {
            let constants = |values: Vec<i64>| values.into_iter().map(Index::Constant).collect();
            return (Index::Constant(offset), constants(sizes), constants(strides));
        }
        let source = self.argument(memref);
        let base = self.fresh();
        let offset = self.fresh();
        let sizes: Vec<String> = (0..rank).map(|_| self.fresh()).collect();
        let strides: Vec<String> = (0..rank).map(|_| self.fresh()).collect();
        let names = [vec![base, offset.clone()], sizes.clone(), strides.clone()].concat().join(", ");
        // SAFETY: a memref type of the live context; the base buffer's
        // type is built in that context.
        let base_type = unsafe {
            let element = mlirShapedTypeGetElementType(r#type);
            mlirMemRefTypeContiguousGet(element, 0, std::ptr::null(), mlirMemRefTypeGetMemorySpace(r#type))
        };
        let results = [print_type(base_type)].into_iter().chain(vec!["index".to_string(); 1 + 2 * rank]);
        let _ = writeln!(
            self.body,
            "  {names} = memref.extract_strided_metadata {source} : {} -> {}",
            print_type(r#type),
            results.collect::<Vec<_>>().join(", ")
        );
        let named = |names: Vec<String>| names.into_iter().map(Index::Named).collect();
        (Index::Named(offset), named(sizes), named(strides))
    }
}

/// The memory `memref` addresses: the value whose aligned pointer the
/// access is relative to, through views and address-space casts (which
/// keep the aligned pointer) and `memref.view`s (whose byte offsets,
/// pushed on `shifts`, move it).
fn allocation(memref: MlirValue, shifts: &mut Vec<MlirValue>) -> MlirValue {
    let mut current = memref;
    while let Some(op) = defining_op(current) {
        let raw = raw_op(op);
        let name = raw.name();
        if name == "memref.view" {
            shifts.push(raw.operands()[1]);
        } else if !VIEWS.contains(&name.as_str()) && name != "memref.memory_space_cast" {
            break;
        }
        current = raw.operands()[0];
    }
    current
}

/// Whether `value` is a workgroup or private attribution of `launch`.
fn is_attribution(value: MlirValue, launch: Option<MlirOperation>) -> bool {
    let Some(launch) = launch else { return false };
    // SAFETY: a live value; its owner is read only for block arguments.
    unsafe {
        if !mlirValueIsABlockArgument(value) {
            return false;
        }
        let block = mlirBlockArgumentGetOwner(value);
        let owner = mlirBlockGetParentOperation(block);
        owner.ptr == launch.ptr && mlirBlockArgumentGetArgNumber(value) as usize >= LAUNCH_IDS
    }
}

/// Inserts the checks of `accesses` before `op` and puts `op` under them.
fn check(
    op: MlirOperation,
    accesses: &[Access],
    launch: Option<MlirOperation>,
    site: i64,
) -> Result<(), TemplateError> {
    let mut check = Check::default();
    let mut all: Option<String> = None;
    for access in accesses {
        let ok = check.access(access, launch);
        all = Some(match all {
            None => ok,
            Some(before) => check.both(&before, &ok),
        });
    }
    guard(op, &check, &all.expect("an access"), site)
}

impl Check {
    /// Whether `access` stays in the memory its memref addresses, as an
    /// `i1` name.
    fn access(&mut self, access: &Access, launch: Option<MlirOperation>) -> String {
        let bytes = Index::Constant(element_bytes(value_type(access.memref)));
        // The first element's position, in bytes from the allocation's pointer.
        let (offset, sizes, strides) = self.layout(access.memref);
        let indices: Vec<Index> =
            access.indices.iter().map(|index| index.map_or(Index::Constant(0), |index| self.index(index))).collect();
        let mut first = offset;
        for (index, stride) in indices.iter().zip(&strides) {
            let step = self.mul(index, stride);
            first = self.add(&first, &step);
        }
        first = self.mul(&first, &bytes);
        let mut shifts = Vec::new();
        let root = allocation(access.memref, &mut shifts);
        for shift in shifts {
            let shift = self.index(shift);
            first = self.add(&first, &shift);
        }
        let (low, high) = self.extent(root, launch);
        if let Some((mask, lanes)) = access.mask {
            let lane_stride = strides.last().cloned().unwrap_or(Index::Constant(1));
            let lane_bytes = self.mul(&lane_stride, &bytes);
            let mask = self.argument(mask);
            return self.lanes_within(lanes, &first, &lane_bytes, &bytes, &low, &high, &mask);
        }
        // The last element reached, relative to the first; the fewest
        // elements along a dimension that may reach none.
        let mut reach = Index::Constant(0);
        let mut fewest = Index::Constant(i64::MAX);
        for (d, extent) in access.extents.iter().enumerate() {
            let extent = match *extent {
                Extent::Fixed(elements) => Index::Constant(elements),
                Extent::InView(elements) => {
                    let left = self.binary("subi", i64::wrapping_sub, &sizes[d], &indices[d]);
                    let most = self.min(&left, &Index::Constant(elements));
                    self.binary("maxsi", i64::max, &most, &Index::Constant(0))
                }
                Extent::Whole => sizes[d].clone(),
            };
            if !matches!(access.extents[d], Extent::Fixed(_)) {
                fewest = self.min(&fewest, &extent);
            }
            let below = self.add(&extent, &Index::Constant(-1));
            let step = self.mul(&below, &strides[d]);
            reach = self.add(&reach, &step);
        }
        let last = self.mul(&reach, &bytes);
        let last = self.add(&first, &last);
        let end = self.add(&last, &bytes);
        let inside = self.within(&first, &end, &low, &high);
        // An access of no element touches nothing.
        match fewest {
            Index::Constant(fewest) if fewest > 0 => inside,
            fewest => {
                let (fewest, zero) = (self.named(&fewest), self.named(&Index::Constant(0)));
                let (none, either) = (self.fresh(), self.fresh());
                let _ = writeln!(self.body, "  {none} = arith.cmpi sle, {fewest}, {zero} : index");
                let _ = writeln!(self.body, "  {either} = arith.ori {none}, {inside} : i1");
                either
            }
        }
    }

    /// The bytes of `root`, from its aligned pointer: `[low, high)`.
    fn extent(&mut self, root: MlirValue, launch: Option<MlirOperation>) -> (Index, Index) {
        let r#type = value_type(root);
        let root_bytes = Index::Constant(element_bytes(r#type));
        if is_attribution(root, launch) {
            // Attributions are static (a dynamic one would bound nothing).
            return (Index::Constant(0), Index::Constant(static_bytes(r#type).unwrap_or(0)));
        }
        let (offset, sizes, strides) = self.layout(root);
        let mut last = Index::Constant(0);
        // The smallest size (none for a rank-0 memref: one element).
        let mut smallest = Index::Constant(i64::MAX);
        for (size, stride) in sizes.iter().zip(&strides) {
            let below = self.add(size, &Index::Constant(-1));
            let step = self.mul(&below, stride);
            last = self.add(&last, &step);
            smallest = self.min(&smallest, size);
        }
        // An empty allocation (a size of 0) holds nothing.
        let elements = self.add(&last, &Index::Constant(1));
        let elements = self.select_positive(&smallest, &elements);
        let low = self.mul(&offset, &root_bytes);
        let span = self.mul(&elements, &root_bytes);
        let high = self.add(&low, &span);
        (low, high)
    }

    /// `a && b` of two `i1` names.
    fn both(&mut self, a: &str, b: &str) -> String {
        let name = self.fresh();
        let _ = writeln!(self.body, "  {name} = arith.andi {a}, {b} : i1");
        name
    }
}

impl Check {
    fn min(&mut self, a: &Index, b: &Index) -> Index {
        match (a, b) {
            (Index::Constant(i64::MAX), other) | (other, Index::Constant(i64::MAX)) => other.clone(),
            _ => self.binary("minsi", i64::min, a, b),
        }
    }

    /// `value` where `empty` (a minimum of sizes) is positive, else 0.
    fn select_positive(&mut self, empty: &Index, value: &Index) -> Index {
        if let Index::Constant(smallest) = empty {
            return if *smallest > 0 { value.clone() } else { Index::Constant(0) };
        }
        let (empty, value) = (self.named(empty), self.named(value));
        let zero = self.named(&Index::Constant(0));
        let (positive, name) = (self.fresh(), self.fresh());
        let _ = writeln!(self.body, "  {positive} = arith.cmpi sgt, {empty}, {zero} : index");
        let _ = writeln!(self.body, "  {name} = arith.select {positive}, {value}, {zero} : index");
        Index::Named(name)
    }

    /// `low <= first && end <= high`, as an `i1` name.
    fn within(&mut self, first: &Index, end: &Index, low: &Index, high: &Index) -> String {
        let (first, end, low, high) = (self.named(first), self.named(end), self.named(low), self.named(high));
        let (above, below, both) = (self.fresh(), self.fresh(), self.fresh());
        let _ = writeln!(self.body, "  {above} = arith.cmpi sge, {first}, {low} : index");
        let _ = writeln!(self.body, "  {below} = arith.cmpi sle, {end}, {high} : index");
        let _ = writeln!(self.body, "  {both} = arith.andi {above}, {below} : i1");
        both
    }

    /// Whether every lane of `mask` that is set (`lanes` of them, lane `l`
    /// at `first + l * stride` and `bytes` long) lies in `[low, high)`.
    #[allow(clippy::too_many_arguments)]
    fn lanes_within(
        &mut self,
        lanes: i64,
        first: &Index,
        stride: &Index,
        bytes: &Index,
        low: &Index,
        high: &Index,
        mask: &str,
    ) -> String {
        let last_start = self.binary("subi", i64::wrapping_sub, high, bytes);
        let (first, stride, low, last_start) =
            (self.named(first), self.named(stride), self.named(low), self.named(&last_start));
        let vector = format!("vector<{lanes}xindex>");
        let flags = format!("vector<{lanes}xi1>");
        let names: Vec<String> = (0..12).map(|_| self.fresh()).collect();
        let [step, strides, offsets, firsts, at, lows, lasts, above, below, inside, outside, active] =
            <[String; 12]>::try_from(names).expect("twelve names");
        let ok = self.fresh();
        let _ = write!(
            self.body,
            "  {step} = vector.step : {vector}\n  \
             {strides} = vector.broadcast {stride} : index to {vector}\n  \
             {offsets} = arith.muli {step}, {strides} : {vector}\n  \
             {firsts} = vector.broadcast {first} : index to {vector}\n  \
             {at} = arith.addi {firsts}, {offsets} : {vector}\n  \
             {lows} = vector.broadcast {low} : index to {vector}\n  \
             {lasts} = vector.broadcast {last_start} : index to {vector}\n  \
             {above} = arith.cmpi sge, {at}, {lows} : {vector}\n  \
             {below} = arith.cmpi sle, {at}, {lasts} : {vector}\n  \
             {inside} = arith.andi {above}, {below} : {flags}\n  \
             {outside} = arith.constant dense<true> : {flags}\n  \
             {active} = arith.xori {mask}, {outside} : {flags}\n  \
             {ok}_lanes = arith.ori {inside}, {active} : {flags}\n  \
             {ok} = vector.reduction <and>, {ok}_lanes : {flags} into i1\n"
        );
        ok
    }
}

/// Inlines `check` before `op` and moves `op` into an `scf.if` on its
/// result; the other branch raises the fault flag with `site` (and a load
/// gives zeros).
fn guard(op: MlirOperation, check: &Check, ok: &str, site: i64) -> Result<(), TemplateError> {
    let zero = match raw_op(op).results().first() {
        Some(&value) => Some(crate::emulate::privatize::zero(value_type(value)).map_err(TemplateError)?),
        None => None,
    };
    let guarded = Guarded { parameters: &check.parameters, arguments: &check.arguments, body: &check.body, ok };
    guard_op(op, &guarded, BOUNDS_FAULT, site, zero.as_deref())
}

/// Ops recording `site` in the i64 global `fault` unless an earlier fault
/// is there: the error names the first access that failed, as an
/// interpreter stopping there would.
pub(crate) fn record_first_fault(fault: &str, site: i64) -> String {
    format!(
        "%flag = memref.get_global @{fault} : memref<i64>\n\
         %recorded = memref.load %flag[] : memref<i64>\n\
         %none = arith.constant 0 : i64\n\
         %first = arith.cmpi eq, %recorded, %none : i64\n\
         scf.if %first {{\n\
         %site = arith.constant {site} : i64\n\
         memref.store %site, %flag[] : memref<i64>\n}}\n"
    )
}

/// A check `guard_op` puts an op under: template parameters and the
/// values bound to them, the body computing the `i1` named `ok`.
pub(crate) struct Guarded<'a> {
    pub(crate) parameters: &'a [String],
    pub(crate) arguments: &'a [MlirValue],
    pub(crate) body: &'a str,
    pub(crate) ok: &'a str,
}

/// Inlines `check` before `op` and moves `op` into an `scf.if` on its
/// `ok`; the other branch records `site` in the i64 global `fault` (site 0:
/// records nothing) and, for an op with a result, yields `fallback` (an
/// `arith.constant` operand, `value : type`).
pub(crate) fn guard_op(
    op: MlirOperation,
    check: &Guarded,
    fault: &str,
    site: i64,
    fallback: Option<&str>,
) -> Result<(), TemplateError> {
    let result = raw_op(op).results().first().copied();
    // The loaded value's type and its fallback, yielded by both branches
    // (the first branch's stands in for the op's result until it moves in).
    let (arrow, yields, returned) = match (result, fallback) {
        (Some(value), Some(fallback)) => {
            let r#type = print_type(value_type(value));
            (
                format!(" -> {}", r#type),
                format!("    %fallback = arith.constant {fallback}\n    scf.yield %fallback : {}\n", r#type),
                format!("  return %guarded : {}\n", r#type),
            )
        }
        (Some(_), None) => return Err(TemplateError("a guarded op with a result needs a fallback value".into())),
        (None, _) => (String::new(), String::new(), "  return\n".to_string()),
    };
    let named = if result.is_some() { "%guarded = " } else { "" };
    let record = if site == 0 { String::new() } else { record_first_fault(fault, site) };
    let text = format!(
        "memref.global @{fault} : memref<i64> = dense<0>\n\
         func.func @template({}){arrow} {{\n{}  {named}scf.if {}{arrow} {{\n{yields}  }} else {{\n{record}{yields}  }}\n\
         {returned}}}",
        check.parameters.join(", "),
        check.body,
        check.ok,
    );
    let inlined = template::inline_ops_before(context_of(op), op, &text, check.arguments)?;
    let branch = *inlined.operations.last().expect("the scf.if");
    // SAFETY: the scf.if was just inlined right before `op`; `op` moves into
    // its first region, before the terminator, which then yields `op`'s
    // result in place of the fallback (destroyed, now unused); the op's
    // other uses take the scf.if's result, defined where `op` was.
    unsafe {
        let then_block = mlirRegionGetFirstBlock(mlirOperationGetRegion(branch, 0));
        let terminator = mlirBlockGetTerminator(then_block);
        if let Some(value) = result {
            mlirValueReplaceAllUsesOfWith(value, mlirOperationGetResult(branch, 0));
            let placeholder = mlirOpResultGetOwner(mlirOperationGetOperand(terminator, 0));
            mlirOperationSetOperand(terminator, 0, value);
            mlirOperationDestroy(placeholder);
        }
        mlirOperationMoveBefore(op, terminator);
    }
    Ok(())
}
