//! The race detector compiled code calls under `tessel.detect_races` (JAX's
//! `InterpretParams(detect_races=True)`; `tessel-detect-races` inserts the
//! calls, `tessel_dialects::RACE_FUNCTIONS`).
//!
//! A DMA runs concurrently with the core that started it until a wait on
//! its semaphore has seen it complete (JAX's interpreter gives each DMA its
//! own vector clock, merged into the waiter's by the wait). So, per thread
//! (one core's sequential programs): a started DMA is *in flight* until a
//! wait on its semaphore returns after its copy ran — with copies on
//! starts (`eager`), the first wait on its semaphore; with copies on waits
//! (`on_wait`), the wait that ran it or a later one (the copies still
//! queued stay in flight). A race is an access that overlaps an in-flight
//! DMA's bytes where one of the two writes: a kernel's read of a DMA's
//! destination, its write of a DMA's source or destination, and a new
//! DMA's windows against in-flight ones. Overlap is exact to the byte:
//! a window is the list of contiguous byte ranges it covers.
//!
//! Between the cores of a core mesh (a thread each), accesses of a
//! kernel called with `shared` set are also kept in a call-wide history
//! with their core's clock: each core (thread) has a vector clock, a
//! signal publishes the signaller's clock on the semaphore and a wait
//! takes it in, so an access is ordered after another core's when that
//! core's signals reached it through waits. An access overlapping another
//! core's unordered access, where either writes, is a race. (A DMA counts
//! as its core's accesses of both windows when it starts.)
//!
//! Races are reported, not raised (as JAX's interpreter reports them): the
//! first of a call is kept for the caller (`take_race`).

use crate::dma_queue::{View, current_call, next_index, pending_on};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The byte ranges `[start, end)` a window covers, sorted and merged.
type Ranges = Vec<(usize, usize)>;

/// More ranges than this and a window counts as its bounding range (a
/// conservative answer, cheaper than listing a huge strided window).
const MOST_RANGES: usize = 1 << 16;

/// The byte ranges of `view`, elements of `bytes` bytes.
fn ranges(view: &View, bytes: usize) -> Ranges {
    if view.sizes.iter().any(|&size| size <= 0) {
        return Vec::new();
    }
    let rank = view.sizes.len();
    // The last dim is one range when it is contiguous.
    let contiguous = rank > 0 && view.strides[rank - 1] == 1;
    let (outer, run) = if contiguous { (rank - 1, view.sizes[rank - 1] as usize * bytes) } else { (rank, bytes) };
    let count: i64 = view.sizes[..outer].iter().product();
    let mut ranges: Ranges = if count as usize > MOST_RANGES {
        let corner = |high: bool| {
            let index: Vec<i64> = view
                .sizes
                .iter()
                .zip(&view.strides)
                .map(|(&size, &stride)| if (stride >= 0) == high { size - 1 } else { 0 })
                .collect();
            view.address(&index, bytes) as usize
        };
        vec![(corner(false), corner(true) + bytes)]
    } else {
        let mut ranges = Vec::with_capacity(count as usize);
        let mut index = vec![0i64; rank];
        loop {
            let start = view.address(&index, bytes) as usize;
            ranges.push((start, start + run));
            if !next_index(&mut index[..outer], &view.sizes[..outer]) {
                break ranges;
            }
        }
    };
    ranges.sort_unstable();
    let mut merged: Ranges = Vec::with_capacity(ranges.len());
    for (start, end) in ranges {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    merged
}

/// Whether two sorted, merged range lists share a byte.
fn overlap(a: &Ranges, b: &Ranges) -> bool {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i].1 <= b[j].0 {
            i += 1;
        } else if b[j].1 <= a[i].0 {
            j += 1;
        } else {
            return true;
        }
    }
    false
}

/// A DMA in flight.
struct InFlight {
    /// Its semaphore's counter address.
    semaphore: usize,
    source: Ranges,
    destination: Ranges,
    /// Its start's site (`tessel.race_sites`, from 1).
    site: i64,
    /// The entry call that started it.
    call: u64,
}

