"""A pile of mixed bodies dropped into a bin, against MuJoCo C and MJX: at rest, and at what cost.

The pile (float64; the same masses, sizes, friction and step in every library): ``N`` free bodies
cycling through a box (6 cm), a sphere (3 cm radius), a capsule (2 cm radius, 6 cm segment) and a
cylinder (3 cm radius, 6 cm long), 0.2 kg each, friction 0.5, placed on a grid of 10 cm cells
(``ceil(N^(1/3))`` a side, slightly turned) and dropped into a bin: the ground and four walls 2 cm
thick and 40 cm high around the grid, static geometry (our terrain; MuJoCo's world body).

For each ``N`` and library: the compile time of one step's rollout (ours: tracing, lowering and
compiling, from the packed world state, :meth:`WorldModel.pack`; MJX: the first call),
the simulated seconds per wall second of one pile after it settled, and, at the end of ``--seconds``
of simulated time, the fastest body's speed and the deepest penetration into the bin and between
bodies (ours: the deepest contact the step reports; MuJoCo: the most negative ``contact.dist``);
ours also reports the touching pairs its budget could not hold and the touching slots its touching
budget could not hold (``overflow``, the most of any step) and, with MuJoCo installed, the true
overlap at its final poses (``overlap``: MuJoCo's collision of the same pile at those poses,
:func:`overlap`; the deepest contact a step reports can miss a pair its narrow phase gets wrong).

``--worlds 1,16,64``: also ``W`` piles at once (the layouts of seeds ``seed, seed + 1, ...``, the
same bodies), the simulated seconds per wall second summed over the piles, on every core: ours as
equal slices of the piles' stacked packed states, one thread per core, each slice a ``lax.map``
of the one-pile program (``--chunks 1``) or one ``vmap`` (``--chunks 0``); MuJoCo C as one
``mujoco.rollout`` call over the ``W`` start states on a thread per core. ``--dtypes
float64,float32``: ours also in float32 (MuJoCo: float64). The libraries' timed calls are
interleaved, and the rate is the median of ``--repeats`` calls.

``--rocks``: the bodies cycle through a fifth kind too, a convex rock (a mesh of 16 vertices on
an ellipsoid of 3.4, 3 and 2.6 cm half axes, :data:`ROCK`; ours: its hull, every vertex kept;
MuJoCo's: its convex hull), as issue 29's pile of boxes, spheres, capsules, cylinders and convex
meshes; at 125 bodies (a grid of side 5) a body's kind follows the sum of its cell's coordinates,
so that no column of the grid is of one kind (:func:`layout`).

``--rolling``: every contact has torsional and rolling friction, ``TORSION`` and ``ROLLING``
(MuJoCo's default coefficients, at ``condim="6"`` on every geom of MuJoCo's scene; ours through
:meth:`WorldModel.build`'s ``torsional_friction`` and ``rolling_friction``): a sphere or a capsule
rolling alone slows down and stops.

    python -m benchmarks.pile [--quick] [--sizes 8,27,125] [--libraries ours,mujoco,mjx] [--worlds 1,16,64] [--dtypes float64,float32]
                              [--chunks 1] [--seconds 3] [--dt 0.002] [--seed 0] [--rolling] [--rocks]
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from benchmarks import timing  # noqa: F401  (applies the XLA CPU settings first)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

jax.config.update("jax_enable_x64", True)

import jaxsim_like as js  # noqa: E402
from jaxsim_like.batching import chunked_vmap  # noqa: E402
from jaxsim_like.dynamics.kinematics import STANDARD_GRAVITY  # noqa: E402
from jaxsim_like.simulation.world import WorldModel, world_rollout  # noqa: E402

MASS, FRICTION, CELL, WALL, WALL_HEIGHT = 0.2, 0.5, 0.1, 0.01, 0.4  # [kg], [-], [m], half thickness [m], [m]
TORSION, ROLLING = 0.005, 0.0001  # [m]: with --rolling, MuJoCo's default torsional and rolling friction
KINDS = ("box", "sphere", "capsule", "cylinder")
ROCKS = KINDS + ("rock",)
"""With ``--rocks``: the bodies cycle through these, a fifth of them convex rocks (:data:`ROCK`)."""
_HEIGHTS = np.linspace(-0.9, 0.9, 16)
_TURNS = 2.399963 * np.arange(16)  # the golden angle [rad]: points spread over the ellipsoid
ROCK = np.array([0.034, 0.03, 0.026]) * np.stack(
    [np.sqrt(1 - _HEIGHTS**2) * np.cos(_TURNS), np.sqrt(1 - _HEIGHTS**2) * np.sin(_TURNS), _HEIGHTS], axis=1)
"""[m] the vertices of a rock, a convex mesh (ours: its hull of 16 vertices; MuJoCo's: its convex hull)."""
CHUNK = 0.25  # [s]: the simulated time of one timed call


def _inertia(kind: str) -> float:
    """The isotropic inertia [kg m^2] we give each kind (the same in MuJoCo)."""
    return {"box": MASS * 0.06**2 / 6, "sphere": 0.4 * MASS * 0.03**2}.get(kind, MASS * 0.06**2 / 8)


def _rock_file() -> str:
    """An OBJ file of the rock's vertices (in the system's temporary folder)."""
    path = Path(tempfile.gettempdir()) / "jaxsim_like_pile_rock.obj"
    path.write_text("".join(f"v {x:.17g} {y:.17g} {z:.17g}\n" for x, y, z in ROCK))
    return str(path)


def _urdf_geometry(kind: str) -> str:
    if kind == "rock":
        return f'<mesh filename="{_rock_file()}"/>'
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
        "rock": 'type="mesh" mesh="rock"',
    }[kind]


