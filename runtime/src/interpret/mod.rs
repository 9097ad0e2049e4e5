//! The reference interpreter: runs dialect-level Tessel IR directly, with
//! Pallas' semantics spelled out as plainly as possible — the grid in
//! row-major order, one program at a time, every block a padded copy
//! (NaN / the integer minimum) of the array's slice, output blocks written
//! back to their in-bounds part after each program and, where the next
//! program has the same output block, handed to it whole (a TPU keeps a
//! revisited block in VMEM). Compiled code is checked against it
//! (`tessel run --check`).

mod block_ops;
mod cores;
mod elementwise;
mod semaphores;
mod structure;
mod value;

use crate::{ElementType, HostArray};
pub(crate) use elementwise::evaluate;
use melior::{
    StringRef,
    ir::{Module, OperationRef},
};
use mlir_sys::*;
use std::collections::HashMap;
use tessel_dialects::{BlockSpec, GridCall, find_symbol};
pub use value::{Num, Tensor, Val};
use value::{for_each_index, normalize, poison, read, write};

/// Why interpretation stopped.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct InterpretError(pub String);

type Result<T> = std::result::Result<T, InterpretError>;

/// Every op the interpreter runs besides the element-wise `arith` and
/// `math` ops (`elementwise::is_elementwise`).
const OPS: &[&str] = &[
    "func.call",
    "func.return",
    "grid.call",
    "grid.program_id",
    "grid.num_programs",
    "scf.for",
    "scf.if",
    "scf.while",
    "scf.index_switch",
    "scf.yield",
    "scf.condition",
    "arith.constant",
    "arith.select",
    "block.load",
    "block.store",
    "block.atomic_rmw",
    "block.atomic_cas",
    "block.atomic_cas_element",
    "block.dot",
    "block.reduce",
    "block.broadcast",
    "block.iota",
    "tensor.splat",
    "tensor.empty",
    "tensor.extract",
    "tensor.from_elements",
    "tensor.expand_shape",
    "tensor.collapse_shape",
    "tensor.reshape",
    "tensor.extract_slice",
    "tensor.insert_slice",
    "linalg.transpose",
    "memref.load",
    "memref.store",
    "block.semaphore_signal",
    "block.semaphore_wait",
    "block.semaphore_read",
    "block.dma_start",
    "block.print",
];

/// Whether the interpreter runs ops named `name` (every op a kernel may
/// use on a compiled path must be here: a test checks every kernel in
/// `examples/` and `test/`).
pub fn supports(name: &str) -> bool {
    OPS.contains(&name) || elementwise::is_elementwise(name)
}

/// An op's location as `file:line:col` (what MLIR prints inside `loc(..)`).
fn location_text(op: &Op) -> String {
    // SAFETY: the interpreter only holds live ops of the module it runs.
    let location = unsafe { melior::ir::Location::from_raw(mlir_sys::mlirOperationGetLocation(op.raw())) };
    let text = location.to_string();
    let inner = text.strip_prefix("loc(").and_then(|rest| rest.strip_suffix(')')).unwrap_or(&text);
    inner.replacen('"', "", 2)
}

fn fail<T>(message: impl Into<String>) -> Result<T> {
    Err(InterpretError(message.into()))
}

/// Runs `entry` on `arrays` (one per argument), in place; returns the
/// lines its kernels printed (`block.print`), in order.
pub fn interpret(module: &Module, entry: &str, arrays: &mut Vec<HostArray>) -> Result<Vec<String>> {
    let module_op = module.as_operation().to_raw();
    let function = find_symbol(&module.as_operation(), entry)
        .map(|function| function.to_raw())
        .ok_or_else(|| InterpretError(format!("no function @{entry}")))?;
    let count = arrays.len();
    let dma_on_wait = tessel_dialects::knobs::DMA_MODE.integer_or(view(module_op), 0) == 1;
    let mut interpreter = Interpreter {
        module: module_op,
        buffers: std::mem::take(arrays),
        grid: Vec::new(),
        printed: Vec::new(),
        core: None,
        dma_on_wait,
        queued: HashMap::new(),
    };
    let arguments = (0..count).map(Val::Ref).collect();
    let result = interpreter.call(function, arguments);
    interpreter.buffers.truncate(count);
    *arrays = interpreter.buffers;
    result.map(|_| interpreter.printed)
}

