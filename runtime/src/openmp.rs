//! How long OpenMP's worker threads spin after a kernel call when the
//! caller is a host program with a thread pool of its own (XLA).
//!
//! libomp's workers spin for `KMP_BLOCKTIME` (200 ms by default) after each
//! parallel region before they sleep. Between calls of a tight loop that
//! saves a wake-up; under XLA, whose own threads run the program's next ops
//! on the same cores as soon as a Tessel kernel returns, the spinning
//! workers take those cores away. Measured on a 2-core Zen 4: a jitted
//! program of JAX's Pallas softmax (4096²) followed by a jnp matmul ran in
//! 220-231 ms with the default and 171-177 ms with a 1 ms spin, while the
//! softmax alone lost nothing measurable. The FFI path therefore sets a 1 ms
//! spin for the threads that call kernels (their teams' workers inherit it
//! at the next fork), unless the user has chosen libomp's waiting through
//! its environment.

use std::{
    cell::Cell,
    ffi::{CString, c_int, c_void},
    sync::LazyLock,
};

/// Milliseconds a worker spins after a kernel called from a host program.
pub const CALLER_SPIN_MS: i32 = 1;

/// libomp's `kmp_set_blocktime`, when libomp is loaded and the user has not
/// set how its threads wait.
static SET_BLOCKTIME: LazyLock<Option<unsafe extern "C" fn(c_int)>> = LazyLock::new(|| {
    if ["KMP_BLOCKTIME", "OMP_WAIT_POLICY", "KMP_LIBRARY"].iter().any(|name| std::env::var_os(name).is_some()) {
        return None;
    }
    let path = CString::new(crate::jit::OPENMP).expect("no NUL in the path");
    // SAFETY: RTLD_NOLOAD only looks up a library already loaded (by the
    // JIT that compiled the kernel) and takes a reference to it, which is
    // never dropped: libomp stays loaded for the process's life anyway.
    let library = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD) };
    if library.is_null() {
        return None;
    }
    // SAFETY: a live handle and a NUL-terminated name.
    let symbol: *mut c_void = unsafe { libc::dlsym(library, c"kmp_set_blocktime".as_ptr()) };
    // SAFETY: libomp's `void kmp_set_blocktime(int msec)` (its omp.h).
    (!symbol.is_null()).then(|| unsafe { std::mem::transmute::<*mut c_void, unsafe extern "C" fn(c_int)>(symbol) })
});

thread_local! {
    static SPIN_SET: Cell<bool> = const { Cell::new(false) };
}

/// Makes the teams the calling thread forks from now on spin for
/// [`CALLER_SPIN_MS`] after each parallel region (once per thread; nothing
/// when the user configured libomp or libomp is not loaded).
pub fn spin_briefly_after_calls() {
    if SPIN_SET.get() {
        return;
    }
    SPIN_SET.set(true);
    if let Some(set_blocktime) = *SET_BLOCKTIME {
        // SAFETY: libomp's exported setter of the calling thread's
        // blocktime ICV, valid to call from any thread at any time outside a
        // parallel region (the caller is about to fork one).
        unsafe { set_blocktime(CALLER_SPIN_MS) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// libomp loaded as the JIT loads it, and its blocktime getter.
    fn blocktime_getter() -> unsafe extern "C" fn() -> c_int {
        let path = CString::new(crate::jit::OPENMP).unwrap();
        // SAFETY: loading libomp by its path; the handle is kept for the
        // test process's life.
        let library = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW) };
        assert!(!library.is_null(), "libomp is not at {}", crate::jit::OPENMP);
        // SAFETY: a live handle and a NUL-terminated name.
        let symbol = unsafe { libc::dlsym(library, c"kmp_get_blocktime".as_ptr()) };
        assert!(!symbol.is_null());
        // SAFETY: libomp's `int kmp_get_blocktime(void)`.
        unsafe { std::mem::transmute::<*mut c_void, unsafe extern "C" fn() -> c_int>(symbol) }
    }

    #[test]
    fn threads_that_call_kernels_spin_briefly_and_others_keep_libomps_default() {
        let get_blocktime = blocktime_getter();
        // SAFETY: libomp is loaded; the getter reads the calling thread's ICV.
        let default = std::thread::spawn(move || unsafe { get_blocktime() }).join().unwrap();
        let user_configured = SET_BLOCKTIME.is_none();
        let caller = std::thread::spawn(move || {
            spin_briefly_after_calls();
            spin_briefly_after_calls();
            // SAFETY: as above.
            unsafe { get_blocktime() }
        })
        .join()
        .unwrap();
        // SAFETY: as above.
        let bystander = std::thread::spawn(move || unsafe { get_blocktime() }).join().unwrap();
        assert_eq!(caller, if user_configured { default } else { CALLER_SPIN_MS });
        assert_eq!(bystander, default);
    }
}
