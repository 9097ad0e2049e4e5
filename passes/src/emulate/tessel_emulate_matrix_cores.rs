//! `tessel-emulate-matrix-cores`: the matrix instructions of `gpu.launch`
//! kernels (`amdgpu.mfma`, `amdgpu.wmma`) as code the GPU emulator runs.
//!
//! A matrix instruction is a wave-wide operation: every lane's results
//! depend on the fragments of A and B the other lanes of its wave hold.
//! The emulation does what the hardware's crossbar does, through memory:
//! each work-item stores its fragments in an exchange buffer of the
//! workgroup, a barrier, then each work-item computes its own result
//! registers from the fragments of its wave's lanes, a barrier (before the
//! buffer is used again). Which lane holds which entry comes from
//! `matrix_layout`'s placement rules (AMD's layouts), as constant tables:
//! the kernels' fragment loads come from the other, independent,
//! description of the same layouts. Each result is computed as the
//! hardware does (f32: one fused multiply-add per k step in k order, the
//! bit-exact model; integers: widened products summed, exact); neighbouring
//! instructions that do not use each other's results share one exchange.
//!
//! Runs after `grid-to-gpu` (one-dimensional workgroups) and before
//! `tessel-emulate-gpu`, which then runs the phases between barriers.

use crate::support::handles::{
    attribute_text, location_of, next_of, operation_ref, raw_op, replace_all_uses, result_of, value_type,
};
use crate::support::template::emit_line;
use crate::{
    PassDefinition, PassError,
    emulate::exchange_buffer,
    support::ir::{
        any_nested, block_arguments, block_operations, collect_operations, erase, inline_template, join, print_type,
        region_blocks,
    },
};
use melior::ir::OperationRef;
use mlir_sys::*;
use std::collections::HashSet;
use tessel_dialects::matrix_layout::{Family, MatrixInstruction};

pub static PASS: PassDefinition = PassDefinition {
    argument: "tessel-emulate-matrix-cores",
    name: "TesselEmulateMatrixCores",
    description: "Emulate amdgpu.mfma/wmma in gpu.launch kernels: fragments exchanged through memory between barriers",
    anchor: "builtin.module",
    run,
};

fn is_matrix_op(name: &str) -> bool {
    name == "amdgpu.mfma" || name == "amdgpu.wmma"
}

fn run(module: OperationRef<'static, '_>) -> Result<(), PassError> {
    for (launch, _) in collect_operations(module, |name| name == "gpu.launch") {
        if let Err((op, message)) = emulate_launch(launch) {
            let location = location_of(op);
            return Err(PassError::at(location, message));
        }
    }
    Ok(())
}

/// What one matrix op computes, read off its attributes and types.
struct Instruction {
    layout: MatrixInstruction,
    input: String,
    output: String,
    fragment: String,
    accumulator: String,
    /// Integer inputs zero-extended (WMMA's `unsignedA`/`unsignedB`).
    unsigned: [bool; 2],
}

fn read(op: MlirOperation) -> Result<Instruction, String> {
    let raw = raw_op(op);
    let name = raw.name();
    let family = if name == "amdgpu.mfma" { Family::Mfma } else { Family::Wmma };
    let modifiers = ["cbsz", "abid"].iter().any(|attribute| raw.integer(attribute) != 0)
        || ["negateA", "negateB", "negateC", "reducePrecision", "clamp"].iter().any(|attribute| raw.has(attribute))
        || raw.integer("subwordOffset") != 0;
    let blgp = raw.attribute("blgp");
    let permuted = !blgp.ptr.is_null() && !attribute_text(blgp).contains("none");
    if modifiers || permuted {
        return Err(
            "matrix instructions with broadcast, permutation, negation or reduced precision are not emulated".into()
        );
    }
    let types = raw.operands().into_iter().map(value_type).collect::<Vec<_>>();
    let element = crate::support::ir::element_name;
    let bits = |t: MlirType| crate::support::ir::element_bits(crate::support::ir::element_type(t));
    let layout = MatrixInstruction {
        mnemonic: "emulated",
        family,
        m: raw.integer("m"),
        n: raw.integer("n"),
        k: raw.integer("k"),
        blocks: if family == Family::Mfma { raw.integer("blocks") } else { 1 },
        input_bits: bits(types[0]),
        output_bits: bits(types[2]),
        // Timing plays no part in emulation.
        issue_cycles: 0,
    };
    let (input, output) = (element(types[0]), element(types[2]));
    let supported = matches!((input.as_str(), output.as_str()), ("f32", "f32") | ("i8", "i32"));
    if !supported || element(types[1]) != input || layout.input_elements() < 1 {
        return Err(format!("{name} on {input} into {output} is not emulated"));
    }
    Ok(Instruction {
        layout,
        fragment: print_type(types[0]),
        accumulator: print_type(types[2]),
        input,
        output,
        unsigned: [raw.has("unsignedA"), raw.has("unsignedB")],
    })
}

