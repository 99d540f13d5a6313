"""A pile of mixed bodies dropped into a bin, against MuJoCo C and MJX: at rest, and at what cost.

The pile (float64; the same masses, sizes, friction and step in every library): ``N`` free bodies
cycling through a box (6 cm), a sphere (3 cm radius), a capsule (2 cm radius, 6 cm segment) and a
cylinder (3 cm radius, 6 cm long), 0.2 kg each, friction 0.5, placed on a grid of 10 cm cells
(``ceil(N^(1/3))`` a side, slightly turned) and dropped into a bin: the ground and four walls 2 cm
thick and 40 cm high around the grid, static geometry (our terrain; MuJoCo's world body).

For each ``N`` and library: the compile time of one step's rollout (the first call, ours and MJX;
ours from the packed world state, :meth:`WorldModel.pack`),
the simulated seconds per wall second of one pile after it settled, and, at the end of ``--seconds``
of simulated time, the fastest body's speed and the deepest penetration into the bin and between
bodies (ours: the deepest contact the step reports; MuJoCo: the most negative ``contact.dist``);
ours also reports the touching pairs its budget could not hold (``overflow``, the most of any step).

``--rolling``: every contact has torsional and rolling friction, ``TORSION`` and ``ROLLING``
(MuJoCo's default coefficients, at ``condim="6"`` on every geom of MuJoCo's scene; ours through
:meth:`WorldModel.build`'s ``torsional_friction`` and ``rolling_friction``): a sphere or a capsule
rolling alone slows down and stops.

    python -m benchmarks.pile [--quick] [--sizes 8,27,125] [--libraries ours,mujoco,mjx] [--seconds 3] [--dt 0.002] [--seed 0] [--rolling]
"""

from __future__ import annotations

import argparse
import math
import os
import time

from benchmarks import timing  # noqa: F401  (applies the XLA CPU settings first)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

jax.config.update("jax_enable_x64", True)

import jaxsim_like as js  # noqa: E402
from jaxsim_like.dynamics.kinematics import STANDARD_GRAVITY  # noqa: E402
from jaxsim_like.simulation.world import WorldModel, world_rollout  # noqa: E402

MASS, FRICTION, CELL, WALL, WALL_HEIGHT = 0.2, 0.5, 0.1, 0.01, 0.4  # [kg], [-], [m], half thickness [m], [m]
TORSION, ROLLING = 0.005, 0.0001  # [m]: with --rolling, MuJoCo's default torsional and rolling friction
KINDS = ("box", "sphere", "capsule", "cylinder")
CHUNK = 0.25  # [s]: the simulated time of one timed call


def _inertia(kind: str) -> float:
    """The isotropic inertia [kg m^2] we give each kind (the same in MuJoCo)."""
    return {"box": MASS * 0.06**2 / 6, "sphere": 0.4 * MASS * 0.03**2}.get(kind, MASS * 0.06**2 / 8)


def _urdf_geometry(kind: str) -> str:
    return {
        "box": '<box size="0.06 0.06 0.06"/>',
        "sphere": '<sphere radius="0.03"/>',
        "capsule": '<capsule radius="0.02" length="0.06"/>',
        "cylinder": '<cylinder radius="0.03" length="0.06"/>',
    }[kind]


def _mjcf_geometry(kind: str) -> str:
    return {
        "box": 'type="box" size=".03 .03 .03"',
        "sphere": 'type="sphere" size=".03"',
        "capsule": 'type="capsule" size=".02 .03"',
        "cylinder": 'type="cylinder" size=".03 .03"',
    }[kind]


