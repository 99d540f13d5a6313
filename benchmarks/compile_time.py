"""Where a compile goes: tracing, lowering and XLA's compile of the pile's rollout or the humanoid's batch.

    python -m benchmarks.compile_time [--case pile|humanoid] [--bodies 8] [--level 3] [--top 15] [--run 0] [--save path.npz] [--rocks]

``--case pile``: the compiled function of :mod:`benchmarks.pile` (``--bodies`` bodies, one
world, one chunk of steps, from the packed world state; ``--rocks``: the pile with convex meshes). ``--case humanoid``: the humanoid's
implicit step (float64, dt 2 ms) under :func:`jaxsim_like.batching.simulate_batch` (64 worlds,
50 steps, one thread). ``--level``: XLA's backend optimisation level (the tests run at 0, the
benchmarks at 3), appended to ``XLA_FLAGS`` (set other flags there).

Prints one JSON line: the wall seconds of each phase from JAX's duration events
(``/jax/core/compile/*``, the longest of each: tracing to a jaxpr, lowering to StableHLO, XLA's
compile) and, within XLA's compile, of its HLO passes and its code generation (XLA's own timers,
read from its log); process CPU seconds: the pile's tracing and lowering, and its compile, the
humanoid's first call (all of it); for the pile the sizes: the jaxpr's equations (every
sub-jaxpr's counted at each use), the StableHLO module's operations and the optimised HLO's
instructions, and the ``--top`` functions of the package with the most equations in their traced
calls (inclusive: an equation counts for every package function on its stack). ``--run N``: the
pile's process CPU per step, the median of ``N`` chained calls of a quarter second each from the
drop; ``--save``: its final packed state (to compare trees).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import sys
import tempfile
import time

LOG_TIMERS = {"hlo passes": re.compile(r"Running HLO passes on \[(.*?)\].*?time: .*?\((\d+) us\)"),
              "codegen": re.compile(r"Compiling \[(.*?)\] for CPU using JIT time: .*?\((\d+) us\)")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", default="pile", choices=("pile", "humanoid"))
    parser.add_argument("--bodies", type=int, default=8)
    parser.add_argument("--level", type=int, default=3)
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--run", type=int, default=0, help="pile: then this many calls (a quarter second each), chained")
    parser.add_argument("--rocks", action="store_true", help="pile: with convex meshes (benchmarks.pile --rocks)")
    parser.add_argument("--save", default="", help="pile: the final packed state's leaves to this .npz")
    args = parser.parse_args()
    if not os.environ.get("_COMPILE_TIME_CHILD"):
        _rerun_with_log(args)
        return
    print(json.dumps(measure(args.case, args.bodies, args.top, args.run, args.save, args.rocks)))


def _rerun_with_log(args: argparse.Namespace) -> None:
    """This command again, in a process with XLA's compile timers logged to a file (read back here)."""
    import subprocess

    env = dict(os.environ, _COMPILE_TIME_CHILD="1", TF_CPP_MIN_LOG_LEVEL="0", TF_CPP_VMODULE="cpu_compiler=1")
    env["XLA_FLAGS"] = " ".join(filter(None, [env.get("XLA_FLAGS"), f"--xla_backend_optimization_level={args.level}"]))
    with tempfile.TemporaryFile("w+") as log:
        out = subprocess.run([sys.executable, "-m", "benchmarks.compile_time", *sys.argv[1:]], env=env, stdout=subprocess.PIPE,
                             stderr=log, text=True, check=True).stdout
        log.seek(0)
        text = log.read()
    result = json.loads(out.strip().splitlines()[-1])
    module = re.sub(r"\W", "_", result.pop("module")).strip("_")  # jit(advance): XLA's jit_advance
    for name, pattern in LOG_TIMERS.items():  # the longest module of the function's name
        result[f"xla {name} s"] = max([int(us) / 1e6 for m, us in pattern.findall(text) if module in m], default=0.0)
    result["level"], result["XLA_FLAGS"] = args.level, env["XLA_FLAGS"]
    print(json.dumps(result))


def _phases() -> list[tuple[str, float, str]]:
    """A list that gains, per JAX compile duration event (``/jax/core/compile/*``), its phase,
    wall seconds and function name."""
    import jax

    events = []

    def listen(event: str, duration: float, fun_name: str = "", **_) -> None:
        if event.startswith("/jax/core/compile/"):
            events.append((event.rsplit("/", 1)[-1], duration, fun_name))

    jax.monitoring.register_event_duration_secs_listener(listen)
    return events


