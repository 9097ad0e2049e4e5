//! DMAs that copy on waits (`tessel.dma_mode = on_wait`, JAX's
//! `dma_execution_mode="on_wait"`): the functions compiled code calls
//! (`tessel_dialects::DMA_FUNCTIONS`). A DMA's start queues its copy on
//! its semaphore; a wait on the semaphore runs the copies queued on it,
//! the last queued first (as JAX's interpreter pops its task list), each
//! reading its source then, writing its destination and counting its
//! bytes, until the count holds what the wait needs.
//!
//! Queues are per thread (a worker's semaphores are its own, and a core
//! waits on its own semaphores) and per call: copies queued by an earlier
//! call, or on semaphores a worker made anew (`forget`), never run — as
//! in JAX's interpreter, a DMA never waited for never copies.

use crate::ElementType;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};

/// A strided window as compiled code passes it (an unranked memref's
/// ranked descriptor), in elements.
pub(crate) struct View {
    pub(crate) aligned: *mut u8,
    pub(crate) offset: i64,
    pub(crate) sizes: Vec<i64>,
    pub(crate) strides: Vec<i64>,
}

impl View {
    /// The view an unranked memref (`rank`, `descriptor`) describes.
    ///
    /// # Safety
    /// `descriptor` points to a ranked memref descriptor of rank `rank`:
    /// allocated and aligned pointers, offset, then `rank` sizes and
    /// `rank` strides, all 64-bit.
    pub(crate) unsafe fn read(rank: i64, descriptor: *const i64) -> View {
        let rank = rank.max(0) as usize;
        // SAFETY: per the contract, 3 + 2 * rank words are readable.
        let fields = unsafe { std::slice::from_raw_parts(descriptor, 3 + 2 * rank) };
        View {
            aligned: fields[1] as *mut u8,
            offset: fields[2],
            sizes: fields[3..3 + rank].to_vec(),
            strides: fields[3 + rank..].to_vec(),
        }
    }

    /// The address of the element at `index` (elements of `bytes` bytes).
    pub(crate) fn address(&self, index: &[i64], bytes: usize) -> *mut u8 {
        let linear: i64 = self.offset + index.iter().zip(&self.strides).map(|(i, s)| i * s).sum::<i64>();
        self.aligned.wrapping_offset(linear as isize * bytes as isize)
    }

    /// A semaphore view's first i32 counter (its address names the
    /// semaphore in the queues and the race detector).
    pub(crate) fn counter(&self) -> *mut i32 {
        self.address(&vec![0; self.sizes.len()], 4).cast()
    }
}

/// Steps `index` to the next position of a window of `sizes`, the last
/// dim fastest; false once past the last one (at once for no dims).
pub(crate) fn next_index(index: &mut [i64], sizes: &[i64]) -> bool {
    for d in (0..index.len()).rev() {
        index[d] += 1;
        if index[d] < sizes[d] {
            return true;
        }
        index[d] = 0;
    }
    false
}

/// A queued copy.
struct Copy {
    src: View,
    dst: View,
    element: ElementType,
    add: bool,
    bytes: i64,
    /// The call that queued it (`CALLS`).
    call: u64,
}

/// Entry calls so far: a copy queued by an earlier call is stale.
static CALLS: AtomicU64 = AtomicU64::new(0);

/// The current entry call (`CALLS`' count).
pub(crate) fn current_call() -> u64 {
    CALLS.load(Ordering::SeqCst)
}

/// Marks the start of an entry call.
pub(crate) fn begin_call() {
    CALLS.fetch_add(1, Ordering::SeqCst);
}

thread_local! {
    /// The copies queued on each semaphore (by its address), in order.
    static QUEUED: RefCell<HashMap<usize, Vec<Copy>>> = RefCell::new(HashMap::new());
}