/// A DMA queued on its semaphore (`tessel.dma_mode` on_wait): its op and
/// operands, run when a wait takes it.
type QueuedDma = (MlirOperation, Vec<Val>);

/// How a block ended.
enum Flow {
    Next,
    /// A terminator (`func.return`, `scf.yield`) with its values.
    Exit(Vec<Val>),
}

struct Interpreter {
    module: MlirOperation,
    /// Every memref: the entry's arrays first, then blocks and scratch.
    buffers: Vec<HostArray>,
    /// (program ids, grid sizes) of the running program.
    grid: Vec<(i64, i64)>,
    /// The lines kernels printed so far.
    printed: Vec<String>,
    /// The core this interpreter runs, in a call over a core mesh.
    core: Option<cores::CoreContext>,
    /// DMAs copy on waits (`tessel.dma_mode` on_wait).
    dma_on_wait: bool,
    /// The DMAs queued on each semaphore (buffer, element), in order
    /// (semaphores.rs).
    queued: HashMap<(usize, usize), Vec<QueuedDma>>,
}

pub(crate) use tessel_dialects::RawOp as Op;

/// A view of an operation of the module being interpreted.
pub(crate) fn view(op: MlirOperation) -> Op {
    // SAFETY: the interpreter only holds handles of the module `interpret`
    // borrows for the whole run, which nothing changes or drops meanwhile.
    unsafe { Op::from_raw(op) }
}

