"""Gymnasium's MuJoCo robots under zero control, ours against MuJoCo: how far apart the two runs are.

Each robot (Ant, Humanoid, Hopper, Walker2d, HalfCheetah: gymnasium's own MJCF files) starts at
MuJoCo's ``qpos0`` at rest and runs ``--seconds`` with zero control, in float64, at the file's
timestep: MuJoCo with the file's integrator and soft constraints, jaxsim_like with its implicit
step, the file's floor as the terrain (the plane z = 0) and its default contact law (sized from the
robot's mass, 1 mm at rest). The joint limits are MuJoCo's soft limits in both; the contact models
differ (MuJoCo's soft constraints with a friction pyramid against Hunt-Crossley contacts with
tangential memory), so the distance is a report, not a tolerance.

Reported per robot, at a few times: the largest distance [m] between the world positions of the
same bodies (those that are links of our model: bodies welded to their parent are frames), and
the height of the root body in each run.

    python -m benchmarks.gymnasium_agreement [--robots ant,humanoid,hopper,walker2d,half_cheetah] [--seconds 1] [--json results/gymnasium_agreement.json]
"""

from __future__ import annotations

import argparse
import json
import warnings
from pathlib import Path

from benchmarks import timing  # noqa: F401  (applies the XLA CPU settings first)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

jax.config.update("jax_enable_x64", True)

import jaxsim_like as js  # noqa: E402
from jaxsim_like.dynamics.configuration import dof_positions  # noqa: E402
from jaxsim_like.dynamics.kinematics import forward_kinematics  # noqa: E402
from jaxsim_like.simulation.joint_limits import dropped_limits  # noqa: E402
from jaxsim_like.parsers.description import WorldDescription  # noqa: E402

ROBOTS = ("ant", "humanoid", "hopper", "walker2d", "half_cheetah")
TIMES = (0.1, 0.25, 0.5, 1.0)  # [s]: where the distance is reported (those within the run)
INTEGRATORS = {"semi_implicit_euler": "Euler", "rk4": "RK4", "implicit_euler": "implicit"}


def _asset(robot: str) -> Path:
    import gymnasium

    return Path(gymnasium.__file__).parent / "envs" / "mujoco" / "assets" / f"{robot}.xml"


def _mujoco_run(path: Path, steps: int) -> tuple[list[str], np.ndarray]:
    """MuJoCo's body names and world body positions ``(steps + 1, B, 3)`` from ``qpos0`` at rest, zero control."""
    import mujoco

    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    positions = [d.xpos.copy()]
    for _ in range(steps):
        mujoco.mj_step(m, d)
        positions.append(d.xpos.copy())
    return [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, b) for b in range(m.nbody)], np.stack(positions)


def _loaded(path: Path) -> tuple[WorldDescription, js.Model]:
    """The file as a world (its step, integrator and gravity) and its robot."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return js.load_world(path), js.load_model(path)


def _our_run(world: WorldDescription, model: js.Model, steps: int) -> tuple[list[str], np.ndarray, int]:
    """Our link names, world link origins ``(steps + 1, N, 3)`` and the most soft limits engaged
    at once beyond the step's budget (:func:`.joint_limits.dropped_limits`)."""
    params = js.SimulationParams.build(model, dt=float(world.physics.step_size), gravity=world.gravity)
    state = js.State.build(model)
    torques = jnp.zeros((steps, model.dofs))
    run = jax.jit(lambda s, u: js.rollout(model, s, u, params=params)[1][0])
    states = run(state, torques)
    origins = jax.jit(jax.vmap(lambda s: forward_kinematics(model, s)[:, :3, 3]))(states)
    start = forward_kinematics(model, state)[:, :3, 3]
    dropped = jax.vmap(lambda q: dropped_limits(model, dof_positions(model, q)))(states.joint_positions) if model.soft_limits.count else jnp.zeros(1, int)
    return list(model.link_names), np.concatenate([np.asarray(start)[None], np.asarray(origins)]), int(dropped.max())


def compare(robot: str, seconds: float) -> dict:
    path = _asset(robot)
    world, model = _loaded(path)
    dt, integrator = float(world.physics.step_size), world.physics.integrator
    steps = int(round(seconds / dt))
    names, ours, dropped = _our_run(world, model, steps)
    bodies, theirs = _mujoco_run(path, steps)
    shared = [(names.index(b), k) for k, b in enumerate(bodies) if b in names]
    ours_shared = ours[:, [i for i, _ in shared]]
    theirs_shared = theirs[:, [k for _, k in shared]]
    distance = np.linalg.norm(ours_shared - theirs_shared, axis=-1).max(axis=-1)
    root, root_body = next((i, k) for i, k in shared if bodies[k] != "world")  # the first moving body
    result = {"robot": robot, "dt": dt, "mujoco_integrator": INTEGRATORS.get(integrator, integrator), "bodies": len(shared), "dropped_limits": dropped, "at": {}}
    for t in TIMES:
        if t <= seconds + 1e-9:
            k = int(round(t / dt))
            result["at"][str(t)] = {
                "distance": float(distance[k]),
                "root_height_ours": float(ours[k, root, 2]),
                "root_height_mujoco": float(theirs[k, root_body, 2]),
            }
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", default=",".join(ROBOTS))
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    results = [compare(robot, args.seconds) for robot in args.robots.split(",")]
    print("| robot | dt | MuJoCo's integrator | t [s] | largest body distance [m] | root height ours / MuJoCo [m] |")
    print("|---|---|---|---|---|---|")
    for r in results:
        for t, at in r["at"].items():
            print(f"| {r['robot']} | {r['dt']:g} | {r['mujoco_integrator']} | {t} | {at['distance']:.4f} | "
                  f"{at['root_height_ours']:.3f} / {at['root_height_mujoco']:.3f} |")
    print("Soft limits engaged beyond the step's budget, most at once: " + ", ".join(f"{r['robot']} {r['dropped_limits']}" for r in results))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