thread_local! {
    /// This thread's DMAs in flight, in start order.
    static IN_FLIGHT: RefCell<Vec<InFlight>> = const { RefCell::new(Vec::new()) };
}

/// A race: the sites of the earlier access (an in-flight DMA's start, or
/// another core's access) and of the later one, and what each did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Race {
    pub earlier: i64,
    pub earlier_writes: bool,
    pub later: i64,
    pub later_writes: bool,
    /// Whether the two accesses are two cores' (else a core's and its DMA's).
    pub between_cores: bool,
}

/// The first race of the current call.
static FIRST_RACE: Mutex<Option<Race>> = Mutex::new(None);

/// Cores a vector clock counts (more threads share the last entry, which
/// can only hide races, not invent them).
const CLOCK_ENTRIES: usize = 64;

/// The next clock entry a thread of the current call takes.
static NEXT_ENTRY: AtomicUsize = AtomicUsize::new(0);

/// A thread's vector clock in the current call.
struct Clock {
    call: u64,
    entry: usize,
    times: Vec<u32>,
}

thread_local! {
    static CLOCK: RefCell<Clock> = const { RefCell::new(Clock { call: u64::MAX, entry: 0, times: Vec::new() }) };
}

/// Runs `f` on this thread's clock for the current call (a fresh one, with
/// an entry of its own, at its first use in the call).
fn with_clock<T>(f: impl FnOnce(&mut Clock) -> T) -> T {
    let call = current_call();
    CLOCK.with(|clock| {
        let mut clock = clock.borrow_mut();
        if clock.call != call {
            let entry = NEXT_ENTRY.fetch_add(1, Ordering::SeqCst).min(CLOCK_ENTRIES - 1);
            let mut times = vec![0; CLOCK_ENTRIES];
            times[entry] = 1;
            *clock = Clock { call, entry, times };
        }
        f(&mut clock)
    })
}

/// The clocks semaphores carry from signals to waits, by counter address.
static SEMAPHORE_CLOCKS: Mutex<Option<HashMap<usize, Vec<u32>>>> = Mutex::new(None);

/// An access of the cores' history: which core (clock entry) at which of
/// its times, what it touched and whether it wrote, and its site.
struct Record {
    entry: usize,
    time: u32,
    ranges: Ranges,
    write: bool,
    site: i64,
}

/// Every shared access of the current call, and by 4 KiB page the
/// records touching it.
#[derive(Default)]
struct History {
    records: Vec<Record>,
    by_page: HashMap<usize, Vec<usize>>,
}

/// Records kept at most per call: past them accesses go unrecorded (a
/// bound on memory; races among them go unseen).
const MOST_RECORDS: usize = 1 << 20;

static HISTORY: Mutex<Option<History>> = Mutex::new(None);

/// The pages a range list touches.
fn pages(ranges: &Ranges) -> impl Iterator<Item = usize> + '_ {
    ranges.iter().flat_map(|&(start, end)| (start >> 12)..=((end.max(start + 1) - 1) >> 12))
}

/// Checks an access by the core of `clock` against the other cores'
/// recorded accesses, then records it.
fn check_shared(ranges: Ranges, write: bool, site: i64) {
    if ranges.is_empty() {
        return;
    }
    let (entry, time, times) = with_clock(|clock| {
        clock.times[clock.entry] += 1;
        (clock.entry, clock.times[clock.entry], clock.times.clone())
    });
    let mut history = HISTORY.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let history = history.get_or_insert_with(History::default);
    let mut seen = std::collections::HashSet::new();
    for page in pages(&ranges) {
        for &index in history.by_page.get(&page).map_or(&[][..], Vec::as_slice) {
            if !seen.insert(index) {
                continue;
            }
            let other = &history.records[index];
            let ordered = other.entry == entry || other.time <= times[other.entry];
            if !ordered && (other.write || write) && overlap(&other.ranges, &ranges) {
                record(Race {
                    earlier: other.site,
                    earlier_writes: other.write,
                    later: site,
                    later_writes: write,
                    between_cores: true,
                });
                break;
            }
        }
    }
    if history.records.len() < MOST_RECORDS {
        let index = history.records.len();
        for page in pages(&ranges).collect::<Vec<_>>() {
            history.by_page.entry(page).or_default().push(index);
        }
        history.records.push(Record { entry, time, ranges, write, site });
    }
}

