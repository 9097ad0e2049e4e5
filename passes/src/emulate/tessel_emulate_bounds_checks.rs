//! `tessel-emulate-bounds-checks`: every load and store of a `gpu.launch`
//! kernel checks, when the emulator runs it, that it stays inside the
//! memory it addresses.
//!
//! On the CPU an access past the end of a buffer reads whatever lies there
//! (often a neighbour's data, which a masked result then hides) or
//! corrupts the host's memory; on a GPU it faults, or reads or writes
//! another kernel's data. Either way the emulator's results could not be
//! trusted, so each access first computes the bytes it touches, relative to
//! the allocation its memref views (a function argument, an allocation, a
//! workgroup or private attribution), and compares them with that
//! allocation's extent. An access outside is not made (a load gives zeros)
//! and records its site in `__tessel_emulator_fault`, which the runtime
//! reports after the call as an error naming the access and its location
//! (the module lists the sites in `tessel.emulator_accesses`).
//!
//! Masked accesses check their active lanes only (masked-off lanes may lie
//! anywhere, as buffer instructions' out-of-range elements do).
//!
//! Runs after the other emulation passes that make accesses
//! (`tessel-emulate-buffers`, `-matrix-cores`, `-subgroups`) and before
//! `tessel-emulate-gpu`, while kernels are still launches and attributions
//! still have their own sizes. Attributions are used only as
//! `tessel-emulate-gpu` expects them to be (through views and casts): their
//! extents are static and read from their types.

use crate::support::handles::{context_of, location_of, operation_ref, rank_of, raw_op, result_of, value_type};
use crate::support::ir::{
    VIEWS, collect_operations, constant_integer, defining_op, element_bytes, print_type, strides_and_offset,
};
use crate::support::template::{self, TemplateError};
use crate::{PassDefinition, PassError};
use melior::StringRef;
use melior::ir::OperationRef;
use mlir_sys::*;
use std::fmt::Write;
use tessel_dialects::{EMULATOR_ACCESSES, EMULATOR_FAULT};

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-emulate-bounds-checks",
    name: "TesselEmulateBoundsChecks",
    description: "Check every load and store of gpu.launch kernels against the extent of the memory it addresses",
    anchor: "builtin.module",
    run,
};

/// Operands of `gpu.launch` before its attributions (grid and block sizes
/// and ids are block arguments 0-11).
const LAUNCH_IDS: usize = 12;

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    let launches = collect_operations(module, |name| name == "gpu.launch");
    if launches.is_empty() {
        return Ok(());
    }
    let mut sites = Vec::new();
    for (launch, _) in &launches {
        for (op, name) in collect_operations(operation_ref(*launch), |name| ACCESSES.contains(&name)) {
            let Some(access) = access_of(op, &name) else { continue };
            let site = sites.len() as i64 + 1;
            sites.push(format!("{name} of {} at {}", print_type(value_type(access.memref)), location_of(op)));
            check(op, &access, *launch, site).map_err(|error| PassError::at(location_of(op), error.0))?;
        }
    }
    let context = context_of(module.to_raw());
    let global = format!("memref.global @{EMULATOR_FAULT} : memref<i64> = dense<0>");
    template::define_symbol(context, module.to_raw(), EMULATOR_FAULT, &global)
        .map_err(|message| PassError::at(location_of(module.to_raw()), message))?;
    // SAFETY: the module and its context are live; the strings are copied
    // into the context's attributes.
    unsafe {
        let strings: Vec<MlirAttribute> =
            sites.iter().map(|site| mlirStringAttrGet(context, StringRef::new(site).to_raw())).collect();
        let list = mlirArrayAttrGet(context, strings.len() as isize, strings.as_ptr());
        mlirOperationSetAttributeByName(module.to_raw(), StringRef::new(EMULATOR_ACCESSES).to_raw(), list);
    }
    Ok(())
}

/// The accesses checked: every op of kernels that reads or writes memory
/// at indices once the other emulation passes ran.
const ACCESSES: &[&str] = &[
    "memref.load",
    "memref.store",
    "memref.atomic_rmw",
    "memref.generic_atomic_rmw",
    "vector.load",
    "vector.store",
    "vector.maskedload",
    "vector.maskedstore",
];

/// One access: the memref, its indices, the shape of the box it covers
/// along the memref's trailing dimensions (a vector's; none for a scalar)
/// and the mask of a masked access's lanes.
struct Access {
    memref: MlirValue,
    indices: Vec<MlirValue>,
    shape: Vec<i64>,
    mask: Option<MlirValue>,
}

fn vector_shape(vector: MlirType) -> Vec<i64> {
    (0..rank_of(vector) as usize).map(|d| crate::support::handles::dim_size(vector, d)).collect()
}

