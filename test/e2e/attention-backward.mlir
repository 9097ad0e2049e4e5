// The backward kernel of JAX's causal `attention.mha` (jax 0.10.2,
// `jax.experimental.pallas.ops.gpu.attention`, block sizes 64/32), as
// tessel.jax translates it: two fori loops over key and query blocks, six
// dots, their element-wise consumers (scales, `acc + dot` into loop-carried
// accumulators, masks). Regression: applying MLIR's
// erase_unnecessary_inputs patterns to every generic of such a kernel
// (so that `acc + dot` read `acc` through its destination) made dq, dk
// and dv wrong (the causal mask's `row + iota` then read its destination,
// which element-wise fusion mishandles); the epilogue rewrite now touches
// only the fused consumer.
// RUN: tessel run %s --entry mha_backward --arg 0=random:1 --arg 1=random:2 --arg 2=random:3 --arg 3=random:4 --arg 4=random:5 --arg 5=random:6 --arg 6=random:7 --check | FileCheck %s
// RUN: tessel run %s --entry mha_backward --cpu x86-64-v3 --arg 0=random:1 --arg 1=random:2 --arg 2=random:3 --arg 3=random:4 --arg 4=random:5 --arg 5=random:6 --arg 6=random:7 --check | FileCheck %s
// CHECK: check: compiled code matches the interpreter
// (exp2 comes from the C library, whose last digits may differ between hosts.)
// SNAPSHOT-FILTER: \s*-?[0-9]+\.[0-9]+(e[-+]?[0-9]+)?\s* =>  <float>

