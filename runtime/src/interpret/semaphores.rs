//! The interpreter's semaphores and DMAs: i32 counters in semaphore
//! scratch (zero when the call's scratch is made), a DMA copied when it
//! starts and counted in bytes, and a wait for more than the count an
//! error at the wait's location (one program runs at a time: nothing else
//! could ever signal it) — but on a core mesh, where the other cores run
//! until one signals enough or none can (cores.rs).

use super::{
    Interpreter, Op, Result, fail, scalar,
    value::{Num, Val, for_each_index, read, write},
};

fn buffer(val: &Val) -> Result<usize> {
    match val {
        Val::Ref(id) => Ok(*id),
        _ => fail("expected a memref"),
    }
}

/// The element of an array of `shape` at `positions`, if inside.
fn position(shape: &[usize], positions: &[i64]) -> Option<usize> {
    let mut at = 0usize;
    for (&p, &n) in positions.iter().zip(shape) {
        if p < 0 || p >= n as i64 {
            return None;
        }
        at = at * n + p as usize;
    }
    (positions.len() == shape.len()).then_some(at)
}

impl Interpreter {
    /// The semaphore element named by operands `first` (the ref) and the
    /// `count` indices after it.
    fn semaphore(&self, operands: &[Val], first: usize, count: usize, name: &str) -> Result<(usize, usize)> {
        let id = buffer(&operands[first])?;
        let indices: Vec<i64> =
            operands[first + 1..first + 1 + count].iter().map(|v| scalar(v).map(Num::i)).collect::<Result<_>>()?;
        match position(&self.buffers[id].shape, &indices) {
            Some(at) => Ok((id, at)),
            None => fail(format!("{name}: semaphore {indices:?} is outside {:?}", self.buffers[id].shape)),
        }
    }

    fn add_to_semaphore(&mut self, (id, at): (usize, usize), amount: i64) {
        let count = read(&self.buffers[id], at).i();
        write(&mut self.buffers[id], at, Num::I((count as i32).wrapping_add(amount as i32) as i64));
    }

    pub(super) fn semaphore_op(&mut self, op: &Op, name: &str, operands: &[Val]) -> Result<Option<Val>> {
        let location = || super::location_text(op);
        match name {
            "block.semaphore_signal" => {
                let segments = op.segments();
                let (id, at) = self.semaphore(operands, 0, segments[1], name)?;
                // With `core`, another core's copy of the semaphore.
                let id = match operands.get(2 + segments[1]) {
                    Some(core) => self.other_core_semaphore(id, scalar(core)?.i())?,
                    None => id,
                };
                self.add_to_semaphore((id, at), scalar(&operands[1 + segments[1]])?.i());
                Ok(None)
            }
            "block.semaphore_read" => {
                let (id, at) = self.semaphore(operands, 0, operands.len() - 1, name)?;
                Ok(Some(Val::Scalar(crate::ElementType::I32, read(&self.buffers[id], at))))
            }
            "block.semaphore_wait" => {
                let (id, at) = self.semaphore(operands, 0, operands.len() - 2, name)?;
                let amount = scalar(&operands[operands.len() - 1])?.i();
                while read(&self.buffers[id], at).i() < amount {
                    // DMAs queued on the semaphore copy, the last first;
                    // on a core mesh, the other cores run until one signals.
                    let queued = self.queued.get_mut(&(id, at)).and_then(Vec::pop);
                    if let Some((dma, dma_operands)) = queued {
                        self.dma_start(&super::view(dma), &dma_operands)?;
                    } else if self.core.is_some() {
                        self.wait_for_signal(id, at, amount, location())?;
                    } else {
                        break;
                    }
                }
                let count = read(&self.buffers[id], at).i();
                if count < amount {
                    return fail(format!(
                        "a semaphore wait can never be satisfied (it needs {amount}, the count is {count}, and \
                         nothing else signals it): block.semaphore_wait at {}",
                        location()
                    ));
                }
                self.add_to_semaphore((id, at), -amount);
                Ok(None)
            }
            "block.dma_start" if self.dma_on_wait => {
                // Queued on its semaphore until a wait runs it.
                let segments = op.segments();
                let semaphore = self.semaphore(operands, 2 + segments[1] + segments[3], segments[5], name)?;
                self.queued.entry(semaphore).or_default().push((op.raw(), operands.to_vec()));
                Ok(None)
            }
            "block.dma_start" => {
                self.dma_start(op, operands)?;
                Ok(None)
            }
            other => fail(format!("the interpreter does not support '{other}'")),
        }
    }

    fn dma_start(&mut self, op: &Op, operands: &[Val]) -> Result<()> {
        let segments = op.segments();
        let (src_offsets, dst_offsets, sem_indices) = (segments[1], segments[3], segments[5]);
        let offsets = |first: usize, count: usize| -> Result<Vec<i64>> {
            operands[first..first + count].iter().map(|v| scalar(v).map(Num::i)).collect()
        };
        let (src, dst) = (buffer(&operands[0])?, buffer(&operands[1 + src_offsets])?);
        let (src_at, dst_at) = (offsets(1, src_offsets)?, offsets(2 + src_offsets, dst_offsets)?);
        let window = |id: usize, sizes: &str, count: usize| -> Vec<usize> {
            if count > 0 {
                op.integers(sizes).iter().map(|&s| s as usize).collect()
            } else {
                self.buffers[id].shape.clone()
            }
        };
        let (src_sizes, dst_sizes) = (window(src, "src_sizes", src_offsets), window(dst, "dst_sizes", dst_offsets));
        // Element k of the source window goes to element k of the
        // destination's (their shapes agree but for unit dimensions).
        let mut sources = Vec::new();
        let src_shape = self.buffers[src].shape.clone();
        let mut error = None;
        for_each_index(&src_sizes, |index| {
            let positions: Vec<i64> =
                index.iter().enumerate().map(|(d, &i)| src_at.get(d).copied().unwrap_or(0) + i as i64).collect();
            match position(&src_shape, &positions) {
                Some(at) => sources.push(read(&self.buffers[src], at)),
                None => error = Some(format!("block.dma_start reads outside its source at {positions:?}")),
            }
        });
        let dst_shape = self.buffers[dst].shape.clone();
        let add = op.has("add");
        let element = self.buffers[dst].element;
        let mut k = 0;
        for_each_index(&dst_sizes, |index| {
            let positions: Vec<i64> =
                index.iter().enumerate().map(|(d, &i)| dst_at.get(d).copied().unwrap_or(0) + i as i64).collect();
            match (position(&dst_shape, &positions), sources.get(k)) {
                (Some(at), Some(&value)) => {
                    let value = if add {
                        let sum = super::elementwise::evaluate(
                            if element.is_float() { "arith.addf" } else { "arith.addi" },
                            element,
                            element,
                            0,
                            &[read(&self.buffers[dst], at), value],
                        );
                        match sum {
                            Ok(sum) => sum,
                            Err(message) => {
                                error = Some(message);
                                value
                            }
                        }
                    } else {
                        value
                    };
                    write(&mut self.buffers[dst], at, value);
                }
                _ => error = Some(format!("block.dma_start writes outside its destination at {positions:?}")),
            }
            k += 1;
        });
        if let Some(error) = error {
            return fail(error);
        }
        let bytes = (sources.len() * element.size()) as i64;
        let semaphore = self.semaphore(operands, 2 + src_offsets + dst_offsets, sem_indices, "block.dma_start")?;
        self.add_to_semaphore(semaphore, bytes);
        Ok(())
    }
}
