"""The implicit step's cost against the explicit one, one world in-graph, interleaved.

    python -m benchmarks.implicit_cost [--model humanoid|quadruped|all] [--dt 0.01] [--steps 20] [--calls 61]

For each shipped model: one limp world, joints perturbed by up to +-0.5 rad, its lowest
collidable point 2 cm above the ground, stepped ``--steps`` times in one jitted `lax.scan` with
the default implicit step and with the explicit semi-implicit Euler (default SimulationParams at
``--dt``). The two scans are called in turn ``--calls`` times each, so the machine's drift hits
both alike; the table gives the median µs per step of each and their ratio (issue 11: at most 2x,
stretch 1.5x). Both steps do a fixed amount of work whatever the state, so the explicit step's
divergence at large steps does not change its cost; the table says whether each stayed finite.
float32 unless ``JAX_ENABLE_X64=1``.
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
import numpy as np  # noqa: E402

import jaxsim_like as js  # noqa: E402
from jaxsim_like.simulation.step import contact_point_positions  # noqa: E402

HEIGHT = 0.02
SPREAD = 0.5
INTEGRATORS = ("implicit_euler", "semi_implicit_euler")


def scans(path: str | Path, dt: float, steps: int) -> tuple[dict, tuple]:
    """Integrator -> jitted ``steps``-step scan, and its arguments ``(state, torques)``."""
    model = js.load_model(path)
    upright = js.State.build(model, base_position=np.zeros(3))
    base = np.array([0.0, 0.0, HEIGHT - float(jnp.min(contact_point_positions(model, upright)[:, 2]))])
    joints = np.random.default_rng(0).uniform(-SPREAD, SPREAD, model.dofs)
    state = js.State.build(model, base_position=base, joint_positions=joints)
    torques = jnp.zeros(model.dofs, model.link_mass.dtype)
    functions = {}
    for integrator in INTEGRATORS:
        params = js.SimulationParams.build(model, dt=dt, integrator=integrator)

        def run(state, torques, params=params):
            step = lambda s, _: (js.step(model, s, joint_torques=torques, params=params)[0], None)
            return jax.lax.scan(step, state, None, length=steps)[0]

        functions[integrator] = jax.jit(run)
    return functions, (state, torques)


def measure(name: str, dt: float, steps: int, calls: int) -> dict:
    """One model's row: median µs per step of each integrator, their ratio, finiteness."""
    functions, arguments = scans(js.models.path(name), dt, steps)
    finite = {}
    for integrator, function in functions.items():
        final = timing.block(function(*arguments))
        finite[integrator] = bool(all(np.all(np.isfinite(leaf)) for leaf in jax.tree.leaves(final) if jnp.issubdtype(leaf.dtype, jnp.floating)))
    samples = {integrator: [] for integrator in functions}
    for _ in range(calls):
        for integrator, function in functions.items():
            start = time.perf_counter()
            timing.block(function(*arguments))
            samples[integrator].append(1e6 * (time.perf_counter() - start) / steps)
    implicit, explicit = (statistics.median(samples[integrator]) for integrator in INTEGRATORS)
    return {
        "model": name,
        "dtype": str(arguments[1].dtype),
        "implicit_us": implicit,
        "explicit_us": explicit,
        "ratio": implicit / explicit,
        "implicit_finite": finite["implicit_euler"],
        "explicit_finite": finite["semi_implicit_euler"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", choices=("humanoid", "quadruped", "all"), default="all")
    parser.add_argument("--dt", type=float, default=0.01, help="step size [s]")
    parser.add_argument("--steps", type=int, default=20, help="steps per jitted scan")
    parser.add_argument("--calls", type=int, default=61, help="timed calls of each scan")
    arguments = parser.parse_args()
    names = ("humanoid", "quadruped") if arguments.model == "all" else (arguments.model,)
    rows = [measure(name, arguments.dt, arguments.steps, arguments.calls) for name in names]
    timing.print_table(rows)
    timing.write_json(f"implicit-cost-{rows[0]['dtype']}.json", {"environment": timing.environment(), "rows": rows})


if __name__ == "__main__":
    main()
