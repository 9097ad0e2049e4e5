//! How `tessel-matrix-cores` and `tessel-register-tiles` move operand
//! chunks to the work-items' arithmetic when every lane does its share
//! itself: global memory -> registers -> LDS laid out for the reads -> one
//! wide read per fragment run, which the software-pipelined k loop both
//! passes share (`pipelined_loop.rs`) builds on.
//!
//! The LDS layout. A lane of a matrix instruction holds `elements`
//! consecutive k of one row of A (column of B) per instruction, lane group
//! `g` (lanes 16g .. 16g + 15) the k from `g * elements`; a chunk of k is
//! `steps` instructions deep. Each operand (outer: A's rows, B's columns —
//! B is transposed on the way) is staged as `[groups * outer][run]`:
//!
//! ```text
//! k of the chunk, of outer index r  ->  row g * outer + r, column step * elements + e
//!   step = k / inst_k, g = (k % inst_k) / elements, e = k % elements
//! ```
//!
//! so the fragments a lane needs for the whole chunk are one row of `run =
//! steps * elements` values: one `vector.load` of 8 or 16 bytes per tile
//! row or column and chunk, where reading them in k order takes one load
//! per element for B (and per step for f32 A). The 16 lanes of a group read
//! neighbouring rows: the lanes the LDS serves together (128 bytes' worth)
//! read one contiguous stretch, so the reads are free of bank conflicts
//! (`read_conflicts` below computes it). WMMA lanes hold a whole k step
//! (one group): the layout is then `[outer][chunk]`.
//!
//! The copies. Work-item `t` of `T` loads its share of each chunk with
//! vector loads along the operand's contiguous global dimension (16 bytes
//! where the share allows) and stores it with vector stores along LDS rows:
//! A in units of `width` consecutive k of one row; B in units of `run`
//! consecutive columns of one LDS row (their k) by `columns` consecutive
//! n, loaded as `run` row vectors and stored, transposed in registers, as
//! `columns` row runs. Loading into registers is what lets the k loop issue
//! the next chunk's global loads before the current chunk's matrix
//! instructions. Only used where every unit has the same shape of stores
//! (the offsets below are checked for every unit); other contractions stage
//! with block-wide `linalg.copy`.
//!
//! The FMA path (`tessel-register-tiles`) uses layouts of one-element
//! "instructions" (`inst_k = elements = 1`: a plain `[outer][chunk]`) to
//! stage both operands k-major: B's chunk copied as it is (as `a`, its k
//! rows the outer index: `[k][n]`) and A's transposed (as `b`: `[k][m]`),
//! so a work-item's k step reads a run of its tile's rows and one of its
//! columns.

use crate::PassError;
use crate::gpu::grid_to_gpu::DEFAULT_NUM_WARPS;
use crate::gpu::pipeline_schedule::ChunkWork;
use crate::gpu::tessel_lds_stage::DEFAULT_LDS_CHUNK;
use crate::grid::grid_to_loops::ARBITRARY_AXIS;
use crate::support::handles::{context_of, location_of, next_of, raw_op};
use crate::support::ir::{enclosing, erase, print_type, strided_view_type, uses};
use crate::support::template;
use crate::support::template::emit_line;
use melior::ir::{OperationRef, operation::OperationLike};
use mlir_sys::{MlirOperation, MlirType};
use std::collections::BTreeSet;
use tessel_dialects::{Chip, knobs};

/// One operand's LDS layout: `outer` rows of `chunk` k.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Layout {
    pub outer: i64,
    pub chunk: i64,
    /// k of one instruction and elements a lane holds per instruction.
    pub inst_k: i64,
    pub elements: i64,
}

impl Layout {
    fn steps(&self) -> i64 {
        self.chunk / self.inst_k
    }

    /// Lane groups of one instruction (1 for WMMA: every lane a whole step).
    pub fn groups(&self) -> i64 {
        self.inst_k / self.elements
    }

    /// Elements a lane reads per chunk, contiguously: an LDS row.
    pub fn run(&self) -> i64 {
        self.steps() * self.elements
    }

    /// Rows of the LDS buffer.
    pub fn rows(&self) -> i64 {
        self.groups() * self.outer
    }