/// Forgets the races, clocks and history of an earlier call (a call's start).
pub(crate) fn begin_call() {
    *FIRST_RACE.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = None;
    *SEMAPHORE_CLOCKS.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = None;
    *HISTORY.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = None;
    NEXT_ENTRY.store(0, Ordering::SeqCst);
}

/// The first race of the last call, if any.
pub fn take_race() -> Option<Race> {
    FIRST_RACE.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take()
}

fn record(race: Race) {
    FIRST_RACE.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).get_or_insert(race);
}

/// Checks an access at `site` reading `reads` and writing `writes`
/// against this thread's DMAs in flight.
fn check(reads: &Ranges, writes: &Ranges, site: i64) {
    let call = current_call();
    IN_FLIGHT.with(|in_flight| {
        for dma in in_flight.borrow().iter().filter(|dma| dma.call == call) {
            // A write against the DMA's reads or writes, a read against its writes.
            let (earlier_writes, later_writes) = if overlap(writes, &dma.destination) {
                (true, true)
            } else if overlap(writes, &dma.source) {
                (false, true)
            } else if overlap(reads, &dma.destination) {
                (true, false)
            } else {
                continue;
            };
            record(Race { earlier: dma.site, earlier_writes, later: site, later_writes, between_cores: false });
            return;
        }
    });
}

/// Whether this thread has a DMA of the current call in flight.
fn any_in_flight() -> bool {
    let call = current_call();
    IN_FLIGHT.with(|in_flight| in_flight.borrow().iter().any(|dma| dma.call == call))
}

/// A DMA's start at `site`: checks its windows against the DMAs in
/// flight, then puts it in flight.
///
/// # Safety
/// Called by compiled code with unranked memrefs (rank, descriptor) of its
/// source and destination windows and of its semaphore (one i32 counter).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe extern "C" fn race_dma(
    src_rank: i64,
    src: *const i64,
    dst_rank: i64,
    dst: *const i64,
    sem_rank: i64,
    sem: *const i64,
    bytes: i64,
    site: i64,
    shared: u8,
) {
    // SAFETY: compiled code passes each unranked memref's rank and its
    // ranked descriptor (tessel-detect-races' declarations).
    let (src, dst, sem) = unsafe { (View::read(src_rank, src), View::read(dst_rank, dst), View::read(sem_rank, sem)) };
    let bytes = bytes.max(1) as usize;
    let (source, destination) = (ranges(&src, bytes), ranges(&dst, bytes));
    check(&source, &destination, site);
    if shared & 1 != 0 {
        check_shared(source.clone(), false, site);
        check_shared(destination.clone(), true, site);
    }
    let semaphore = sem.counter() as usize;
    let call = current_call();
    IN_FLIGHT.with(|in_flight| {
        let mut in_flight = in_flight.borrow_mut();
        in_flight.retain(|dma| dma.call == call);
        in_flight.push(InFlight { semaphore, source, destination, site, call });
    });
}

/// A kernel's access at `site` of the window `view` (a read, or a write
/// when `write`).
///
/// # Safety
/// As for `race_dma`, for one window.
pub(crate) unsafe extern "C" fn race_access(rank: i64, view: *const i64, bytes: i64, write: u8, site: i64, shared: u8) {
    let shared = shared & 1 != 0;
    if !shared && !any_in_flight() {
        return;
    }
    // SAFETY: as for `race_dma`.
    let view = unsafe { View::read(rank, view) };
    let touched = ranges(&view, bytes.max(1) as usize);
    let write = write & 1 != 0;
    if write {
        check(&Vec::new(), &touched, site)
    } else {
        check(&touched, &Vec::new(), site)
    }
    if shared {
        check_shared(touched, write, site);
    }
}