module {
  func.func private @mha_backward_kernel(%r0: memref<128x32xf32>, %r1: memref<128x32xf32>, %r2: memref<128x32xf32>, %r3: memref<128x32xf32>, %r4: memref<128x32xf32>, %r5: memref<128xf32>, %r6: memref<128xf32>, %r7: memref<64x32xf32>, %r8: memref<64x32xf32>, %r9: memref<64x32xf32>) {
  %v1 = grid.program_id 2
  %v2 = arith.index_cast %v1 : index to i32
  %v3 = arith.constant 64 : i32
  %v4 = arith.muli %v2, %v3 : i32
  %v5 = arith.constant 0.00000000000000000e+00 : f32
  %v6 = tensor.splat %v5 : tensor<1x1xf32>
  %v7 = tensor.collapse_shape %v6 [[0, 1]] : tensor<1x1xf32> into tensor<1xf32>
  %v8 = arith.constant 0 : index
  %v9 = tensor.extract %v7[%v8] : tensor<1xf32>
  %v10 = tensor.splat %v9 : tensor<64x32xf32>
  %v11 = arith.constant 0.00000000000000000e+00 : f32
  %v12 = tensor.splat %v11 : tensor<1x1xf32>
  %v13 = tensor.collapse_shape %v12 [[0, 1]] : tensor<1x1xf32> into tensor<1xf32>
  %v14 = arith.constant 0 : index
  %v15 = tensor.extract %v13[%v14] : tensor<1xf32>
  %v16 = tensor.splat %v15 : tensor<64x32xf32>
  %v17 = block.iota dim 0 : tensor<32xi32>
  %v18 = arith.constant 32 : i32
  %v19 = tensor.splat %v18 : tensor<32xi32>
  %v20 = arith.cmpi slt, %v17, %v19 : tensor<32xi32>
  %v21 = tensor.expand_shape %v20 [[0, 1]] output_shape [1, 32] : tensor<32xi1> into tensor<1x32xi1>
  %v22 = arith.index_cast %v4 : i32 to index
  %v23 = arith.constant 0 : index
  %v24 = arith.constant 0.00000000000000000e+00 : f32
  %v25 = tensor.collapse_shape %v21 [[0, 1]] : tensor<1x32xi1> into tensor<32xi1>
  %v26 = block.broadcast %v25 dims [0] : tensor<32xi1> -> tensor<64x32xi1>
  %v27 = block.load %r2[%v22, %v23] [64, 32] mask %v26 other %v24 : memref<128x32xf32> -> tensor<64x32xf32>
  %v28 = arith.index_cast %v4 : i32 to index
  %v29 = arith.constant 0 : index
  %v30 = arith.constant 0.00000000000000000e+00 : f32
  %v31 = tensor.collapse_shape %v21 [[0, 1]] : tensor<1x32xi1> into tensor<32xi1>
  %v32 = block.broadcast %v31 dims [0] : tensor<32xi1> -> tensor<64x32xi1>
  %v33 = block.load %r1[%v28, %v29] [64, 32] mask %v32 other %v30 : memref<128x32xf32> -> tensor<64x32xf32>
  %v34 = arith.constant 64 : i32
  %v35 = arith.muli %v2, %v34 : i32
  %v36 = block.iota dim 0 : tensor<64xi32>
  %v37 = tensor.splat %v35 : tensor<64xi32>
  %v38 = arith.addi %v37, %v36 : tensor<64xi32>
  %v39 = arith.constant 64 : i32
  %v40 = arith.muli %v2, %v39 : i32
  %v41 = arith.constant 32 : i32
  %v42 = arith.divsi %v40, %v41 : i32
  %v43 = arith.constant 4 : i32
  %v44, %v45, %v46, %v47 = scf.while (%v48 = %v42, %v49 = %v43, %v50 = %v10, %v51 = %v16) : (i32, i32, tensor<64x32xf32>, tensor<64x32xf32>) -> (i32, i32, tensor<64x32xf32>, tensor<64x32xf32>) {
    %v56 = arith.cmpi slt, %v48, %v49 : i32
    scf.condition(%v56) %v48, %v49, %v50, %v51 : i32, i32, tensor<64x32xf32>, tensor<64x32xf32>
  } do {
    ^bb0(%v52: i32, %v53: i32, %v54: tensor<64x32xf32>, %v55: tensor<64x32xf32>):
    %v57 = arith.constant 1 : i32
    %v58 = arith.addi %v52, %v57 : i32
    %v59 = arith.constant 32 : i32
    %v60 = arith.muli %v52, %v59 : i32
    %v61 = arith.index_cast %v60 : i32 to index
    %v62 = arith.constant 0 : index
    %v63 = arith.constant 0.00000000000000000e+00 : f32
    %v64 = tensor.collapse_shape %v21 [[0, 1]] : tensor<1x32xi1> into tensor<32xi1>
    %v65 = block.broadcast %v64 dims [0] : tensor<32xi1> -> tensor<32x32xi1>
    %v66 = block.load %r0[%v61, %v62] [32, 32] mask %v65 other %v63 : memref<128x32xf32> -> tensor<32x32xf32>
    %v67 = tensor.empty() : tensor<32x64xf32>
    %v68 = linalg.transpose ins(%v33 : tensor<64x32xf32>) outs(%v67 : tensor<32x64xf32>) permutation = [1, 0]
    %v69 = tensor.collapse_shape %v66 [[0, 1]] : tensor<32x32xf32> into tensor<1024xf32>
    %v70 = tensor.expand_shape %v69 [[0, 1, 2]] output_shape [1, 32, 32] : tensor<1024xf32> into tensor<1x32x32xf32>
    %v71 = tensor.collapse_shape %v68 [[0, 1]] : tensor<32x64xf32> into tensor<2048xf32>
    %v72 = tensor.expand_shape %v71 [[0, 1, 2]] output_shape [1, 32, 64] : tensor<2048xf32> into tensor<1x32x64xf32>
    %v73 = tensor.extract_slice %v70[0, 0, 0] [1, 32, 32] [1, 1, 1] : tensor<1x32x32xf32> to tensor<1x32x32xf32>
    %v74 = tensor.collapse_shape %v73 [[0, 1, 2]] : tensor<1x32x32xf32> into tensor<1024xf32>
    %v75 = tensor.expand_shape %v74 [[0, 1]] output_shape [32, 32] : tensor<1024xf32> into tensor<32x32xf32>
    %v76 = tensor.extract_slice %v72[0, 0, 0] [1, 32, 64] [1, 1, 1] : tensor<1x32x64xf32> to tensor<1x32x64xf32>
    %v77 = tensor.collapse_shape %v76 [[0, 1, 2]] : tensor<1x32x64xf32> into tensor<2048xf32>
    %v78 = tensor.expand_shape %v77 [[0, 1]] output_shape [32, 64] : tensor<2048xf32> into tensor<32x64xf32>
    %v79 = block.dot %v75, %v78 : tensor<32x32xf32>, tensor<32x64xf32> -> tensor<32x64xf32>
    %v80 = tensor.collapse_shape %v79 [[0, 1]] : tensor<32x64xf32> into tensor<2048xf32>
    %v81 = tensor.expand_shape %v80 [[0, 1, 2]] output_shape [1, 32, 64] : tensor<2048xf32> into tensor<1x32x64xf32>
    %v82 = tensor.collapse_shape %v81 [[0, 1, 2]] : tensor<1x32x64xf32> into tensor<2048xf32>
    %v83 = tensor.expand_shape %v82 [[0, 1]] output_shape [32, 64] : tensor<2048xf32> into tensor<32x64xf32>
    %v84 = arith.constant 1.44269502162933350e+00 : f32
    %v85 = tensor.splat %v84 : tensor<32x64xf32>
    %v86 = arith.mulf %v83, %v85 : tensor<32x64xf32>
    %v87 = arith.constant 32 : i32
    %v88 = arith.muli %v52, %v87 : i32
    %v89 = block.iota dim 0 : tensor<32xi32>
    %v90 = tensor.splat %v88 : tensor<32xi32>
    %v91 = arith.addi %v90, %v89 : tensor<32xi32>
    %v92 = tensor.expand_shape %v91 [[0, 1]] output_shape [32, 1] : tensor<32xi32> into tensor<32x1xi32>
    %v93 = tensor.expand_shape %v38 [[0, 1]] output_shape [1, 64] : tensor<64xi32> into tensor<1x64xi32>
    %v94 = tensor.collapse_shape %v92 [[0, 1]] : tensor<32x1xi32> into tensor<32xi32>
    %v95 = block.broadcast %v94 dims [1] : tensor<32xi32> -> tensor<32x64xi32>
    %v96 = tensor.collapse_shape %v93 [[0, 1]] : tensor<1x64xi32> into tensor<64xi32>
    %v97 = block.broadcast %v96 dims [0] : tensor<64xi32> -> tensor<32x64xi32>
    %v98 = arith.cmpi sge, %v95, %v97 : tensor<32x64xi32>
    %v99 = arith.constant -2.38197632505765400e+38 : f32
    %v100 = tensor.splat %v99 : tensor<1x1xf32>
    %v101 = tensor.collapse_shape %v100 [[0, 1]] : tensor<1x1xf32> into tensor<1xf32>
    %v102 = arith.constant 0 : index
    %v103 = tensor.extract %v101[%v102] : tensor<1xf32>
    %v104 = tensor.splat %v103 : tensor<32x64xf32>
    %v105 = arith.select %v98, %v86, %v104 : tensor<32x64xi1>, tensor<32x64xf32>
    %v106 = arith.index_cast %v60 : i32 to index
    %v107 = block.load %r5[%v106] [32] : memref<128xf32> -> tensor<32xf32>
    %v108 = arith.index_cast %v60 : i32 to index
    %v109 = block.load %r6[%v108] [32] : memref<128xf32> -> tensor<32xf32>
    %v110 = arith.index_cast %v60 : i32 to index
    %v111 = arith.constant 0 : index
    %v112 = arith.constant 0.00000000000000000e+00 : f32
    %v113 = tensor.collapse_shape %v21 [[0, 1]] : tensor<1x32xi1> into tensor<32xi1>
    %v114 = block.broadcast %v113 dims [0] : tensor<32xi1> -> tensor<32x32xi1>
    %v115 = block.load %r4[%v110, %v111] [32, 32] mask %v114 other %v112 : memref<128x32xf32> -> tensor<32x32xf32>
    %v116 = tensor.expand_shape %v107 [[0, 1]] output_shape [32, 1] : tensor<32xf32> into tensor<32x1xf32>
    %v117 = tensor.collapse_shape %v116 [[0, 1]] : tensor<32x1xf32> into tensor<32xf32>
    %v118 = block.broadcast %v117 dims [1] : tensor<32xf32> -> tensor<32x64xf32>
    %v119 = arith.subf %v105, %v118 : tensor<32x64xf32>
    %v120 = math.exp2 %v119 : tensor<32x64xf32>
    %v121 = tensor.empty() : tensor<64x32xf32>
    %v122 = linalg.transpose ins(%v120 : tensor<32x64xf32>) outs(%v121 : tensor<64x32xf32>) permutation = [1, 0]
    %v123 = tensor.collapse_shape %v122 [[0, 1]] : tensor<64x32xf32> into tensor<2048xf32>
    %v124 = tensor.expand_shape %v123 [[0, 1, 2]] output_shape [1, 64, 32] : tensor<2048xf32> into tensor<1x64x32xf32>
    %v125 = tensor.collapse_shape %v115 [[0, 1]] : tensor<32x32xf32> into tensor<1024xf32>
    %v126 = tensor.expand_shape %v125 [[0, 1, 2]] output_shape [1, 32, 32] : tensor<1024xf32> into tensor<1x32x32xf32>
    %v127 = tensor.extract_slice %v124[0, 0, 0] [1, 64, 32] [1, 1, 1] : tensor<1x64x32xf32> to tensor<1x64x32xf32>
    %v128 = tensor.collapse_shape %v127 [[0, 1, 2]] : tensor<1x64x32xf32> into tensor<2048xf32>
    %v129 = tensor.expand_shape %v128 [[0, 1]] output_shape [64, 32] : tensor<2048xf32> into tensor<64x32xf32>
    %v130 = tensor.extract_slice %v126[0, 0, 0] [1, 32, 32] [1, 1, 1] : tensor<1x32x32xf32> to tensor<1x32x32xf32>
    %v131 = tensor.collapse_shape %v130 [[0, 1, 2]] : tensor<1x32x32xf32> into tensor<1024xf32>
    %v132 = tensor.expand_shape %v131 [[0, 1]] output_shape [32, 32] : tensor<1024xf32> into tensor<32x32xf32>
    %v133 = block.dot %v129, %v132 : tensor<64x32xf32>, tensor<32x32xf32> -> tensor<64x32xf32>
    %v134 = tensor.collapse_shape %v133 [[0, 1]] : tensor<64x32xf32> into tensor<2048xf32>
    %v135 = tensor.expand_shape %v134 [[0, 1, 2]] output_shape [1, 64, 32] : tensor<2048xf32> into tensor<1x64x32xf32>
    %v136 = tensor.collapse_shape %v135 [[0, 1, 2]] : tensor<1x64x32xf32> into tensor<2048xf32>
    %v137 = tensor.expand_shape %v136 [[0, 1]] output_shape [64, 32] : tensor<2048xf32> into tensor<64x32xf32>
    %v138 = arith.addf %v54, %v137 : tensor<64x32xf32>
    %v139 = arith.constant 0.00000000000000000e+00 : f32
    %v140 = tensor.splat %v139 : tensor<1x1xf32>
    %v141 = tensor.collapse_shape %v140 [[0, 1]] : tensor<1x1xf32> into tensor<1xf32>
    %v142 = arith.constant 0 : index
    %v143 = tensor.extract %v141[%v142] : tensor<1xf32>
    %v144 = tensor.splat %v143 : tensor<32x64xf32>
    %v145 = tensor.expand_shape %v109 [[0, 1]] output_shape [32, 1] : tensor<32xf32> into tensor<32x1xf32>
    %v146 = tensor.collapse_shape %v145 [[0, 1]] : tensor<32x1xf32> into tensor<32xf32>
    %v147 = block.broadcast %v146 dims [1] : tensor<32xf32> -> tensor<32x64xf32>
    %v148 = arith.subf %v144, %v147 : tensor<32x64xf32>
    %v149 = tensor.empty() : tensor<32x64xf32>
    %v150 = linalg.transpose ins(%v27 : tensor<64x32xf32>) outs(%v149 : tensor<32x64xf32>) permutation = [1, 0]
    %v151 = tensor.collapse_shape %v115 [[0, 1]] : tensor<32x32xf32> into tensor<1024xf32>
    %v152 = tensor.expand_shape %v151 [[0, 1, 2]] output_shape [1, 32, 32] : tensor<1024xf32> into tensor<1x32x32xf32>
    %v153 = tensor.collapse_shape %v150 [[0, 1]] : tensor<32x64xf32> into tensor<2048xf32>
    %v154 = tensor.expand_shape %v153 [[0, 1, 2]] output_shape [1, 32, 64] : tensor<2048xf32> into tensor<1x32x64xf32>
    %v155 = tensor.extract_slice %v152[0, 0, 0] [1, 32, 32] [1, 1, 1] : tensor<1x32x32xf32> to tensor<1x32x32xf32>
    %v156 = tensor.collapse_shape %v155 [[0, 1, 2]] : tensor<1x32x32xf32> into tensor<1024xf32>
    %v157 = tensor.expand_shape %v156 [[0, 1]] output_shape [32, 32] : tensor<1024xf32> into tensor<32x32xf32>
    %v158 = tensor.extract_slice %v154[0, 0, 0] [1, 32, 64] [1, 1, 1] : tensor<1x32x64xf32> to tensor<1x32x64xf32>
    %v159 = tensor.collapse_shape %v158 [[0, 1, 2]] : tensor<1x32x64xf32> into tensor<2048xf32>
    %v160 = tensor.expand_shape %v159 [[0, 1]] output_shape [32, 64] : tensor<2048xf32> into tensor<32x64xf32>
    %v161 = block.dot %v157, %v160 : tensor<32x32xf32>, tensor<32x64xf32> -> tensor<32x64xf32>
    %v162 = tensor.collapse_shape %v161 [[0, 1]] : tensor<32x64xf32> into tensor<2048xf32>
    %v163 = tensor.expand_shape %v162 [[0, 1, 2]] output_shape [1, 32, 64] : tensor<2048xf32> into tensor<1x32x64xf32>
    %v164 = tensor.collapse_shape %v163 [[0, 1, 2]] : tensor<1x32x64xf32> into tensor<2048xf32>
    %v165 = tensor.expand_shape %v164 [[0, 1]] output_shape [32, 64] : tensor<2048xf32> into tensor<32x64xf32>
    %v166 = arith.addf %v148, %v165 : tensor<32x64xf32>
    %v167 = arith.mulf %v120, %v166 : tensor<32x64xf32>
    %v168 = tensor.empty() : tensor<64x32xf32>
    %v169 = linalg.transpose ins(%v167 : tensor<32x64xf32>) outs(%v168 : tensor<64x32xf32>) permutation = [1, 0]
    %v170 = tensor.collapse_shape %v169 [[0, 1]] : tensor<64x32xf32> into tensor<2048xf32>
    %v171 = tensor.expand_shape %v170 [[0, 1, 2]] output_shape [1, 64, 32] : tensor<2048xf32> into tensor<1x64x32xf32>
    %v172 = tensor.collapse_shape %v66 [[0, 1]] : tensor<32x32xf32> into tensor<1024xf32>
    %v173 = tensor.expand_shape %v172 [[0, 1, 2]] output_shape [1, 32, 32] : tensor<1024xf32> into tensor<1x32x32xf32>
    %v174 = tensor.extract_slice %v171[0, 0, 0] [1, 64, 32] [1, 1, 1] : tensor<1x64x32xf32> to tensor<1x64x32xf32>
    %v175 = tensor.collapse_shape %v174 [[0, 1, 2]] : tensor<1x64x32xf32> into tensor<2048xf32>
    %v176 = tensor.expand_shape %v175 [[0, 1]] output_shape [64, 32] : tensor<2048xf32> into tensor<64x32xf32>
    %v177 = tensor.extract_slice %v173[0, 0, 0] [1, 32, 32] [1, 1, 1] : tensor<1x32x32xf32> to tensor<1x32x32xf32>
    %v178 = tensor.collapse_shape %v177 [[0, 1, 2]] : tensor<1x32x32xf32> into tensor<1024xf32>
    %v179 = tensor.expand_shape %v178 [[0, 1]] output_shape [32, 32] : tensor<1024xf32> into tensor<32x32xf32>
    %v180 = block.dot %v176, %v179 : tensor<64x32xf32>, tensor<32x32xf32> -> tensor<64x32xf32>
    %v181 = tensor.collapse_shape %v180 [[0, 1]] : tensor<64x32xf32> into tensor<2048xf32>
    %v182 = tensor.expand_shape %v181 [[0, 1, 2]] output_shape [1, 64, 32] : tensor<2048xf32> into tensor<1x64x32xf32>
    %v183 = tensor.collapse_shape %v182 [[0, 1, 2]] : tensor<1x64x32xf32> into tensor<2048xf32>
    %v184 = tensor.expand_shape %v183 [[0, 1]] output_shape [64, 32] : tensor<2048xf32> into tensor<64x32xf32>
    %v185 = arith.addf %v55, %v184 : tensor<64x32xf32>
    scf.yield %v58, %v53, %v138, %v185 : i32, i32, tensor<64x32xf32>, tensor<64x32xf32>
  }
  %v186 = arith.constant 0 : index
  %v187 = arith.constant 0 : index
  %v188 = tensor.collapse_shape %v21 [[0, 1]] : tensor<1x32xi1> into tensor<32xi1>
  %v189 = block.broadcast %v188 dims [0] : tensor<32xi1> -> tensor<64x32xi1>
  block.store %v46, %r9 mask %v189 : tensor<64x32xf32>, memref<64x32xf32>
  %v190 = arith.constant 0 : index
  %v191 = arith.constant 0 : index
  %v192 = tensor.collapse_shape %v21 [[0, 1]] : tensor<1x32xi1> into tensor<32xi1>
  %v193 = block.broadcast %v192 dims [0] : tensor<32xi1> -> tensor<64x32xi1>
  block.store %v47, %r8 mask %v193 : tensor<64x32xf32>, memref<64x32xf32>
  %v194 = grid.program_id 2
  %v195 = arith.index_cast %v194 : index to i32
  %v196 = arith.constant 64 : i32
  %v197 = arith.muli %v195, %v196 : i32
  %v198 = arith.constant 64 : i32
  %v199 = arith.muli %v195, %v198 : i32
  %v200 = block.iota dim 0 : tensor<64xi32>
  %v201 = tensor.splat %v199 : tensor<64xi32>
  %v202 = arith.addi %v201, %v200 : tensor<64xi32>
  %v203 = arith.constant 0.00000000000000000e+00 : f32
  %v204 = tensor.splat %v203 : tensor<1x1xf32>
  %v205 = tensor.collapse_shape %v204 [[0, 1]] : tensor<1x1xf32> into tensor<1xf32>
  %v206 = arith.constant 0 : index
  %v207 = tensor.extract %v205[%v206] : tensor<1xf32>
  %v208 = tensor.splat %v207 : tensor<64x32xf32>
  %v209 = arith.index_cast %v197 : i32 to index
  %v210 = arith.constant 0 : index
  %v211 = arith.constant 0.00000000000000000e+00 : f32
  %v212 = tensor.collapse_shape %v21 [[0, 1]] : tensor<1x32xi1> into tensor<32xi1>
  %v213 = block.broadcast %v212 dims [0] : tensor<32xi1> -> tensor<64x32xi1>
  %v214 = block.load %r0[%v209, %v210] [64, 32] mask %v213 other %v211 : memref<128x32xf32> -> tensor<64x32xf32>
  %v215 = arith.index_cast %v197 : i32 to index
  %v216 = block.load %r5[%v215] [64] : memref<128xf32> -> tensor<64xf32>
  %v217 = arith.index_cast %v197 : i32 to index
  %v218 = arith.constant 0 : index
  %v219 = arith.constant 0.00000000000000000e+00 : f32
  %v220 = tensor.collapse_shape %v21 [[0, 1]] : tensor<1x32xi1> into tensor<32xi1>
  %v221 = block.broadcast %v220 dims [0] : tensor<32xi1> -> tensor<64x32xi1>
  %v222 = block.load %r4[%v217, %v218] [64, 32] mask %v221 other %v219 : memref<128x32xf32> -> tensor<64x32xf32>
  %v223 = arith.index_cast %v197 : i32 to index
  %v224 = block.load %r6[%v223] [64] : memref<128xf32> -> tensor<64xf32>
  %v225 = arith.constant 1 : i32
  %v226 = arith.addi %v195, %v225 : i32
  %v227 = arith.constant 64 : i32
  %v228 = arith.muli %v226, %v227 : i32
  %v229 = arith.constant 31 : i32
  %v230 = arith.addi %v228, %v229 : i32
  %v231 = arith.constant 32 : i32
  %v232 = arith.divsi %v230, %v231 : i32
  %v233 = arith.constant 0 : i32
  %v234, %v235, %v236 = scf.while (%v237 = %v233, %v238 = %v232, %v239 = %v208) : (i32, i32, tensor<64x32xf32>) -> (i32, i32, tensor<64x32xf32>) {
    %v243 = arith.cmpi slt, %v237, %v238 : i32
    scf.condition(%v243) %v237, %v238, %v239 : i32, i32, tensor<64x32xf32>
  } do {
    ^bb0(%v240: i32, %v241: i32, %v242: tensor<64x32xf32>):
    %v244 = arith.constant 1 : i32
    %v245 = arith.addi %v240, %v244 : i32
    %v246 = arith.constant 32 : i32
    %v247 = arith.muli %v240, %v246 : i32
    %v248 = arith.index_cast %v247 : i32 to index
    %v249 = arith.constant 0 : index
    %v250 = arith.constant 0.00000000000000000e+00 : f32
    %v251 = tensor.collapse_shape %v21 [[0, 1]] : tensor<1x32xi1> into tensor<32xi1>
    %v252 = block.broadcast %v251 dims [0] : tensor<32xi1> -> tensor<32x32xi1>
    %v253 = block.load %r1[%v248, %v249] [32, 32] mask %v252 other %v250 : memref<128x32xf32> -> tensor<32x32xf32>
    %v254 = arith.index_cast %v247 : i32 to index
    %v255 = arith.constant 0 : index
    %v256 = arith.constant 0.00000000000000000e+00 : f32
    %v257 = tensor.collapse_shape %v21 [[0, 1]] : tensor<1x32xi1> into tensor<32xi1>
    %v258 = block.broadcast %v257 dims [0] : tensor<32xi1> -> tensor<32x32xi1>
    %v259 = block.load %r2[%v254, %v255] [32, 32] mask %v258 other %v256 : memref<128x32xf32> -> tensor<32x32xf32>
    %v260 = tensor.empty() : tensor<32x32xf32>
    %v261 = linalg.transpose ins(%v253 : tensor<32x32xf32>) outs(%v260 : tensor<32x32xf32>) permutation = [1, 0]
    %v262 = tensor.collapse_shape %v214 [[0, 1]] : tensor<64x32xf32> into tensor<2048xf32>
    %v263 = tensor.expand_shape %v262 [[0, 1, 2]] output_shape [1, 64, 32] : tensor<2048xf32> into tensor<1x64x32xf32>
    %v264 = tensor.collapse_shape %v261 [[0, 1]] : tensor<32x32xf32> into tensor<1024xf32>
    %v265 = tensor.expand_shape %v264 [[0, 1, 2]] output_shape [1, 32, 32] : tensor<1024xf32> into tensor<1x32x32xf32>
    %v266 = tensor.extract_slice %v263[0, 0, 0] [1, 64, 32] [1, 1, 1] : tensor<1x64x32xf32> to tensor<1x64x32xf32>
    %v267 = tensor.collapse_shape %v266 [[0, 1, 2]] : tensor<1x64x32xf32> into tensor<2048xf32>
    %v268 = tensor.expand_shape %v267 [[0, 1]] output_shape [64, 32] : tensor<2048xf32> into tensor<64x32xf32>
    %v269 = tensor.extract_slice %v265[0, 0, 0] [1, 32, 32] [1, 1, 1] : tensor<1x32x32xf32> to tensor<1x32x32xf32>
    %v270 = tensor.collapse_shape %v269 [[0, 1, 2]] : tensor<1x32x32xf32> into tensor<1024xf32>
    %v271 = tensor.expand_shape %v270 [[0, 1]] output_shape [32, 32] : tensor<1024xf32> into tensor<32x32xf32>
    %v272 = block.dot %v268, %v271 : tensor<64x32xf32>, tensor<32x32xf32> -> tensor<64x32xf32>
    %v273 = tensor.collapse_shape %v272 [[0, 1]] : tensor<64x32xf32> into tensor<2048xf32>
    %v274 = tensor.expand_shape %v273 [[0, 1, 2]] output_shape [1, 64, 32] : tensor<2048xf32> into tensor<1x64x32xf32>
    %v275 = tensor.collapse_shape %v274 [[0, 1, 2]] : tensor<1x64x32xf32> into tensor<2048xf32>
    %v276 = tensor.expand_shape %v275 [[0, 1]] output_shape [64, 32] : tensor<2048xf32> into tensor<64x32xf32>
    %v277 = arith.constant 1.44269502162933350e+00 : f32
    %v278 = tensor.splat %v277 : tensor<64x32xf32>
    %v279 = arith.mulf %v276, %v278 : tensor<64x32xf32>
    %v280 = arith.constant 32 : i32
    %v281 = arith.muli %v240, %v280 : i32
    %v282 = block.iota dim 0 : tensor<32xi32>
    %v283 = tensor.splat %v281 : tensor<32xi32>
    %v284 = arith.addi %v283, %v282 : tensor<32xi32>
    %v285 = tensor.expand_shape %v202 [[0, 1]] output_shape [64, 1] : tensor<64xi32> into tensor<64x1xi32>
    %v286 = tensor.expand_shape %v284 [[0, 1]] output_shape [1, 32] : tensor<32xi32> into tensor<1x32xi32>
    %v287 = tensor.collapse_shape %v285 [[0, 1]] : tensor<64x1xi32> into tensor<64xi32>
    %v288 = block.broadcast %v287 dims [1] : tensor<64xi32> -> tensor<64x32xi32>
    %v289 = tensor.collapse_shape %v286 [[0, 1]] : tensor<1x32xi32> into tensor<32xi32>
    %v290 = block.broadcast %v289 dims [0] : tensor<32xi32> -> tensor<64x32xi32>
    %v291 = arith.cmpi sge, %v288, %v290 : tensor<64x32xi32>
    %v292 = arith.constant -2.38197632505765400e+38 : f32
    %v293 = tensor.splat %v292 : tensor<1x1xf32>
    %v294 = tensor.collapse_shape %v293 [[0, 1]] : tensor<1x1xf32> into tensor<1xf32>
    %v295 = arith.constant 0 : index
    %v296 = tensor.extract %v294[%v295] : tensor<1xf32>
    %v297 = tensor.splat %v296 : tensor<64x32xf32>
    %v298 = arith.select %v291, %v279, %v297 : tensor<64x32xi1>, tensor<64x32xf32>
    %v299 = tensor.expand_shape %v216 [[0, 1]] output_shape [64, 1] : tensor<64xf32> into tensor<64x1xf32>
    %v300 = tensor.collapse_shape %v299 [[0, 1]] : tensor<64x1xf32> into tensor<64xf32>
    %v301 = block.broadcast %v300 dims [1] : tensor<64xf32> -> tensor<64x32xf32>
    %v302 = arith.subf %v298, %v301 : tensor<64x32xf32>
    %v303 = math.exp2 %v302 : tensor<64x32xf32>
    %v304 = arith.constant 0.00000000000000000e+00 : f32
    %v305 = tensor.splat %v304 : tensor<1x1xf32>
    %v306 = tensor.collapse_shape %v305 [[0, 1]] : tensor<1x1xf32> into tensor<1xf32>
    %v307 = arith.constant 0 : index
    %v308 = tensor.extract %v306[%v307] : tensor<1xf32>
    %v309 = tensor.splat %v308 : tensor<64x32xf32>
    %v310 = tensor.expand_shape %v224 [[0, 1]] output_shape [64, 1] : tensor<64xf32> into tensor<64x1xf32>
    %v311 = tensor.collapse_shape %v310 [[0, 1]] : tensor<64x1xf32> into tensor<64xf32>
    %v312 = block.broadcast %v311 dims [1] : tensor<64xf32> -> tensor<64x32xf32>
    %v313 = arith.subf %v309, %v312 : tensor<64x32xf32>
    %v314 = tensor.empty() : tensor<32x32xf32>
    %v315 = linalg.transpose ins(%v259 : tensor<32x32xf32>) outs(%v314 : tensor<32x32xf32>) permutation = [1, 0]
    %v316 = tensor.collapse_shape %v222 [[0, 1]] : tensor<64x32xf32> into tensor<2048xf32>
    %v317 = tensor.expand_shape %v316 [[0, 1, 2]] output_shape [1, 64, 32] : tensor<2048xf32> into tensor<1x64x32xf32>
    %v318 = tensor.collapse_shape %v315 [[0, 1]] : tensor<32x32xf32> into tensor<1024xf32>
    %v319 = tensor.expand_shape %v318 [[0, 1, 2]] output_shape [1, 32, 32] : tensor<1024xf32> into tensor<1x32x32xf32>
    %v320 = tensor.extract_slice %v317[0, 0, 0] [1, 64, 32] [1, 1, 1] : tensor<1x64x32xf32> to tensor<1x64x32xf32>
    %v321 = tensor.collapse_shape %v320 [[0, 1, 2]] : tensor<1x64x32xf32> into tensor<2048xf32>
    %v322 = tensor.expand_shape %v321 [[0, 1]] output_shape [64, 32] : tensor<2048xf32> into tensor<64x32xf32>
    %v323 = tensor.extract_slice %v319[0, 0, 0] [1, 32, 32] [1, 1, 1] : tensor<1x32x32xf32> to tensor<1x32x32xf32>
    %v324 = tensor.collapse_shape %v323 [[0, 1, 2]] : tensor<1x32x32xf32> into tensor<1024xf32>
    %v325 = tensor.expand_shape %v324 [[0, 1]] output_shape [32, 32] : tensor<1024xf32> into tensor<32x32xf32>
    %v326 = block.dot %v322, %v325 : tensor<64x32xf32>, tensor<32x32xf32> -> tensor<64x32xf32>
    %v327 = tensor.collapse_shape %v326 [[0, 1]] : tensor<64x32xf32> into tensor<2048xf32>
    %v328 = tensor.expand_shape %v327 [[0, 1, 2]] output_shape [1, 64, 32] : tensor<2048xf32> into tensor<1x64x32xf32>
    %v329 = tensor.collapse_shape %v328 [[0, 1, 2]] : tensor<1x64x32xf32> into tensor<2048xf32>
    %v330 = tensor.expand_shape %v329 [[0, 1]] output_shape [64, 32] : tensor<2048xf32> into tensor<64x32xf32>
    %v331 = arith.addf %v313, %v330 : tensor<64x32xf32>
    %v332 = arith.mulf %v303, %v331 : tensor<64x32xf32>
    %v333 = tensor.collapse_shape %v332 [[0, 1]] : tensor<64x32xf32> into tensor<2048xf32>
    %v334 = tensor.expand_shape %v333 [[0, 1, 2]] output_shape [1, 64, 32] : tensor<2048xf32> into tensor<1x64x32xf32>
    %v335 = tensor.collapse_shape %v253 [[0, 1]] : tensor<32x32xf32> into tensor<1024xf32>
    %v336 = tensor.expand_shape %v335 [[0, 1, 2]] output_shape [1, 32, 32] : tensor<1024xf32> into tensor<1x32x32xf32>
    %v337 = tensor.extract_slice %v334[0, 0, 0] [1, 64, 32] [1, 1, 1] : tensor<1x64x32xf32> to tensor<1x64x32xf32>
    %v338 = tensor.collapse_shape %v337 [[0, 1, 2]] : tensor<1x64x32xf32> into tensor<2048xf32>
    %v339 = tensor.expand_shape %v338 [[0, 1]] output_shape [64, 32] : tensor<2048xf32> into tensor<64x32xf32>
    %v340 = tensor.extract_slice %v336[0, 0, 0] [1, 32, 32] [1, 1, 1] : tensor<1x32x32xf32> to tensor<1x32x32xf32>
    %v341 = tensor.collapse_shape %v340 [[0, 1, 2]] : tensor<1x32x32xf32> into tensor<1024xf32>
    %v342 = tensor.expand_shape %v341 [[0, 1]] output_shape [32, 32] : tensor<1024xf32> into tensor<32x32xf32>
    %v343 = block.dot %v339, %v342 : tensor<64x32xf32>, tensor<32x32xf32> -> tensor<64x32xf32>
    %v344 = tensor.collapse_shape %v343 [[0, 1]] : tensor<64x32xf32> into tensor<2048xf32>
    %v345 = tensor.expand_shape %v344 [[0, 1, 2]] output_shape [1, 64, 32] : tensor<2048xf32> into tensor<1x64x32xf32>
    %v346 = tensor.collapse_shape %v345 [[0, 1, 2]] : tensor<1x64x32xf32> into tensor<2048xf32>
    %v347 = tensor.expand_shape %v346 [[0, 1]] output_shape [64, 32] : tensor<2048xf32> into tensor<64x32xf32>
    %v348 = arith.addf %v242, %v347 : tensor<64x32xf32>
    scf.yield %v245, %v241, %v348 : i32, i32, tensor<64x32xf32>
  }
  %v349 = arith.constant 0 : index
  %v350 = arith.constant 0 : index
  %v351 = tensor.collapse_shape %v21 [[0, 1]] : tensor<1x32xi1> into tensor<32xi1>
  %v352 = block.broadcast %v351 dims [0] : tensor<32xi1> -> tensor<64x32xi1>
  block.store %v236, %r7 mask %v352 : tensor<64x32xf32>, memref<64x32xf32>
    return
  }
  func.func @mha_backward(%a0: memref<1x128x2x32xf32>, %a1: memref<1x128x2x32xf32>, %a2: memref<1x128x2x32xf32>, %a3: memref<1x128x2x32xf32>, %a4: memref<1x128x2x32xf32>, %a5: memref<1x2x128xf32>, %a6: memref<1x2x128xf32>, %a7: memref<1x128x2x32xf32>, %a8: memref<1x128x2x32xf32>, %a9: memref<1x128x2x32xf32>) {
    grid.call @mha_backward_kernel grid [1, 2, 2]
        ins(%a0, %a1, %a2, %a3, %a4, %a5, %a6 : memref<1x128x2x32xf32>, memref<1x128x2x32xf32>, memref<1x128x2x32xf32>, memref<1x128x2x32xf32>, memref<1x128x2x32xf32>, memref<1x2x128xf32>, memref<1x2x128xf32>)
        outs(%a7, %a8, %a9 : memref<1x128x2x32xf32>, memref<1x128x2x32xf32>, memref<1x128x2x32xf32>)
        in_specs [#grid.block<[squeezed, 128, squeezed, 32], (d0, d1, d2) -> (d0, 0, d1, 0)>, #grid.block<[squeezed, 128, squeezed, 32], (d0, d1, d2) -> (d0, 0, d1, 0)>, #grid.block<[squeezed, 128, squeezed, 32], (d0, d1, d2) -> (d0, 0, d1, 0)>, #grid.block<[squeezed, 128, squeezed, 32], (d0, d1, d2) -> (d0, 0, d1, 0)>, #grid.block<[squeezed, 128, squeezed, 32], (d0, d1, d2) -> (d0, 0, d1, 0)>, #grid.block<[squeezed, squeezed, 128], (d0, d1, d2) -> (d0, d1, 0)>, #grid.block<[squeezed, squeezed, 128], (d0, d1, d2) -> (d0, d1, 0)>]
        out_specs [#grid.block<[squeezed, 64, squeezed, 32], (d0, d1, d2) -> (d0, d2, d1, 0)>, #grid.block<[squeezed, 64, squeezed, 32], (d0, d1, d2) -> (d0, d2, d1, 0)>, #grid.block<[squeezed, 64, squeezed, 32], (d0, d1, d2) -> (d0, d2, d1, 0)>]
    return
  }
}