    /// The lane group and the column of k of the chunk.
    pub fn place(&self, k: i64) -> (i64, i64) {
        let (step, within) = (k / self.inst_k, k % self.inst_k);
        (within / self.elements, step * self.elements + within % self.elements)
    }

    /// The k at `column` of lane group `group`'s rows.
    pub fn k_at(&self, group: i64, column: i64) -> i64 {
        (column / self.elements) * self.inst_k + group * self.elements + column % self.elements
    }

    /// Index arithmetic defining `%{name}_g` and `%{name}_c`, the group and
    /// column of the runtime k `of`.
    fn emit_place(&self, body: &mut String, constants: &mut BTreeSet<i64>, name: &str, of: &str) {
        constants.extend([self.inst_k, self.elements]);
        emit_line!(
            body,
            "%{name}_s = arith.divui {of}, %c{ik} : index\n%{name}_w = arith.remui {of}, %c{ik} : index\n\
             %{name}_g = arith.divui %{name}_w, %c{e} : index\n%{name}_e = arith.remui %{name}_w, %c{e} : index\n\
             %{name}_se = arith.muli %{name}_s, %c{e} : index\n%{name}_c = arith.addi %{name}_se, %{name}_e : index",
            ik = self.inst_k,
            e = self.elements,
        );
    }

    /// Index arithmetic defining `%{name}`, the k at the runtime `column`
    /// of group `group`'s rows.
    fn emit_k_at(&self, body: &mut String, constants: &mut BTreeSet<i64>, name: &str, (group, column): (&str, &str)) {
        constants.extend([self.inst_k, self.elements]);
        emit_line!(
            body,
            "%{name}_s = arith.divui {column}, %c{e} : index\n%{name}_e = arith.remui {column}, %c{e} : index\n\
             %{name}_sk = arith.muli %{name}_s, %c{ik} : index\n%{name}_gk = arith.muli {group}, %c{e} : index\n\
             %{name}_t = arith.addi %{name}_sk, %{name}_gk : index\n%{name} = arith.addi %{name}_t, %{name}_e : index",
            ik = self.inst_k,
            e = self.elements,
        );
    }
}

/// How work-items move both operands' chunks (see the module comment).
#[derive(Clone, Debug)]
pub(super) struct Staging {
    pub a: Layout,
    pub b: Layout,
    threads: i64,
    element: String,
    element_bytes: i64,
    /// A: consecutive k per unit, elements per global load.
    a_width: i64,
    a_vector: i64,
    /// B: columns of an LDS row (k) per unit and n per unit.
    b_run: i64,
    b_columns: i64,
}

/// Bytes a work-item moves with one vector load (global) at most.
const VECTOR_BYTES: i64 = 16;

/// A run of A's stores: unit elements `first ..` of one LDS row, `groups`
/// rows of `outer` below the unit's first and `column` columns right of it.
struct Store {
    elements: Vec<i64>,
    group: i64,
    column: i64,
}

impl Staging {
    /// The staging of an `m` x `chunk` A chunk and a `chunk` x `n` B chunk
    /// by `threads` work-items, when each gets an equal share of whole
    /// units of one shape.
    pub fn plan(a: Layout, b: Layout, threads: i64, element: &str, element_bytes: i64) -> Option<Staging> {
        let chunk = a.chunk;
        let vector_limit = (VECTOR_BYTES / element_bytes).max(1);
        // A: each item a run of consecutive k of one row.
        let a_share = a.outer * chunk;
        if a_share % threads != 0 {
            return None;
        }
        let a_width = (a_share / threads).min(chunk);
        if chunk % a_width != 0 || (a_share / threads) % a_width != 0 {
            return None;
        }
        let a_vector = a_width.min(vector_limit);
        if a_width % a_vector != 0 {
            return None;
        }
        // Every unit's stores must have the same shape: where k0 + j goes
        // relative to k0 may not depend on the unit's k0.
        let a_offsets = |k0: i64| {
            let (group, column) = a.place(k0);
            (0..a_width).map(|j| a.place(k0 + j)).map(|(g, c)| (g - group, c - column)).collect::<Vec<_>>()
        };
        if (0..chunk).step_by(a_width as usize).any(|k0| a_offsets(k0) != a_offsets(0)) {
            return None;
        }
        // B: `run` columns of a row x `columns` n per item, fewest
        // instructions.
        let b_share = b.outer * b.chunk;
        if b_share % threads != 0 {
            return None;
        }
        let per_item = b_share / threads;
        let (b_run, b_columns) = (1..=per_item)
            .filter(|run| per_item % run == 0)
            .map(|run| (run, per_item / run))
            .filter(|&(run, columns)| b.run() % run == 0 && b.outer % columns == 0 && columns <= vector_limit)
            .filter(|&(run, _)| {
                let offsets = |c0: i64| (0..run).map(|j| b.k_at(0, c0 + j) - b.k_at(0, c0)).collect::<Vec<_>>();
                (0..b.run()).step_by(run as usize).all(|c0| offsets(c0) == offsets(0))
            })
            // Fewest instructions, a global load (a 64-bit address kept
            // live per load) counting double; then the widest loads.
            .min_by_key(|&(run, columns)| (2 * run + columns, -columns))?;
        Some(Staging {
            a,
            b,
            threads,
            element: element.to_string(),
            element_bytes,
            a_width,
            a_vector,
            b_run,
            b_columns,
        })
    }

