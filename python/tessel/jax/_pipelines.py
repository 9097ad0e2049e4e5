"""`pltpu.emit_pipeline` through its primitive (`jax_use_emit_pipeline_primitive`).

With that flag a kernel's pipeline is one `emit_pipeline` equation holding
the body's jaxpr and the block mappings; Mosaic expands it while lowering.
Tessel expands it before translating the kernel (`expand_pipelines`):
each equation becomes a call of the jaxpr Pallas' own pipeline emitter
traces for it (its buffers' `run_scoped`, DMAs, semaphores and loop), so
the translator's passes over the kernel (scoped buffers, PRNG use) see
what it allocates. The emitter calls the body as a `pipeline_body`
equation: its block refs are the buffers' current slots (refs through
transforms) and its program ids the pipeline's indices, which the
translator's `pipeline_body` rule binds (`_views.RefView`,
`pipeline_levels`).

Version-specific: the parameters of both primitives are jax 0.10's."""

from __future__ import annotations

import dataclasses

from jax._src import api_util, core, source_info_util
from jax._src import linear_util as lu
from jax._src import util as jax_util
from jax._src.interpreters import partial_eval as pe
from jax._src.pallas import core as pallas_core
from jax._src.pallas.mosaic import pipeline as _pipeline

from tessel.jax._emit import Value
from tessel.jax._registry import rule

EMIT_PIPELINE = _pipeline.emit_pipeline_p.name
PIPELINE_BODY = _pipeline.pipeline_body_p.name


def expand_pipelines(jaxpr: core.Jaxpr, grid_names, grid_sizes) -> core.Jaxpr:
    """`jaxpr` with every `emit_pipeline` equation, nested ones included,
    replaced by a call of its expansion; `grid_names`/`grid_sizes` are
    the kernel's grid's (its named axes are in scope while expanding)."""
    if not _has_pipeline(jaxpr):
        return jaxpr
    eqns = []
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == EMIT_PIPELINE:
            expansion = _expansion(eqn, grid_names, grid_sizes)
            expansion = core.ClosedJaxpr(expand_pipelines(expansion.jaxpr, grid_names, grid_sizes),
                                         expansion.consts)
            eqn = core.new_jaxpr_eqn(eqn.invars, eqn.outvars, core.closed_call_p, {"call_jaxpr": expansion},
                                     eqn.effects, eqn.source_info, eqn.ctx)
        else:
            params = {name: _expand_param(value, grid_names, grid_sizes) for name, value in eqn.params.items()}
            if any(params[name] is not eqn.params[name] for name in params):
                eqn = eqn.replace(params=params)
        eqns.append(eqn)
    return jaxpr.replace(eqns=eqns)


def _has_pipeline(jaxpr: core.Jaxpr) -> bool:
    return any(eqn.primitive.name == EMIT_PIPELINE or any(_has_pipeline(inner)
                                                          for inner in core.jaxprs_in_params(eqn.params))
               for eqn in jaxpr.eqns)


def _expand_param(value, grid_names, grid_sizes):
    """A parameter with the jaxprs in it expanded (the same object when
    nothing in it changes)."""
    if isinstance(value, core.Jaxpr):
        return expand_pipelines(value, grid_names, grid_sizes)
    if isinstance(value, core.ClosedJaxpr):
        inner = expand_pipelines(value.jaxpr, grid_names, grid_sizes)
        return value if inner is value.jaxpr else core.ClosedJaxpr(inner, value.consts)
    if isinstance(value, (tuple, list)):
        items = [_expand_param(item, grid_names, grid_sizes) for item in value]
        return value if all(a is b for a, b in zip(items, value)) else type(value)(items)
    return value


