//! How `tessel-matrix-cores` moves operand chunks to the matrix
//! instructions when every lane does its share itself: global memory ->
//! registers -> LDS laid out for the instruction -> one wide read per
//! fragment run.
//!
//! The LDS layout. A lane of a matrix instruction holds `elements`
//! consecutive k of one row of A (column of B) per instruction, lane group
//! `g` (lanes 16g .. 16g + 15) the k from `g * elements`; a chunk of k is
//! `steps` instructions deep. Each operand is staged as `[outer][chunk]`
//! (outer: A's rows, B's columns — B is transposed on the way), and within
//! a row the k of a chunk are permuted to `(g, step, e)` order:
//!
//! ```text
//! position(k) = (g * steps + step) * elements + e,
//!   step = k / inst_k, g = (k % inst_k) / elements, e = k % elements
//! ```
//!
//! so the fragments a lane needs for the whole chunk are one contiguous run
//! of `steps * elements` values: one `vector.load` of 8 or 16 bytes per
//! tile row or column and chunk, where reading them in k order takes one
//! load per element for B (and per step for f32 A). The 16 lanes of a
//! group read neighbouring rows, `chunk` elements apart, and the groups
//! neighbouring runs: a wave's reads cover one contiguous stretch of LDS,
//! so they are free of bank conflicts. WMMA lanes hold a whole k step
//! (one group): the layout is then the identity.
//!
//! The copies. Work-item `t` of `T` loads its share of each chunk with
//! vector loads along the operand's contiguous global dimension (16 bytes
//! where the share allows) and stores it with vector stores along LDS rows:
//! A in units of `width` consecutive k of one row; B in units of `run`
//! consecutive LDS positions (their k) by `columns` consecutive n, loaded
//! as `run` row vectors and stored, transposed in registers, as `columns`
//! row runs. Loading into registers is what lets the k loop issue the next
//! chunk's global loads before the current chunk's matrix instructions.
//! Only used where every unit has the same shape of stores (the offsets
//! below are checked for every unit); other contractions stage with
//! block-wide `linalg.copy`.

use crate::support::template::emit_line;
use std::collections::BTreeSet;

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

    /// Elements a lane reads per chunk, contiguously.
    pub fn run(&self) -> i64 {
        self.steps() * self.elements
    }

    /// Where k of the chunk sits in its LDS row.
    pub fn position(&self, k: i64) -> i64 {
        let (step, within) = (k / self.inst_k, k % self.inst_k);
        let (group, element) = (within / self.elements, within % self.elements);
        (group * self.steps() + step) * self.elements + element
    }

    /// The k at `position` of an LDS row.
    pub fn k_at(&self, position: i64) -> i64 {
        let (group, rest) = (position / self.run(), position % self.run());
        let (step, element) = (rest / self.elements, rest % self.elements);
        step * self.inst_k + group * self.elements + element
    }

    /// Index arithmetic computing `position(%k)` (or `k_at(%p)`) for a
    /// runtime value, as template lines defining `%{name}`.
    fn emit_map(&self, body: &mut String, constants: &mut BTreeSet<i64>, name: &str, of: &str, inverse: bool) {
        let (outer_size, inner) = if inverse { (self.run(), self.elements) } else { (self.inst_k, self.elements) };
        constants.extend([outer_size, inner, self.steps(), self.inst_k]);
        let c = |value: i64| format!("%c{value}");
        if inverse {
            // k = step * inst_k + group * elements + e
            emit_line!(
                body,
                "%{name}_g = arith.divui {of}, {run} : index\n%{name}_r = arith.remui {of}, {run} : index\n\
                 %{name}_s = arith.divui %{name}_r, {e} : index\n%{name}_e = arith.remui %{name}_r, {e} : index\n\
                 %{name}_sk = arith.muli %{name}_s, {ik} : index\n%{name}_gk = arith.muli %{name}_g, {e} : index\n\
                 %{name}_t = arith.addi %{name}_sk, %{name}_gk : index\n%{name} = arith.addi %{name}_t, %{name}_e : index",
                run = c(self.run()),
                e = c(self.elements),
                ik = c(self.inst_k),
            );
        } else {
            // position = (group * steps + step) * elements + e
            emit_line!(
                body,
                "%{name}_s = arith.divui {of}, {ik} : index\n%{name}_w = arith.remui {of}, {ik} : index\n\
                 %{name}_g = arith.divui %{name}_w, {e} : index\n%{name}_e = arith.remui %{name}_w, {e} : index\n\
                 %{name}_gs = arith.muli %{name}_g, {steps} : index\n%{name}_i = arith.addi %{name}_gs, %{name}_s : index\n\
                 %{name}_ie = arith.muli %{name}_i, {e} : index\n%{name} = arith.addi %{name}_ie, %{name}_e : index",
                ik = c(self.inst_k),
                e = c(self.elements),
                steps = c(self.steps()),
            );
        }
    }
}

