//! Memory advice for the result buffers a caller hands a kernel call.
//!
//! XLA's CPU client allocates each result with `aligned_alloc`; a result of
//! many MiB is a fresh anonymous mapping, faulted in 4 KiB at a time while
//! the compiled kernel first writes it (under Linux's transparent-huge-page
//! setting `defrag=madvise`, common on servers, huge pages are assembled
//! only for mappings that ask). On a 64 MiB softmax those 16,384 faults
//! took longer than the kernel's own arithmetic. numpy asks for huge
//! pages on its large arrays for the same reason; the FFI path asks for them
//! on results before the kernel writes them (`tessel.jax`'s FFI handler).

/// Results at least this large are advised (a few huge pages' worth).
const ADVISED_BYTES: usize = 4 << 20;
/// x86-64's and AArch64's (4 KiB granule) transparent huge page size.
const HUGE_PAGE: usize = 2 << 20;

/// The whole huge pages inside `bytes` bytes at `address`, as a start and
/// a length; `None` for buffers too small to be worth advising.
fn huge_page_range(address: usize, bytes: usize) -> Option<(usize, usize)> {
    if bytes < ADVISED_BYTES || address == 0 {
        return None;
    }
    let start = address.checked_next_multiple_of(HUGE_PAGE)?;
    let end = address.checked_add(bytes)? / HUGE_PAGE * HUGE_PAGE;
    (end > start).then(|| (start, end - start))
}

/// Asks the OS to back the whole huge pages inside `bytes` bytes at `data`
/// with huge pages. Advice only: contents are unchanged, and a refusal (no
/// THP support, a range it rejects) costs nothing.
pub fn advise_huge_pages(data: *mut u8, bytes: usize) {
    let Some((start, length)) = huge_page_range(data as usize, bytes) else { return };
    // SAFETY: [start, start + length) lies inside the caller's live buffer,
    // which is mapped memory; MADV_HUGEPAGE changes only how future faults
    // in the range are backed, never the contents, and fails harmlessly
    // otherwise.
    #[cfg(target_os = "linux")]
    unsafe {
        libc::madvise(start as *mut libc::c_void, length, libc::MADV_HUGEPAGE);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (start, length);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_buffers_are_left_alone() {
        assert_eq!(huge_page_range(HUGE_PAGE, ADVISED_BYTES - 1), None);
        assert_eq!(huge_page_range(0, 1 << 30), None);
    }

    #[test]
    fn only_whole_huge_pages_inside_the_buffer_are_advised() {
        let address = 3 * HUGE_PAGE + 4096;
        let (start, length) = huge_page_range(address, 5 * HUGE_PAGE).expect("large enough");
        assert_eq!((start, length), (4 * HUGE_PAGE, 4 * HUGE_PAGE));
        assert!(start >= address && start + length <= address + 5 * HUGE_PAGE);
        assert_eq!(huge_page_range(HUGE_PAGE, 4 * HUGE_PAGE), Some((HUGE_PAGE, 4 * HUGE_PAGE)));
        assert_eq!(huge_page_range(usize::MAX - HUGE_PAGE, ADVISED_BYTES), None);
    }

    #[test]
    fn advice_keeps_the_contents() {
        let mut buffer: Vec<u32> = (0..(3 * ADVISED_BYTES / 4) as u32).collect();
        advise_huge_pages(buffer.as_mut_ptr().cast(), buffer.len() * 4);
        assert!(buffer.iter().enumerate().all(|(index, &value)| value == index as u32));
    }
}
