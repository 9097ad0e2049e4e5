//! Allocation for JIT-compiled kernels: their `malloc`, `aligned_alloc`
//! and `free`, with a small cache of freed blocks per thread.
//!
//! A kernel allocates its block temporaries once per program (a grid of
//! thousands of programs), and frees them at the program's end. The C
//! library hands large blocks back to the system on free (blocks from 128
//! KiB are mappings of their own; freed memory at the top of a thread's
//! arena is returned), so every program page-faults its temporaries in
//! again, and on a multi-threaded process each unmapping is a TLB shootdown
//! across the threads (seen under XLA, whose worker threads call the
//! kernels). Keeping a few freed blocks per size class per thread makes the
//! steady state allocation-free.
//!
//! Blocks are powers of two with a header before the pointer handed out
//! (the block's size and the header's length, so `free` needs no lookup);
//! blocks above `LARGEST_CACHED` are exact-sized and never cached.

use std::{
    alloc::{Layout, alloc, dealloc},
    cell::RefCell,
    ffi::c_void,
};

/// The header's length and the blocks' alignment unless asked for more.
const HEADER: usize = 64;
/// Blocks larger than this are neither rounded nor cached.
const LARGEST_CACHED: usize = 16 << 20;
/// Freed blocks kept per size class per thread.
const KEPT_PER_CLASS: usize = 4;
/// Bytes of freed blocks a thread keeps at most.
const KEPT_BYTES: usize = 64 << 20;
const CLASSES: usize = usize::BITS as usize;

struct Cache {
    free: Vec<Vec<*mut u8>>,
    bytes: usize,
}

impl Drop for Cache {
    fn drop(&mut self) {
        for (class, blocks) in self.free.iter().enumerate() {
            for &base in blocks {
                // SAFETY: cached blocks were allocated with exactly this
                // layout (a power-of-two size of `class`, HEADER alignment)
                // and are owned by the cache alone.
                unsafe { dealloc(base, Layout::from_size_align_unchecked(1 << class, HEADER)) };
            }
        }
    }
}

thread_local! {
    static CACHE: RefCell<Cache> = RefCell::new(Cache { free: vec![Vec::new(); CLASSES], bytes: 0 });
}

/// (block size, alignment) of an allocation of `size` bytes aligned to
/// `align` with its header.
fn block_layout(size: usize, align: usize) -> Option<(usize, usize)> {
    let header = align.max(HEADER).checked_next_power_of_two()?;
    let needed = size.checked_add(header)?;
    let block = if needed <= LARGEST_CACHED && header == HEADER { needed.next_power_of_two() } else { needed };
    Some((block, header))
}

fn allocate(size: usize, align: usize) -> *mut c_void {
    let Some((block, header)) = block_layout(size, align) else { return std::ptr::null_mut() };
    let cacheable = block.is_power_of_two() && block <= LARGEST_CACHED && header == HEADER;
    let reused = cacheable
        .then(|| {
            CACHE
                .try_with(|cache| {
                    let mut cache = cache.borrow_mut();
                    let class = block.trailing_zeros() as usize;
                    let base = cache.free[class].pop();
                    if base.is_some() {
                        cache.bytes -= block;
                    }
                    base
                })
                .ok()
                .flatten()
        })
        .flatten();
    let base = match reused {
        Some(base) => base,
        None => match Layout::from_size_align(block, header) {
            // SAFETY: a non-zero size (the header is counted) and a valid
            // power-of-two alignment.
            Ok(layout) => unsafe { alloc(layout) },
            Err(_) => return std::ptr::null_mut(),
        },
    };
    if base.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: the block holds `header` bytes before the returned pointer;
    // the two words written sit at its end, 16-byte aligned.
    unsafe {
        let pointer = base.add(header);
        pointer.cast::<usize>().sub(2).write(block);
        pointer.cast::<usize>().sub(1).write(header);
        pointer.cast()
    }
}

/// `malloc` for compiled kernels.
///
/// # Safety
/// As C's `malloc`; the result is freed only by [`kernel_free`].
pub unsafe extern "C" fn kernel_malloc(size: usize) -> *mut c_void {
    allocate(size, 16)
}

/// `aligned_alloc` for compiled kernels.
///
/// # Safety
/// As C's `aligned_alloc`; the result is freed only by [`kernel_free`].
pub unsafe extern "C" fn kernel_aligned_alloc(align: usize, size: usize) -> *mut c_void {
    if !align.is_power_of_two() {
        return std::ptr::null_mut();
    }
    allocate(size, align)
}

/// `free` for compiled kernels.
///
/// # Safety
/// `pointer` is null or came from [`kernel_malloc`] / [`kernel_aligned_alloc`]
/// and is not used again.
pub unsafe extern "C" fn kernel_free(pointer: *mut c_void) {
    if pointer.is_null() {
        return;
    }
    // SAFETY: per the contract the header written by `allocate` precedes
    // `pointer`; the block starts `header` bytes before it.
    let (block, header, base) = unsafe {
        let words = pointer.cast::<usize>();
        let (block, header) = (words.sub(2).read(), words.sub(1).read());
        (block, header, pointer.cast::<u8>().sub(header))
    };
    let cacheable = block.is_power_of_two() && block <= LARGEST_CACHED && header == HEADER;
    let kept = cacheable
        && CACHE
            .try_with(|cache| {
                let mut cache = cache.borrow_mut();
                let class = block.trailing_zeros() as usize;
                if cache.free[class].len() >= KEPT_PER_CLASS || cache.bytes + block > KEPT_BYTES {
                    return false;
                }
                cache.free[class].push(base);
                cache.bytes += block;
                true
            })
            .unwrap_or(false);
    if !kept {
        // SAFETY: the block was allocated with this layout by `allocate`.
        unsafe { dealloc(base, Layout::from_size_align_unchecked(block, header)) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_aligned_reused_and_freed() {
        // SAFETY: every pointer comes from these functions and is freed once.
        unsafe {
            let a = kernel_aligned_alloc(64, 1000);
            assert_eq!(a as usize % 64, 0);
            a.cast::<u8>().write_bytes(7, 1000);
            kernel_free(a);
            // The same class comes back from the thread's cache.
            let b = kernel_aligned_alloc(64, 1500);
            assert_eq!(a, b);
            kernel_free(b);
            // Larger alignments and sizes past the cached range work too.
            let c = kernel_aligned_alloc(4096, 10);
            assert_eq!(c as usize % 4096, 0);
            kernel_free(c);
            let big = kernel_malloc(LARGEST_CACHED + 1);
            big.cast::<u8>().write_bytes(1, LARGEST_CACHED + 1);
            kernel_free(big);
            assert!(kernel_aligned_alloc(3, 8).is_null());
            kernel_free(std::ptr::null_mut());
        }
    }
}