def _equations(jaxpr, counts: collections.Counter) -> int:
    """The equations of ``jaxpr`` and of its sub-jaxprs; ``counts`` gains, per package function
    on an equation's stack, its equations."""
    from jax._src import core, source_info_util

    total = 0
    for eqn in jaxpr.eqns:
        total += 1
        names = {f"{frame.file_name.split('jaxsim_like/')[-1]}:{frame.function_name}"
                 for frame in source_info_util.user_frames(eqn.source_info.traceback) if "jaxsim_like/" in frame.file_name}
        for name in names:
            counts[name] += 1
        for sub in core.jaxprs_in_params(eqn.params):
            inner = _equations(sub, collections.Counter())
            total += inner
            for name in names:
                counts[name] += inner
            _equations(sub, counts)  # the sub-jaxpr's own functions
    return total


def _program(case: str, bodies: int, rocks: bool = False):
    """The jitted function and its arguments for ``case``."""
    import jax
    import jax.numpy as jnp

    if case == "pile":
        from benchmarks import pile
        from jaxsim_like.simulation.world import world_rollout

        world, state = pile.our_world(bodies, 0.002, rocks=rocks)
        steps = int(round(pile.CHUNK / 0.002))

        def advance(s):
            final, outputs = world_rollout(world, s, None, steps)
            return final, pile._deepest(outputs), jnp.all(outputs.finite)

        return jax.jit(advance), (world.pack(state),)
    import numpy as np

    import jaxsim_like as js
    from benchmarks.models import model_paths
    from jaxsim_like.batching import simulate_batch

    model = js.load_model(str(model_paths("humanoid")["humanoid"]))
    params = js.SimulationParams.build(model, dt=0.002, integrator="implicit_euler")
    states = jax.vmap(lambda z: js.State.build(model, base_position=jnp.array([0.0, 0.0, 1.0]) + z))(jnp.zeros((64, 3)))
    torques = np.zeros((50, model.dofs))
    return (lambda s, t: simulate_batch(model, s, t, params=params, threads=1)), (states, torques)


def measure(case: str, bodies: int, top: int, run: int = 0, save: str = "", rocks: bool = False) -> dict:
    from benchmarks import timing  # noqa: F401  (applies the XLA CPU settings first)

    import jax

    jax.config.update("jax_enable_x64", True)
    function, arguments = _program(case, bodies, rocks)
    events = _phases()
    result = {"case": case, "bodies": bodies if case == "pile" else None}
    start = time.process_time()
    if case == "pile":
        lowered = function.lower(*arguments)
        result["trace+lower cpu s"] = time.process_time() - start
        compiled = lowered.compile()
        result["compile cpu s"] = time.process_time() - start - result["trace+lower cpu s"]
    else:
        jax.block_until_ready(function(*arguments))
    result["total cpu s"] = time.process_time() - start
    phases = {"jaxpr_trace_duration": "trace", "jaxpr_to_mlir_module_duration": "lower", "backend_compile_duration": "compile"}
    for name, key in phases.items():  # the outermost event of each phase: the longest
        result[f"{key} wall s"] = max((wall for event, wall, _ in events if event == name), default=0.0)
    result["module"] = max(((wall, f) for event, wall, f in events if event == "backend_compile_duration"), default=(0, ""))[1]
    if case == "pile":
        counts = collections.Counter()
        result["jaxpr eqns"] = _equations(jax.make_jaxpr(function)(*arguments).jaxpr, counts)
        result["stablehlo ops"] = sum(1 for line in lowered.as_text().splitlines() if re.match(r"\s*(%\S+ = )?\"?[a-z_]+\.[a-z_.]+", line))
        result["hlo instructions"] = sum(1 for line in compiled.as_text().splitlines() if re.match(r"\s*(ROOT )?%?\S+ = ", line))
        result["top"] = counts.most_common(top)
    if case == "pile" and run:
        state, taken = arguments[0], []
        for _ in range(run):
            begin = time.process_time()
            state = jax.block_until_ready(compiled(state)[0])
            taken.append(time.process_time() - begin)
        result["run cpu ms per step"] = 1e3 * sorted(taken)[len(taken) // 2] / int(round(0.25 / 0.002))
        if save:
            import numpy as np

            np.savez(save, *jax.tree.leaves(state))
    return result


if __name__ == "__main__":
    main()
