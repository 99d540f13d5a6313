"""Object-API overhead: ``Simulator.run()`` on a humanoid world versus the functional world step.

The same run on every side: the shipped humanoid standing on a ground plane, ``steps_per_run``
physics steps per call, called from Python, then the joint positions read as numpy. ``bare`` is
one ``jax.jit`` of a ``lax.fori_loop`` over :func:`jaxsim_like.step` with zero torques;
``world`` the same loop over :func:`jaxsim_like.simulation.world.world_step` with the idle
control table (the controllers in the core, as the object API runs them); the object API runs
that world step (its wrench slots and force history are compiled in only once a model uses
them), in a world given physics with ``set_physics_engine``. A last column times the object API
with every joint under a position PID. The run fails (exit status 1) when the idle overhead over
the world step exceeds ``MAX_OVERHEAD`` or when a run compiles after the first one.

    python -m benchmarks.api [--repeats 200] [--rounds 5] [--steps 1 10]

Results go to ``benchmarks/results/api.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

import jaxsim_like as js
from benchmarks import timing
from jaxsim_like import api, models
from jaxsim_like.api import engine
from jaxsim_like.simulation import control
from jaxsim_like.simulation.world import ModelInputs, WorldModel, world_step

MAX_OVERHEAD = 1.5
STEP_SIZE = 0.001


def _median_us(call, repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        samples.append(time.perf_counter() - start)
    return 1e6 * statistics.median(samples)


def bare_call(steps: int):
    """One call of ``steps`` jitted functional steps of the humanoid on the ground, then the joint
    positions read as a numpy array."""
    model = js.load_model(models.path("humanoid"))
    params = js.SimulationParams.build(model, dt=STEP_SIZE, gravity=(0.0, 0.0, -9.8), terrain=js.Terrain.plane())

    def run(model, state, params):
        torques = jnp.zeros(model.dofs)
        return jax.lax.fori_loop(0, steps, lambda _, s: js.step(model, s, joint_torques=torques, params=params)[0], state)

    jitted = jax.jit(run)
    holder = {"state": js.State.build(model)}

    def call():
        holder["state"] = jitted(model, holder["state"], params)
        return np.asarray(holder["state"].joint_positions)

    return call


def world_call(steps: int):
    """One call of ``steps`` jitted functional world steps of the humanoid with its idle control
    table, then the joint positions read as a numpy array."""
    model = js.load_model(models.path("humanoid"))
    world = WorldModel.build([model], dt=STEP_SIZE, gravity=(0.0, 0.0, -9.8))
    table = jnp.asarray(control.default_table(np.asarray(model.effort_limit), np.asarray(model.velocity_limit)))
    inputs = [ModelInputs(table=table, period=jnp.asarray(STEP_SIZE))]

    def run(world, state):
        return jax.lax.fori_loop(0, steps, lambda _, s: world_step(world, s, inputs)[0], state)

    jitted = jax.jit(run)
    holder = {"state": world.initial_state()}

    def call():
        holder["state"] = jitted(world, holder["state"])
        return np.asarray(holder["state"].states[0].joint_positions)

    return call


def api_call(steps: int, controlled: bool):
    """``Simulator.run()`` of the same world (idle joints, or position PIDs), then the joint
    positions read with ``Model.joint_positions()``."""
    simulator = api.Simulator(step_size=STEP_SIZE, rtf=float("inf"), steps_per_run=steps)
    simulator.initialize()
    world = simulator.get_world()
    world.set_physics_engine(api.PhysicsEngine_dart)
    world.insert_model(api.get_ground_plane())
    world.insert_model(models.path("humanoid"))
    humanoid = world.get_model("humanoid")
    if controlled:
        humanoid.set_controller_period(STEP_SIZE)
        for joint in humanoid.joints():
            joint.set_pid(api.PID(200, 0, 2))
        humanoid.set_joint_control_mode(api.JointControlMode.position)

    def call():
        simulator.run()
        return humanoid.joint_positions()

    return call


def measure(calls: dict, repeats: int, rounds: int) -> tuple[dict, int]:
    """The smallest median µs of each call over interleaved rounds (the machine's load moves the
    figures), and the number of compilations of the world's run during the timed calls."""
    for call in calls.values():
        for _ in range(5):
            call()
    before = engine.run_world._cache_size()
    medians = {name: [] for name in calls}
    for _ in range(rounds):
        for name, call in calls.items():
            medians[name].append(_median_us(call, repeats))
    return {name: min(values) for name, values in medians.items()}, engine.run_world._cache_size() - before


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, nargs="+", default=[1, 10])
    args = parser.parse_args(argv)
    jax.config.update("jax_enable_x64", True)

    rows, ok = [], True
    for steps in args.steps:
        calls = {
            "bare": bare_call(steps), "world": world_call(steps), "idle": api_call(steps, False), "pid": api_call(steps, True),
        }
        times, compilations = measure(calls, args.repeats, args.rounds)
        bare, world, idle, pid = times["bare"], times["world"], times["idle"], times["pid"]
        row = {
            "steps_per_run": steps,
            "bare_us": bare,
            "world_us": world,
            "api_idle_us": idle,
            "api_pid_us": pid,
            "overhead_idle": idle / world,
            "overhead_pid": pid / world,
            "compilations_after_first_run": compilations,
        }
        rows.append(row)
        ok &= row["overhead_idle"] <= MAX_OVERHEAD and compilations == 0
        print(
            f"steps_per_run={steps:3d}  step {bare:9.1f} µs  world step {world:9.1f} µs  api idle {idle:9.1f} µs "
            f"({idle / world:4.2f}x)  api pid {pid:9.1f} µs ({pid / world:4.2f}x)  compilations after the first run: {compilations}"
        )
    timing.RESULTS_DIRECTORY.mkdir(parents=True, exist_ok=True)
    (timing.RESULTS_DIRECTORY / "api.json").write_text(json.dumps({"max_overhead": MAX_OVERHEAD, "rows": rows}, indent=2))
    if not ok:
        print(f"FAILED: object-API overhead above {MAX_OVERHEAD}x or a run compiled", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
