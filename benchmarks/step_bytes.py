"""Bytes and flops per world-step, from XLA's cost analysis of the compiled batched step.

    python -m benchmarks.step_bytes [--model humanoid|icub|mujoco_humanoid|all] [--batches 1,1024] [--dt 0.01] [--repeats 20]

For each model: the default implicit step (float32 unless ``JAX_ENABLE_X64=1``) under ``jax.vmap``
over ``B`` worlds lying on the ground after a limp drop (contacts active), the model and the
parameters shared (``in_axes=None``), compiled once per ``B``. Printed per world-step (the
program's figure divided by ``B``): XLA's ``flops`` and ``bytes accessed`` (the bytes every
operation of the optimised program reads and writes, as if nothing stayed in cache), the
program's temporary buffers (``memory_analysis``), the state's size in bytes, bytes accessed over
the state's size, and the measured time of one call of the same executable (median of
``--repeats``, after a warm-up call), with the rates it implies. XLA counts the body of a
``while`` loop once, whatever its trip count: the table gives the trip counts of the program's
loops (on the CPU, XLA expands scatters into them). ``mujoco_humanoid`` is MuJoCo's own humanoid
MJCF.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import timing  # noqa: E402  (applies the CPU flags before jax is used)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import jaxsim_like as js  # noqa: E402
from jaxsim_like.simulation.step import contact_point_positions  # noqa: E402

SETTLE_SECONDS = 2.0


def lying_state(model: js.Model, params: js.SimulationParams) -> js.State:
    """The model after a limp drop from 2 cm and ``SETTLE_SECONDS`` on the ground."""
    upright = js.State.build(model, base_position=jnp.zeros(3))
    lowest = jnp.min(contact_point_positions(model, upright)[:, 2])
    state = js.State.build(model, base_position=jnp.array([0.0, 0.0, 0.02]) - jnp.array([0.0, 0.0, 1.0]) * lowest)
    steps = int(round(SETTLE_SECONDS / float(params.dt)))
    return jax.jit(lambda s: jax.lax.fori_loop(0, steps, lambda _, s: js.step(model, s, params=params)[0], s))(state)


def trip_count(line: str) -> str:
    """The known trip count of the ``while`` instruction on ``line`` of an HLO text, else ``?``."""
    found = re.search(r'"known_trip_count":\{"n":"(\d+)"\}', line)
    return found.group(1) if found else "?"


def figures(model: js.Model, params: js.SimulationParams, state: js.State, batch: int, repeats: int) -> dict:
    """The cost analysis of the step over ``batch`` copies of ``state``, per world-step."""
    states = jax.tree.map(lambda x: jnp.broadcast_to(x, (batch, *x.shape)), state)
    step = jax.jit(jax.vmap(lambda m, p, s: js.step(m, s, params=p)[0], in_axes=(None, None, 0)))
    compiled = step.lower(model, params, states).compile()
    cost = compiled.cost_analysis()
    memory = compiled.memory_analysis()
    jax.block_until_ready(compiled(model, params, states))
    seconds = timing._median_seconds(lambda: compiled(model, params, states), repeats)
    state_bytes = sum(leaf.nbytes for leaf in jax.tree.leaves(state))
    return {
        "flops": cost["flops"] / batch,
        "bytes": cost["bytes accessed"] / batch,
        "temp": memory.temp_size_in_bytes / batch,
        "state": state_bytes,
        "loops": [trip_count(line) for line in compiled.as_text().splitlines() if " while(" in line],
        "us": 1e6 * seconds / batch,
    }


def main() -> None:
    from benchmarks.models import CHOICES, MUJOCO_HUMANOID, model_files

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="all", choices=(*CHOICES, MUJOCO_HUMANOID))
    parser.add_argument("--batches", default="1,1024")
    parser.add_argument("--dt", type=float, default=0.01, help="step size [s]")
    parser.add_argument("--repeats", type=int, default=20, help="timed calls per batch")
    args = parser.parse_args()
    print("| model | dtype | B | flops / world-step | bytes accessed / world-step | temporaries / world | state [B] | bytes / state "
          "| loops' trip counts | µs / world-step | GB/s | GFLOP/s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, path in model_files(args.model).items():
        model = js.load_model(str(path))
        params = js.SimulationParams.build(model, dt=args.dt)
        state = lying_state(model, params)
        dtype = jax.tree.leaves(state)[0].dtype
        for batch in (int(b) for b in args.batches.split(",")):
            f = figures(model, params, state, batch, args.repeats)
            print(f"| {name} | {dtype} | {batch} | {f['flops']:,.0f} | {f['bytes']:,.0f} | {f['temp']:,.0f} | {f['state']:,} | "
                  f"{f['bytes'] / f['state']:,.0f} | {' '.join(f['loops']) or '-'} | {f['us']:.1f} | {f['bytes'] / f['us'] / 1e3:.2f} | "
                  f"{f['flops'] / f['us'] / 1e3:.2f} |", flush=True)


if __name__ == "__main__":
    main()
