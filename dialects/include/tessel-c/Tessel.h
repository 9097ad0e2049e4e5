/*===- Tessel.h - C API of the Tessel dialects and tool support ---*- C -*-===*
 *
 * What Rust needs from the C++ half: dialect handles, BlockSpec attribute
 * access, registration of Rust passes *by name*, and mlir-opt style source
 * diagnostics (printing and --verify-diagnostics).
 *
 *===----------------------------------------------------------------------===*/
#ifndef TESSEL_C_TESSEL_H
#define TESSEL_C_TESSEL_H

#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"
#include "mlir-c/AffineMap.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(Grid, grid);
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(Block, block);

/* ---- #grid.block ------------------------------------------------------ */
MLIR_CAPI_EXPORTED bool tesselAttributeIsABlockSpec(MlirAttribute attr);
/* `indexMap` may be null (all-zero block indices); `padding` holds nPadding
 * values, (lo, hi) per dimension. Returns a null attribute when invalid. */
MLIR_CAPI_EXPORTED MlirAttribute tesselBlockSpecGet(
    MlirContext ctx, bool full, intptr_t rank, const int64_t *blockShape,
    MlirAffineMap indexMap, bool unblocked, intptr_t nPadding,
    const int64_t *padding, MlirStringRef indexFunction);
/// The name of a BlockSpec's index function (empty when it has none).
MLIR_CAPI_EXPORTED MlirStringRef
tesselBlockSpecGetIndexFunction(MlirAttribute attr);
MLIR_CAPI_EXPORTED int64_t tesselBlockSpecSqueezed(void);
MLIR_CAPI_EXPORTED bool tesselBlockSpecIsFull(MlirAttribute attr);
MLIR_CAPI_EXPORTED intptr_t tesselBlockSpecGetRank(MlirAttribute attr);
MLIR_CAPI_EXPORTED int64_t tesselBlockSpecGetBlockDim(MlirAttribute attr,
                                                      intptr_t pos);
MLIR_CAPI_EXPORTED MlirAffineMap tesselBlockSpecGetIndexMap(MlirAttribute attr);
MLIR_CAPI_EXPORTED bool tesselBlockSpecIsUnblocked(MlirAttribute attr);
MLIR_CAPI_EXPORTED intptr_t tesselBlockSpecGetNumPadding(MlirAttribute attr);
MLIR_CAPI_EXPORTED int64_t tesselBlockSpecGetPadding(MlirAttribute attr,
                                                     intptr_t pos);

/* ---- grid axis semantics (#grid.semantics is an i32 enum) --------------- */
MLIR_CAPI_EXPORTED MlirAttribute tesselDimensionSemanticsGet(MlirContext ctx,
                                                            bool arbitrary);

/* ---- diagnostics from Rust passes ---------------------------------------- */
typedef enum {
  TesselSeverityError = 0,
  TesselSeverityWarning = 1,
  TesselSeverityRemark = 2
} TesselSeverity;
/* Emits a diagnostic at `loc` (the C API only has mlirEmitError). */
MLIR_CAPI_EXPORTED void tesselEmitDiagnostic(MlirLocation loc,
                                             TesselSeverity severity,
                                             MlirStringRef message);

/* Whether `op` (and, for ops with recursive effects, everything nested in
 * it) reads, writes, allocates or frees no memory: MLIR's
 * MemoryEffectOpInterface, which the C API does not expose. Ops that
 * declare no effects at all count as having some. */
MLIR_CAPI_EXPORTED bool tesselOperationIsMemoryEffectFree(MlirOperation op);

/* ---- passes by name ------------------------------------------------------ */
/* Called for every instantiation of a registered pass (pipelines, clones);
 * returns a fresh pass made by mlirCreateExternalPass. */
typedef MlirPass (*TesselPassFactory)(void *userData);
/* Registers a pass so that `--<argument>` and pipeline strings reach it. */
MLIR_CAPI_EXPORTED void tesselRegisterPass(TesselPassFactory factory,
                                           void *userData);
MLIR_CAPI_EXPORTED bool tesselIsRegisteredPass(MlirStringRef argument);
/* Registers `argument` as a named pipeline that expands to `pipeline`, a
 * comma-separated list of passes added to the pass manager it is used in. */
MLIR_CAPI_EXPORTED void tesselRegisterPassPipeline(MlirStringRef argument,
                                                   MlirStringRef description,
                                                   MlirStringRef pipeline);
MLIR_CAPI_EXPORTED void tesselPrintRegisteredPasses(void);
/* Registers the passes written in C++ (those that need upstream patterns
 * the C API cannot reach). */
MLIR_CAPI_EXPORTED void tesselRegisterCppPasses(void);
/* A pass manager that nests passes anchored on other ops implicitly, like
 * mlir-opt's. */
MLIR_CAPI_EXPORTED MlirPassManager
tesselPassManagerCreateImplicitNesting(MlirContext ctx);

/* ---- source diagnostics (mlir-opt style) --------------------------------- */
typedef struct TesselSourceDiagnostics TesselSourceDiagnostics;
/* Keeps a copy of `buffer` named `bufferName`; diagnostics go to stderr as
 * `file:line:col: error: ...` with the source line, or, when `verify` is
 * set, are matched against `expected-*` comments in the buffer. */
MLIR_CAPI_EXPORTED TesselSourceDiagnostics *
tesselSourceDiagnosticsCreate(MlirContext ctx, MlirStringRef buffer,
                              MlirStringRef bufferName, bool verify);
/* Parses the buffer into a module (null operation on failure). */
MLIR_CAPI_EXPORTED MlirOperation
tesselSourceDiagnosticsParse(TesselSourceDiagnostics *diagnostics);
/* The latency (cycles) and reciprocal throughput (cycles per instruction)
 * of `instruction` (an LLVM opcode name, e.g. VFMADD231PSZr) in LLVM's
 * scheduling model of `cpu` on `triple`; false when the target, the CPU's
 * model or the instruction is unknown. The target must be initialized. */
MLIR_CAPI_EXPORTED bool tesselInstructionTiming(
    MlirStringRef triple, MlirStringRef cpu, MlirStringRef features,
    MlirStringRef instruction, int64_t *latency,
    double *reciprocalThroughput);
/* Compares the CPU `cpu` on `triple` with a feature list in LLVM's form
 * ("+avx2,-avx512f,..."): calls `difference` with each listed feature the
 * CPU has and the list does not (`hostHas` false) or the other way round;
 * false when LLVM does not know the target or the CPU. */
MLIR_CAPI_EXPORTED bool tesselCompareCpuFeatures(
    MlirStringRef triple, MlirStringRef cpu, MlirStringRef features,
    void (*difference)(MlirStringRef feature, bool hostHas, void *data),
    void *data);
/* mlirModuleCreateParse, with exceptions thrown by a parser (upstream
 * bugs on malformed input) turned into a null module. */
MLIR_CAPI_EXPORTED MlirModule tesselParseModule(MlirContext ctx,
                                                MlirStringRef text);
/* With `verify`: success when every expected diagnostic was seen. */
MLIR_CAPI_EXPORTED MlirLogicalResult
tesselSourceDiagnosticsVerify(TesselSourceDiagnostics *diagnostics);
MLIR_CAPI_EXPORTED void
tesselSourceDiagnosticsDestroy(TesselSourceDiagnostics *diagnostics);

#ifdef __cplusplus
}
#endif

#endif /* TESSEL_C_TESSEL_H */
