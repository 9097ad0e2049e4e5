//! Host buffers (`.npy` in and out), CPU JIT and AOT loading, and the HIP
//! launcher. Empty until the CPU end-to-end work lands.