    /// The types of the registers `emit_loads` returns, in its order.
    pub fn register_types(&self) -> Vec<String> {
        let a = (self.a_units() * (self.a_width / self.a_vector)) as usize;
        let mut types = vec![self.vector(self.a_vector); a];
        types.extend(vec![self.vector(self.b_columns); self.b_run as usize]);
        types
    }

    /// Global loads and LDS stores a work-item issues per chunk, and the
    /// 32-bit registers a chunk's loads occupy.
    pub fn per_item(&self) -> (i64, i64, i64) {
        let loads = self.a_units() * (self.a_width / self.a_vector) + self.b_run;
        let stores = self.a_units() * self.a_stores().len() as i64 + self.b_columns;
        let elements = self.a_units() * self.a_width + self.b_run * self.b_columns;
        (loads, stores, (elements * self.element_bytes + 3) / 4)
    }

    fn vector(&self, count: i64) -> String {
        format!("vector<{count}x{}>", self.element)
    }

    /// LDS buffer types of A and B.
    pub fn lds_types(&self) -> (String, String) {
        (
            format!("memref<{}x{}x{}>", self.a.rows(), self.a.run(), self.element),
            format!("memref<{}x{}x{}>", self.b.rows(), self.b.run(), self.element),
        )
    }

    /// Units each item moves of A.
    fn a_units(&self) -> i64 {
        self.a.outer * self.a.chunk / self.threads / self.a_width
    }

    /// A unit's stores: its elements grouped into runs of consecutive
    /// columns of one LDS row.
    fn a_stores(&self) -> Vec<Store> {
        let (group, column) = self.a.place(0);
        let mut stores: Vec<Store> = Vec::new();
        let mut placed: Vec<(i64, i64, i64)> =
            (0..self.a_width).map(|j| self.a.place(j)).zip(0..).map(|((g, c), j)| (g - group, c - column, j)).collect();
        placed.sort();
        for (g, c, j) in placed {
            match stores.last_mut() {
                Some(store) if store.group == g && store.column + store.elements.len() as i64 == c => {
                    store.elements.push(j)
                }
                _ => stores.push(Store { elements: vec![j], group: g, column: c }),
            }
        }
        stores
    }