def layout(count: int, seed: int = 0, kinds: tuple[str, ...] = KINDS) -> tuple[list[str], np.ndarray, np.ndarray, float]:
    """The kind of each of ``count`` bodies (cycling through ``kinds``), their start positions
    ``(count, 3)`` [m] and quaternions ``(count, 4)`` (wxyz), and the bin's inner half width [m].
    Where the cycle's length divides the grid's side (5 kinds, 125 bodies), a body's kind follows
    the sum of its cell's coordinates, as the plain cycle does for 4 kinds in a grid of side 5: the
    plain cycle would fill each column of the grid with one kind, a pile sorted by kind."""
    side = math.ceil(round(count ** (1 / 3), 9))
    rng = np.random.default_rng(seed)
    cells = np.array([(i % side, (i // side) % side, i // side**2) for i in range(count)], dtype=float)
    positions = np.stack([(cells[:, 0] - (side - 1) / 2) * CELL, (cells[:, 1] - (side - 1) / 2) * CELL,
                          0.05 + cells[:, 2] * CELL], axis=1) + rng.uniform(-0.01, 0.01, (count, 3)) * [1, 1, 0]
    axes = rng.normal(size=(count, 3))
    axes /= np.linalg.norm(axes, axis=1, keepdims=True)
    angles = rng.uniform(0.1, 0.5, count)
    quaternions = np.concatenate([np.cos(angles / 2)[:, None], np.sin(angles / 2)[:, None] * axes], axis=1)
    order = np.sum(cells, axis=1).astype(int) if side % len(kinds) == 0 else np.arange(count)
    return [kinds[k % len(kinds)] for k in order], positions, quaternions, side * CELL / 2 + 0.01


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


def our_world(count: int, dt: float, dtype=jnp.float64, seed: int = 0, rolling: bool = False, rocks: bool = False,
              **options) -> tuple[WorldModel, object]:
    """The pile of ``count`` bodies as a world (the bin in its terrain: the world's last model,
    :mod:`jaxsim_like.simulation.scenery`) and its start state
    (:func:`layout` of ``seed``); ``rolling``: with torsional and rolling friction; ``rocks``:
    a fifth of the bodies convex rocks (:data:`ROCKS`); ``options`` go to :meth:`WorldModel.build`."""
    kinds, positions, quaternions, half_width = layout(count, seed, ROCKS if rocks else KINDS)
    models = {kind: js.load_model(
        f'<robot name="{kind}"><link name="link"><inertial><mass value="{MASS}"/><inertia ixx="{_inertia(kind)}" '
        f'iyy="{_inertia(kind)}" izz="{_inertia(kind)}" ixy="0" ixz="0" iyz="0"/></inertial><collision><geometry>'
        f"{_urdf_geometry(kind)}</geometry></collision></link></robot>") for kind in dict.fromkeys(kinds)}
    models = {kind: _cast(model, dtype) for kind, model in models.items()}
    terrain = js.Terrain.plane().with_boxes(*bin_boxes(half_width))
    terrain = _cast(terrain, dtype)
    bodies = [models[kind] for kind in kinds]
    if rolling:
        options = dict(torsional_friction=TORSION, rolling_friction=ROLLING) | options
    world = _cast(WorldModel.build(bodies, dt=dt, terrain=terrain, friction=FRICTION, **options), dtype)
    return world, start_state(world, seed)


def start_state(world: WorldModel, seed: int):
    """The start state of the pile ``world`` (:func:`our_world`) in :func:`layout` of ``seed``: the
    same bodies, in another layout."""
    bodies = world.models[: len(world.models) - world.scenery]
    _, positions, quaternions, _ = layout(len(bodies), seed, _kinds(world))
    states = [js.State.build(m, base_position=p, base_quaternion=q) for m, p, q in zip(bodies, positions, quaternions)]
    return world.initial_state(states)


def _kinds(world: WorldModel) -> tuple[str, ...]:
    """The kinds the bodies of the pile ``world`` cycle through (each model is named by its kind)."""
    return tuple(dict.fromkeys(model.name for model in world.models[: len(world.models) - world.scenery]))


def mjcf(count: int, dt: float, seed: int = 0, rolling: bool = False, rocks: bool = False) -> str:
    """The same pile in MJCF (torsional friction 0.005, rolling 0.0001, MuJoCo's defaults, used
    with ``rolling``: ``condim="6"``; ``rocks``: the rock a mesh of :data:`ROCK`'s vertices)."""
    kinds, positions, quaternions, half_width = layout(count, seed, ROCKS if rocks else KINDS)
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
    asset = f'<asset><mesh name="rock" vertex="{" ".join(f"{x:.17g}" for x in ROCK.ravel())}"/></asset>' if rocks else ""
    return (f'<mujoco><option timestep="{dt}" gravity="0 0 {-STANDARD_GRAVITY}"/>{asset}<worldbody>'
            f'<geom type="plane" size="5 5 .1" {friction}/>{walls}{bodies}</worldbody></mujoco>')


def _deepest(outputs) -> jax.Array:
    """The deepest contact [m] of the last step of stacked world ``outputs`` (per model or per
    group): terrain and pairs."""
    terrain = jnp.max(jnp.stack([jnp.max(o.penetration[-1], initial=0.0) for o in outputs.models]))
    if outputs.pairs is None:
        return terrain
    pairs = outputs.pairs.contacts
    return jnp.maximum(terrain, jnp.max(jnp.where(pairs.active[-1], pairs.depth[-1], 0.0), initial=0.0))


def overlap(world: WorldModel, packed, count: int, seed: int, rolling: bool) -> float | None:
    """The deepest overlap [m] between the bodies, and between a body and the bin, of one pile's
    packed state, by MuJoCo's collision (``mj_collision``, its own narrow phases) of the same pile
    (:func:`mjcf`) at the state's poses: the true overlap, where ``deepest`` is the deepest contact
    our step reports. None without MuJoCo."""
    try:
        import mujoco
    except ImportError:
        return None
    model = mujoco.MjModel.from_xml_string(mjcf(count, 0.002, seed, rolling, "rock" in _kinds(world)))
    data = mujoco.MjData(model)
    states = world.unpack(packed).states[: len(world.models) - world.scenery]
    data.qpos[:] = np.concatenate([np.concatenate([np.asarray(s.base_position, float), np.asarray(s.base_quaternion, float)])
                                   for s in states])
    mujoco.mj_kinematics(model, data)
    mujoco.mj_collision(model, data)
    return max([0.0] + [-c.dist for c in data.contact[: data.ncon]])


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _slices(worlds: int) -> int:
    """How many equal slices of ``worlds`` piles run at once, one per thread: every core where
    they divide the piles evenly (one compiled program for every slice), else one."""
    cores = _cores()
    return cores if worlds > 1 and worlds % cores == 0 else 1


def _fastest(packed) -> jax.Array:
    """The fastest body's speed [m/s] of a packed world state, over every leading axis."""
    return jnp.max(jnp.stack([jnp.max(jnp.linalg.norm(s.base_velocity[..., :3], axis=-1)) for s in packed.states]))


def ours(count: int, dt: float, seconds: float, seed: int = 0, rolling: bool = False, rocks: bool = False, worlds: int = 1,
         dtype=jnp.float64, chunk: int = 0) -> dict:
    """Our pile: one world (``worlds=1``) stepped by ``jit(world_rollout)``, or ``worlds`` piles
    (the layouts of seeds ``seed, seed + 1, ...``) stepped together from their stacked packed
    states, in equal slices run at once from one thread per core (:func:`_slices`, as
    :func:`jaxsim_like.batching.simulate_batch` runs its slices): each by ``jit(vmap(world_rollout))``
    (``chunk=0``) or by a ``lax.map`` over chunks of ``chunk`` piles, each a ``vmap`` (``chunk=1``:
    the one-world program, pile after pile). Below float64, traced with 64-bit types off (JAX's
    default): the program of a user who runs float32 only.
    The compile time: tracing, lowering and compiling the program (ahead of its first call)."""
    with jax.enable_x64(jnp.dtype(dtype) == jnp.float64):
        return _ours(count, dt, seconds, seed, rolling, rocks, worlds, dtype, chunk)


def _batched(advance, chunk: int):
    """``advance`` over the leading axis of a state: one ``vmap`` (``chunk=0``), a ``lax.map`` of
    the unbatched ``advance`` (1), or a ``lax.map`` of a ``vmap`` over each chunk of ``chunk`` states."""
    if chunk == 0:
        return jax.vmap(advance)
    if chunk == 1:
        return lambda states: jax.lax.map(advance, states)
    return chunked_vmap(advance, chunk)


def _ours(count: int, dt: float, seconds: float, seed: int, rolling: bool, rocks: bool, worlds: int, dtype, chunk: int) -> dict:
    world, state = our_world(count, dt, dtype=dtype, seed=seed, rolling=rolling, rocks=rocks)
    steps = int(round(CHUNK / dt))

    def advance(s):
        final, outputs = world_rollout(world, s, None, steps)
        overflow = jnp.zeros((), jnp.int32)
        if outputs.pairs is not None:
            dropped = jnp.zeros((), jnp.int32) if outputs.pairs.dropped is None else jnp.max(outputs.pairs.dropped)
            overflow = jnp.maximum(jnp.max(outputs.pairs.overflow), dropped)
        return final, overflow, _deepest(outputs), jnp.all(outputs.finite)

    packed = [world.pack(state)] + [world.pack(start_state(world, seed + w)) for w in range(1, worlds)]
    slices = _slices(worlds)
    if worlds == 1:  # the packed world state: the program does not grow with the bodies
        call, parts = jax.jit(advance), packed
    else:
        call = jax.jit(_batched(advance, chunk))
        size = worlds // slices
        parts = [jax.tree.map(lambda *x: jnp.stack(x), *packed[i * size : (i + 1) * size]) for i in range(slices)]

    start = time.perf_counter()
    call = call.lower(parts[0]).compile()  # traced with this thread's setting of 64-bit types
    compile_seconds = time.perf_counter() - start
    pool = ThreadPoolExecutor(slices)

    def step_all(states):
        return list(pool.map(lambda s: timing.block(call(s)), states))

    overflow, finite = 0, True
    for _ in range(int(round(seconds / CHUNK))):
        results = step_all(parts)
        parts = [r[0] for r in results]
        overflow = max([overflow] + [int(jnp.max(r[1])) for r in results])
        finite = finite and all(bool(jnp.all(r[3])) for r in results)
    deepest = max(float(jnp.max(r[2])) for r in results)
    piles = parts if worlds == 1 else [jax.tree.map(lambda x: x[i], p) for p in parts for i in range(len(packed) // slices)]
    speeds = [float(_fastest(p)) for p in piles]
    overlaps = [overlap(world, p, count, seed + w, rolling) for w, p in enumerate(piles)]
    batching = "" if worlds == 1 else " (vmap)" if chunk == 0 else " (map)" if chunk == 1 else f" (map of vmap {chunk})"
    return {"library": "jaxsim_like" + batching, "bodies": count, "worlds": worlds, "dtype": jnp.dtype(dtype).name,
            "call": lambda: step_all(parts), "simulated": worlds * steps * dt, "close": pool.shutdown,
            "compile s": compile_seconds, "speed mm/s": 1e3 * max(speeds), "median mm/s": 1e3 * float(np.median(speeds)),
            "deepest mm": 1e3 * deepest, "overlap mm": None if None in overlaps else 1e3 * max(overlaps), "overflow": overflow,
            "finite": finite}


def mujoco_c(count: int, dt: float, seconds: float, seed: int = 0, rolling: bool = False, rocks: bool = False, worlds: int = 1,
             dtype=None) -> dict:
    """MuJoCo C's pile: one world settled by ``mj_step`` and timed through ``mujoco.rollout`` (one
    thread works), or ``worlds`` piles (seeds ``seed, seed + 1, ...``; the model of ``seed`` with
    each seed's start poses, a free body's pose being its joint's) settled and timed as one
    ``mujoco.rollout`` call of a thread per core."""
    import mujoco
    from mujoco import rollout

    model = mujoco.MjModel.from_xml_string(mjcf(count, dt, seed, rolling, rocks))
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    chunk = int(round(CHUNK / dt))
    threads = _cores()

    def state_of(data: mujoco.MjData) -> np.ndarray:
        values = np.empty(mujoco.mj_stateSize(model, spec))
        mujoco.mj_getState(model, data, values, spec)
        return values

    pool = rollout.Rollout(nthread=threads)
    datas = [mujoco.MjData(model) for _ in range(threads)]
    if worlds == 1:
        data = mujoco.MjData(model)
        mujoco.mj_step(model, data, int(round(seconds / dt)))
        settled, ends = state_of(data)[None], [data]
    else:
        settled = np.stack([state_of(mujoco.MjData(mujoco.MjModel.from_xml_string(mjcf(count, dt, seed + w, rolling, rocks))))
                            for w in range(worlds)])
        for _ in range(int(round(seconds / CHUNK))):
            settled = pool.rollout(model, datas, settled, nstep=chunk)[0][:, -1]
        ends = [mujoco.MjData(model) for _ in range(worlds)]
        for data, values in zip(ends, settled):  # the contacts at the settled poses
            mujoco.mj_setState(model, data, values, spec)
            mujoco.mj_forward(model, data)
    speeds, deepest = [], 0.0
    for data in ends:
        speeds.append(max(np.linalg.norm(data.qvel[6 * b : 6 * b + 3]) for b in range(count)))
        deepest = max(deepest, -min((c.dist for c in data.contact[: data.ncon]), default=0.0))
    return {"library": "mujoco C rollout", "bodies": count, "worlds": worlds, "dtype": "float64",
            "call": lambda: pool.rollout(model, datas, settled, nstep=chunk), "simulated": worlds * chunk * dt, "close": pool.close,
            "speed mm/s": 1e3 * max(speeds), "median mm/s": 1e3 * float(np.median(speeds)), "deepest mm": 1e3 * deepest,
            "finite": bool(np.all(np.isfinite(settled)))}


def mjx(count: int, dt: float, seconds: float, seed: int = 0, rolling: bool = False, rocks: bool = False, worlds: int = 1,
        dtype=None) -> dict:
    """MJX on MuJoCo's model of the pile, float64, MuJoCo's default solver options."""
    import mujoco
    from mujoco import mjx as mx

    model = mujoco.MjModel.from_xml_string(mjcf(count, dt, seed, rolling, rocks))
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
    speed = float(np.max(np.linalg.norm(np.asarray(state.qvel).reshape(count, 6)[:, :3], axis=1)))
    return {"library": "mjx", "bodies": count, "worlds": 1, "dtype": "float64", "call": lambda: timing.block(call(state)),
            "simulated": chunk * dt, "compile s": compile_seconds, "speed mm/s": 1e3 * speed,
            "finite": bool(np.all(np.isfinite(np.asarray(state.qpos))))}


LIBRARIES = {"ours": ours, "mujoco": mujoco_c, "mjx": mjx}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="8,27,125")
    parser.add_argument("--libraries", default="ours,mujoco,mjx")
    parser.add_argument("--worlds", default="1", help="piles stepped together, e.g. 1,16,64 (MJX: one only)")
    parser.add_argument("--dtypes", default="float64", help="ours also in these, e.g. float64,float32 (MuJoCo: float64)")
    parser.add_argument("--chunks", default="1", help="ours, several piles: 0 one vmap per thread, 1 pile after pile (lax.map), "
                        "c > 1 a lax.map of vmaps of c piles; several, e.g. 0,1")
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--dt", type=float, default=0.002)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0, help="the start poses' jitter and turns (the pile is chaotic: compare several)")
    parser.add_argument("--quick", action="store_true", help="MJX only at 8 bodies, one timed call each")
    parser.add_argument("--rolling", action="store_true", help="torsional and rolling friction on every contact (MuJoCo's condim 6)")
    parser.add_argument("--rocks", action="store_true", help="a fifth of the bodies convex rocks (meshes, hulls of 16 vertices)")
    args = parser.parse_args()
    print("| bodies | worlds | library | dtype | sim s / wall s, all worlds | compile [s] | fastest body after settling, "
          "most / median of worlds [mm/s] | deepest [mm] | overlap [mm] | overflow | finite |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    repeats = 1 if args.quick else args.repeats
    for count in (int(x) for x in args.sizes.split(",")):
        for worlds in (int(x) for x in args.worlds.split(",")):
            rows = []
            for library in args.libraries.split(","):
                if (args.quick and library == "mjx" and count > 8) or (library == "mjx" and worlds > 1):
                    continue
                variants = [(d, int(c)) for d in args.dtypes.split(",") for c in (args.chunks.split(",") if worlds > 1 else ["0"])]
                for dtype, chunk in variants if library == "ours" else [("float64", 0)]:
                    try:
                        rows.append(LIBRARIES[library](count, args.dt, args.seconds, args.seed, args.rolling, args.rocks, worlds=worlds,
                                                       dtype=jnp.dtype(dtype), **({"chunk": chunk} if library == "ours" else {})))
                    except NotImplementedError as error:  # MJX has no cylinder-box nor cylinder-cylinder collisions
                        print(f"| {count} | {worlds} | {library} | {dtype} | not run: {error} | | | | | | |", flush=True)
            samples = [[] for _ in rows]
            for _ in range(repeats):  # the libraries' timed calls interleaved
                for row, taken in zip(rows, samples):
                    begin = time.perf_counter()
                    row["call"]()
                    taken.append(time.perf_counter() - begin)
            for row, taken in zip(rows, samples):
                row.get("close", lambda: None)()
                rate = row["simulated"] / sorted(taken)[len(taken) // 2]
                fastest = f"{row['speed mm/s']:.1f} / {row.get('median mm/s', row['speed mm/s']):.1f}"
                overlap_mm = "–" if row.get("overlap mm") is None else f"{row['overlap mm']:.2f}"
                print(f"| {count} | {worlds} | {row['library']} | {row['dtype']} | {rate:.3f} | {row.get('compile s', float('nan')):.1f} |"
                      f" {fastest} | {row.get('deepest mm', float('nan')):.2f} | {overlap_mm} | {row.get('overflow', '')} | {row['finite']} |",
                      flush=True)


if __name__ == "__main__":
    main()