/// A DMA's element types by the code compiled code passes
/// (`tessel_dialects::DMA_ELEMENTS`).
fn element_of(code: i32) -> Option<ElementType> {
    let name = tessel_dialects::DMA_ELEMENTS.get(usize::try_from(code).ok()?)?;
    ElementType::from_mlir(name)
}

/// Queues the copy of window `src` into `dst` on semaphore `sem`.
///
/// # Safety
/// Called by compiled code with unranked memrefs (rank, descriptor) whose
/// windows stay valid until the copy runs (the kernel's buffers, alive for
/// the call; a copy queued on a worker's semaphores is dropped with them).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe extern "C" fn dma_start(
    src_rank: i64,
    src: *const i64,
    dst_rank: i64,
    dst: *const i64,
    sem_rank: i64,
    sem: *const i64,
    bytes: i64,
    element: i32,
    add: u8,
) {
    // SAFETY: compiled code passes each unranked memref's rank and its
    // ranked descriptor (the declaration block-to-linalg writes).
    let (src, dst, sem) = unsafe { (View::read(src_rank, src), View::read(dst_rank, dst), View::read(sem_rank, sem)) };
    let Some(element) = element_of(element) else { return };
    let copy = Copy { src, dst, element, add: add & 1 != 0, bytes, call: CALLS.load(Ordering::SeqCst) };
    let counter = sem.counter() as usize;
    QUEUED.with(|queued| queued.borrow_mut().entry(counter).or_default().push(copy));
}

/// Waits for semaphore `sem` to hold `amount`, running the copies queued
/// on it; 0 when it does (and takes it), 1 when nothing can raise it, 2
/// when a concurrent wait (a core mesh's) timed out.
///
/// # Safety
/// `sem` is an unranked memref of one i32 counter, which other threads
/// update only atomically (`concurrent`).
pub(crate) unsafe extern "C" fn dma_wait(sem_rank: i64, sem: *const i64, amount: i32, concurrent: u8) -> i32 {
    // SAFETY: as for `dma_start`.
    let sem = unsafe { View::read(sem_rank, sem) };
    let address = sem.counter();
    // SAFETY: the counter is an aligned i32 the kernel's semaphore scratch
    // holds for the call; other threads touch it only atomically.
    let counter = unsafe { AtomicI32::from_ptr(address) };
    let deadline = (concurrent & 1 != 0).then(|| crate::semaphore_waits::wait_deadline());
    let call = CALLS.load(Ordering::SeqCst);
    loop {
        let count = counter.load(Ordering::SeqCst);
        if count >= amount {
            if counter.compare_exchange(count, count - amount, Ordering::SeqCst, Ordering::SeqCst).is_ok() {
                return 0;
            }
            continue;
        }
        let next = QUEUED.with(|queued| {
            let mut queued = queued.borrow_mut();
            let copies = queued.get_mut(&(address as usize))?;
            // Copies of earlier calls never run.
            copies.retain(|copy| copy.call == call);
            copies.pop()
        });
        match (next, deadline) {
            (Some(copy), _) => {
                // SAFETY: the copy's windows are the kernel's buffers,
                // alive for the call that queued it, which is this one.
                unsafe { run(&copy) };
                counter.fetch_add(copy.bytes as i32, Ordering::SeqCst);
            }
            (None, None) => return 1,
            (None, Some(deadline)) => {
                if !crate::semaphore_waits::wait_pause(deadline) {
                    return 2;
                }
            }
        }
    }
}

/// How many copies of the current call are still queued on the semaphore
/// whose counter is at `counter` (the earliest started: a wait runs the
/// last queued first).
pub(crate) fn pending_on(counter: usize) -> usize {
    let call = current_call();
    QUEUED.with(|queued| {
        queued.borrow().get(&counter).map_or(0, |copies| copies.iter().filter(|copy| copy.call == call).count())
    })
}