    /// Per-item offsets, computed once from the work-item id `%tid`: A
    /// unit u's outer index `%ua{u}_r`, k `%ua{u}_k`, LDS row `%ua{u}_row`
    /// and column `%ua{u}_p_c`; B's first column `%ub_c`, its LDS row base
    /// `%ub_row`, its k `%ub_k` (and `%ub_k{j}`) and first n `%ub_n`.
    pub fn emit_offsets(&self, body: &mut String, constants: &mut BTreeSet<i64>) {
        let chunk = self.a.chunk;
        constants.extend([self.threads, self.a_width, chunk, self.a.outer, self.b.outer]);
        for unit in 0..self.a_units() {
            constants.insert(unit * self.threads);
            emit_line!(
                body,
                "%ua{unit}_i = arith.addi %tid, %c{base} : index\n%ua{unit}_x = arith.muli %ua{unit}_i, %c{width} : index\n\
                 %ua{unit}_r = arith.divui %ua{unit}_x, %c{chunk} : index\n%ua{unit}_k = arith.remui %ua{unit}_x, %c{chunk} : index",
                base = unit * self.threads,
                width = self.a_width,
            );
            self.a.emit_place(body, constants, &format!("ua{unit}_p"), &format!("%ua{unit}_k"));
            emit_line!(
                body,
                "%ua{unit}_go = arith.muli %ua{unit}_p_g, %c{outer} : index\n\
                 %ua{unit}_row = arith.addi %ua{unit}_go, %ua{unit}_r : index",
                outer = self.a.outer,
            );
        }
        let (column_units, row_units) = (self.b.outer / self.b_columns, self.b.run() / self.b_run);
        constants.extend([column_units, row_units, self.b_columns, self.b_run]);
        emit_line!(
            body,
            "%ub_ci = arith.remui %tid, %c{column_units} : index\n%ub_rest = arith.divui %tid, %c{column_units} : index\n\
             %ub_pi = arith.remui %ub_rest, %c{row_units} : index\n%ub_g = arith.divui %ub_rest, %c{row_units} : index\n\
             %ub_n = arith.muli %ub_ci, %c{columns} : index\n%ub_c = arith.muli %ub_pi, %c{run} : index\n\
             %ub_go = arith.muli %ub_g, %c{outer} : index\n%ub_row = arith.addi %ub_go, %ub_n : index",
            columns = self.b_columns,
            run = self.b_run,
            outer = self.b.outer,
        );
        self.b.emit_k_at(body, constants, "ub_k", ("%ub_g", "%ub_c"));
        // k of B's loads relative to the first (the same for every unit).
        for j in 1..self.b_run {
            let offset = self.b.k_at(0, j) - self.b.k_at(0, 0);
            constants.insert(offset);
            emit_line!(body, "%ub_k{j} = arith.addi %ub_k, %c{offset} : index");
        }
    }

    /// This item's global loads of the chunks in views `%sa_{label}` (A,
    /// `view_a`) and `%sb_{label}` (B); returns the registers loaded.
    pub fn emit_loads(
        &self,
        body: &mut String,
        constants: &mut BTreeSet<i64>,
        label: &str,
        (view_a, view_b): (&str, &str),
    ) -> Vec<String> {
        let mut registers = Vec::new();
        for unit in 0..self.a_units() {
            for load in 0..self.a_width / self.a_vector {
                let name = format!("%ga{unit}_{load}_{label}");
                let at = if load == 0 {
                    format!("%ua{unit}_k")
                } else {
                    constants.insert(load * self.a_vector);
                    emit_line!(body, "{name}_k = arith.addi %ua{unit}_k, %c{} : index", load * self.a_vector);
                    format!("{name}_k")
                };
                emit_line!(
                    body,
                    "{name} = vector.load %sa_{label}[%ua{unit}_r, {at}] : {view_a}, {}",
                    self.vector(self.a_vector)
                );
                registers.push(name);
            }
        }
        for j in 0..self.b_run {
            let (name, k) = (format!("%gb{j}_{label}"), if j == 0 { "%ub_k".to_string() } else { format!("%ub_k{j}") });
            emit_line!(
                body,
                "{name} = vector.load %sb_{label}[{k}, %ub_n] : {view_b}, {}",
                self.vector(self.b_columns)
            );
            registers.push(name);
        }
        registers
    }

    /// Writes `{name} = vector.from_elements` of the given lanes of loaded
    /// registers (each a vector of `width` elements): the element-by-element
    /// path for runs that are not one whole loaded vector.
    fn gather(&self, body: &mut String, name: &str, width: i64, lanes: &[(&str, i64)]) {
        let elements: Vec<String> = lanes
            .iter()
            .enumerate()
            .map(|(index, (register, lane))| {
                let element = format!("{name}_{index}");
                emit_line!(
                    body,
                    "{element} = vector.extract {register}[{lane}] : {} from {}",
                    self.element,
                    self.vector(width)
                );
                element
            })
            .collect();
        emit_line!(body, "{name} = vector.from_elements {} : {}", elements.join(", "), self.vector(lanes.len() as i64));
    }

