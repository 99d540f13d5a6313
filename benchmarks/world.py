"""The world step's cost against the number of models and of candidate pairs.

    python -m benchmarks.world [--steps 200] [--rounds 3]

The shipped humanoid standing on the ground, alone and with 1, 4 and 16 free 0.2 m cubes around
its feet (resting on the ground, the nearest touching its shins), one world step
(:func:`jaxsim_like.simulation.world.world_step`, the implicit integrator at 1 ms) per iteration
of a jitted ``lax.fori_loop``. Reported per world: the candidate pairs of its collision table
and the contact slots its broad phase keeps, the compile time and the in-graph µs per step
(median of interleaved rounds). The first row is the humanoid's :func:`jaxsim_like.step` itself,
the second the world of that one model (target: at most 1.1x the step).

Results go to ``benchmarks/results/world.json``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import timing  # noqa: E402  (the shared XLA settings, before the backend starts)

import jax  # noqa: E402
import numpy as np  # noqa: E402

import jaxsim_like as js  # noqa: E402
from jaxsim_like import models  # noqa: E402
from jaxsim_like.simulation.world import WorldModel, world_step  # noqa: E402

DT = 0.001
MAX_WORLD_OF_ONE = 1.1
CUBE = """<robot name="cube{index}"><link name="box"><inertial><mass value="2"/>
  <inertia ixx="0.0133" iyy="0.0133" izz="0.0133" ixy="0" ixz="0" iyz="0"/></inertial>
  <collision><geometry><box size="0.2 0.2 0.2"/></geometry></collision></link></robot>"""


def cube_positions(count: int) -> list[list[float]]:
    """Cube centres on the ground on rings around the humanoid's feet (the first ring 0.2 m out)."""
    positions = []
    ring, radius = 0, 0.2
    while len(positions) < count:
        around = 6 + 6 * ring
        for k in range(around):
            angle = 2 * np.pi * k / around
            positions.append([radius * np.cos(angle), radius * np.sin(angle), 0.1])
        ring, radius = ring + 1, radius + 0.3
    return positions[:count]


def loop(step, steps: int):
    """A jitted function running ``step(carry) -> carry`` ``steps`` times."""

    @jax.jit
    def run(*args):
        *constants, carry = args
        return jax.lax.fori_loop(0, steps, lambda _, c: step(*constants, c), carry)

    return run


def case_step(humanoid: js.Model, standing: js.State, steps: int):
    params = js.SimulationParams.build(humanoid, dt=DT)
    run = loop(lambda model, p, state: js.step(model, state, params=p)[0], steps)
    return {"case": "humanoid: step", "models": 1, "candidate_pairs": 0, "slots": 0}, run, (humanoid, params, standing)


def case_world(humanoid: js.Model, standing: js.State, cubes: int, steps: int):
    bodies = [js.load_model(CUBE.format(index=i)) for i in range(cubes)]
    world = WorldModel.build([humanoid, *bodies], dt=DT)
    states = [standing] + [js.State.build(b, base_position=p) for b, p in zip(bodies, cube_positions(cubes))]
    table = world.collision
    row = {
        "case": f"humanoid + {cubes} cubes" if cubes else "humanoid: world of one",
        "models": 1 + cubes,
        "candidate_pairs": 0 if table is None else sum(g.candidates for g in table.groups),
        "slots": 0 if table is None else table.size,
    }
    run = loop(lambda w, state: world_step(w, state)[0], steps)
    return row, run, (world, world.initial_state(states))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cubes", type=int, nargs="+", default=[1, 4, 16])
    args = parser.parse_args(argv)

    humanoid = js.load_model(models.path("humanoid"))
    standing = js.State.build(humanoid)
    cases = [case_step(humanoid, standing, args.steps), case_world(humanoid, standing, 0, args.steps)]
    cases += [case_world(humanoid, standing, n, args.steps) for n in args.cubes]
    for row, run, inputs in cases:
        start = time.perf_counter()
        timing.block(run(*inputs))
        row["compile_s"] = time.perf_counter() - start
    samples = {row["case"]: [] for row, _, _ in cases}
    for _ in range(args.rounds):
        for row, run, inputs in cases:
            start = time.perf_counter()
            timing.block(run(*inputs))
            samples[row["case"]].append(1e6 * (time.perf_counter() - start) / args.steps)
    rows = []
    for row, _, _ in cases:
        row["us_per_step"] = statistics.median(samples[row["case"]])
        rows.append(row)
    base = rows[0]["us_per_step"]
    for row in rows:
        row["vs_step"] = row["us_per_step"] / base
    timing.print_table(rows, ["case", "models", "candidate_pairs", "slots", "compile_s", "us_per_step", "vs_step"])
    timing.write_json(timing.RESULTS_DIRECTORY / "world.json", {"environment": timing.environment(), "rows": rows})
    ratio = rows[1]["vs_step"]
    print(f"world of one model / step: {ratio:.3f} (target <= {MAX_WORLD_OF_ONE})")
    return 0 if ratio <= MAX_WORLD_OF_ONE else 1


if __name__ == "__main__":
    raise SystemExit(main())
