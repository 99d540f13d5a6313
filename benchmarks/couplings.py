"""The cost of joint coupling rows (mimic joints) in the implicit step, interleaved in one run.

    python -m benchmarks.couplings [--rows 0 1 2 6] [--steps 200] [--calls 15]

The shipped humanoid (25 joints, floating base) given ``k`` synthetic couplings (joint ``n-k+r``
follows joint ``r`` at half its angle), stepped ``--steps`` times from rest in one jitted
`lax.scan`; the scans of every ``k`` are called in turn ``--calls`` times, so the machine's
drift hits them alike. The table gives the median wall and process CPU µs per step and their
difference to ``k = 0`` (the model without couplings, which compiles to the same program as
before couplings existed). float64.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import timing  # noqa: E402  (applies the CPU flags before jax is used)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

jax.config.update("jax_enable_x64", True)

import jaxsim_like as js  # noqa: E402
from jaxsim_like.dynamics.couplings import JointCouplings  # noqa: E402


def with_rows(model: js.Model, rows: int) -> js.Model:
    """``model`` with ``rows`` couplings: joint ``n - rows + r`` follows joint ``r``, ``q = q_r / 2``."""
    if rows == 0:
        return model.replace(couplings=JointCouplings.none(model.link_mass.dtype))
    n = model.dofs
    couplings = JointCouplings(jnp.full(rows, 0.5), jnp.zeros(rows), jnp.full(rows, 0.02), jnp.ones(rows), tuple(range(n - rows, n)), tuple(range(rows)))
    return model.replace(couplings=couplings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[0, 1, 2, 6])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--calls", type=int, default=15)
    args = parser.parse_args()
    base = js.load_model(js.models.path("humanoid"))
    runs = {}
    for rows in args.rows:
        model = with_rows(base, rows)
        params = js.SimulationParams.build(model, dt=0.001)
        torques = jnp.zeros((args.steps, model.dofs))
        run = jax.jit(lambda state, model=model, params=params: js.rollout(model, state, torques, params=params)[0])
        state = js.State.build(model)
        started = time.perf_counter()
        timing.block(run(state))
        runs[rows] = (run, state, time.perf_counter() - started, [], [])
    for _ in range(args.calls):
        for rows, (run, state, _, wall, cpu) in runs.items():
            started, cpu_started = time.perf_counter(), time.process_time()
            timing.block(run(state))
            wall.append((time.perf_counter() - started) / args.steps * 1e6)
            cpu.append((time.process_time() - cpu_started) / args.steps * 1e6)
    first = args.rows[0]
    wall_0, cpu_0 = statistics.median(runs[first][3]), statistics.median(runs[first][4])
    print("| rows | wall µs/step | +wall | CPU µs/step | +CPU | first call [s] |")
    print("|---|---|---|---|---|---|")
    for rows, (_, _, compile_s, wall, cpu) in runs.items():
        w, c = statistics.median(wall), statistics.median(cpu)
        print(f"| {rows} | {w:.1f} | {w - wall_0:+.1f} | {c:.1f} | {c - cpu_0:+.1f} | {compile_s:.1f} |")


if __name__ == "__main__":
    main()
