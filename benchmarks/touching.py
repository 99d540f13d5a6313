"""Bodies touching bodies, against MuJoCo C: what each keeps still, and simulated seconds per wall second.

Scenes (float64, one step size each, the same masses, sizes and friction in both libraries):

- ``ramp``: a 1 kg, 10 cm box on a 20 degree ramp of another model (static in MuJoCo), friction 0.8;
- ``stack``: five 1 kg, 10 cm boxes stacked on the ground, aligned;
- ``lean``: the same five boxes turning by 3 cm a level (a stable lean, 2 cm of margin or more).

For each scene and library: the largest displacement of a box between 0.5 s and the end of the
run (``drift``), and the simulated seconds per wall second of one world and of ``--batch`` worlds
(jaxsim_like: ``jit(vmap(world_rollout))`` after compilation and warm-up, compile time apart;
MuJoCo C: ``mujoco.rollout`` on a thread pool of every core), medians of ``--repeats``.

    python -m benchmarks.touching [--seconds 10] [--batch 64] [--repeats 3] [--json results/touching.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

from benchmarks import timing  # noqa: F401  (applies the XLA CPU settings first)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

jax.config.update("jax_enable_x64", True)

import jaxsim_like as js  # noqa: E402
from jaxsim_like.dynamics import spatial  # noqa: E402
from jaxsim_like.simulation.world import WorldModel, world_rollout  # noqa: E402

TILT = np.deg2rad(20.0)
LEAN = [(0, 0), (1, 0), (1, 1), (0, 1), (0, 0)]
SCENES = {"ramp": 0.005, "stack": 0.005, "lean": 0.005}


def _box_urdf(name: str, side: float, mass: float) -> str:
    inertia = mass * side**2 / 6
    return (f'<robot name="{name}"><link name="link"><inertial><mass value="{mass}"/><inertia ixx="{inertia}" iyy="{inertia}"'
            f' izz="{inertia}" ixy="0" ixz="0" iyz="0"/></inertial><collision><geometry><box size="{side} {side} {side}"/>'
            "</geometry></collision></link></robot>")


def _box_positions(scene: str) -> list[np.ndarray]:
    """The start positions [m] of the free boxes of ``scene`` (just touching)."""
    if scene == "ramp":
        normal = np.array([-np.sin(TILT), 0.0, np.cos(TILT)])  # the ramp turned by -TILT about y
        return [np.array([0.0, 0.0, 1.0]) + (0.15 - 2e-4) * normal]
    offset = 0.03 if scene == "lean" else 0.0
    return [np.array([LEAN[i][0] * offset, LEAN[i][1] * offset, 0.05 + 0.1 * i - 2e-4 * (i + 1)]) for i in range(5)]


def ours(scene: str, dt: float, seconds: float, batch: int, repeats: int) -> dict:
    quaternion = np.array([np.cos(TILT / 2), 0.0, -np.sin(TILT / 2), 0.0])
    boxes = [js.load_model(_box_urdf(f"box{i}", 0.1, 1.0)) for i in range(len(_box_positions(scene)))]
    if scene == "ramp":
        ramp = js.load_model(_box_urdf("ramp", 0.2, 10.0).replace('size="0.2 0.2 0.2"', 'size="2 1 0.2"'), floating_base=False)
        models = [ramp, *boxes]
        states = [js.State.build(ramp, base_position=[0.0, 0.0, 1.0], base_quaternion=quaternion)]
        states += [js.State.build(boxes[0], base_position=_box_positions(scene)[0], base_quaternion=quaternion)]
        world = WorldModel.build(models, dt=dt, terrain=js.Terrain.plane(-5.0), friction=0.8)
    else:
        models = boxes
        states = [js.State.build(b, base_position=p) for b, p in zip(boxes, _box_positions(scene))]
        world = WorldModel.build(models, dt=dt)
    state = world.initial_state(states)
    chunk = int(round(0.5 / dt))
    step = jax.jit(lambda s: world_rollout(world, s, None, chunk)[0])
    start = time.perf_counter()
    timing.block(step(state))
    compile_seconds = time.perf_counter() - start
    positions = []
    for _ in range(int(round(seconds / 0.5))):
        state = step(state)
        positions.append(np.stack([np.asarray(s.base_position) for s in state.states[len(models) - len(boxes):]]))
    drift = float(np.linalg.norm(np.stack(positions[1:]) - positions[0], axis=-1).max())
    batched = jax.jit(jax.vmap(lambda s: world_rollout(world, s, None, chunk)[0]))
    many = jax.tree.map(lambda x: jnp.broadcast_to(x, (batch,) + x.shape), state)
    timing.block(batched(many))
    rates = {}
    for size, call, arg in ((1, step, state), (batch, batched, many)):
        samples = []
        for _ in range(repeats):
            start = time.perf_counter()
            timing.block(call(arg))
            samples.append(time.perf_counter() - start)
        rates[str(size)] = size * chunk * dt / statistics.median(samples)
    return {"library": "jaxsim_like", "scene": scene, "dt": dt, "drift_mm": 1e3 * drift, "rates": rates, "compile s": compile_seconds}


def _mjcf(scene: str, dt: float) -> str:
    boxes = "".join(
        f'<body pos="{p[0]} {p[1]} {p[2]}"{quat}><freejoint/><geom type="box" size=".05 .05 .05" mass="1" friction="{mu} 0.005 0.0001"/></body>'
        for p, quat, mu in [
            (p, ' quat="{} 0 {} 0"'.format(np.cos(TILT / 2), -np.sin(TILT / 2)) if scene == "ramp" else "", 0.8 if scene == "ramp" else 0.5)
            for p in _box_positions(scene)
        ]
    )
    ramp = (f'<geom type="box" size="1 .5 .1" pos="0 0 1" quat="{np.cos(TILT / 2)} 0 {-np.sin(TILT / 2)} 0" friction="0.8 0.005 0.0001"/>'
            if scene == "ramp" else "")
    floor = '<geom type="plane" size="5 5 .1" pos="0 0 {}"/>'.format(-5.0 if scene == "ramp" else 0.0)
    return f'<mujoco><option timestep="{dt}"/><worldbody>{floor}{ramp}{boxes}</worldbody></mujoco>'


def mujoco_c(scene: str, dt: float, seconds: float, batch: int, repeats: int) -> dict:
    import mujoco
    from mujoco import rollout

    model = mujoco.MjModel.from_xml_string(_mjcf(scene, dt))
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    data = mujoco.MjData(model)
    initial = np.empty(mujoco.mj_stateSize(model, spec))
    mujoco.mj_getState(model, data, initial, spec)
    threads = len(os.sched_getaffinity(0))
    steps = int(round(seconds / dt))
    with rollout.Rollout(nthread=threads) as pool:
        datas = [mujoco.MjData(model) for _ in range(threads)]
        control = np.zeros((1, 1, model.nu))
        trajectory = rollout.rollout(model, datas[0], initial[None], control, nstep=steps)[0][0]
        boxes = len(_box_positions(scene))
        positions = np.stack([trajectory[:, 1 + 7 * b : 4 + 7 * b] for b in range(boxes)], axis=1)
        settled = int(round(0.5 / dt)) - 1
        drift = float(np.linalg.norm(positions[settled:] - positions[settled], axis=-1).max())
        chunk = int(round(0.5 / dt))
        rates = {}
        for size in (1, batch):
            states = np.tile(initial, (size, 1))
            samples = []
            for _ in range(repeats):
                start = time.perf_counter()
                if size == 1:
                    rollout.rollout(model, datas[0], states, control, nstep=chunk)
                else:
                    pool.rollout(model, datas, states, control, nstep=chunk)
                samples.append(time.perf_counter() - start)
            rates[str(size)] = size * chunk * dt / statistics.median(samples)
    return {"library": "mujoco C rollout", "scene": scene, "dt": dt, "drift_mm": 1e3 * drift, "rates": rates, "threads": threads}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenes", default=",".join(SCENES))
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    rows = []
    print(f"| scene | library | dt [ms] | drift after 0.5 s [mm] | sim s / wall s, 1 world | {args.batch} worlds | compile [s] |")
    print("|---|---|---|---|---|---|---|")
    for scene in args.scenes.split(","):
        dt = SCENES[scene]
        for measure in (ours, mujoco_c):
            row = measure(scene, dt, args.seconds, args.batch, args.repeats)
            rows.append(row)
            rates = row["rates"]
            print(f"| {scene} | {row['library']} | {1e3 * dt:g} | {row['drift_mm']:.3f} | {rates['1']:.1f} | {rates[str(args.batch)]:.1f} |"
                  f" {row.get('compile s', float('nan')):.1f} |", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
