// block.print (pl.debug_print): a format with a `{}` per value, or none
// (the values follow it), scalars of every kind and tensors, an optional
// site.
// RUN: tessel-opt %s | FileCheck %s
// RUN: tessel-opt %s > %t.1 && tessel-opt %t.1 > %t.2 && diff %t.1 %t.2

// CHECK-LABEL: func.func @kernel
func.func @kernel(%x: f32, %i: index, %n: i32, %b: i1, %h: bf16, %t: tensor<8x128xf32>, %m: tensor<4xi1>) {
  // CHECK: block.print "It works!"
  block.print "It works!"
  // CHECK: block.print "x = {}, program {}" %{{.*}}, %{{.*}} : f32, index
  block.print "x = {}, program {}" %x, %i : f32, index
  // CHECK: block.print "values" %{{.*}}, %{{.*}}, %{{.*}} : i32, i1, bf16 {tessel.print_site = 3 : i64}
  block.print "values" %n, %b, %h : i32, i1, bf16 {tessel.print_site = 3 : i64}
  // CHECK: block.print "{{[{][{]}}braces{{[}][}]}} {}" %{{.*}} : i32
  block.print "{{braces}} {}" %n : i32
  // CHECK: block.print "rows {} mask {}" %{{.*}}, %{{.*}} : tensor<8x128xf32>, tensor<4xi1>
  block.print "rows {} mask {}" %t, %m : tensor<8x128xf32>, tensor<4xi1>
  return
}
