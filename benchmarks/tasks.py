"""Environment steps per second of the quadruped task, against MJX on the same quadruped, same run.

Ours: ``jaxsim_like.tasks.quadruped_walk`` (implicit step of 5 ms, 4 steps per action, joint
position targets through the world's PD table, randomised masses, friction and ground height,
automatic reset), ``jit(vmap(task.step))`` at each batch size. MJX: the shipped quadruped URDF
through MuJoCo's compiler (``benchmarks.peers.mjx_peer.mjcf_from_urdf``: free joint, ground
plane, trunk box and foot spheres colliding with the ground, one motor per joint; MuJoCo ships
no quadruped and MuJoCo Playground is not installed), the same 5 ms x 4 steps per action with
the same PD computed in JAX before every ``mjx.step``, the same observation, reward,
termination and automatic reset (``jnp.where`` to a fixed start), Euler with the Newton solver
at 1 iteration (``mjx_peer.SOLVER_OPTIONS``). Both in float32 (MJX's precision), random actions,
after a warm-up, medians of ``--repeats`` calls; an environment step is one action (4 physics steps).

``--survival`` also runs the task at several step sizes (one action every 20 ms) from 64 random
starts for 4 s with random and with zero actions and counts the worlds that fell or went non-finite.

    python benchmarks/tasks.py [--batches 1024 4096] [--repeats 20] [--survival] [--no-mjx]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("JAX_ENABLE_X64", "0")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import timing  # noqa: E402  (applies the project's XLA CPU flags first)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from jaxsim_like import models, tasks  # noqa: E402
from jaxsim_like.tasks import quadruped as quad  # noqa: E402

DT, SUBSTEPS = 0.005, 4
RANDOMISATION = tasks.Randomisation.build(mass_scale=(0.9, 1.1), friction=(0.8, 1.2), terrain_height=(-0.02, 0.02))


def median_call_seconds(step, state, actions, repeats: int) -> tuple[float, float, object]:
    """(first call, median of later calls) [s]; each call takes the next batch of actions."""
    began = time.perf_counter()
    state = timing.block(step(state, actions[0]))
    first = time.perf_counter() - began
    samples = []
    for i in range(repeats):
        began = time.perf_counter()
        state = timing.block(step(state, actions[(i + 1) % len(actions)]))
        samples.append(time.perf_counter() - began)
    return first, statistics.median(samples), state


def ours(batch: int, repeats: int) -> dict:
    task = tasks.quadruped_walk(dt=DT, substeps=SUBSTEPS, randomisation=RANDOMISATION)
    reset = jax.jit(jax.vmap(task.reset))
    step = jax.jit(jax.vmap(task.step))
    state = reset(jax.random.split(jax.random.PRNGKey(0), batch))
    actions = jax.random.uniform(jax.random.PRNGKey(1), (8, batch, task.action_size), minval=-1, maxval=1)
    first, median, state = median_call_seconds(step, state, actions, repeats)
    return {"library": "jaxsim_like", "batch": batch, "first_call_s": first, "median_s": median,
            "env_steps_per_s": batch / median, "finite": bool(np.isfinite(np.asarray(state.obs)).all())}


def mjx_task(batch: int, repeats: int) -> dict:
    import mujoco
    from mujoco import mjx

    from benchmarks.peers import mjx_peer

    host = mjx_peer.load(models.path("quadruped"), DT)
    names = [host.joint(i).name for i in range(1, host.njnt)]  # after the free joint
    if names != list(tasks.quadruped_walk().world.models[0].joint_names):
        raise RuntimeError(f"MuJoCo's joint order differs: {names}")
    qpos = mjx_peer.standing_qpos(host, depth=0.0)
    qpos[7:] = quad.stance()
    qpos[2] = quad.STANCE_HEIGHT + 0.01
    model = mjx.put_model(host)
    data0 = mjx.put_data(host, mujoco.MjData(host)).replace(qpos=jnp.asarray(qpos, jnp.float32))
    stance = jnp.asarray(quad.stance(), jnp.float32)
    kp, kd, scale = 60.0, 1.0, 0.5
    limit = jnp.asarray(tasks.quadruped_walk().world.models[0].effort_limit, jnp.float32)
    w = {name: float(value) for name, value in tasks.quadruped_walk().settings.items()}

    def observe(d):
        q = d.qpos
        w, x, y, z = q[3:7]
        R = jnp.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                       [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                       [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
        gravity = R.T @ jnp.array([0.0, 0.0, -1.0])
        obs = jnp.concatenate([q[2:3], gravity, R.T @ d.qvel[:3], d.qvel[3:6], q[7:] - stance, d.qvel[6:]])
        return obs, R

    def reset(key):
        u = 0.05 * jax.random.uniform(key, (2, 12), minval=-1, maxval=1)
        d = data0.replace(qpos=data0.qpos.at[7:].add(u[0]), qvel=data0.qvel.at[6:].set(u[1]))
        return d, observe(d)[0], key

    def step(carry, action):
        d, _, key = carry
        target = stance + scale * jnp.clip(action, -1, 1)
        x0 = d.qpos[0]
        for _ in range(SUBSTEPS):
            tau = jnp.clip(kp * (target - d.qpos[7:]) - kd * d.qvel[6:], -limit, limit)
            d = mjx.step(model, d.replace(ctrl=tau))
        obs, R = observe(d)
        speed = (d.qpos[0] - x0) / (SUBSTEPS * DT)
        effort = jnp.mean((d.ctrl / limit) ** 2)
        reward = (w["forward_weight"] * speed + w["alive_bonus"] - w["effort_cost"] * effort
                  - w["height_cost"] * (d.qpos[2] - quad.STANCE_HEIGHT) ** 2)
        done = (d.qpos[2] < w["min_height"]) | (R[2, 2] < w["min_upright"]) | ~jnp.isfinite(obs).all()
        key, sub = jax.random.split(key)
        fresh = reset(sub)
        d, obs, key = jax.tree.map(lambda a, b: jnp.where(done, a, b), fresh, (d, obs, key))
        return (d, obs, key), reward

    batched_reset = jax.jit(jax.vmap(reset))
    batched_step = jax.jit(jax.vmap(lambda c, a: step(c, a)[0]))
    state = batched_reset(jax.random.split(jax.random.PRNGKey(0), batch))
    actions = jax.random.uniform(jax.random.PRNGKey(1), (8, batch, 12), minval=-1, maxval=1)
    first, median, state = median_call_seconds(batched_step, state, actions, repeats)
    return {"library": f"mjx {mujoco.__version__}", "batch": batch, "first_call_s": first, "median_s": median,
            "env_steps_per_s": batch / median, "finite": bool(np.isfinite(np.asarray(state[1])).all())}


def survival(dts=(0.0025, 0.005, 0.01, 0.02), worlds: int = 64, seconds: float = 4.0) -> list[dict]:
    rows = []
    for dt in dts:
        substeps = max(1, round(0.02 / dt))
        task = tasks.quadruped_walk(dt=dt, substeps=substeps, auto_reset=False, randomisation=RANDOMISATION)
        start = jax.jit(jax.vmap(task.reset))(jax.random.split(jax.random.PRNGKey(0), worlds))
        step = jax.jit(jax.vmap(task.step))
        for kind, amplitude in (("zero", 0.0), ("random", 1.0)):
            state, fell, nonfinite = start, np.zeros(worlds, bool), np.zeros(worlds, bool)
            for i in range(int(round(seconds / (dt * substeps)))):
                action = amplitude * jax.random.uniform(jax.random.PRNGKey(i), (worlds, 12), minval=-1, maxval=1)
                state = step(state, action)
                fell |= np.asarray(state.terminated)
                nonfinite |= ~np.isfinite(np.asarray(state.world.states[0].base_position)).all(-1)
            rows.append({"dt_ms": 1e3 * dt, "substeps": substeps, "actions": kind, "worlds": worlds,
                         "fell": int(fell.sum()), "nonfinite": int(nonfinite.sum())})
            print(rows[-1], flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, nargs="+", default=[1024, 4096])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--no-mjx", action="store_true")
    parser.add_argument("--survival", action="store_true", help="also count falls at several step sizes")
    args = parser.parse_args(argv)
    rows = []
    for batch in args.batches:
        rows.append(ours(batch, args.repeats))
        print(rows[-1], flush=True)
        if not args.no_mjx:
            rows.append(mjx_task(batch, args.repeats))
            print(rows[-1], flush=True)
    timing.print_table(rows)
    result = {"environment": timing.environment(), "throughput": rows}
    if args.survival:
        result["survival"] = survival()
    print("wrote", timing.write_json(timing.RESULTS_DIRECTORY / "tasks.json", result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
