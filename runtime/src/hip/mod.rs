//! Running ROCm code objects on an AMD GPU through HIP (`tessel run
//! --device hip`; cargo feature `hip`, which links libamdhip64).
//!
//! What the host does around the kernels is described by a [`HostProgram`]
//! (read off the lowered host function by [`host_program`]): steps,
//! in order, that allocate scratch buffers and launch kernels with their
//! grid, workgroup size and arguments, and, for grids sized by values,
//! read integers of the arrays from the device, compute with them in
//! registers and loop. The launcher copies the arrays to the device, runs
//! the steps and copies every array back.

mod host_walk;
pub use host_walk::host_program;

/// An integer of the host code: a constant, or a register the program
/// sets while it runs (grids sized by values read from an array).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostValue {
    Constant(i64),
    Register(usize),
}

/// A kernel argument: one of the entry function's arrays, a scratch
/// buffer of the program, or an index (the step of an ordered grid axis
/// the host loops over).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LaunchArg {
    Array(usize),
    Scratch(usize),
    Index(HostValue),
}

/// One `gpu.launch_func`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launch {
    /// The kernel's symbol in the code object.
    pub kernel: String,
    pub grid: [HostValue; 3],
    pub workgroup: [u32; 3],
    /// Bare device pointers, in order (the kernels' calling convention).
    pub args: Vec<LaunchArg>,
}

/// One step of the host code, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostStep {
    /// Allocates scratch buffer `scratch` (numbered in order) of `bytes`.
    Alloc {
        scratch: usize,
        bytes: HostValue,
    },
    /// Sets `register` to integer element `offset` of entry array `array`
    /// (`bytes` wide, sign-extended) as the device holds it then.
    Load {
        register: usize,
        array: usize,
        offset: HostValue,
        bytes: usize,
    },
    /// Sets `register` to the `arith` op `op` of `lhs` and `rhs` (casts
    /// take `lhs` only), on 64-bit integers.
    Arith {
        register: usize,
        op: String,
        lhs: HostValue,
        rhs: HostValue,
    },
    /// Runs `body` for `register` from `lower` while below `upper`, by `step`
    /// (a host loop whose bounds are known only at run time; loops with
    /// constant bounds are unrolled into their steps).
    Loop {
        register: usize,
        lower: HostValue,
        upper: HostValue,
        step: HostValue,
        body: Vec<HostStep>,
    },
    Launch(Launch),
}

/// The host side of an entry function.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostProgram {
    pub steps: Vec<HostStep>,
    /// Registers the steps use.
    pub registers: usize,
}

impl HostProgram {
    /// The launches outside run-time loops, in order.
    pub fn launches(&self) -> Vec<&Launch> {
        self.steps
            .iter()
            .filter_map(|step| if let HostStep::Launch(launch) = step { Some(launch) } else { None })
            .collect()
    }

    /// The scratch buffers' sizes, where constant.
    pub fn scratch(&self) -> Vec<Option<usize>> {
        self.steps
            .iter()
            .filter_map(|step| match step {
                HostStep::Alloc { bytes: HostValue::Constant(bytes), .. } => Some(Some(*bytes as usize)),
                HostStep::Alloc { .. } => Some(None),
                _ => None,
            })
            .collect()
    }
}

/// The integer `arith` ops host code computes grid sizes, offsets and
/// loop bounds with.
const HOST_ARITH: [&str; 15] = [
    "arith.index_cast",
    "arith.index_castui",
    "arith.extsi",
    "arith.extui",
    "arith.addi",
    "arith.subi",
    "arith.muli",
    "arith.divsi",
    "arith.remsi",
    "arith.divui",
    "arith.remui",
    "arith.ceildivsi",
    "arith.floordivsi",
    "arith.maxsi",
    "arith.minsi",
];

/// Whether the launcher evaluates `op` (an `arith` op's name) on the host.
pub fn is_host_arith(op: &str) -> bool {
    HOST_ARITH.contains(&op)
}