    /// Stores the `registers` of `emit_loads` into LDS buffers `la`, `lb`
    /// (`label` names the values).
    pub fn emit_stores(
        &self,
        body: &mut String,
        constants: &mut BTreeSet<i64>,
        label: &str,
        registers: &[String],
        (la, lb): (&str, &str),
    ) {
        let (lds_a, lds_b) = self.lds_types();
        let loads_per_unit = (self.a_width / self.a_vector) as usize;
        let stores = self.a_stores();
        for unit in 0..self.a_units() {
            let loaded = &registers[unit as usize * loads_per_unit..(unit as usize + 1) * loads_per_unit];
            for (index, store) in stores.iter().enumerate() {
                let name = format!("%sta{unit}_{index}_{label}");
                let run = &store.elements;
                let whole = run.len() as i64 == self.a_vector
                    && run[0] % self.a_vector == 0
                    && run.windows(2).all(|pair| pair[1] == pair[0] + 1);
                let value = if whole {
                    loaded[(run[0] / self.a_vector) as usize].clone()
                } else {
                    let lanes: Vec<(&str, i64)> = run
                        .iter()
                        .map(|&j| (loaded[(j / self.a_vector) as usize].as_str(), j % self.a_vector))
                        .collect();
                    self.gather(body, &name, self.a_vector, &lanes);
                    name.clone()
                };
                let (row_offset, column) = (store.group * self.a.outer, store.column);
                constants.extend([row_offset, column]);
                emit_line!(
                    body,
                    "{name}_row = arith.addi %ua{unit}_row, %c{row_offset} : index\n\
                     {name}_c = arith.addi %ua{unit}_p_c, %c{column} : index\n\
                     vector.store {value}, {la}[{name}_row, {name}_c] : {lds_a}, {}",
                    self.vector(run.len() as i64)
                );
            }
        }
        // B: column c of the unit is element c of each loaded row vector.
        let rows = &registers[registers.len() - self.b_run as usize..];
        for column in 0..self.b_columns {
            let name = format!("%stb{column}_{label}");
            let lanes: Vec<(&str, i64)> = rows.iter().map(|row| (row.as_str(), column)).collect();
            self.gather(body, &name, self.b_columns, &lanes);
            constants.insert(column);
            emit_line!(
                body,
                "{name}_row = arith.addi %ub_row, %c{column} : index\n\
                 vector.store {name}, {lb}[{name}_row, %ub_c] : {lds_b}, {}",
                self.vector(self.b_run)
            );
        }
    }
}

/// A contraction computed chunk of k by chunk from LDS buffers: what the
/// shared k loop needs of `tessel-matrix-cores`' and
/// `tessel-register-tiles`' plans. Buffers `%la{b}` and `%lb{b}` (b the
/// stage) hold the chunks of the views `%sa_{label}` and `%sb_{label}`,
/// staged as `Staging`'s `a` (copied as is) and `b` (transposed).
pub(super) trait StagedContraction {
    /// The per-item staging, when the chunks divide evenly.
    fn staging(&self) -> Option<&Staging>;
    /// k, the k of one chunk and the buffers per operand (2: double
    /// buffering).
    fn depth(&self) -> (i64, i64, i64);
    /// Whether B's chunk is staged as `Staging::a` (`%sa_*`) and A's as
    /// `Staging::b`: the FMA path stages both k-major, B as it is and A
    /// transposed; the matrix-core path stages A first.
    const B_STAGED_FIRST: bool;
    /// The element types of A and B.
    fn operand_types(&self) -> [MlirType; 2];
    /// The sub-block's rows and columns and the k of one chunk.
    fn chunk_shape(&self) -> (i64, i64, i64);
    /// What one chunk costs a wave (`pipeline_schedule`, which decides
    /// how far ahead the loads run).
    fn chunk_work(&self) -> ChunkWork;
    /// Types of the views `chunk_views` defines (`%sa_*`'s, `%sb_*`'s).
    fn chunk_view_types(&self) -> (String, String) {
        let (view_a, view_b) = operand_chunk_types(self.operand_types(), self.chunk_shape());
        if Self::B_STAGED_FIRST { (view_b, view_a) } else { (view_a, view_b) }
    }
    /// `%sa_{label}`, `%sb_{label}`: the staged operands' chunks at k = `at`.
    fn chunk_views(&self, label: &str, at: &str) -> String {
        let (first, second) = (format!("%sa_{label}"), format!("%sb_{label}"));
        let (a, b) = if Self::B_STAGED_FIRST { (&second, &first) } else { (&first, &second) };
        operand_chunks(self.operand_types(), self.chunk_shape(), at, (a, b))
    }
    /// Per-lane code computing the chunk in buffers `buffer` from the
    /// accumulators `current`; returns the new ones.
    fn compute(
        &self,
        body: &mut String,
        label: &str,
        buffer: &str,
        current: Vec<String>,
        constants: &mut BTreeSet<i64>,
    ) -> Vec<String>;
}