/// Drops the copies queued on the semaphores of `sems` (being made anew).
///
/// # Safety
/// `sems` is an unranked memref of i32 counters.
pub(crate) unsafe extern "C" fn dma_forget(rank: i64, sems: *const i64) {
    // SAFETY: as for `dma_start`.
    let sems = unsafe { View::read(rank, sems) };
    let first = sems.counter() as usize;
    let count: i64 = sems.sizes.iter().product();
    let end = first + 4 * count.max(0) as usize;
    QUEUED.with(|queued| queued.borrow_mut().retain(|&counter, _| !(first..end).contains(&counter)));
}

/// Copies (or adds) the source window into the destination one: a row at
/// a time where both windows' rows are contiguous (one `memmove` each),
/// else element by element.
///
/// # Safety
/// Both windows are valid for their elements' reads and writes.
unsafe fn run(copy: &Copy) {
    let bytes = copy.element.size();
    let rank = copy.src.sizes.len();
    if copy.src.sizes.iter().any(|&size| size <= 0) {
        return;
    }
    let rows = rank > 0 && !copy.add && copy.src.strides[rank - 1] == 1 && copy.dst.strides[rank - 1] == 1;
    // The dims walked one index at a time: all but a contiguous row's.
    let outer = if rows { rank - 1 } else { rank };
    let run_bytes = if rows { copy.src.sizes[rank - 1] as usize * bytes } else { bytes };
    let mut index = vec![0i64; rank];
    loop {
        let (from, to) = (copy.src.address(&index, bytes), copy.dst.address(&index, bytes));
        // SAFETY: both addresses start a row (or an element) of their
        // windows, which have one shape, per the contract; `copy` allows
        // the two to overlap.
        unsafe {
            if copy.add {
                add_element(copy.element, from, to);
            } else {
                std::ptr::copy(from, to, run_bytes);
            }
        }
        if !next_index(&mut index[..outer], &copy.src.sizes[..outer]) {
            return;
        }
    }
}

/// `*to += *from` for one element of `element`'s type (integers wrap).
///
/// # Safety
/// Both point to an element of that type.
unsafe fn add_element(element: ElementType, from: *const u8, to: *mut u8) {
    use half::{bf16, f16};
    // SAFETY: per the contract, for every arm's type; unaligned reads and
    // writes, as views may be of any offset.
    unsafe {
        match element {
            ElementType::F16 => {
                let sum = f16::from_f32(
                    from.cast::<f16>().read_unaligned().to_f32() + to.cast::<f16>().read_unaligned().to_f32(),
                );
                to.cast::<f16>().write_unaligned(sum);
            }
            ElementType::BF16 => {
                let sum = bf16::from_f32(
                    from.cast::<bf16>().read_unaligned().to_f32() + to.cast::<bf16>().read_unaligned().to_f32(),
                );
                to.cast::<bf16>().write_unaligned(sum);
            }
            ElementType::F32 => to
                .cast::<f32>()
                .write_unaligned(to.cast::<f32>().read_unaligned() + from.cast::<f32>().read_unaligned()),
            ElementType::F64 => to
                .cast::<f64>()
                .write_unaligned(to.cast::<f64>().read_unaligned() + from.cast::<f64>().read_unaligned()),
            ElementType::I1 => *to = (*to ^ *from) & 1,
            ElementType::I8 | ElementType::U8 => *to = (*to).wrapping_add(*from),
            ElementType::I16 | ElementType::U16 => to
                .cast::<u16>()
                .write_unaligned(to.cast::<u16>().read_unaligned().wrapping_add(from.cast::<u16>().read_unaligned())),
            ElementType::I32 | ElementType::U32 => to
                .cast::<u32>()
                .write_unaligned(to.cast::<u32>().read_unaligned().wrapping_add(from.cast::<u32>().read_unaligned())),
            ElementType::I64 | ElementType::U64 | ElementType::Index => to
                .cast::<u64>()
                .write_unaligned(to.cast::<u64>().read_unaligned().wrapping_add(from.cast::<u64>().read_unaligned())),
        }
    }
}