/// The placement tables of `layout`, as i32 constants: for each lane and
/// result register, the row of A and the column of B its result sums
/// over, as offsets into the input table (`[lane][register][2]`, the
/// offset of row r of block b being (b · outer + r) · k); and for each
/// such offset plus a k step, the flat fragment slot (lane · elements +
/// element) holding that entry.
fn tables(layout: &MatrixInstruction) -> (Vec<i64>, Vec<i64>) {
    let (lanes, registers) = (layout.wave_size(), layout.output_elements());
    let outer = layout.m.max(layout.n);
    let mut results = vec![0; (lanes * registers * 2) as usize];
    for block in 0..layout.blocks {
        for i in 0..layout.m {
            for j in 0..layout.n {
                let (lane, register) = layout.output_place(i, j, block);
                let at = ((lane * registers + register) * 2) as usize;
                results[at] = (block * outer + i) * layout.k;
                results[at + 1] = (block * outer + j) * layout.k;
            }
        }
    }
    let per_lane = layout.input_elements();
    let mut inputs = vec![0; (layout.blocks * outer * layout.k) as usize];
    for block in 0..layout.blocks {
        for row in 0..outer {
            for k in 0..layout.k {
                let (holders, element) = layout.input_lanes(row, k, block);
                inputs[((block * outer + row) * layout.k + k) as usize] = holders[0] * per_lane + element;
            }
        }
    }
    (results, inputs)
}

fn emulate_launch(launch: MlirOperation) -> Result<(), (MlirOperation, String)> {
    let launch_ref = operation_ref(launch);
    let ops = collect_operations(launch_ref, is_matrix_op);
    if ops.is_empty() {
        return Ok(());
    }
    let body = raw_op(launch).region_block(0);
    let arguments = block_arguments(body);
    let (item, items) = (arguments[3], arguments[9]);
    // Groups of neighbouring, independent matrix ops, one exchange each.
    let mut groups: Vec<Vec<MlirOperation>> = Vec::new();
    let mut blocks = vec![body];
    for (op, _) in collect_operations(launch_ref, |_| true) {
        if op.ptr != launch.ptr {
            blocks.extend(region_blocks(op));
        }
    }
    for block in blocks {
        group_in(block, &mut groups);
    }
    let largest = groups.iter().map(Vec::len).max().unwrap_or(1) as i64;
    // Exchange buffers by element type and size.
    let mut exchanges: Vec<(String, MlirValue)> = Vec::new();
    for group in &groups {
        let instructions = group.iter().map(|&op| read(op).map_err(|why| (op, why))).collect::<Result<Vec<_>, _>>()?;
        let layout = instructions[0].layout;
        if instructions.iter().any(|other| other.layout != layout || other.input != instructions[0].input) {
            return Err((group[0], "a group of matrix instructions of different shapes".into()));
        }
        // One exchange buffer per input type and fragment size, allocated
        // for the largest group, per workgroup.
        let element = instructions[0].input.clone();
        let slots = largest * 2 * layout.input_elements();
        let key = format!("{element}x{slots}");
        let buffer = match exchanges.iter().find(|(known, _)| *known == key) {
            Some((_, buffer)) => *buffer,
            None => {
                let buffer = exchange_buffer(body, items, slots, &element).map_err(|why| (launch, why))?;
                exchanges.push((key, buffer));
                buffer
            }
        };
        expand(group, &instructions, buffer, item, items).map_err(|why| (group[0], why))?;
    }
    Ok(())
}

