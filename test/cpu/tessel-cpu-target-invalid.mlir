// RUN: tessel-opt %s --verify-diagnostics --tessel-cpu-target

// expected-error @+1 {{tessel-cpu-target: tessel.num_threads must be positive and tessel.vector_bits 128, 256 or 512}}
module attributes {tessel.vector_bits = 384 : i64} {
  func.func @f() {
    return
  }
}
