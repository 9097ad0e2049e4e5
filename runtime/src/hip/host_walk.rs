//! Reading the lowered host function of a ROCm module (what grid-to-gpu
//! and the GPU pipeline leave around the kernels) into a [`HostProgram`]:
//! the steps the HIP launcher runs.

use super::{HostProgram, HostStep, HostValue, Launch, LaunchArg};
use melior::ir::Module;
use mlir_sys::*;
use std::collections::HashMap;
use tessel_dialects::RawOp;

/// The integer value of an `arith.constant`, if `value` is one.
fn constant_i64(value: MlirValue) -> Option<i64> {
    // SAFETY: `value` is a live value of the host function being walked.
    if unsafe { mlirValueIsAOpResult(value) } {
        // SAFETY: checked to be an operation's result.
        let definition = view(unsafe { mlirOpResultGetOwner(value) });
        if definition.name() == "arith.constant" && definition.has("value") {
            return Some(definition.integer("value"));
        }
    }
    None
}

/// A view of an operation of the module `host_program` walks.
fn view(op: MlirOperation) -> RawOp {
    // SAFETY: the walk only holds handles of the module it borrows for its
    // whole run, which nothing changes or drops meanwhile.
    unsafe { RawOp::from_raw(op) }
}

/// What the host does in the lowered host function `entry`: scratch
/// allocations and launches, in order, and the integer arithmetic and
/// array reads that size grids given as values. Host loops with constant
/// bounds (ordered grid axes around parallel programs) are unrolled into
/// their launches, each passing its step as an index argument; loops whose
/// bounds are known only at run time stay loops.
pub fn host_program(module: &Module, entry: &str) -> Result<HostProgram, String> {
    let function =
        tessel_dialects::find_symbol(&module.as_operation(), entry).ok_or_else(|| format!("no function @{entry}"))?;
    let body = view(function.to_raw()).region_block(0);
    let mut walk = HostWalk {
        // SAFETY: `body` is the entry block of a function of `module`,
        // which outlives the walk; indices stay below the argument count.
        arguments: unsafe { (0..mlirBlockGetNumArguments(body)).map(|i| mlirBlockGetArgument(body, i)).collect() },
        scratch: Vec::new(),
        values: HashMap::new(),
        registers: 0,
    };
    let steps = walk.block(body)?;
    Ok(HostProgram { steps, registers: walk.registers })
}

/// What `host_program` knows while walking the host code.
struct HostWalk {
    arguments: Vec<MlirValue>,
    scratch: Vec<MlirValue>,
    /// Host integers known so far (constants, unrolled loop steps, values
    /// the program computes in registers), by value.
    values: HashMap<usize, HostValue>,
    registers: usize,
}

impl HostWalk {
    fn block(&mut self, block: MlirBlock) -> Result<Vec<HostStep>, String> {
        let mut steps = Vec::new();
        // SAFETY: `block` belongs to the module being walked, which is
        // neither changed nor dropped during the walk.
        let mut op = unsafe { mlirBlockGetFirstOperation(block) };
        while !op.ptr.is_null() {
            self.operation(op, &mut steps)?;
            // SAFETY: `op` is a live operation of that block (checked non-null).
            op = unsafe { mlirOperationGetNextInBlock(op) };
        }
        Ok(steps)
    }

    /// The host integer `value` is.
    fn value(&self, value: MlirValue) -> Result<HostValue, String> {
        constant_i64(value)
            .map(HostValue::Constant)
            .or_else(|| self.values.get(&(value.ptr as usize)).copied())
            .ok_or_else(|| "the HIP launcher cannot compute a value of the host code".to_string())
    }

    fn register(&mut self) -> usize {
        self.registers += 1;
        self.registers - 1
    }

