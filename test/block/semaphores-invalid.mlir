// What the semaphore and DMA ops and semaphore scratch reject.
// RUN: tessel-opt %s --split-input-file --verify-diagnostics

func.func @f(%s: memref<2xi32>, %n: i32) {
  // expected-error @+1 {{'block.semaphore_signal' op expected 1 semaphore indices (one per dimension of 'memref<2xi32>'), got 0}}
  block.semaphore_signal %s, %n : memref<2xi32>
  return
}

// -----

func.func @f(%s: memref<2xf32>, %i: index) {
  // expected-error @+1 {{'block.semaphore_read' op operand #0 must be memref of 32-bit signless integer values}}
  %n = block.semaphore_read %s[%i] : memref<2xf32>
  return
}

// -----

func.func @f(%a: memref<4x8xf32>, %b: memref<8x4xf32>, %s: memref<i32>) {
  // expected-error @+1 {{'block.dma_start' op the source window 4x8 and the destination window 8x4 differ beyond their unit dimensions}}
  block.dma_start %a, %b, %s : memref<4x8xf32>, memref<8x4xf32>, memref<i32>
  return
}

// -----

func.func @f(%a: memref<4x8xf32>, %b: memref<4x8xi32>, %s: memref<i32>) {
  // expected-error @+1 {{'block.dma_start' op copies 'f32' elements into 'i32' ones}}
  block.dma_start %a, %b, %s : memref<4x8xf32>, memref<4x8xi32>, memref<i32>
  return
}

// -----

func.func @f(%a: memref<4x8xf32>, %b: memref<2x8xf32>, %s: memref<i32>, %i: index) {
  // expected-error @+1 {{'block.dma_start' op the source window's size 9 in dimension 1 is outside [1, 8]}}
  block.dma_start %a[%i, %i] [2, 9], %b, %s : memref<4x8xf32>, memref<2x8xf32>, memref<i32>
  return
}

// -----

func.func @k(%x: memref<4xf32>, %s: memref<2xf32>) {
  return
}
func.func @f(%x: memref<4xf32>) {
  // expected-error @+1 {{'grid.call' op semaphore scratch #0 must hold i32 counters, got 'memref<2xf32>'}}
  grid.call @k grid [] ins(%x : memref<4xf32>) outs() scratch(semaphore memref<2xf32>)
      in_specs [#grid.block<full>] out_specs []
  return
}

// -----

func.func @k(%o: memref<4xf32>, %s: memref<i32>) {
  return
}
func.func @f(%o: memref<4xf32>) {
  // expected-error @+1 {{'grid.call' op shared names scratch #0, which is not a scratch buffer, is named twice or is a semaphore (each core has its own)}}
  grid.call @k grid [2] cores ins() outs(%o : memref<4xf32>) scratch(semaphore memref<i32>)
      in_specs [] out_specs [#grid.block<full>] {shared = array<i64: 0>}
  return
}

// -----

func.func @k(%o: memref<4xf32>) {
  return
}
func.func @f(%o: memref<4xf32>) {
  // expected-error @+1 {{'grid.call' op a core mesh (`cores`) needs a leading grid axis of 1 to 64 cores}}
  grid.call @k grid [65] cores ins() outs(%o : memref<4xf32>) in_specs [] out_specs [#grid.block<full>]
  return
}

// -----

func.func @k(%o: memref<4xf32>) {
  return
}
func.func @f(%o: memref<4xf32>, %n: index) {
  // expected-error @+1 {{'grid.call' op a core mesh (`cores`) needs a leading grid axis of 1 to 64 cores}}
  grid.call @k grid [%n] cores ins() outs(%o : memref<4xf32>) in_specs [] out_specs [#grid.block<full>]
  return
}

// -----

func.func @k(%o: memref<4xf32>) {
  return
}
func.func @f(%o: memref<4xf32>) {
  // expected-error @+1 {{'grid.call' op the core axis (the leading one) runs its cores at once: its semantics must be parallel}}
  grid.call @k grid [2] cores ins() outs(%o : memref<4xf32>) in_specs [] out_specs [#grid.block<full>]
      semantics [arbitrary]
  return
}