def layout(count: int, seed: int = 0) -> tuple[list[str], np.ndarray, np.ndarray, float]:
    """The kind of each of ``count`` bodies, their start positions ``(count, 3)`` [m] and
    quaternions ``(count, 4)`` (wxyz), and the bin's inner half width [m]."""
    side = math.ceil(round(count ** (1 / 3), 9))
    rng = np.random.default_rng(seed)
    kinds = [KINDS[i % len(KINDS)] for i in range(count)]
    cells = np.array([(i % side, (i // side) % side, i // side**2) for i in range(count)], dtype=float)
    positions = np.stack([(cells[:, 0] - (side - 1) / 2) * CELL, (cells[:, 1] - (side - 1) / 2) * CELL,
                          0.05 + cells[:, 2] * CELL], axis=1) + rng.uniform(-0.01, 0.01, (count, 3)) * [1, 1, 0]
    axes = rng.normal(size=(count, 3))
    axes /= np.linalg.norm(axes, axis=1, keepdims=True)
    angles = rng.uniform(0.1, 0.5, count)
    quaternions = np.concatenate([np.cos(angles / 2)[:, None], np.sin(angles / 2)[:, None] * axes], axis=1)
    return kinds, positions, quaternions, side * CELL / 2 + 0.01


def bin_boxes(half_width: float) -> tuple[np.ndarray, np.ndarray]:
    """The four walls of the bin: ``W_H_box (4, 4, 4)`` and half extents ``(4, 3)`` [m]."""
    span = half_width + 2 * WALL
    transforms, extents = [], []
    for axis in (0, 1):
        for sign in (-1.0, 1.0):
            H = np.eye(4)
            H[axis, 3], H[2, 3] = sign * (half_width + WALL), WALL_HEIGHT / 2
            transforms.append(H)
            extents.append([WALL, span, WALL_HEIGHT / 2] if axis == 0 else [span, WALL, WALL_HEIGHT / 2])
    return np.stack(transforms), np.asarray(extents)


def _cast(tree, dtype):
    """``tree`` with its floating-point leaves in ``dtype``."""
    return jax.tree.map(lambda x: x.astype(dtype) if jnp.issubdtype(x.dtype, jnp.floating) else x, tree)


def our_world(count: int, dt: float, dtype=jnp.float64, seed: int = 0, rolling: bool = False, **options) -> tuple[WorldModel, object]:
    """The pile of ``count`` bodies as a world (the bin in its terrain) and its start state
    (:func:`layout` of ``seed``); ``rolling``: with torsional and rolling friction; ``options``
    go to :meth:`WorldModel.build`."""
    kinds, positions, quaternions, half_width = layout(count, seed)
    models = {kind: js.load_model(
        f'<robot name="{kind}"><link name="link"><inertial><mass value="{MASS}"/><inertia ixx="{_inertia(kind)}" '
        f'iyy="{_inertia(kind)}" izz="{_inertia(kind)}" ixy="0" ixz="0" iyz="0"/></inertial><collision><geometry>'
        f"{_urdf_geometry(kind)}</geometry></collision></link></robot>") for kind in KINDS}
    models = {kind: _cast(model, dtype) for kind, model in models.items()}
    terrain = js.Terrain.plane().with_boxes(*bin_boxes(half_width))
    terrain = _cast(terrain, dtype)
    bodies = [models[kind] for kind in kinds]
    if rolling:
        options = dict(torsional_friction=TORSION, rolling_friction=ROLLING) | options
    world = WorldModel.build(bodies, dt=dt, terrain=terrain, friction=FRICTION, **options)
    states = [js.State.build(m, base_position=p, base_quaternion=q) for m, p, q in zip(bodies, positions, quaternions)]
    return world, world.initial_state(states)


def mjcf(count: int, dt: float, seed: int = 0, rolling: bool = False) -> str:
    """The same pile in MJCF (torsional friction 0.005, rolling 0.0001, MuJoCo's defaults, used
    with ``rolling``: ``condim="6"``)."""
    kinds, positions, quaternions, half_width = layout(count, seed)
    friction = f'friction="{FRICTION} {TORSION} {ROLLING}"' + (' condim="6"' if rolling else "")
    walls = "".join(
        f'<geom type="box" pos="{H[0, 3]} {H[1, 3]} {H[2, 3]}" size="{e[0]} {e[1]} {e[2]}" {friction}/>'
        for H, e in zip(*bin_boxes(half_width))
    )
    bodies = "".join(
        f'<body pos="{p[0]} {p[1]} {p[2]}" quat="{q[0]} {q[1]} {q[2]} {q[3]}"><freejoint/><geom {_mjcf_geometry(kind)} {friction}/>'
        f'<inertial pos="0 0 0" mass="{MASS}" diaginertia="{_inertia(kind)} {_inertia(kind)} {_inertia(kind)}"/></body>'
        for kind, p, q in zip(kinds, positions, quaternions)
    )
    return (f'<mujoco><option timestep="{dt}" gravity="0 0 {-STANDARD_GRAVITY}"/><worldbody>'
            f'<geom type="plane" size="5 5 .1" {friction}/>{walls}{bodies}</worldbody></mujoco>')


def _deepest(outputs) -> jax.Array:
    """The deepest contact [m] of the last step of stacked world ``outputs`` (per model or per
    group): terrain and pairs."""
    terrain = jnp.max(jnp.stack([jnp.max(o.penetration[-1], initial=0.0) for o in outputs.models]))
    if outputs.pairs is None:
        return terrain
    pairs = outputs.pairs.contacts
    return jnp.maximum(terrain, jnp.max(jnp.where(pairs.active[-1], pairs.depth[-1], 0.0), initial=0.0))


def ours(count: int, dt: float, seconds: float, repeats: int, seed: int = 0, rolling: bool = False) -> dict:
    world, state = our_world(count, dt, seed=seed, rolling=rolling)
    state = world.pack(state)  # the models of each kind stacked: the program does not grow with the bodies
    chunk = int(round(CHUNK / dt))

    def advance(s):
        final, outputs = world_rollout(world, s, None, chunk)
        overflow = jnp.max(outputs.pairs.overflow) if outputs.pairs is not None else jnp.zeros((), jnp.int32)
        return final, overflow, _deepest(outputs)

    call = jax.jit(advance)
    start = time.perf_counter()
    timing.block(call(state))
    compile_seconds = time.perf_counter() - start
    overflow = 0
    for _ in range(int(round(seconds / CHUNK))):
        state, spilled, deepest = call(state)
        overflow = max(overflow, int(spilled))
    samples = []
    for _ in range(repeats):
        begin = time.perf_counter()
        timing.block(call(state))
        samples.append(time.perf_counter() - begin)
    speed = max(float(np.linalg.norm(np.asarray(s.base_velocity[:3]))) for s in world.unpack(state).states)
    rate = chunk * dt / sorted(samples)[len(samples) // 2]
    return {"library": "jaxsim_like", "bodies": count, "rate": rate, "compile s": compile_seconds,
            "speed mm/s": 1e3 * speed, "deepest mm": 1e3 * float(deepest), "overflow": overflow}


def mujoco_c(count: int, dt: float, seconds: float, repeats: int, seed: int = 0, rolling: bool = False) -> dict:
    import mujoco
    from mujoco import rollout

    model = mujoco.MjModel.from_xml_string(mjcf(count, dt, seed, rolling))
    data = mujoco.MjData(model)
    mujoco.mj_step(model, data, int(round(seconds / dt)))
    speed = max(np.linalg.norm(data.qvel[6 * b : 6 * b + 3]) for b in range(count))
    deepest = max(0.0, -min((c.dist for c in data.contact[: data.ncon]), default=0.0))
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    settled = np.empty(mujoco.mj_stateSize(model, spec))
    mujoco.mj_getState(model, data, settled, spec)
    chunk = int(round(CHUNK / dt))
    threads = len(os.sched_getaffinity(0))
    with rollout.Rollout(nthread=threads) as pool:
        datas = [mujoco.MjData(model) for _ in range(threads)]
        samples = []
        for _ in range(repeats):
            begin = time.perf_counter()
            pool.rollout(model, datas, settled[None], nstep=chunk)
            samples.append(time.perf_counter() - begin)
    rate = chunk * dt / sorted(samples)[len(samples) // 2]
    return {"library": "mujoco C rollout", "bodies": count, "rate": rate, "speed mm/s": 1e3 * speed, "deepest mm": 1e3 * deepest}


def mjx(count: int, dt: float, seconds: float, repeats: int, seed: int = 0, rolling: bool = False) -> dict:
    """MJX on MuJoCo's model of the pile, float64, MuJoCo's default solver options."""
    import mujoco
    from mujoco import mjx as mx

    model = mujoco.MjModel.from_xml_string(mjcf(count, dt, seed, rolling))
    device_model = mx.put_model(model)
    state = mx.put_data(model, mujoco.MjData(model))
    chunk = int(round(CHUNK / dt))

    def advance(d):
        def one(d, _):  # with x64 on, a step returns some of put_data's int32 fields as int64
            return jax.tree.map(lambda new, old: new.astype(old.dtype), mx.step(device_model, d), d), None

        return jax.lax.scan(one, d, None, length=chunk)[0]

    call = jax.jit(advance)
    start = time.perf_counter()
    timing.block(call(state))
    compile_seconds = time.perf_counter() - start
    for _ in range(int(round(seconds / CHUNK))):
        state = call(state)
    samples = []
    for _ in range(repeats):
        begin = time.perf_counter()
        timing.block(call(state))
        samples.append(time.perf_counter() - begin)
    speed = float(np.max(np.linalg.norm(np.asarray(state.qvel).reshape(count, 6)[:, :3], axis=1)))
    rate = chunk * dt / sorted(samples)[len(samples) // 2]
    return {"library": "mjx", "bodies": count, "rate": rate, "compile s": compile_seconds, "speed mm/s": 1e3 * speed}


LIBRARIES = {"ours": ours, "mujoco": mujoco_c, "mjx": mjx}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="8,27,125")
    parser.add_argument("--libraries", default="ours,mujoco,mjx")
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--dt", type=float, default=0.002)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0, help="the start poses' jitter and turns (the pile is chaotic: compare several)")
    parser.add_argument("--quick", action="store_true", help="MJX only at 8 bodies, one timed call each")
    parser.add_argument("--rolling", action="store_true", help="torsional and rolling friction on every contact (MuJoCo's condim 6)")
    args = parser.parse_args()
    print("| bodies | library | sim s / wall s | compile [s] | fastest body after settling [mm/s] | deepest [mm] | overflow |")
    print("|---|---|---|---|---|---|---|")
    for count in (int(x) for x in args.sizes.split(",")):
        for library in args.libraries.split(","):
            if args.quick and library == "mjx" and count > 8:
                continue
            try:
                row = LIBRARIES[library](count, args.dt, args.seconds, 1 if args.quick else args.repeats, args.seed, args.rolling)
            except NotImplementedError as error:  # MJX has no cylinder-box nor cylinder-cylinder collisions
                print(f"| {count} | {library} | not run: {error} | | | | |", flush=True)
                continue
            print(f"| {count} | {row['library']} | {row['rate']:.3f} | {row.get('compile s', float('nan')):.1f} |"
                  f" {row['speed mm/s']:.1f} | {row.get('deepest mm', float('nan')):.2f} | {row.get('overflow', '')} |", flush=True)


if __name__ == "__main__":
    main()
