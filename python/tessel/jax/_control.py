"""Kernel rules for control flow: `cond` (`pl.when`) as `scf.if`, scans
without `xs` (`fori_loop`) as `scf.for`, `while_loop` as `scf.while`. A
mixin of `KernelTranslator`."""

from __future__ import annotations

import numpy as np

from tessel.jax._emit import Value, tensor_type


class ControlFlowRules:
    def rule_platform_index(self, eqn, env):
        """`lax.platform_dependent`'s branch index: Tessel's kernels run on
        the CPU, so the branch for "cpu", else the default one (as JAX's
        interpreter picks on the CPU)."""
        platforms = eqn.params["platforms"]
        chosen = next((i for i, names in enumerate(platforms) if names is not None and "cpu" in names), None)
        if chosen is None:
            chosen = next((i for i, names in enumerate(platforms) if names is None), None)
        if chosen is None:
            self.fail(f"platform_dependent without a CPU or default branch (platforms {platforms})")
        return [self.emit.constant(chosen, np.int32)]

    def region(self, closed, args, results_of) -> list[Value]:
        """Inlines `closed` one level deeper; returns its results."""
        self.emit.depth += 1
        try:
            return self.inline(closed, args)
        finally:
            self.emit.depth -= 1

    def rule_cond(self, eqn, env):
        branches = eqn.params["branches"]
        index = self.read(env, eqn.invars[0])
        operands = [self.read(env, a) for a in eqn.invars[1:]]
        return self.cond(eqn, branches, index, operands, 0)

    def cond(self, eqn, branches, index: Value, operands, first: int):
        """scf.if choosing branch `first` or a later one."""
        if len(branches) - first == 1:
            return self.inline_flat(branches[first], operands)
        if index.dtype == np.bool_:
            condition = index
        else:
            constant = self.emit.constant(first, index.dtype)
            condition = self.emit.op(f"arith.cmpi eq, {index.name}, {constant.name} : {index.type}", (), np.bool_)
        outs = [v.aval for v in eqn.outvars]
        result_types = [tensor_type(o.shape, o.dtype) for o in outs]
        names = [self.emit.fresh() for _ in outs]
        results = f"{', '.join(names)} = " if names else ""
        types = f" -> ({', '.join(result_types)})" if names else ""
        loc = self.emit.loc
        self.emit.line(f"{results}scf.if {condition.name}{types} {{", located=False)
        # Branch `first` when equal (for bools: branch 1 when true).
        taken, other = (first, None) if index.dtype != np.bool_ else (1, 0)
        self.emit.depth += 1
        values = self.inline(branches[taken], operands) if other is not None or True else []
        if index.dtype == np.bool_:
            pass
        self.yield_(values)
        self.emit.depth -= 1
        self.emit.line("} else {", located=False)
        self.emit.depth += 1
        if index.dtype == np.bool_:
            values = self.inline(branches[0], operands)
        else:
            values = self.cond(eqn, branches, index, operands, first + 1)
        self.yield_(values)
        self.emit.depth -= 1
        self.emit.lines.append("  " * self.emit.depth + "} " + loc)
        return [Value(n, tuple(o.shape), np.dtype(o.dtype)) for n, o in zip(names, outs)]

    def inline_flat(self, closed, operands):
        return self.inline(closed, operands)

    def yield_(self, values):
        if values:
            self.emit.line(f"scf.yield {', '.join(v.name for v in values)} : {', '.join(v.type for v in values)}")

    def rule_scan(self, eqn, env):
        p = eqn.params
        num_consts, num_carry = p["num_consts"], p["num_carry"]
        if len(eqn.invars) != num_consts + num_carry or len(eqn.outvars) != num_carry:
            self.fail("scan over arrays (only fori_loop-style scans are supported)")
        args = [self.read(env, a) for a in eqn.invars]
        consts, carry = args[:num_consts], args[num_consts:]
        lower, upper, step = self.emit.index(0), self.emit.index(int(p["length"])), self.emit.index(1)
        names = [self.emit.fresh() for _ in carry]
        induction = self.emit.fresh()
        iter_names = [self.emit.fresh() for _ in carry]
        iter_args = ", ".join(f"{n} = {c.name}" for n, c in zip(iter_names, carry))
        loc = self.emit.loc
        results = f"{', '.join(names)} = " if names else ""
        iter_text = f" iter_args({iter_args}) -> ({', '.join(c.type for c in carry)})" if carry else ""
        self.emit.line(f"{results}scf.for {induction} = {lower} to {upper} step {step}{iter_text} {{", located=False)
        self.emit.depth += 1
        inner = [Value(n, c.shape, c.dtype) for n, c in zip(iter_names, carry)]
        values = self.inline(p["jaxpr"], consts + inner)
        values = [self.splat(v, c.shape) if v.shape != c.shape else v for v, c in zip(values, carry)]
        if values:
            self.yield_(values)
        self.emit.depth -= 1
        self.emit.lines.append("  " * self.emit.depth + "} " + loc)
        return [Value(n, c.shape, c.dtype) for n, c in zip(names, carry)]

    def rule_while(self, eqn, env):
        p = eqn.params
        cond_n, body_n = p["cond_nconsts"], p["body_nconsts"]
        args = [self.read(env, a) for a in eqn.invars]
        cond_consts, body_consts, carry = args[:cond_n], args[cond_n:cond_n + body_n], args[cond_n + body_n:]
        names = [self.emit.fresh() for _ in carry]
        before = [self.emit.fresh() for _ in carry]
        after = [self.emit.fresh() for _ in carry]
        types = ", ".join(c.type for c in carry)
        inits = ", ".join(f"{b} = {c.name}" for b, c in zip(before, carry))
        loc = self.emit.loc
        results = f"{', '.join(names)} = " if names else ""
        self.emit.line(f"{results}scf.while ({inits}) : ({types}) -> ({types}) {{", located=False)
        self.emit.depth += 1
        (condition,) = self.inline(p["cond_jaxpr"], cond_consts + [Value(b, c.shape, c.dtype)
                                                                    for b, c in zip(before, carry)])
        self.emit.line(f"scf.condition({condition.name}) {', '.join(before)} : {types}")
        self.emit.depth -= 1
        block_args = ", ".join(f"{a}: {c.type}" for a, c in zip(after, carry))
        self.emit.line(f"}} do {{\n{'  ' * (self.emit.depth + 1)}^bb0({block_args}):", located=False)
        self.emit.depth += 1
        values = self.inline(p["body_jaxpr"], body_consts + [Value(a, c.shape, c.dtype)
                                                               for a, c in zip(after, carry)])
        values = [self.splat(v, c.shape) if v.shape != c.shape else v for v, c in zip(values, carry)]
        self.emit.line(f"scf.yield {', '.join(v.name for v in values)} : {types}")
        self.emit.depth -= 1
        self.emit.lines.append("  " * self.emit.depth + "} " + loc)
        return [Value(n, c.shape, c.dtype) for n, c in zip(names, carry)]