/// What both contraction passes read from the module's settings: the
/// chip, the waves per workgroup, the wanted chunk depth, the pipelining
/// depth and the work-items per wave grid-to-gpu will launch.
pub(super) struct Launch {
    pub chip: Chip,
    pub warps: i64,
    pub wanted_chunk: i64,
    /// Whether the module chose the chunk (`tessel.lds_chunk`).
    pub chunk_chosen: bool,
    pub stages: i64,
    pub wave: i64,
}

impl Launch {
    /// The module's launch settings; an error names unsupported ones.
    pub fn of(module: OperationRef<'static, '_>) -> Result<Launch, PassError> {
        let settings = raw_op(module.to_raw());
        let warps = knobs::NUM_WARPS.integer_or(settings, DEFAULT_NUM_WARPS);
        let wanted_chunk = knobs::LDS_CHUNK.integer_or(settings, DEFAULT_LDS_CHUNK);
        let chunk_chosen = raw_op(module.to_raw()).has(knobs::LDS_CHUNK.attribute);
        let stages = knobs::NUM_STAGES.integer_or(settings, 1);
        match knobs::chip_of(settings) {
            Ok(chip) if warps >= 1 && wanted_chunk >= 1 => {
                let wave = knobs::WAVE_SIZE.integer_or(settings, chip.wave_size());
                Ok(Launch { chip, warps, wanted_chunk, chunk_chosen, stages, wave })
            }
            unsupported => {
                let name = unsupported.map_or_else(|name| name, |chip| chip.name().to_string());
                Err(PassError::at(
                    module.location(),
                    format!("unsupported settings (chip '{name}', {warps} waves, chunk {wanted_chunk})"),
                ))
            }
        }
    }
}

/// Is `op` inside the programs of a grid (which grid-to-gpu maps to a
/// launch, binding thread ids): may a contraction there use per-lane code?
pub(super) fn inside_programs(op: MlirOperation) -> bool {
    enclosing(op, is_program_loop).is_some()
}

/// Is `op` one of the loops of a grid's program nest: its parallel
/// `scf.forall` or the loop over an arbitrary axis's steps?
pub(super) fn is_program_loop(op: MlirOperation) -> bool {
    raw_op(op).name() == "scf.forall" || is_grid_steps(op)
}

/// Is `op` the loop over an arbitrary grid axis's steps (an ordered
/// `scf.for` grid-to-loops marks)?
pub(super) fn is_grid_steps(op: MlirOperation) -> bool {
    let raw = raw_op(op);
    raw.name() == "scf.for" && raw.has(ARBITRARY_AXIS)
}

/// Replaces the contraction `op` by its per-lane code, `template(filled)`
/// with operands A, B, C — and the fill value, `filled`, where a
/// `linalg.fill` of its whole output comes right before it (what a
/// contraction from a splat accumulator, `block.dot ... acc` of zeros,
/// bufferizes to). The contraction writes every element of its output,
/// so its accumulators start from the fill's value in registers and the
/// fill goes (no write of the block to memory and read back).
pub(super) fn replace_contraction(op: MlirOperation, template: impl FnOnce(bool) -> String) -> Result<(), PassError> {
    let mut operands = raw_op(op).operands()[..3].to_vec();
    let output = operands[2];
    let fill = uses(output).into_iter().map(|(user, _)| user).find(|&user| {
        let fill = raw_op(user);
        fill.name() == "linalg.fill"
            && fill.operands().get(1).is_some_and(|value| value.ptr == output.ptr)
            && next_of(user).ptr == op.ptr
    });
    if let Some(fill) = fill {
        operands.push(raw_op(fill).operands()[0]);
    }
    if let Err(error) = template::replace(context_of(op), op, &template(fill.is_some()), &operands) {
        return Err(PassError::at(location_of(op), error.0));
    }
    if let Some(fill) = fill {
        erase(fill);
    }
    Ok(())
}