/// Element type and shape of a value's type (shape empty for scalars).
pub(crate) fn type_info(r#type: MlirType) -> Result<(ElementType, Vec<usize>)> {
    // SAFETY: `r#type` is a live, non-null type of the module being
    // interpreted (a value's type or a parsed scratch type).
    let text = unsafe { melior::ir::Type::from_raw(r#type) }.to_string();
    // SAFETY: the same type; the shaped-type calls run only on shaped
    // types, with dimensions below their rank.
    unsafe {
        if mlirTypeIsAShaped(r#type) {
            let element = melior::ir::Type::from_raw(mlirShapedTypeGetElementType(r#type)).to_string();
            let shape = (0..mlirShapedTypeGetRank(r#type))
                .map(|d| mlirShapedTypeGetDimSize(r#type, d as isize) as usize)
                .collect();
            return Ok((
                ElementType::from_mlir(&element).ok_or_else(|| InterpretError(format!("unsupported type {text}")))?,
                shape,
            ));
        }
    }
    Ok((ElementType::from_mlir(&text).ok_or_else(|| InterpretError(format!("unsupported type {text}")))?, Vec::new()))
}

pub(crate) fn value_type(value: MlirValue) -> Result<(ElementType, Vec<usize>)> {
    // SAFETY: `value` belongs to the module being interpreted, which lives
    // and is not changed while the interpreter runs.
    type_info(unsafe { mlirValueGetType(value) })
}

/// Values by their `MlirValue` address.
#[derive(Default)]
pub(crate) struct Env(HashMap<usize, Val>);

impl Env {
    pub fn get(&self, value: MlirValue) -> Result<Val> {
        self.0
            .get(&(value.ptr as usize))
            .cloned()
            .ok_or_else(|| InterpretError("use of a value the interpreter did not define".into()))
    }
    pub fn set(&mut self, value: MlirValue, val: Val) {
        self.0.insert(value.ptr as usize, val);
    }
}

pub(crate) fn scalar(val: &Val) -> Result<Num> {
    match val {
        Val::Scalar(_, num) => Ok(*num),
        _ => fail("expected a scalar"),
    }
}

fn tensor(val: &Val) -> Result<&Tensor> {
    match val {
        Val::Tensor(t) => Ok(t),
        _ => fail("expected a tensor"),
    }
}

impl Interpreter {
    /// The top-level operation of the interpreted module named `name`.
    fn symbol(&self, name: &str) -> Option<MlirOperation> {
        // SAFETY: `self.module` is the module `interpret` borrows for the
        // whole run.
        let module = unsafe { OperationRef::from_raw(self.module) };
        find_symbol(&module, name).map(|op| op.to_raw())
    }

    fn call(&mut self, function: MlirOperation, arguments: Vec<Val>) -> Result<Vec<Val>> {
        let block = view(function).region_block(0);
        if block.ptr.is_null() {
            return fail("call of a function without a body");
        }
        self.run_block(block, arguments)
    }

    /// Runs a block with its arguments bound; returns its terminator's values.
    fn run_block(&mut self, block: MlirBlock, arguments: Vec<Val>) -> Result<Vec<Val>> {
        let mut env = Env::default();
        for (i, argument) in arguments.into_iter().enumerate() {
            // SAFETY: verified IR passes a block as many values as it has
            // arguments (calls and region terminators are checked).
            env.set(unsafe { mlirBlockGetArgument(block, i as isize) }, argument);
        }
        self.run_ops(block, &mut env)
    }

    fn run_ops(&mut self, block: MlirBlock, env: &mut Env) -> Result<Vec<Val>> {
        // SAFETY: `block` belongs to the module being interpreted, which is
        // never changed while it runs.
        let mut op = unsafe { mlirBlockGetFirstOperation(block) };
        while !op.ptr.is_null() {
            if let Flow::Exit(values) = self.run_op(&view(op), env)? {
                return Ok(values);
            }
            // SAFETY: `op` is a live operation of that block (non-null).
            op = unsafe { mlirOperationGetNextInBlock(op) };
        }
        Ok(Vec::new())
    }

    /// Runs a nested region's block in a scope that sees `env`.
    fn run_nested(&mut self, block: MlirBlock, env: &Env, arguments: Vec<Val>) -> Result<Vec<Val>> {
        let mut inner = Env(env.0.clone());
        for (i, argument) in arguments.into_iter().enumerate() {
            // SAFETY: as in `run_block`.
            inner.set(unsafe { mlirBlockGetArgument(block, i as isize) }, argument);
        }
        self.run_ops(block, &mut inner)
    }

    fn run_op(&mut self, op: &Op, env: &mut Env) -> Result<Flow> {
        let name = op.name();
        if !supports(&name) {
            return fail(format!("the interpreter does not support '{name}'"));
        }
        let operands: Vec<Val> = op.operands().into_iter().map(|v| env.get(v)).collect::<Result<_>>()?;
        let results = op.results();
        let set_result = |env: &mut Env, val: Val| env.set(results[0], val);
        match name.as_str() {
            "func.return" | "scf.yield" | "scf.condition" => return Ok(Flow::Exit(operands)),
            "func.call" => {
                // SAFETY: a verified `func.call` has a `callee` attribute.
                let callee = unsafe { melior::ir::Attribute::from_raw(op.attribute("callee")) }.to_string();
                let function = self
                    .symbol(callee.trim_start_matches('@'))
                    .ok_or_else(|| InterpretError(format!("unknown function {callee}")))?;
                let values = self.call(function, operands)?;
                for (result, value) in results.iter().zip(values) {
                    env.set(*result, value);
                }
            }
            "grid.call" => self.grid_call(op, &operands)?,
            "grid.program_id" | "grid.num_programs" => {
                let axis = op.integer("axis") as usize;
                let (id, size) =
                    *self.grid.get(axis).ok_or_else(|| InterpretError("grid query outside a kernel".into()))?;
                let value = if name == "grid.program_id" { id } else { size };
                set_result(env, Val::Scalar(ElementType::Index, Num::I(value)));
            }
            "arith.constant" => set_result(env, constant(op)?),
            "arith.select" => set_result(env, select(op, &operands)?),
            "scf.for" => {
                let (lower, upper, step) =
                    (scalar(&operands[0])?.i(), scalar(&operands[1])?.i(), scalar(&operands[2])?.i());
                if step <= 0 {
                    return fail("scf.for needs a positive step");
                }
                let mut carried: Vec<Val> = operands[3..].to_vec();
                let body = op.region_block(0);
                let mut iv = lower;
                while iv < upper {
                    let mut arguments = vec![Val::Scalar(ElementType::Index, Num::I(iv))];
                    arguments.extend(carried);
                    carried = self.run_nested(body, env, arguments)?;
                    iv += step;
                }
                for (result, value) in results.iter().zip(carried) {
                    env.set(*result, value);
                }
            }
            "scf.if" => {
                let taken = if scalar(&operands[0])?.i() != 0 { 0 } else { 1 };
                let block = op.region_block(taken);
                let values = if block.ptr.is_null() { Vec::new() } else { self.run_nested(block, env, Vec::new())? };
                for (result, value) in results.iter().zip(values) {
                    env.set(*result, value);
                }
            }
            "scf.while" => {
                // `before` ends in scf.condition(%continue) %args: the
                // arguments of `after`, or the results once it is false.
                let mut carried = operands;
                let values = loop {
                    let mut values = self.run_nested(op.region_block(0), env, carried)?;
                    if values.is_empty() {
                        return fail("scf.while: the before region yields no condition");
                    }
                    let arguments = values.split_off(1);
                    if scalar(&values[0])?.i() == 0 {
                        break arguments;
                    }
                    carried = self.run_nested(op.region_block(1), env, arguments)?;
                };
                for (result, value) in results.iter().zip(values) {
                    env.set(*result, value);
                }
            }
            "scf.index_switch" => {
                // Region 0 is the default; region k + 1 is case k.
                let selector = scalar(&operands[0])?.i();
                let case = op.integers("cases").iter().position(|&case| case == selector);
                let block = op.region_block(case.map_or(0, |k| k as isize + 1));
                let values = self.run_nested(block, env, Vec::new())?;
                for (result, value) in results.iter().zip(values) {
                    env.set(*result, value);
                }
            }
            "linalg.transpose" | "tensor.extract_slice" | "tensor.insert_slice" => {
                set_result(env, structure::structure_op(op, &name, &operands)?)
            }
            "block.print" => {
                let print_value = |element: ElementType, value: Num| match (element, value) {
                    (_, Num::I(v)) => crate::PrintValue::Int(v),
                    (ElementType::F64, Num::F(v)) => crate::PrintValue::Float(v),
                    (_, Num::F(v)) => crate::PrintValue::Float32(v as f32),
                };
                let texts = operands
                    .iter()
                    .map(|value| match value {
                        Val::Scalar(element, number) => {
                            Ok(crate::debug_print::scalar_text(&print_value(*element, *number)))
                        }
                        Val::Tensor(tensor) => {
                            let values: Vec<_> = tensor.data.iter().map(|&n| print_value(tensor.element, n)).collect();
                            Ok(crate::debug_print::array_text(tensor.element, &tensor.shape, &values))
                        }
                        _ => fail("block.print of a ref"),
                    })
                    .collect::<Result<Vec<_>>>()?;
                let format = op.string("format").unwrap_or_default();
                self.printed.push(crate::format_line(&format, &texts));
            }
            "block.semaphore_signal" | "block.semaphore_wait" | "block.semaphore_read" | "block.dma_start" => {
                if let Some(value) = self.semaphore_op(op, &name, &operands)? {
                    set_result(env, value);
                }
            }
            _ if name.starts_with("block.") || name.starts_with("tensor.") || name.starts_with("memref.") => {
                if let Some(value) = self.block_op(op, &name, &operands)? {
                    set_result(env, value);
                }
            }
            _ if elementwise::is_elementwise(&name) => set_result(env, self.elementwise(op, &name, &operands)?),
            _ => return fail(format!("the interpreter does not support '{name}'")),
        }
        Ok(Flow::Next)
    }

    fn elementwise(&self, op: &Op, name: &str, operands: &[Val]) -> Result<Val> {
        let (output, shape) = value_type(op.results()[0])?;
        let (input, _) = value_type(op.operands()[0])?;
        let predicate = op.integer("predicate");
        let apply = |args: &[Num]| elementwise::evaluate(name, input, output, predicate, args).map_err(InterpretError);
        if operands.iter().all(|v| matches!(v, Val::Scalar(..))) {
            let args: Vec<Num> = operands.iter().map(scalar).collect::<Result<_>>()?;
            return Ok(Val::Scalar(output, apply(&args)?));
        }
        let tensors: Vec<&Tensor> = operands
            .iter()
            .map(|v| match v {
                Val::Tensor(t) => Ok(t),
                _ => fail("mixed scalar and tensor operands"),
            })
            .collect::<Result<_>>()?;
        let count: usize = shape.iter().product();
        let mut data = Vec::with_capacity(count);
        let mut args = vec![Num::I(0); tensors.len()];
        for i in 0..count {
            for (arg, tensor) in args.iter_mut().zip(&tensors) {
                *arg = tensor.data[i];
            }
            data.push(apply(&args)?);
        }
        Ok(Val::Tensor(Tensor { element: output, shape, data }))
    }

    /// Runs one `grid.call`: every program in row-major grid order.
    fn grid_call(&mut self, op: &Op, operands: &[Val]) -> Result<()> {
        // SAFETY: `op` is a live operation of the interpreted module.
        let call = GridCall::new(unsafe { OperationRef::from_raw(op.raw()) }).expect("a grid.call");
        let kernel = self.symbol(&call.callee()).ok_or_else(|| InterpretError("unknown kernel".into()))?;
        let specs: Vec<BlockSpec> = call
            .inputs()
            .and_then(|i| call.outputs().map(|o| (i, o)))
            .map(|(inputs, outputs)| inputs.into_iter().chain(outputs).map(|o| o.spec).collect())
            .map_err(|e| InterpretError(e.to_string()))?;
        let outputs_from = call.inputs().map(|i| i.len()).unwrap_or(0);
        // Operands: inputs, outputs, scalar arrays, then the values of
        // dynamic grid sizes.
        let dynamic = call.dynamic_grid().len();
        let (operands, sizes) = operands.split_at(operands.len() - dynamic);
        let mut dynamic_sizes = sizes.iter().map(|size| scalar(size).map(Num::i));
        let grid: Vec<i64> = call
            .grid()
            .into_iter()
            .map(
                |size| {
                    if size == tessel_dialects::DYNAMIC { dynamic_sizes.next().expect("verified") } else { Ok(size) }
                },
            )
            .collect::<Result<_>>()?;
        if let Some(size) = grid.iter().find(|&&size| size < 0) {
            return fail(format!("grid size {size} is negative"));
        }
        let mut arrays: Vec<usize> = operands
            .iter()
            .map(|v| match v {
                Val::Ref(id) => Ok(*id),
                _ => fail("grid.call operands must be memrefs"),
            })
            .collect::<Result<_>>()?;
        // Arrays: inputs, outputs, then the scalar arrays.
        let scalars = arrays.split_off(specs.len());
        let base = self.buffers.len();
        // Scratch lives for the whole call (the grid runs in order); on a
        // core mesh each core has its own, but for `shared` scratch.
        let cores = if call.cores() { grid[0] as usize } else { 1 };
        let (semaphores, shared) = (call.semaphore_scratch(), call.shared_scratch());
        let mut scratch = vec![Vec::new(); cores];
        let mut semaphore_rows = Vec::new();
        for (k, text) in call.scratch_types().into_iter().enumerate() {
            let copies = if shared.contains(&k) { 1 } else { cores };
            let ids: Vec<usize> = (0..copies)
                .map(|_| {
                    let buffer = scratch_buffer(op, &text, semaphores.contains(&k))?;
                    self.buffers.push(buffer);
                    Ok(self.buffers.len() - 1)
                })
                .collect::<Result<_>>()?;
            for (core, own) in scratch.iter_mut().enumerate() {
                own.push(ids[core.min(copies - 1)]);
            }
            if semaphores.contains(&k) {
                semaphore_rows.push(ids);
            }
        }
        let mut program = Program { arrays: &arrays, specs: &specs, outputs_from, scalars: &scalars, scratch: &[] };
        let outcome = if call.cores() {
            let scratch = cores::MeshScratch { scratch, semaphores: semaphore_rows };
            self.on_cores(kernel, &program, &grid, scratch)
        } else {
            program.scratch = &scratch[0];
            let sizes: Vec<usize> = grid.iter().map(|&g| g as usize).collect();
            let mut outcome = Ok(());
            // Each output's block of the last program, where it starts.
            let mut kept: Vec<Option<(Vec<i64>, HostArray)>> = vec![None; specs.len()];
            for_each_index(&sizes, |point| {
                if outcome.is_ok() {
                    let point: Vec<i64> = point.iter().map(|&p| p as i64).collect();
                    outcome = self.program(kernel, &program, &point, &grid, &mut kept);
                }
            });
            outcome
        };
        self.truncate(base);
        outcome
    }

    /// Drops the buffers from `mark` on, and the DMAs queued on or for
    /// them (a program's blocks, a call's scratch: they never copy).
    fn truncate(&mut self, mark: usize) {
        self.buffers.truncate(mark);
        self.queued.retain(|&(semaphore, _), _| semaphore < mark);
        for copies in self.queued.values_mut() {
            copies.retain(|(_, operands)| operands.iter().all(|val| !matches!(val, Val::Ref(id) if *id >= mark)));
        }
    }

    /// One program: copy blocks in, run the kernel, copy output blocks back.
    /// An output block the previous program had too is that program's
    /// block, whole: a TPU keeps it in VMEM between consecutive visits,
    /// the part past the array's end included (`kept`: each output's last
    /// block and where it starts).
    fn program(
        &mut self,
        kernel: MlirOperation,
        call: &Program,
        point: &[i64],
        grid: &[i64],
        kept: &mut [Option<(Vec<i64>, HostArray)>],
    ) -> Result<()> {
        let Program { arrays, specs, outputs_from, scalars, scratch } = *call;
        let mark = self.buffers.len();
        let mut windows = Vec::new();
        let mut arguments: Vec<Val> = scalars.iter().map(|&scalar| Val::Ref(scalar)).collect();
        for (position, (&array, spec)) in arrays.iter().zip(specs).enumerate() {
            if spec.full {
                windows.push(None);
                arguments.push(Val::Ref(array));
                continue;
            }
            let shape: Vec<i64> = self.buffers[array].shape.iter().map(|&d| d as i64).collect();
            let indices = self.block_indices(spec, point, scalars)?;
            spec.check_indices(&shape, point, &indices, &format!("operand #{position}")).map_err(InterpretError)?;
            let starts = block_starts(spec, &indices);
            // The buffer has the kernel's shape (squeezed dims removed), which
            // linearizes like the full block shape.
            let kernel_shape: Vec<usize> = spec.block_shape.iter().flatten().map(|&s| s as usize).collect();
            let k = windows.len();
            let block = match kept[k].take() {
                Some((kept_starts, block)) if k >= outputs_from && kept_starts == starts => block,
                _ => {
                    let source = &self.buffers[array];
                    let mut block = HostArray::zeros(source.element, &kernel_shape)
                        .map_err(|e| InterpretError(format!("block: {e}")))?;
                    copy_block(source, &mut block, spec, &starts, true);
                    block
                }
            };
            windows.push(Some(starts));
            arguments.push(Val::Ref(self.buffers.len()));
            self.buffers.push(block);
        }
        arguments.extend(scratch.iter().map(|&s| Val::Ref(s)));
        self.grid = point.iter().copied().zip(grid.iter().copied()).collect();
        self.call(kernel, arguments)?;
        self.grid.clear();
        for (k, window) in windows.iter().enumerate().skip(outputs_from) {
            if let Some(starts) = window {
                let block = self.buffers[mark + windows[..k].iter().filter(|w| w.is_some()).count()].clone();
                copy_block(&block, &mut self.buffers[arrays[k]], &specs[k], starts, false);
                kept[k] = Some((starts.clone(), block));
            }
        }
        // A core's blocks stay until the call ends: the other cores' come
        // after them while it waits.
        if self.core.is_none() {
            self.truncate(mark);
        }
        Ok(())
    }

    /// A program's block indices (element offsets when unblocked): its
    /// index map's, or what its index function returns for the program ids
    /// and the call's scalar arrays.
    fn block_indices(&mut self, spec: &BlockSpec, point: &[i64], scalars: &[usize]) -> Result<Vec<i64>> {
        let Some(name) = &spec.index_function else {
            return spec.indices_at(point).ok_or_else(|| InterpretError(format!("index map undefined at {point:?}")));
        };
        let function = self.symbol(name).ok_or_else(|| InterpretError(format!("unknown index function @{name}")))?;
        let arguments = point
            .iter()
            .map(|&id| Val::Scalar(ElementType::Index, Num::I(id)))
            .chain(scalars.iter().map(|&scalar| Val::Ref(scalar)))
            .collect();
        self.call(function, arguments)?.iter().map(|value| scalar(value).map(Num::i)).collect()
    }
}

/// A scratch buffer of the printed type `text`: poisoned (reading it
/// unwritten shows), or zero for semaphores.
fn scratch_buffer(op: &Op, text: &str, semaphore: bool) -> Result<HostArray> {
    // SAFETY: a live operation's context; the text is a type the verified
    // `grid.call` printed, so it parses (non-null).
    let parsed = unsafe { mlirTypeParseGet(mlirOperationGetContext(op.raw()), StringRef::new(text).to_raw()) };
    let (element, shape) = type_info(parsed)?;
    let mut buffer = HostArray::zeros(element, &shape).map_err(|e| InterpretError(format!("scratch: {e}")))?;
    if !semaphore {
        (0..buffer.len()).for_each(|i| write(&mut buffer, i, poison(element)));
    }
    Ok(buffer)
}

/// What a `grid.call` hands each program: the arrays cut by `specs`
/// (outputs from `outputs_from`), the scalar arrays and the scratch
/// buffers (buffer ids).
#[derive(Clone, Copy)]
struct Program<'a> {
    arrays: &'a [usize],
    specs: &'a [BlockSpec],
    outputs_from: usize,
    scalars: &'a [usize],
    scratch: &'a [usize],
}

/// Element offset of a program's block in each array dimension.
fn block_starts(spec: &BlockSpec, indices: &[i64]) -> Vec<i64> {
    indices
        .iter()
        .enumerate()
        .map(|(d, &index)| {
            if spec.unblocked {
                index - spec.padding.get(d).map_or(0, |(low, _)| *low)
            } else {
                index * spec.block_sizes()[d]
            }
        })
        .collect()
}

/// Copies between an array and a block at `starts`: into the block
/// (out-of-bounds elements become poison) or back (they are dropped).
fn copy_block(from: &HostArray, to: &mut HostArray, spec: &BlockSpec, starts: &[i64], into_block: bool) {
    let array = if into_block { from } else { &*to };
    let array_shape = array.shape.clone();
    let block_shape: Vec<usize> = spec.block_sizes().iter().map(|&s| s as usize).collect();
    let array_strides = Tensor::strides(&array_shape);
    let element = from.element;
    let mut pairs = Vec::new();
    let mut local = 0;
    for_each_index(&block_shape, |index| {
        let mut linear = Some(0usize);
        for d in 0..index.len() {
            let at = starts[d] + index[d] as i64;
            if at < 0 || at >= array_shape[d] as i64 {
                linear = None;
                break;
            }
            linear = linear.map(|l| l + at as usize * array_strides[d]);
        }
        pairs.push((local, linear));
        local += 1;
    });
    for (local, linear) in pairs {
        match (linear, into_block) {
            (Some(at), true) => write(to, local, read(from, at)),
            (None, true) => write(to, local, poison(element)),
            (Some(at), false) => write(to, at, read(from, local)),
            (None, false) => {}
        }
    }
}

fn constant(op: &Op) -> Result<Val> {
    let (element, shape) = value_type(op.results()[0])?;
    let attribute = op.attribute("value");
    // SAFETY: a verified `arith.constant` has a typed `value` attribute;
    // each accessor below runs only on the attribute kind it reads.
    unsafe {
        let number = |attribute: MlirAttribute| -> Result<Num> {
            if mlirAttributeIsAInteger(attribute) {
                Ok(Num::I(mlirIntegerAttrGetValueInt(attribute)))
            } else if mlirAttributeIsAFloat(attribute) {
                Ok(Num::F(mlirFloatAttrGetValueDouble(attribute)))
            } else if mlirAttributeIsABool(attribute) {
                Ok(Num::I(mlirBoolAttrGetValue(attribute) as i64))
            } else {
                fail("unsupported constant")
            }
        };
        if !mlirAttributeIsADenseElements(attribute) {
            return Ok(Val::Scalar(element, normalize(element, number(attribute)?)));
        }
        let count: usize = shape.iter().product();
        let data = if mlirDenseElementsAttrIsSplat(attribute) {
            vec![normalize(element, number(mlirDenseElementsAttrGetSplatValue(attribute))?); count]
        } else {
            (0..count as isize)
                .map(|i| {
                    normalize(
                        element,
                        match element {
                            ElementType::F32 => Num::F(mlirDenseElementsAttrGetFloatValue(attribute, i) as f64),
                            ElementType::F64 => Num::F(mlirDenseElementsAttrGetDoubleValue(attribute, i)),
                            ElementType::I1 => Num::I(mlirDenseElementsAttrGetBoolValue(attribute, i) as i64),
                            ElementType::I8 => Num::I(mlirDenseElementsAttrGetInt8Value(attribute, i) as i64),
                            ElementType::I16 => Num::I(mlirDenseElementsAttrGetInt16Value(attribute, i) as i64),
                            ElementType::I32 => Num::I(mlirDenseElementsAttrGetInt32Value(attribute, i) as i64),
                            ElementType::Index => Num::I(mlirDenseElementsAttrGetIndexValue(attribute, i) as i64),
                            _ => Num::I(mlirDenseElementsAttrGetInt64Value(attribute, i)),
                        },
                    )
                })
                .collect()
        };
        Ok(Val::Tensor(Tensor { element, shape, data }))
    }
}

fn select(op: &Op, operands: &[Val]) -> Result<Val> {
    match (&operands[0], &operands[1], &operands[2]) {
        (Val::Scalar(_, condition), a, b) => Ok(if condition.i() != 0 { a.clone() } else { b.clone() }),
        (Val::Tensor(condition), Val::Tensor(a), Val::Tensor(b)) => Ok(Val::Tensor(Tensor {
            element: a.element,
            shape: a.shape.clone(),
            data: (0..a.data.len()).map(|i| if condition.data[i].i() != 0 { a.data[i] } else { b.data[i] }).collect(),
        })),
        _ => fail(format!("unsupported operands of {}", op.name())),
    }
}