/// How work-items move both operands' chunks (see the module comment).
#[derive(Clone, Debug)]
pub(super) struct Staging {
    pub a: Layout,
    pub b: Layout,
    threads: i64,
    element: String,
    /// A: consecutive k per unit, elements per global load.
    a_width: i64,
    a_vector: i64,
    /// B: LDS positions per unit and columns (n) per unit.
    b_run: i64,
    b_columns: i64,
}

/// Bytes a work-item moves with one vector load (global) at most.
const VECTOR_BYTES: i64 = 16;

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
        // Every unit's stores must have the same shape: position(k0 + j) -
        // position(k0) may not depend on the unit's k0.
        let a_offsets = |k0: i64| (0..a_width).map(|j| a.position(k0 + j) - a.position(k0)).collect::<Vec<_>>();
        if (0..chunk).step_by(a_width as usize).any(|k0| a_offsets(k0) != a_offsets(0)) {
            return None;
        }
        // B: `run` positions x `columns` n per item, fewest instructions.
        let b_share = b.outer * chunk;
        if b_share % threads != 0 {
            return None;
        }
        let per_item = b_share / threads;
        let (b_run, b_columns) = (1..=per_item)
            .filter(|run| per_item % run == 0)
            .map(|run| (run, per_item / run))
            .filter(|&(run, columns)| chunk % run == 0 && b.outer % columns == 0 && columns <= vector_limit)
            .filter(|&(run, _)| {
                let offsets = |p0: i64| (0..run).map(|j| b.k_at(p0 + j) - b.k_at(p0)).collect::<Vec<_>>();
                (0..chunk).step_by(run as usize).all(|p0| offsets(p0) == offsets(0))
            })
            // Fewest instructions, a global load (a 64-bit address kept
            // live per load) counting double; then the widest loads.
            .min_by_key(|&(run, columns)| (2 * run + columns, -columns))?;
        Some(Staging { a, b, threads, element: element.to_string(), a_width, a_vector, b_run, b_columns })
    }

    fn vector(&self, count: i64) -> String {
        format!("vector<{count}x{}>", self.element)
    }

    /// LDS buffer types of A and B.
    pub fn lds_types(&self) -> (String, String) {
        (
            format!("memref<{}x{}x{}>", self.a.outer, self.a.chunk, self.element),
            format!("memref<{}x{}x{}>", self.b.outer, self.b.chunk, self.element),
        )
    }

    /// Units each item moves per operand.
    fn a_units(&self) -> i64 {
        self.a.outer * self.a.chunk / self.threads / self.a_width
    }

    /// Per-item offsets, computed once from the work-item id `%tid`: A
    /// unit u's row `%ua{u}_r`, k `%ua{u}_k` and LDS position `%ua{u}_p`;
    /// B's first position `%ub_p`, its k `%ub_k` and first column `%ub_n`.
    pub fn emit_offsets(&self, body: &mut String, constants: &mut BTreeSet<i64>) {
        let c = |value: i64| format!("%c{value}");
        let chunk = self.a.chunk;
        constants.extend([self.threads, self.a_width, chunk]);
        for unit in 0..self.a_units() {
            constants.insert(unit * self.threads);
            emit_line!(
                body,
                "%ua{unit}_i = arith.addi %tid, {base} : index\n%ua{unit}_x = arith.muli %ua{unit}_i, {width} : index\n\
                 %ua{unit}_r = arith.divui %ua{unit}_x, {chunk} : index\n%ua{unit}_k = arith.remui %ua{unit}_x, {chunk} : index",
                base = c(unit * self.threads),
                width = c(self.a_width),
                chunk = c(chunk),
            );
            self.a.emit_map(body, constants, &format!("ua{unit}_p"), &format!("%ua{unit}_k"), false);
        }
        let column_units = self.b.outer / self.b_columns;
        constants.extend([column_units, self.b_columns, self.b_run]);
        emit_line!(
            body,
            "%ub_ci = arith.remui %tid, {units} : index\n%ub_pi = arith.divui %tid, {units} : index\n\
             %ub_n = arith.muli %ub_ci, {columns} : index\n%ub_p = arith.muli %ub_pi, {run} : index",
            units = c(column_units),
            columns = c(self.b_columns),
            run = c(self.b_run),
        );
        self.b.emit_map(body, constants, "ub_k", "%ub_p", true);
        // k of B's loads relative to the first (the same for every unit).
        for j in 1..self.b_run {
            let offset = self.b.k_at(j) - self.b.k_at(0);
            constants.insert(offset);
            emit_line!(body, "%ub_k{j} = arith.addi %ub_k, {} : index", c(offset));
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
        // A: runs of consecutive positions among the unit's k.
        let offsets: Vec<i64> = (0..self.a_width).map(|j| self.a.position(j) - self.a.position(0)).collect();
        let mut order: Vec<i64> = (0..self.a_width).collect();
        order.sort_by_key(|&j| offsets[j as usize]);
        let mut runs: Vec<Vec<i64>> = Vec::new();
        for j in order {
            match runs.last_mut() {
                Some(run) if offsets[*run.last().unwrap() as usize] + 1 == offsets[j as usize] => run.push(j),
                _ => runs.push(vec![j]),
            }
        }
        for unit in 0..self.a_units() {
            let loaded = &registers[unit as usize * loads_per_unit..(unit as usize + 1) * loads_per_unit];
            for (index, run) in runs.iter().enumerate() {
                let name = format!("%sta{unit}_{index}_{label}");
                let whole = run.len() as i64 == self.a_vector
                    && run[0] % self.a_vector == 0
                    && run.windows(2).all(|pair| pair[1] == pair[0] + 1);
                let value = if whole {
                    loaded[(run[0] / self.a_vector) as usize].clone()
                } else {
                    let elements: Vec<String> = run
                        .iter()
                        .map(|&j| {
                            let element = format!("{name}_{j}");
                            emit_line!(
                                body,
                                "{element} = vector.extract {}[{}] : {} from {}",
                                loaded[(j / self.a_vector) as usize],
                                j % self.a_vector,
                                self.element,
                                self.vector(self.a_vector)
                            );
                            element
                        })
                        .collect();
                    emit_line!(
                        body,
                        "{name} = vector.from_elements {} : {}",
                        elements.join(", "),
                        self.vector(run.len() as i64)
                    );
                    name.clone()
                };
                let at = offsets[run[0] as usize];
                constants.insert(at);
                emit_line!(
                    body,
                    "{name}_p = arith.addi %ua{unit}_p, %c{at} : index\n\
                     vector.store {value}, {la}[%ua{unit}_r, {name}_p] : {lds_a}, {}",
                    self.vector(run.len() as i64)
                );
            }
        }
        // B: column c of the unit is element c of each loaded row vector.
        let rows = &registers[registers.len() - self.b_run as usize..];
        for column in 0..self.b_columns {
            let name = format!("%stb{column}_{label}");
            let elements: Vec<String> = (0..self.b_run)
                .map(|j| {
                    let element = format!("{name}_{j}");
                    emit_line!(
                        body,
                        "{element} = vector.extract {}[{column}] : {} from {}",
                        rows[j as usize],
                        self.element,
                        self.vector(self.b_columns)
                    );
                    element
                })
                .collect();
            constants.insert(column);
            emit_line!(
                body,
                "{name} = vector.from_elements {} : {}\n{name}_n = arith.addi %ub_n, %c{column} : index\n\
                 vector.store {name}, {lb}[{name}_n, %ub_p] : {lds_b}, {}",
                elements.join(", "),
                self.vector(self.b_run),
                self.vector(self.b_run)
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const F32: Layout = Layout { outer: 128, chunk: 16, inst_k: 4, elements: 1 };
    const I8_GFX942: Layout = Layout { outer: 128, chunk: 64, inst_k: 32, elements: 8 };
    const WMMA: Layout = Layout { outer: 64, chunk: 32, inst_k: 16, elements: 16 };

    #[test]
    fn positions_are_a_permutation_inverted_by_k_at() {
        for layout in [F32, I8_GFX942, WMMA] {
            let mut seen: Vec<i64> = (0..layout.chunk).map(|k| layout.position(k)).collect();
            for k in 0..layout.chunk {
                assert_eq!(layout.k_at(layout.position(k)), k, "{layout:?} k {k}");
            }
            seen.sort();
            assert_eq!(seen, (0..layout.chunk).collect::<Vec<_>>());
        }
    }

    #[test]
    fn a_lanes_fragments_are_one_contiguous_run() {
        // Lane group g's k for step s, element e: s * inst_k + g * elements + e.
        for layout in [F32, I8_GFX942] {
            for group in 0..layout.inst_k / layout.elements {
                let positions: Vec<i64> = (0..layout.steps())
                    .flat_map(|step| {
                        (0..layout.elements)
                            .map(move |e| layout.position(step * layout.inst_k + group * layout.elements + e))
                    })
                    .collect();
                let first = group * layout.run();
                assert_eq!(positions, (first..first + layout.run()).collect::<Vec<_>>(), "{layout:?}");
            }
        }
        assert_eq!((0..WMMA.chunk).map(|k| WMMA.position(k)).collect::<Vec<_>>(), (0..32).collect::<Vec<_>>());
    }

    #[test]
    fn plans_take_wide_units() {
        let b = Layout { outer: 128, ..F32 };
        let staging = Staging::plan(F32, b, 256, "f32", 4).expect("a plan");
        // A: 8 consecutive k per item in two 16-byte loads; B: 2 positions
        // (k, k + 4) by 4 columns: two 16-byte loads, four 8-byte stores.
        assert_eq!((staging.a_width, staging.a_vector, staging.b_run, staging.b_columns), (8, 4, 2, 4));
        // i8: A's 16 k in one load and one store; B two rows of 8 columns
        // (loads weigh double: each is a 64-bit address held live),
        // stored as eight 2-byte runs.
        let i8 = Layout { chunk: 32, ..I8_GFX942 };
        let staging = Staging::plan(i8, i8, 256, "i8", 1).expect("a plan");
        assert_eq!((staging.a_width, staging.a_vector, staging.b_run, staging.b_columns), (16, 16, 2, 8));
        // A share that does not divide among the items.
        assert!(Staging::plan(Layout { outer: 16, ..F32 }, b, 1024, "f32", 4).is_none());
    }
}