/// Splits the matrix ops of `block` into groups: consecutive ones, none
/// using another's result, no barrier between them, no use of a result
/// before the group's last op.
fn group_in(block: MlirBlock, groups: &mut Vec<Vec<MlirOperation>>) {
    let mut current: Vec<MlirOperation> = Vec::new();
    let mut results: HashSet<usize> = HashSet::new();
    for op in block_operations(block) {
        let raw = raw_op(op);
        let uses_group =
            any_nested(op, |nested| raw_op(nested).operands().iter().any(|v| results.contains(&(v.ptr as usize))));
        let barrier = any_nested(op, |nested| raw_op(nested).name() == "gpu.barrier");
        if uses_group || barrier {
            if !current.is_empty() {
                groups.push(std::mem::take(&mut current));
            }
            results.clear();
        }
        if is_matrix_op(&raw.name()) {
            current.push(op);
            results.extend(raw.results().iter().map(|v| v.ptr as usize));
        }
    }
    if !current.is_empty() {
        groups.push(current);
    }
}

/// Replaces `group` by: every item stores its fragments, barrier, every
/// item computes its result registers from its wave's fragments, barrier.
fn expand(
    group: &[MlirOperation],
    instructions: &[Instruction],
    exchange: MlirValue,
    item: MlirValue,
    items: MlirValue,
) -> Result<(), String> {
    let inst = &instructions[0];
    let layout = inst.layout;
    let (lanes, registers, per_lane, k) =
        (layout.wave_size(), layout.output_elements(), layout.input_elements(), layout.k);
    let (result_table, input_table) = tables(&layout);
    let table = |values: &[i64]| format!("dense<[{}]> : vector<{}xi32>", join(values), values.len());
    let memref = print_type(value_type(exchange));
    let last = *group.last().expect("a non-empty group");
    let anchor = next_of(last);
    let mut params = vec![format!("%x: {memref}"), "%t: index".into(), "%items: index".into()];
    let mut args = vec![exchange, item, items];
    for (index, (&op, instruction)) in group.iter().zip(instructions).enumerate() {
        let operands = raw_op(op).operands();
        params.push(format!("%fa{index}: {}", instruction.fragment));
        params.push(format!("%fb{index}: {}", instruction.fragment));
        params.push(format!("%fc{index}: {}", instruction.accumulator));
        args.extend([operands[0], operands[1], operands[2]]);
    }
    let results = vec![inst.accumulator.clone(); group.len()];
    let mut t = format!("func.func @template({}) -> ({}) {{\n", params.join(", "), join(&results));
    emit_line!(
        t,
        "%c0 = arith.constant 0 : index\n%c1 = arith.constant 1 : index\n%c2 = arith.constant 2 : index\n\
         %ck = arith.constant {k} : index\n%cpl = arith.constant {per_lane} : index\n\
         %cw = arith.constant {lanes} : index\n%cregs = arith.constant {registers} : index\n\
         %results = arith.constant {}\n%inputs = arith.constant {}\n\
         %lane = arith.remui %t, %cw : index\n%first = arith.subi %t, %lane : index",
        table(&result_table),
        table(&input_table),
    );
    // Slot s of item t's fragments of instruction g, operand o (0: A, 1: B):
    // ((g * 2 + o) * items + t) * per_lane + s.
    let slot_base = |g: usize, operand: usize, who: &str, t: &mut String| -> String {
        let name = format!("%base{g}_{operand}_{}", who.trim_start_matches('%'));
        emit_line!(
            t,
            "%go{g}_{operand}_{w} = arith.constant {} : index\n%gi{g}_{operand}_{w} = arith.muli %go{g}_{operand}_{w}, %items : index\n\
             %gt{g}_{operand}_{w} = arith.addi %gi{g}_{operand}_{w}, {who} : index\n\
             {name} = arith.muli %gt{g}_{operand}_{w}, %cpl : index",
            g * 2 + operand,
            w = who.trim_start_matches('%'),
        );
        name
    };
    // Store this item's fragments.
    for g in 0..group.len() {
        for (operand, value) in [(0, format!("%fa{g}")), (1, format!("%fb{g}"))] {
            let base = slot_base(g, operand, "%t", &mut t);
            if per_lane == 1 {
                emit_line!(t, "memref.store {value}, %x[{base}] : {memref}");
            } else {
                emit_line!(t, "vector.store {value}, %x[{base}] : {memref}, {}", inst.fragment);
            }
        }
    }
    t.push_str("gpu.barrier\n");
    // Compute this item's registers from its wave's fragments.
    let mut outputs = Vec::new();
    for (g, instruction) in instructions.iter().enumerate() {
        let base_a = slot_base(g, 0, "%first", &mut t);
        let base_b = slot_base(g, 1, "%first", &mut t);
        let mut current = format!("%fc{g}");
        for register in 0..registers {
            let name = format!("%d{g}_{register}");
            let extend = |value: &str, which: usize| -> (String, String) {
                if instruction.input == instruction.output {
                    (String::new(), value.to_string())
                } else {
                    let op = if instruction.unsigned[which] { "arith.extui" } else { "arith.extsi" };
                    (
                        format!("{value}w = {op} {value} : {} to {}\n", instruction.input, instruction.output),
                        format!("{value}w"),
                    )
                }
            };
            let (widen_a, wide_a) = extend("%av", 0);
            let (widen_b, wide_b) = extend("%bv", 1);
            let step = if instruction.output == "f32" {
                format!("%next = math.fma {wide_a}, {wide_b}, %sum : f32\n")
            } else {
                format!(
                    "%p = arith.muli {wide_a}, {wide_b} : {o}\n%next = arith.addi %sum, %p : {o}\n",
                    o = instruction.output
                )
            };
            emit_line!(
                t,
                "%reg{g}_{register} = arith.constant {register} : index\n\
                 %rl{g}_{register} = arith.muli %lane, %cregs : index\n\
                 %rs{g}_{register} = arith.addi %rl{g}_{register}, %reg{g}_{register} : index\n\
                 %ri{g}_{register} = arith.muli %rs{g}_{register}, %c2 : index\n\
                 %rj{g}_{register} = arith.addi %ri{g}_{register}, %c1 : index\n\
                 %row{g}_{register}_32 = vector.extract %results[%ri{g}_{register}] : i32 from vector<{rt}xi32>\n\
                 %col{g}_{register}_32 = vector.extract %results[%rj{g}_{register}] : i32 from vector<{rt}xi32>\n\
                 %arow{g}_{register} = arith.index_cast %row{g}_{register}_32 : i32 to index\n\
                 %bcol{g}_{register} = arith.index_cast %col{g}_{register}_32 : i32 to index\n\
                 %init{g}_{register} = vector.extract {current}[{register}] : {o} from {acc}\n\
                 %sum{g}_{register} = scf.for %kk = %c0 to %ck step %c1 iter_args(%sum = %init{g}_{register}) -> ({o}) {{\n\
                 %ae = arith.addi %arow{g}_{register}, %kk : index\n%be = arith.addi %bcol{g}_{register}, %kk : index\n\
                 %as32 = vector.extract %inputs[%ae] : i32 from vector<{it}xi32>\n\
                 %bs32 = vector.extract %inputs[%be] : i32 from vector<{it}xi32>\n\
                 %as = arith.index_cast %as32 : i32 to index\n%bs = arith.index_cast %bs32 : i32 to index\n\
                 %aat = arith.addi {base_a}, %as : index\n%bat = arith.addi {base_b}, %bs : index\n\
                 %av = memref.load %x[%aat] : {memref}\n%bv = memref.load %x[%bat] : {memref}\n\
                 {widen_a}{widen_b}{step}scf.yield %next : {o}\n}}\n\
                 {name} = vector.insert %sum{g}_{register}, {current} [{register}] : {o} into {acc}",
                rt = result_table.len(),
                it = input_table.len(),
                o = instruction.output,
                acc = instruction.accumulator,
            );
            current = name;
        }
        outputs.push(current);
    }
    emit_line!(t, "gpu.barrier\nreturn {} : {}\n}}", outputs.join(", "), join(&results));
    let (values, _) = inline_template(anchor, &t, &args)?;
    for (&op, value) in group.iter().zip(values) {
        replace_all_uses(result_of(op, 0), value);
        erase(op);
    }
    Ok(())
}