/// Types of the views of a `sub_m` x `chunk` chunk of A and a `chunk` x
/// `sub_n` chunk of B (`types`: A's and B's memrefs).
pub(super) fn operand_chunk_types(types: [MlirType; 2], (sub_m, sub_n, chunk): (i64, i64, i64)) -> (String, String) {
    (strided_view_type(types[0], sub_m, chunk), strided_view_type(types[1], chunk, sub_n))
}

/// Defines `names` (A's, B's) as the chunks at k = `at` of `%A` and `%B`
/// in the sub-block at `%sm`, `%sn`.
pub(super) fn operand_chunks(
    types: [MlirType; 2],
    (sub_m, sub_n, chunk): (i64, i64, i64),
    at: &str,
    (name_a, name_b): (&str, &str),
) -> String {
    let (view_a, view_b) = operand_chunk_types(types, (sub_m, sub_n, chunk));
    let (ta, tb) = (print_type(types[0]), print_type(types[1]));
    format!(
        "{name_a} = memref.subview %A[%sm, {at}] [{sub_m}, {chunk}] [1, 1] : {ta} to {view_a}\n\
         {name_b} = memref.subview %B[{at}, %sn] [{chunk}, {sub_n}] [1, 1] : {tb} to {view_b}\n"
    )
}

/// The head of the double-buffered k loop: two chunks per iteration
/// (`%k1`, `%k2` the second's and the next pair's), the last two chunks
/// after it.
pub(super) fn pair_loop_header(
    body: &mut String,
    constants: &mut BTreeSet<i64>,
    (k, chunk): (i64, i64),
    count: usize,
    (iter_args, types): (&str, &str),
) {
    constants.extend([chunk, 2 * chunk, k - 2 * chunk, k - chunk]);
    emit_line!(
        body,
        "%res:{count} = scf.for %k = %c0 to %c{} step %c{} iter_args({iter_args}) -> ({types}) {{\n\
         %k1 = arith.addi %k, %c{chunk} : index\n%k2 = arith.addi %k1, %c{chunk} : index",
        k - 2 * chunk,
        2 * chunk,
    );
}

/// The worst bank conflict of a wave's fragment reads from a `layout`
/// buffer of `bytes`-byte elements. Lane (lo, hi) of the instruction reads
/// its run at row `hi * outer + lo` (tile base 0) for MFMA, row `lo` for
/// WMMA.
pub(super) fn read_conflicts(layout: Layout, bytes: i64, wave: i64) -> i64 {
    let width = layout.run() * bytes;
    bank_conflicts(wave, width, |lane| ((lane / 16 % layout.groups()) * layout.outer + lane % 16) * width)
}

/// The worst bank conflict of `wave` lanes each reading `width` bytes from
/// LDS at byte `address(lane)`: how many different 4-byte words one of
/// the LDS's 32 banks serves to the lanes it serves together (as many
/// lanes as 128 bytes' worth of their reads; lanes reading the same word
/// share it).
pub(super) fn bank_conflicts(wave: i64, width: i64, address: impl Fn(i64) -> i64) -> i64 {
    let lanes_together = (128 / width).max(1);
    let mut worst = 1;
    for first in (0..wave).step_by(lanes_together as usize) {
        let mut words_per_bank: Vec<BTreeSet<i64>> = vec![BTreeSet::new(); 32];
        for lane in first..(first + lanes_together).min(wave) {
            let start = address(lane);
            for word in start / 4..(start + width + 3) / 4 {
                words_per_bank[(word % 32) as usize].insert(word);
            }
        }
        worst = worst.max(words_per_bank.iter().map(BTreeSet::len).max().unwrap_or(1) as i64);
    }
    worst
}

#[cfg(test)]
mod tests {
    use super::*;

    const F32: Layout = Layout { outer: 128, chunk: 16, inst_k: 4, elements: 1 };
    const I8_GFX942: Layout = Layout { outer: 128, chunk: 64, inst_k: 32, elements: 8 };
    const I8_GFX90A: Layout = Layout { outer: 128, chunk: 32, inst_k: 16, elements: 4 };
    const WMMA: Layout = Layout { outer: 64, chunk: 32, inst_k: 16, elements: 16 };

