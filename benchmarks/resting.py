"""How still a robot lies after an unperturbed limp drop, at each step size.

    python -m benchmarks.resting [--model humanoid|icub|mujoco_humanoid|all] [--dts 0.001,0.005,0.01] [--seconds 12] [--after 5]

The robot (joints at zero, zero torques) is dropped with its lowest collidable point 0.5 m above
the ground, as in ``tests/simulation/test_sim_implicit.py``, and simulated for ``--seconds`` with
the implicit step. Printed per step size: the fastest joint speed [rad/s] in each simulated second,
and after ``--after`` seconds the fastest joint, its speed and the largest base speeds (linear
[m/s], angular [rad/s]). Issue 33's target: every joint below 0.05 rad/s after 5 s at 10 ms.
Float64 unless ``JAX_ENABLE_X64=0``. ``mujoco_humanoid`` is MuJoCo's own humanoid MJCF (the model of
the MuJoCo C rows of :mod:`benchmarks.simulated_seconds`): only its feet touch the floor (its four
contact pairs), so it does not lie on the ground but hangs below it by its feet.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("JAX_ENABLE_X64", "1")

HEIGHT = 0.5
TARGET = 0.05  # rad/s


def rest(path: str, dt: float, seconds: float):
    """``(dtype, finite, joint_speeds (steps, n), base_speeds (steps, 6), joint_names)`` of the drop."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    import jaxsim_like as js
    from jaxsim_like.simulation.step import contact_point_positions

    model = js.load_model(path)
    upright = js.State.build(model, base_position=jnp.zeros(3))
    lowest = float(jnp.min(contact_point_positions(model, upright)[:, 2]))
    state = js.State.build(model, base_position=jnp.array([0.0, 0.0, HEIGHT - lowest]))
    params = js.SimulationParams.build(model, dt=dt)

    @jax.jit
    def run(state):
        def one(state, _):
            state, out = js.step(model, state, params=params)
            return state, (out.finite, jnp.abs(state.joint_velocities), jnp.abs(state.base_velocity))

        return jax.lax.scan(one, state, None, length=int(round(seconds / dt)))[1]

    finite, joints, base = (np.asarray(x) for x in run(state))
    return str(joints.dtype), bool(finite.all()), joints, base, model.joint_names


def main() -> None:
    from benchmarks.models import CHOICES, MUJOCO_HUMANOID, model_files

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="all", choices=(*CHOICES, MUJOCO_HUMANOID))
    parser.add_argument("--dts", default="0.001,0.005,0.01", help="step sizes [s]")
    parser.add_argument("--seconds", type=float, default=12.0, help="simulated seconds")
    parser.add_argument("--after", type=float, default=5.0, help="the resting figures from this time on [s]")
    args = parser.parse_args()
    if not 0.0 <= args.after < args.seconds:
        parser.error(f"--after ({args.after:g} s) must lie within the run (--seconds {args.seconds:g})")
    import numpy as np

    for name, path in model_files(args.model).items():
        for dt in (float(x) for x in args.dts.split(",")):
            dtype, finite, joints, base, names = rest(str(path), dt, args.seconds)
            per_second = int(round(1.0 / dt))
            windows = " ".join(f"{joints[i:i + per_second].max():.3g}" for i in range(0, len(joints), per_second))
            late = slice(int(round(args.after / dt)), None)
            fastest = joints[late].max(axis=0)
            worst = int(np.argmax(fastest))
            verdict = "still" if fastest[worst] < TARGET else "moving"
            print(f"[{name}] dt {dt * 1000:g} ms ({dtype}, finite {finite}): fastest joint per second: {windows}", flush=True)
            print(f"[{name}] dt {dt * 1000:g} ms: after {args.after:g} s {verdict}: {names[worst]} {fastest[worst]:.4g} rad/s; base "
                  f"{base[late, :3].max():.3g} m/s, {base[late, 3:].max():.3g} rad/s", flush=True)


if __name__ == "__main__":
    main()