/// The value of `op` on 64-bit integers (casts read `lhs` only), as the
/// reference interpreter evaluates it; `None` for an op the launcher does
/// not evaluate, or a division by zero.
pub fn host_arith(op: &str, lhs: i64, rhs: i64) -> Option<i64> {
    use crate::interpret::{Num, evaluate};
    let index = crate::ElementType::Index;
    is_host_arith(op).then(|| evaluate(op, index, index, 0, &[Num::I(lhs), Num::I(rhs)]).ok().map(Num::i))?
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
    #[error("host code: {0}")]
    Host(String),
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
    use super::{HipError, HostProgram, HostStep, HostValue, Launch, LaunchArg};
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

    /// Device memory (and its length in bytes) freed on drop.
    struct DeviceBuffer(*mut c_void, usize);

    impl DeviceBuffer {
        fn new(bytes: usize) -> Result<Self, HipError> {
            let mut pointer = std::ptr::null_mut();
            // SAFETY: `pointer` is a live out-parameter.
            check("hipMalloc", unsafe { hipMalloc(&mut pointer, bytes.max(1)) })?;
            Ok(DeviceBuffer(pointer, bytes))
        }
    }

    /// One run of a host program: its scratch buffers and registers.
    struct Run<'a> {
        module: hipModule_t,
        buffers: &'a [DeviceBuffer],
        scratch: Vec<DeviceBuffer>,
        registers: Vec<i64>,
    }

    impl Run<'_> {
        fn value(&self, value: HostValue) -> i64 {
            match value {
                HostValue::Constant(constant) => constant,
                HostValue::Register(register) => self.registers[register],
            }
        }

        fn steps(&mut self, steps: &[HostStep]) -> Result<(), HipError> {
            for step in steps {
                match step {
                    HostStep::Alloc { scratch, bytes } => {
                        let bytes = usize::try_from(self.value(*bytes)).unwrap_or(0);
                        let buffer = DeviceBuffer::new(bytes)?;
                        if *scratch < self.scratch.len() {
                            self.scratch[*scratch] = buffer;
                        } else {
                            self.scratch.push(buffer);
                        }
                    }
                    HostStep::Load { register, array, offset, bytes } => {
                        let buffer = &self.buffers[*array];
                        let at =
                            usize::try_from(self.value(*offset)).ok().and_then(|offset| offset.checked_mul(*bytes));
                        let Some(at) = at.filter(|&at| at + bytes <= buffer.1) else {
                            return Err(HipError::Host(format!(
                                "the host reads element {} of argument #{array}, outside it",
                                self.value(*offset)
                            )));
                        };
                        let mut raw = [0u8; 8];
                        // SAFETY: `at + bytes` is within the device buffer
                        // (checked above), `raw` holds at most 8 bytes and
                        // `bytes` is at most 8 (an integer element). The copy
                        // waits for the launches before it (null stream).
                        check("hipMemcpy", unsafe {
                            hipMemcpy(
                                raw.as_mut_ptr() as *mut c_void,
                                (buffer.0 as *const u8).add(at) as *const c_void,
                                (*bytes).min(8),
                                hipMemcpyKind::hipMemcpyDeviceToHost,
                            )
                        })?;
                        self.registers[*register] = match bytes {
                            1 => raw[0] as i8 as i64,
                            2 => i16::from_le_bytes([raw[0], raw[1]]) as i64,
                            4 => i32::from_le_bytes([raw[0], raw[1], raw[2], raw[3]]) as i64,
                            _ => i64::from_le_bytes(raw),
                        };
                    }
                    HostStep::Arith { register, op, lhs, rhs } => {
                        let (lhs, rhs) = (self.value(*lhs), self.value(*rhs));
                        self.registers[*register] = super::host_arith(op, lhs, rhs)
                            .ok_or_else(|| HipError::Host(format!("'{op}' of {lhs} and {rhs} failed")))?;
                    }
                    HostStep::Loop { register, lower, upper, step, body } => {
                        let (mut at, upper, step) = (self.value(*lower), self.value(*upper), self.value(*step));
                        if step <= 0 {
                            return Err(HipError::Host(format!("a host loop's step is {step}")));
                        }
                        while at < upper {
                            self.registers[*register] = at;
                            self.steps(body)?;
                            at += step;
                        }
                    }
                    HostStep::Launch(launch) => self.launch(launch)?,
                }
            }
            Ok(())
        }

        fn launch(&self, launch: &Launch) -> Result<(), HipError> {
            let grid = launch.grid.map(|size| self.value(size));
            if grid.contains(&0) || grid.iter().any(|&size| size < 0) {
                // No program (a size given as a value may be 0; negative
                // ones run none, as on the CPU).
                return Ok(());
            }
            let [gx, gy, gz] = grid.map(|size| u32::try_from(size).unwrap_or(u32::MAX));
            let name = CString::new(launch.kernel.as_str()).expect("kernel names have no NUL");
            let mut function: hipFunction_t = std::ptr::null_mut();
            // SAFETY: an out-parameter, the loaded module, a NUL-terminated name.
            check("hipModuleGetFunction", unsafe { hipModuleGetFunction(&mut function, self.module, name.as_ptr()) })?;
            // Kernel arguments: a bare pointer or an index, 8 bytes
            // each, packed as the kernarg segment lays them out.
            let mut pointers: Vec<u64> = launch
                .args
                .iter()
                .map(|arg| match *arg {
                    LaunchArg::Array(index) => self.buffers[index].0 as u64,
                    LaunchArg::Scratch(index) => self.scratch[index].0 as u64,
                    LaunchArg::Index(value) => self.value(value) as u64,
                })
                .collect();
            let mut size = pointers.len() * 8;
            // HIP_LAUNCH_PARAM_BUFFER_POINTER, _BUFFER_SIZE, _END:
            // tags that HIP defines as the addresses 1, 2 and 3.
            let tag = std::ptr::without_provenance_mut::<c_void>;
            let mut extra =
                [tag(1), pointers.as_mut_ptr() as *mut c_void, tag(2), &mut size as *mut usize as *mut c_void, tag(3)];
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
            })
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
            let mut times = Vec::new();
            for _ in 0..repeats.max(1) {
                let started = std::time::Instant::now();
                let mut run =
                    Run { module, buffers: &buffers, scratch: Vec::new(), registers: vec![0; program.registers] };
                run.steps(&program.steps)?;
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

#[cfg(test)]
mod tests {
    use super::host_arith;

    #[test]
    fn host_arithmetic_is_the_interpreters() {
        assert_eq!(host_arith("arith.ceildivsi", 7, 2), Some(4));
        assert_eq!(host_arith("arith.floordivsi", -7, 2), Some(-4));
        assert_eq!(host_arith("arith.remsi", -7, 2), Some(-1));
        assert_eq!(host_arith("arith.maxsi", -3, 0), Some(0));
        assert_eq!(host_arith("arith.index_cast", 5, 0), Some(5));
        assert_eq!(host_arith("arith.divsi", 1, 0), None);
        assert_eq!(host_arith("arith.addf", 1, 2), None);
    }
}