    #[test]
    fn places_are_a_permutation_inverted_by_k_at() {
        for layout in [F32, I8_GFX942, I8_GFX90A, WMMA] {
            let mut seen: Vec<(i64, i64)> = (0..layout.chunk).map(|k| layout.place(k)).collect();
            for k in 0..layout.chunk {
                let (group, column) = layout.place(k);
                assert_eq!(layout.k_at(group, column), k, "{layout:?} k {k}");
            }
            seen.sort();
            seen.dedup();
            assert_eq!(seen.len() as i64, layout.chunk);
            assert!(seen.iter().all(|&(g, c)| g < layout.groups() && c < layout.run()));
        }
    }

    #[test]
    fn a_lanes_fragments_are_one_row() {
        // Lane group g's k for step s, element e: s * inst_k + g * elements + e.
        for layout in [F32, I8_GFX942, I8_GFX90A, WMMA] {
            for group in 0..layout.groups() {
                let places: Vec<(i64, i64)> = (0..layout.steps())
                    .flat_map(|step| {
                        (0..layout.elements)
                            .map(move |e| layout.place(step * layout.inst_k + group * layout.elements + e))
                    })
                    .collect();
                let row: Vec<(i64, i64)> = (0..layout.run()).map(|column| (group, column)).collect();
                assert_eq!(places, row, "{layout:?}");
            }
        }
    }

    #[test]
    fn fragment_reads_are_free_of_bank_conflicts() {
        // The issue's bar is at most 2-way; every layout here is 1-way.
        assert_eq!(read_conflicts(F32, 4, 64), 1);
        assert_eq!(read_conflicts(I8_GFX942, 1, 64), 1);
        assert_eq!(read_conflicts(Layout { chunk: 32, ..I8_GFX942 }, 1, 64), 1);
        assert_eq!(read_conflicts(I8_GFX90A, 1, 64), 1);
        assert_eq!(read_conflicts(Layout { chunk: 16, ..WMMA }, 1, 32), 1);
        // What the row-major [outer][chunk] layout read k step by k step
        // had: f32 A at 64 * row + 4 * k, sixteen rows 64 bytes apart in
        // one 32-lane pass: 8-way.
        let row_major = |lane: i64| (lane % 16) * 64 + (lane / 16) * 4;
        let mut words_per_bank = vec![BTreeSet::new(); 32];
        for lane in 0..32 {
            words_per_bank[(row_major(lane) / 4 % 32) as usize].insert(row_major(lane) / 4);
        }
        assert_eq!(words_per_bank.iter().map(BTreeSet::len).max(), Some(8));
    }

    #[test]
    fn plans_take_wide_units() {
        let b = Layout { outer: 128, ..F32 };
        let staging = Staging::plan(F32, b, 256, "f32", 4).expect("a plan");
        // A: 8 consecutive k per item in two 16-byte loads, stored as four
        // 8-byte runs (k, k + 4 of each group); B: 2 columns of a row (k, k
        // + 4) by 4 n: two 16-byte loads, four 8-byte stores.
        assert_eq!((staging.a_width, staging.a_vector, staging.b_run, staging.b_columns), (8, 4, 2, 4));
        assert_eq!(
            staging.a_stores().iter().map(|store| store.elements.clone()).collect::<Vec<_>>(),
            [[0, 4], [1, 5], [2, 6], [3, 7]]
        );
        // i8: A's 16 k in one load, two 8-byte stores (two lane groups);
        // B two rows of 8 columns (loads weigh double: each is a 64-bit
        // address held live), stored as eight 2-byte runs.
        let i8 = Layout { chunk: 32, ..I8_GFX942 };
        let staging = Staging::plan(i8, i8, 256, "i8", 1).expect("a plan");
        assert_eq!((staging.a_width, staging.a_vector, staging.b_run, staging.b_columns), (16, 16, 2, 8));
        assert_eq!(staging.a_stores().len(), 2);
        // A share that does not divide among the items.
        assert!(Staging::plan(Layout { outer: 16, ..F32 }, b, 1024, "f32", 4).is_none());
    }
}