fn access_of(op: MlirOperation, name: &str) -> Option<Access> {
    let operands = raw_op(op).operands();
    let memref = operands[usize::from(matches!(name, "memref.store" | "memref.atomic_rmw" | "vector.store"))];
    // SAFETY: a memref type of the live context.
    let element = unsafe { mlirShapedTypeGetElementType(value_type(memref)) };
    // SAFETY: as above.
    if !unsafe { mlirTypeIsAFloat(element) || mlirTypeIsAInteger(element) || mlirTypeIsAIndex(element) } {
        return None;
    }
    let scalar = |memref: usize| Access {
        memref: operands[memref],
        indices: operands[memref + 1..].to_vec(),
        shape: Vec::new(),
        mask: None,
    };
    let vector = |memref: usize, vector: MlirType, masked: bool| {
        let rank = rank_of(value_type(operands[memref])) as usize;
        Access {
            memref: operands[memref],
            indices: operands[memref + 1..memref + 1 + rank].to_vec(),
            shape: vector_shape(vector),
            mask: masked.then(|| operands[memref + 1 + rank]),
        }
    };
    Some(match name {
        "memref.load" | "memref.generic_atomic_rmw" => scalar(0),
        "memref.store" | "memref.atomic_rmw" => scalar(1),
        "vector.load" => vector(0, value_type(result_of(op, 0)), false),
        "vector.store" => vector(1, value_type(operands[0]), false),
        "vector.maskedload" => vector(0, value_type(result_of(op, 0)), true),
        "vector.maskedstore" => {
            let rank = rank_of(value_type(operands[0])) as usize;
            vector(0, value_type(operands[rank + 2]), true)
        }
        _ => return None,
    })
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
fn is_attribution(value: MlirValue, launch: MlirOperation) -> bool {
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

/// Inserts the check of `access` before `op` and puts `op` under it.
fn check(op: MlirOperation, access: &Access, launch: MlirOperation, site: i64) -> Result<(), TemplateError> {
    let mut check = Check::default();
    let memref_type = value_type(access.memref);
    let bytes = Index::Constant(element_bytes(memref_type));
    // The first element's position, in bytes from the allocation's pointer.
    let (offset, _, strides) = check.layout(access.memref);
    let mut first = offset;
    for (&index, stride) in access.indices.iter().zip(&strides) {
        let index = check.index(index);
        let step = check.mul(&index, stride);
        first = check.add(&first, &step);
    }
    first = check.mul(&first, &bytes);
    let mut shifts = Vec::new();
    let root = allocation(access.memref, &mut shifts);
    for shift in shifts {
        let shift = check.index(shift);
        first = check.add(&first, &shift);
    }
    // The allocation's extent, in bytes from its pointer.
    let root_bytes = Index::Constant(element_bytes(value_type(root)));
    let (low, high) = if is_attribution(root, launch) {
        let r#type = value_type(root);
        let elements: i64 = vector_shape(r#type).iter().product();
        (Index::Constant(0), Index::Constant(elements * element_bytes(r#type)))
    } else {
        let (offset, sizes, strides) = check.layout(root);
        let mut last = Index::Constant(0);
        // The smallest size (none for a rank-0 memref: one element).
        let mut empty = Index::Constant(i64::MAX);
        for (size, stride) in sizes.iter().zip(&strides) {
            let below = check.add(size, &Index::Constant(-1));
            let step = check.mul(&below, stride);
            last = check.add(&last, &step);
            empty = check.min(&empty, size);
        }
        // An empty allocation (a size of 0) holds nothing.
        let extent = check.add(&last, &Index::Constant(1));
        let extent = check.select_positive(&empty, &extent);
        let low = check.mul(&offset, &root_bytes);
        let span = check.mul(&extent, &root_bytes);
        let high = check.add(&low, &span);
        (low, high)
    };
    let rank = access.indices.len();
    let box_strides = &strides[rank - access.shape.len().min(rank)..];
    let ok = match access.mask {
        None => {
            // The box's last element, relative to the first.
            let mut reach = Index::Constant(0);
            for (&extent, stride) in access.shape.iter().zip(box_strides) {
                let step = check.mul(&Index::Constant(extent - 1), stride);
                reach = check.add(&reach, &step);
            }
            let last = check.mul(&reach, &bytes);
            let last = check.add(&first, &last);
            let end = check.add(&last, &bytes);
            check.within(&first, &end, &low, &high)
        }
        Some(mask) => {
            let lane_stride = box_strides.last().cloned().unwrap_or(Index::Constant(1));
            let lane_bytes = check.mul(&lane_stride, &bytes);
            let mask = check.argument(mask);
            check.lanes_within(access.shape[0], &first, &lane_bytes, &bytes, &low, &high, &mask)
        }
    };
    guard(op, &check, &ok, site)
}

impl Check {
    fn min(&mut self, a: &Index, b: &Index) -> Index {
        self.binary("minsi", i64::min, a, b)
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
    let result = raw_op(op).results().first().copied();
    // The loaded value's type and its zero, yielded by both branches (the
    // first branch's zero stands in for the op's result until it moves in).
    let (arrow, yields, returned) = match result {
        None => (String::new(), String::new(), "  return\n".to_string()),
        Some(value) => {
            let r#type = print_type(value_type(value));
            let zero = crate::emulate::privatize::zero(value_type(value)).map_err(TemplateError)?;
            (
                format!(" -> {}", r#type),
                format!("    %zero = arith.constant {zero}\n    scf.yield %zero : {}\n", r#type),
                format!("  return %guarded : {}\n", r#type),
            )
        }
    };
    let named = if result.is_some() { "%guarded = " } else { "" };
    let text = format!(
        "memref.global @{EMULATOR_FAULT} : memref<i64> = dense<0>\n\
         func.func @template({}){arrow} {{\n{}  {named}scf.if {ok}{arrow} {{\n{yields}  }} else {{\n    \
         %flag = memref.get_global @{EMULATOR_FAULT} : memref<i64>\n    \
         %site = arith.constant {site} : i64\n    \
         memref.store %site, %flag[] : memref<i64>\n{yields}  }}\n{returned}}}",
        check.parameters.join(", "),
        check.body,
    );
    let inlined = template::inline_ops_before(context_of(op), op, &text, &check.arguments)?;
    let branch = *inlined.operations.last().expect("the scf.if");
    // SAFETY: the scf.if was just inlined right before `op`; `op` moves into
    // its first region, before the terminator, which then yields `op`'s
    // result in place of the zero (destroyed, now unused); the op's other
    // uses take the scf.if's result, defined where `op` was.
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