    fn operation(&mut self, op: MlirOperation, steps: &mut Vec<HostStep>) -> Result<(), String> {
        let raw = view(op);
        let name = raw.name();
        match name.as_str() {
            "arith.constant" | "gpu.dealloc" | "memref.dealloc" | "func.return" | "scf.yield" => {}
            "gpu.alloc" => {
                // SAFETY: a `gpu.alloc` of the lowered host code has one
                // result, a rank-1 `memref<Nxi8>` or `memref<?xi8>` sized
                // by its one operand (grid-to-gpu makes it so).
                let memref = unsafe { mlirValueGetType(raw.results()[0]) };
                // SAFETY: as above: a shaped type of rank 1.
                let size = unsafe { mlirShapedTypeGetDimSize(memref, 0) };
                let bytes = match raw.operands().last() {
                    Some(&operand) if size < 0 => self.value(operand)?,
                    _ => HostValue::Constant(size),
                };
                steps.push(HostStep::Alloc { scratch: self.scratch.len(), bytes });
                self.scratch.push(raw.results()[0]);
            }
            "memref.load" => {
                // An integer element of an entry array: a grid size.
                let operands = raw.operands();
                let array = self
                    .arguments
                    .iter()
                    .position(|argument| argument.ptr == operands[0].ptr)
                    .ok_or("the host code reads memory that is not an argument")?;
                let memref = operands[0];
                // SAFETY: a `memref.load`'s first operand is a ranked memref
                // (of the entry's identity layout); dimensions below its rank.
                let (shape, element) = unsafe {
                    let r#type = mlirValueGetType(memref);
                    let shape: Vec<i64> = (0..mlirShapedTypeGetRank(r#type))
                        .map(|d| mlirShapedTypeGetDimSize(r#type, d as isize))
                        .collect();
                    (shape, mlirShapedTypeGetElementType(r#type))
                };
                // SAFETY: a type of the module.
                let bits = unsafe { mlirTypeIsAInteger(element).then(|| mlirIntegerTypeGetWidth(element)) };
                let bytes = match bits {
                    Some(bits @ (8 | 16 | 32 | 64)) => bits as usize / 8,
                    _ => return Err("the host code reads an array of other than 8- to 64-bit integers".into()),
                };
                // The row-major element offset.
                let mut offset = HostValue::Constant(0);
                for (d, &index) in operands[1..].iter().enumerate() {
                    let stride: i64 = shape[d + 1..].iter().product();
                    let scaled = self.arith(steps, "arith.muli", self.value(index)?, HostValue::Constant(stride))?;
                    offset = self.arith(steps, "arith.addi", offset, scaled)?;
                }
                let register = self.register();
                steps.push(HostStep::Load { register, array, offset, bytes });
                self.values.insert(raw.results()[0].ptr as usize, HostValue::Register(register));
            }
            _ if super::is_host_arith(&name) => {
                let operands = raw.operands();
                let lhs = self.value(operands[0])?;
                let rhs = operands.get(1).map(|&rhs| self.value(rhs)).transpose()?.unwrap_or(HostValue::Constant(0));
                let result = self.arith(steps, &name, lhs, rhs)?;
                self.values.insert(raw.results()[0].ptr as usize, result);
            }
            "scf.for" => {
                let operands = raw.operands();
                if operands.len() > 3 {
                    return Err("host loops must carry no values".into());
                }
                let (lower, upper, step) =
                    (self.value(operands[0])?, self.value(operands[1])?, self.value(operands[2])?);
                let body = raw.region_block(0);
                // SAFETY: an `scf.for` body's first argument is its
                // induction variable.
                let iv = unsafe { mlirBlockGetArgument(body, 0) };
                match (lower, upper, step) {
                    (HostValue::Constant(lower), HostValue::Constant(upper), HostValue::Constant(step)) => {
                        if step <= 0 {
                            return Err("host loops must count up".into());
                        }
                        let mut at = lower;
                        while at < upper {
                            self.values.insert(iv.ptr as usize, HostValue::Constant(at));
                            steps.extend(self.block(body)?);
                            at += step;
                        }
                    }
                    _ => {
                        let register = self.register();
                        self.values.insert(iv.ptr as usize, HostValue::Register(register));
                        let body = self.block(body)?;
                        steps.push(HostStep::Loop { register, lower, upper, step, body });
                    }
                }
            }
            "gpu.launch_func" => {
                // asyncDependencies, grid x y z, block x y z, cluster x y z,
                // dynamic shared memory, kernel operands, async object.
                let segments = raw.segments();
                let operands = raw.operands();
                let start = |group: usize| segments[..group].iter().sum::<usize>();
                let grid =
                    [self.value(operands[start(1)])?, self.value(operands[start(2)])?, self.value(operands[start(3)])?];
                let size = |group: usize| match constant_i64(operands[start(group)]) {
                    Some(size) => u32::try_from(size).map_err(|_| format!("workgroup size {size}")),
                    None => Err("workgroup sizes must be constants".to_string()),
                };
                let workgroup = [size(4)?, size(5)?, size(6)?];
                let kernel_operands = &operands[start(11)..start(11) + segments[11]];
                let args = kernel_operands.iter().map(|value| self.argument(*value)).collect::<Result<_, _>>()?;
                // SAFETY: `gpu.launch_func` verifies that it has a `kernel`
                // symbol reference attribute (non-null).
                let kernel = unsafe { melior::ir::Attribute::from_raw(raw.attribute("kernel")) }.to_string();
                let kernel = kernel.rsplit("::@").next().unwrap_or("").trim_start_matches('@').to_string();
                steps.push(HostStep::Launch(Launch { kernel, grid, workgroup, args }));
            }
            other => return Err(format!("the HIP launcher does not run host operation '{other}'")),
        }
        Ok(())
    }

    /// `op` of two host integers: folded when both are constants, else a
    /// step computing a new register.
    fn arith(
        &mut self,
        steps: &mut Vec<HostStep>,
        op: &str,
        lhs: HostValue,
        rhs: HostValue,
    ) -> Result<HostValue, String> {
        if let (HostValue::Constant(lhs), HostValue::Constant(rhs)) = (lhs, rhs) {
            return super::host_arith(op, lhs, rhs)
                .map(HostValue::Constant)
                .ok_or_else(|| format!("'{op}' of {lhs} and {rhs} in the host code fails"));
        }
        let register = self.register();
        steps.push(HostStep::Arith { register, op: op.to_string(), lhs, rhs });
        Ok(HostValue::Register(register))
    }

    fn argument(&self, value: MlirValue) -> Result<LaunchArg, String> {
        if let Some(index) = self.arguments.iter().position(|argument| argument.ptr == value.ptr) {
            Ok(LaunchArg::Array(index))
        } else if let Some(index) = self.scratch.iter().position(|buffer| buffer.ptr == value.ptr) {
            Ok(LaunchArg::Scratch(index))
        } else {
            self.value(value)
                .map(LaunchArg::Index)
                .map_err(|_| "a kernel argument is neither an array, scratch nor a host integer".to_string())
        }
    }
}
