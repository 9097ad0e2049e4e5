//! Running ROCm code objects on an AMD GPU through HIP (`tessel run
//! --device hip`; cargo feature `hip`, which links libamdhip64).
//!
//! What the host does around the kernels is described by a [`HostProgram`]
//! (read off the lowered host function by `tessel_lowering::rocm`): the
//! scratch buffers to allocate and the launches, in order, with their
//! grid, workgroup size and arguments. The launcher copies the arrays to
//! the device, runs the launches and copies every array back.

/// A kernel argument: one of the entry function's arrays, a scratch
/// buffer of the program, or an index (the step of an ordered grid axis
/// the host loops over).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LaunchArg {
    Array(usize),
    Scratch(usize),
    Index(i64),
}

/// One `gpu.launch_func`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launch {
    /// The kernel's symbol in the code object.
    pub kernel: String,
    pub grid: [u32; 3],
    pub workgroup: [u32; 3],
    /// Bare device pointers, in order (the kernels' calling convention).
    pub args: Vec<LaunchArg>,
}

/// The host side of an entry function.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostProgram {
    /// Bytes of each scratch buffer.
    pub scratch: Vec<usize>,
    pub launches: Vec<Launch>,
}

/// Why the GPU could not run the program.
#[derive(Debug, thiserror::Error)]
pub enum HipError {
    #[error("this tessel was built without the `hip` feature (cargo build --features hip)")]
    NotBuilt,
    #[error("no AMD GPU available: {0}")]
    NoDevice(String),
    #[error("HIP: {call} failed: {message}")]
    Call { call: &'static str, message: String },
    #[error("a program's block had no element in bounds (Pallas requires one); those programs were skipped")]
    OutOfBounds,
}

#[cfg(not(feature = "hip"))]
pub fn device_count() -> Result<usize, HipError> {
    Err(HipError::NotBuilt)
}

#[cfg(not(feature = "hip"))]
pub fn run_timed(
    _code_object: &[u8],
    _program: &HostProgram,
    _arrays: &mut [crate::HostArray],
    _repeats: usize,
) -> Result<Vec<f64>, HipError> {
    Err(HipError::NotBuilt)
}

/// Loads `code_object`, runs `program` on `arrays` (copied in, and back
/// out after the last launch).
pub fn run(code_object: &[u8], program: &HostProgram, arrays: &mut [crate::HostArray]) -> Result<(), HipError> {
    run_timed(code_object, program, arrays, 1).map(|_| ())
}

#[cfg(feature = "hip")]
pub use launcher::{device_count, run_timed};

#[cfg(feature = "hip")]
mod launcher {
    use super::{HipError, HostProgram, LaunchArg};
    use crate::HostArray;
    use hip_sys::hiprt::*;
    use std::ffi::{CStr, CString, c_void};

    fn check(call: &'static str, status: hipError_t) -> Result<(), HipError> {
        if status == hipError_t::hipSuccess {
            return Ok(());
        }
        // SAFETY: HIP returns a static NUL-terminated string for any status.
        let message = unsafe { CStr::from_ptr(hipGetErrorString(status)) }.to_string_lossy().into_owned();
        Err(HipError::Call { call, message })
    }

    /// AMD GPUs HIP sees (an error when the runtime finds none).
    pub fn device_count() -> Result<usize, HipError> {
        let mut count = 0;
        // SAFETY: hipInit takes flags only and may be called repeatedly.
        let status = unsafe { hipInit(0) };
        if status != hipError_t::hipSuccess {
            // SAFETY: a static string, as in `check`.
            let message = unsafe { CStr::from_ptr(hipGetErrorString(status)) }.to_string_lossy().into_owned();
            return Err(HipError::NoDevice(message));
        }
        // SAFETY: `count` is a live out-parameter.
        check("hipGetDeviceCount", unsafe { hipGetDeviceCount(&mut count) })
            .map_err(|e| HipError::NoDevice(e.to_string()))?;
        if count < 1 {
            return Err(HipError::NoDevice("hipGetDeviceCount found none".into()));
        }
        Ok(count as usize)
    }

    /// Device memory freed on drop.
    struct DeviceBuffer(*mut c_void);

    impl DeviceBuffer {
        fn new(bytes: usize) -> Result<Self, HipError> {
            let mut pointer = std::ptr::null_mut();
            // SAFETY: `pointer` is a live out-parameter.
            check("hipMalloc", unsafe { hipMalloc(&mut pointer, bytes.max(1)) })?;
            Ok(DeviceBuffer(pointer))
        }
    }

    impl Drop for DeviceBuffer {
        fn drop(&mut self) {
            // SAFETY: the buffer owns this allocation from hipMalloc.
            unsafe { hipFree(self.0) };
        }
    }