/// A signal of a semaphore (before it counts): the semaphore carries the
/// signaller's clock to the waits it satisfies.
///
/// # Safety
/// As for `race_dma`, for the semaphore.
pub(crate) unsafe extern "C" fn race_signal(sem_rank: i64, sem: *const i64) {
    // SAFETY: as for `race_dma`.
    let sem = unsafe { View::read(sem_rank, sem) };
    let semaphore = sem.counter() as usize;
    let times = with_clock(|clock| {
        let times = clock.times.clone();
        clock.times[clock.entry] += 1;
        times
    });
    let mut clocks = SEMAPHORE_CLOCKS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let carried = clocks.get_or_insert_with(HashMap::new).entry(semaphore).or_insert_with(|| vec![0; CLOCK_ENTRIES]);
    for (carried, time) in carried.iter_mut().zip(times) {
        *carried = (*carried).max(time);
    }
}

/// A wait on a semaphore returned: the DMAs on it whose copies ran are
/// done (those still queued, the earliest started, stay in flight).
///
/// # Safety
/// As for `race_dma`, for the semaphore.
pub(crate) unsafe extern "C" fn race_wait(sem_rank: i64, sem: *const i64) {
    // SAFETY: as for `race_dma`.
    let sem = unsafe { View::read(sem_rank, sem) };
    let semaphore = sem.counter() as usize;
    // What the signals of the semaphore saw happens before this core's next access.
    let carried = SEMAPHORE_CLOCKS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .as_ref()
        .and_then(|clocks| clocks.get(&semaphore).cloned());
    with_clock(|clock| {
        for (time, carried) in clock.times.iter_mut().zip(carried.into_iter().flatten()) {
            *time = (*time).max(carried);
        }
        clock.times[clock.entry] += 1;
    });
    let mut pending = pending_on(semaphore);
    let call = current_call();
    IN_FLIGHT.with(|in_flight| {
        in_flight.borrow_mut().retain(|dma| {
            if dma.call != call {
                return false;
            }
            if dma.semaphore != semaphore {
                return true;
            }
            let queued = pending > 0;
            pending = pending.saturating_sub(1);
            queued
        })
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(base: &mut [u8], offset: i64, sizes: &[i64], strides: &[i64]) -> View {
        View { aligned: base.as_mut_ptr(), offset, sizes: sizes.to_vec(), strides: strides.to_vec() }
    }

    #[test]
    fn rows_of_a_window_are_its_ranges() {
        let mut buffer = vec![0u8; 4 * 8 * 8];
        let base = buffer.as_ptr() as usize;
        // A 2x3 window at (1, 2) of an 8x8 f32 array.
        let ranges = ranges(&view(&mut buffer, 10, &[2, 3], &[8, 1]), 4);
        assert_eq!(ranges, vec![(base + 40, base + 52), (base + 72, base + 84)]);
    }

    #[test]
    fn disjoint_column_blocks_do_not_overlap_but_crossing_ones_do() {
        let mut buffer = vec![0u8; 4 * 8 * 8];
        let left = ranges(&view(&mut buffer, 0, &[8, 4], &[8, 1]), 4);
        let right = ranges(&view(&mut buffer, 4, &[8, 4], &[8, 1]), 4);
        let middle = ranges(&view(&mut buffer, 3, &[1, 2], &[8, 1]), 4);
        assert!(!overlap(&left, &right));
        assert!(overlap(&left, &middle) && overlap(&right, &middle));
    }

    #[test]
    fn strided_elements_and_scalars_have_their_own_ranges() {
        let mut buffer = vec![0u8; 64];
        let base = buffer.as_ptr() as usize;
        let every_other = ranges(&view(&mut buffer, 0, &[4], &[2]), 4);
        assert_eq!(every_other, (0..4).map(|i| (base + 8 * i, base + 8 * i + 4)).collect::<Vec<_>>());
        let odd = ranges(&view(&mut buffer, 1, &[], &[]), 4);
        assert_eq!(odd, vec![(base + 4, base + 8)]);
        assert!(!overlap(&every_other, &odd));
    }
}