def _expansion(eqn, grid_names, grid_sizes) -> core.ClosedJaxpr:
    """The jaxpr Pallas' pipeline emitter traces for one `emit_pipeline`
    equation, over the equation's operands."""
    params = dict(eqn.params)
    mapping = params.pop("grid_mapping")
    body_jaxpr, body_consts_len = params.pop("body_jaxpr"), params.pop("body_consts_len")
    args_tree, static_offsets = params.pop("args_tree"), params.pop("_static_grid_offsets")
    extra_dynamic = params.pop("_num_extra_dynamic")
    const_counts = [len(m.index_map_jaxpr.consts) for m in mapping.block_mappings]
    num_dynamic = mapping.num_dynamic_grid_bounds + extra_dynamic

    def pipeline(*operands):
        map_consts, dynamic, body_consts, flat_refs = jax_util.split_list(
            operands, [sum(const_counts), num_dynamic, body_consts_len])
        per_mapping = jax_util.split_list(map_consts, const_counts[:-1])
        mappings = [m.replace(index_map_jaxpr=core.ClosedJaxpr(m.index_map_jaxpr.jaxpr, consts))
                    for m, consts in zip(mapping.block_mappings, per_mapping)]
        refs, _ = _pipeline.tracing_registry.flatten(args_tree.unflatten(flat_refs), _pipeline.is_transformed_ref)
        dynamic = iter(dynamic)
        grid = tuple(next(dynamic) if pallas_core.is_dynamic_dim(d) else d for d in mapping.grid)
        offsets = tuple(next(dynamic) if pallas_core.is_dynamic_dim(d) else d for d in static_offsets)
        kept = [axis for axis in range(len(grid)) if axis not in mapping.vmapped_dims]
        static_sizes = tuple(grid[axis] if isinstance(grid[axis], int) else None for axis in kept)

        def body(indices, *block_refs):
            arguments, tree = _pipeline.tracing_registry.flatten(
                (tuple(indices[axis] for axis in kept), tuple(body_consts), block_refs))
            return _pipeline.pipeline_body_p.bind(*arguments, jaxpr=body_jaxpr, in_tree=tree,
                                                  num_inputs=mapping.num_inputs, tessel_grid=static_sizes)

        specs = [m.to_block_spec() for m in mappings]
        emitted = _pipeline._emit_pipeline(
            body, grid=grid, in_specs=specs[:mapping.num_inputs], out_specs=specs[mapping.num_inputs:],
            _grid_offsets=offsets, _explicit_indices=True, **params)
        named = [(name, size) for name, size in zip(grid_names, grid_sizes)
                 if name is not None and isinstance(size, int)]
        with core.extend_axis_env_nd(named), pallas_core.tracing_grid_env(tuple(mapping.grid[a] for a in kept), ()):
            emitted(*refs)
        return ()

    avals = [var.aval for var in eqn.invars]
    debug = api_util.debug_info("emit_pipeline expansion", pipeline, avals, {})
    # The expansion's equations are located at the user's emit_pipeline
    # call, not in the code tracing them here.
    with source_info_util.user_context(eqn.source_info.traceback, name_stack=eqn.source_info.name_stack):
        jaxpr, _, consts = pe.trace_to_jaxpr_dynamic(lu.wrap_init(pipeline, debug_info=debug), avals)
    return core.ClosedJaxpr(jaxpr, consts)


@dataclasses.dataclass
class PipelineLevel:
    """A pipeline body being translated: its program ids (i32 scalars) and
    its grid's static sizes (None for a dynamic one)."""

    indices: list[Value]
    sizes: tuple


@rule(PIPELINE_BODY, reads_operands=False, moves_values=True)
def pipeline_body(ctx):
    """A pipeline's call of its body: the body's jaxpr with its block refs
    bound to the buffers' current slots (`RefView`s) and its program ids
    to the pipeline's indices."""
    tr, params = ctx.tr, ctx.params
    indices, consts, refs = params["in_tree"].unflatten(ctx.eqn.invars)
    jaxpr = params["jaxpr"]
    if len(jaxpr.constvars) != len(consts) or len(jaxpr.invars) != len(refs):
        ctx.fail("a pipeline body whose arguments do not match its jaxpr")
    env = dict(zip(jaxpr.constvars, (ctx.read(c) for c in consts)))
    for var, ref in zip(jaxpr.invars, refs):
        env[var] = tr.ref_view(ctx.env, ref)
    sizes = params.get("tessel_grid") or (None,) * len(indices)
    tr.pipeline_levels.append(PipelineLevel([tr.convert(ctx.read(i), "int32") for i in indices], tuple(sizes)))
    try:
        return tr.jaxpr(jaxpr, env)
    finally:
        tr.pipeline_levels.pop()