    /// Loads `code_object`, copies `arrays` in, runs `program` `repeats`
    /// times (the seconds each run's launches took, synchronized), copies
    /// the arrays back.
    pub fn run_timed(
        code_object: &[u8],
        program: &HostProgram,
        arrays: &mut [HostArray],
        repeats: usize,
    ) -> Result<Vec<f64>, HipError> {
        device_count()?;
        let mut module: hipModule_t = std::ptr::null_mut();
        // SAFETY: `code_object` is a live byte slice (HIP copies what it
        // needs); `module` is an out-parameter, unloaded below.
        check("hipModuleLoadData", unsafe { hipModuleLoadData(&mut module, code_object.as_ptr() as *const c_void) })?;
        let result = (|| {
            let mut buffers = Vec::new();
            for array in arrays.iter() {
                let buffer = DeviceBuffer::new(array.bytes().len())?;
                let bytes = array.bytes();
                // SAFETY: the device buffer was allocated with this length.
                check("hipMemcpy", unsafe {
                    hipMemcpy(
                        buffer.0,
                        bytes.as_ptr() as *const c_void,
                        bytes.len(),
                        hipMemcpyKind::hipMemcpyHostToDevice,
                    )
                })?;
                buffers.push(buffer);
            }
            // The flag kernels raise for blocks only checkable at run time
            // (grid-to-loops; a device global in the code object).
            let flag_name = CString::new(tessel_dialects::OUT_OF_BOUNDS_FLAG).expect("no NUL");
            let (mut flag, mut flag_bytes): (hipDeviceptr_t, usize) = (std::ptr::null_mut(), 0);
            // SAFETY: out-parameters and a NUL-terminated name; `module` is loaded.
            let has_flag = unsafe { hipModuleGetGlobal(&mut flag, &mut flag_bytes, module, flag_name.as_ptr()) }
                == hipError_t::hipSuccess;
            if has_flag {
                // SAFETY: the global is `flag_bytes` long, as HIP reported.
                check("hipMemset", unsafe { hipMemset(flag, 0, flag_bytes) })?;
            }
            let scratch: Vec<DeviceBuffer> =
                program.scratch.iter().map(|&bytes| DeviceBuffer::new(bytes)).collect::<Result<_, _>>()?;
            let mut times = Vec::new();
            for _ in 0..repeats.max(1) {
                let started = std::time::Instant::now();
                for launch in &program.launches {
                    let name = CString::new(launch.kernel.as_str()).expect("kernel names have no NUL");
                    let mut function: hipFunction_t = std::ptr::null_mut();
                    // SAFETY: an out-parameter, the loaded module, a NUL-terminated name.
                    check("hipModuleGetFunction", unsafe {
                        hipModuleGetFunction(&mut function, module, name.as_ptr())
                    })?;
                    // Kernel arguments: a bare pointer or an index, 8 bytes
                    // each, packed as the kernarg segment lays them out.
                    let mut pointers: Vec<u64> = launch
                        .args
                        .iter()
                        .map(|arg| match *arg {
                            LaunchArg::Array(index) => buffers[index].0 as u64,
                            LaunchArg::Scratch(index) => scratch[index].0 as u64,
                            LaunchArg::Index(value) => value as u64,
                        })
                        .collect();
                    let mut size = pointers.len() * 8;
                    // HIP_LAUNCH_PARAM_BUFFER_POINTER, _BUFFER_SIZE, _END:
                    // tags that HIP defines as the addresses 1, 2 and 3.
                    let tag = std::ptr::without_provenance_mut::<c_void>;
                    let mut extra = [
                        tag(1),
                        pointers.as_mut_ptr() as *mut c_void,
                        tag(2),
                        &mut size as *mut usize as *mut c_void,
                        tag(3),
                    ];
                    let [gx, gy, gz] = launch.grid;
                    let [bx, by, bz] = launch.workgroup;
                    // SAFETY: `extra` describes `pointers` (8 bytes per kernel
                    // argument, as the kernel's signature from grid-to-gpu
                    // takes them) and both outlive the call; every pointer in
                    // it is a live device buffer of this run.
                    check("hipModuleLaunchKernel", unsafe {
                        hipModuleLaunchKernel(
                            function,
                            gx,
                            gy,
                            gz,
                            bx,
                            by,
                            bz,
                            0,
                            std::ptr::null_mut(),
                            std::ptr::null_mut(),
                            extra.as_mut_ptr(),
                        )
                    })?;
                }
                // SAFETY: no arguments.
                check("hipDeviceSynchronize", unsafe { hipDeviceSynchronize() })?;
                times.push(started.elapsed().as_secs_f64());
            }
            if has_flag {
                let mut raised = 0i32;
                // SAFETY: the flag global is an i32 (4 bytes) on the device.
                check("hipMemcpy", unsafe {
                    hipMemcpy(&mut raised as *mut i32 as *mut c_void, flag, 4, hipMemcpyKind::hipMemcpyDeviceToHost)
                })?;
                if raised != 0 {
                    return Err(HipError::OutOfBounds);
                }
            }
            for (array, buffer) in arrays.iter_mut().zip(&buffers) {
                let bytes = array.bytes_mut();
                // SAFETY: host and device buffers have this same length.
                check("hipMemcpy", unsafe {
                    hipMemcpy(
                        bytes.as_mut_ptr() as *mut c_void,
                        buffer.0,
                        bytes.len(),
                        hipMemcpyKind::hipMemcpyDeviceToHost,
                    )
                })?;
            }
            Ok(times)
        })();
        // SAFETY: loaded above, unloaded once, after its last launch.
        unsafe { hipModuleUnload(module) };
        result
    }
}
