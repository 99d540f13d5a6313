"""Exact ellipsoids against spheres, capsules and ellipsoids (issue 29): the narrow phase
(:func:`~jaxsim_like.simulation.collision.ellipsoid.ellipsoid_round`) against a brute-force
reference (the least overlap of the two support functions over the directions: dense samples,
then Nelder-Mead) at random poses, touching and apart, against MuJoCo's ``mj_collision`` on an
MJCF scene, its gradients against central differences at degenerate poses (equal radii,
axis-aligned), and bodies at rest on each other (the pair law's ``max_penetration`` within 10 %,
the weight within 0.5 %). Float64.
"""

from __future__ import annotations

import functools
import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.spatial.transform import Rotation

import jaxsim_like as js
from jaxsim_like import scenes
from jaxsim_like.dynamics.model import build_model
from jaxsim_like.dynamics.hulls import Hulls
from jaxsim_like.parsers import parse_mjcf_world
from jaxsim_like.parsers.hulls import convex_hull
from jaxsim_like.simulation.collision import KINDS
from jaxsim_like.simulation.collision.hull import HullData, in_world
from jaxsim_like.simulation.world import WorldModel, world_rollout
from collision_worlds import rest_on_pairs

G = 9.81
LYING = [np.cos(np.pi / 4), np.sin(np.pi / 4), 0.0, 0.0]  # a quarter turn about x: a capsule along y


def rotation(quaternion) -> np.ndarray:
    """The rotation ``(3, 3)`` of a wxyz ``quaternion``."""
    return Rotation.from_quat(np.roll(np.asarray(quaternion, dtype=float), -1)).as_matrix()


def pose(R, centre) -> np.ndarray:
    H = np.eye(4)
    H[:3, :3], H[:3, 3] = R, centre
    return H


def reach(H: np.ndarray, size: np.ndarray, n: np.ndarray, kind: str = "") -> np.ndarray:
    """The support function ``(K,)`` [m] of a sphere, capsule or ellipsoid (by its sizes, as the
    narrow phase takes them), a box or a cylinder (by ``kind``) along directions ``n (K, 3)``."""
    local = n @ H[:3, :3]
    if kind == "box":
        return n @ H[:3, 3] + np.abs(local) @ size
    if kind == "cylinder":
        return n @ H[:3, 3] + size[1] * np.abs(local[:, 2]) + size[0] * np.linalg.norm(local[:, :2], axis=1)
    if size[2] > 0:
        return n @ H[:3, 3] + np.linalg.norm(n @ (H[:3, :3] * size), axis=1)
    return n @ H[:3, 3] + size[1] * np.abs(n @ H[:3, 2]) + size[0] * np.linalg.norm(n, axis=1)


def reference(H_a, size_a, H_b, size_b, kind_a: str = "") -> tuple[float, np.ndarray]:
    """The signed depth [m] (least overlap over the unit directions ``n``, from b towards a) and its ``n``."""
    return reference_of(lambda n: reach(H_b, size_b, n) + reach(H_a, size_a, -n, kind_a))


def reference_of(overlaps) -> tuple[float, np.ndarray]:
    """The least of ``overlaps(n (K, 3)) -> (K,)`` over the unit directions and its direction."""
    def overlap(n):
        return overlaps(np.atleast_2d(n))

    def direction(angles):
        return np.array([np.sin(angles[0]) * np.cos(angles[1]), np.sin(angles[0]) * np.sin(angles[1]), np.cos(angles[0])])

    u = np.random.default_rng(0).normal(size=(50000, 3))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    values = overlap(u)
    best = None
    for i in np.argsort(values)[:4]:
        start = [np.arccos(np.clip(u[i, 2], -1, 1)), np.arctan2(u[i, 1], u[i, 0])]
        found = minimize(lambda x: overlap(direction(x))[0], start, method="Nelder-Mead",
                         options=dict(xatol=1e-11, fatol=1e-15, maxiter=4000))
        best = found if best is None or found.fun < best.fun else best
    return float(best.fun), direction(best.x)


def random_pairs(count: int, seed: int):
    """Per kind of a, ``count`` pairs of a random a and ellipsoid b, a placed along a random
    direction from 1 cm nearer to 1.5 cm farther than where they would touch along it."""
    rng = np.random.default_rng(seed)
    pairs = []
    for kind in ("sphere", "capsule", "ellipsoid", "box", "cylinder"):
        for _ in range(count):
            size_b = rng.uniform(0.03, 0.12, 3)
            size_a = {"sphere": np.array([rng.uniform(0.02, 0.08), 0.0, 0.0]),
                      "capsule": np.array([rng.uniform(0.02, 0.05), rng.uniform(0.02, 0.1), 0.0]),
                      "ellipsoid": rng.uniform(0.03, 0.12, 3), "box": rng.uniform(0.02, 0.1, 3),
                      "cylinder": np.array([rng.uniform(0.02, 0.08), rng.uniform(0.02, 0.1), 0.0])}[kind]
            H_b = pose(Rotation.random(random_state=rng).as_matrix(), rng.normal(size=3) * 0.1)
            R_a = Rotation.random(random_state=rng).as_matrix()
            d = rng.normal(size=3)
            d /= np.linalg.norm(d)
            gap = reach(H_b, size_b, d[None])[0] - H_b[:3, 3] @ d + reach(pose(R_a, np.zeros(3)), size_a, -d[None], kind)[0]
            pairs.append((kind, pose(R_a, H_b[:3, 3] + (gap + rng.uniform(-0.01, 0.015)) * d), size_a, H_b, size_b))
    return pairs + FLAT_CASES


LYING_R = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])  # a shape's z axis along world y
EGG = np.array([0.1, 0.06, 0.04])
FLAT_CASES = [  # 1 mm deep: a box's face under the ellipsoid, a cylinder standing on its cap and lying on its side
    ("box", pose(np.eye(3), [0.01, 0.02, -0.09 + 0.001]), np.array([0.2, 0.2, 0.05]), np.eye(4), EGG),
    ("cylinder", pose(np.eye(3), [0.01, 0.0, 0.09 - 0.001]), np.array([0.03, 0.05, 0.0]), np.eye(4), EGG),
    ("cylinder", pose(LYING_R, [0.01, 0.0, 0.07 - 0.001]), np.array([0.03, 0.05, 0.0]), np.eye(4), EGG),
]


@pytest.fixture(scope="module")
def kernels():
    """The kernels of the pair kinds with an ellipsoid, batched over pairs."""
    return {kind: jax.jit(jax.vmap(KINDS[f"{kind}-ellipsoid"].kernel)) for kind in ("sphere", "capsule", "ellipsoid", "box", "cylinder")}


def test_the_narrow_phases_match_a_brute_force_reference(kernels, figures):
    pairs = random_pairs(5, seed=1)
    found = {kind: kernels[kind](*(jnp.asarray(np.stack([p[k] for p in pairs if p[0] == kind])) for k in range(1, 5)))
             for kind in kernels}
    worst, index = {}, {}
    for kind, *shapes in pairs:
        i = index[kind] = index.get(kind, -1) + 1
        depth, normal = reference(*shapes, kind)
        slots = found[kind]
        error = abs(float(slots.depth[i, 0]) - depth)
        turn = float(np.linalg.norm(np.asarray(slots.normal[i, 0]) - normal))
        worst[kind] = max(worst.get(kind, (0.0, 0.0)), (error, turn))
        assert error < 1e-9, (kind, i)
        assert turn < 1e-5, (kind, i)
        # The slot lies midway between the two surfaces, depth apart along the normal.
        position = np.asarray(slots.position[i, 0])
        on_b = position + 0.5 * depth * normal
        assert reach(shapes[2], shapes[3], normal[None])[0] == pytest.approx(on_b @ normal, abs=1e-8)
    for kind, (error, turn) in worst.items():
        figures(f"ellipsoid narrow phase vs brute force, {kind}-ellipsoid: largest depth error", error, "m")


def random_hull(rng) -> tuple[Hulls, np.ndarray]:
    """A convex hull of 12 random points within 6 cm of its origin (:class:`~jaxsim_like.dynamics.hulls.Hulls`, one row), and its vertices."""
    hull = convex_hull(rng.normal(size=(12, 3)) * 0.03, 16)
    return Hulls.of([hull], jnp.float64), np.asarray(hull.vertices)


def test_the_hull_narrow_phase_matches_a_brute_force_reference(figures):
    """A hull's least overlap with an ellipsoid over the directions (its support: the most of its
    vertices), hulls of random points at random poses, touching and apart."""
    rng = np.random.default_rng(5)
    kernel = jax.jit(KINDS["hull-ellipsoid"].kernel)
    worst = 0.0
    for _ in range(6):
        hulls, vertices = random_hull(rng)
        size_b = rng.uniform(0.03, 0.12, 3)
        H_b = pose(Rotation.random(random_state=rng).as_matrix(), np.zeros(3))
        R_a = Rotation.random(random_state=rng).as_matrix()
        d = rng.normal(size=3)
        d /= np.linalg.norm(d)
        gap = reach(H_b, size_b, d[None])[0] + np.max(vertices @ R_a.T @ -d)
        H_a = pose(R_a, (gap + rng.uniform(-0.01, 0.015)) * d)
        row = HullData(*(getattr(hulls, name)[0] for name in HullData._fields))
        slots = kernel(in_world(jnp.asarray(H_a), row), jnp.asarray(H_b), jnp.asarray(size_b))
        world = vertices @ R_a.T + H_a[:3, 3]
        hull_reach = lambda n: np.max(n @ world.T, axis=1)  # noqa: E731
        depth, normal = reference_of(lambda n: reach(H_b, size_b, n) + hull_reach(-n))
        worst = max(worst, abs(float(slots.depth[0]) - depth))
        assert float(slots.depth[0]) == pytest.approx(depth, abs=1e-9)
        np.testing.assert_allclose(np.asarray(slots.normal[0]), normal, atol=1e-5)
    figures("ellipsoid narrow phase vs brute force, hull-ellipsoid: largest depth error", worst, "m")


def test_ellipsoid_pairs_match_mujoco(figures):
    """MuJoCo's depth (``-dist``) and normal of the geom pairs of an MJCF scene of an ellipsoid, a
    sphere, a capsule, a box and a cylinder, each free body lowered onto a fixed ellipsoid at
    random orientations."""
    mujoco = pytest.importorskip("mujoco")
    xml = """<mujoco><worldbody>
      <body name="floor_egg"><geom name="under" type="ellipsoid" size="0.3 0.2 0.08" euler="5 -8 20"/></body>
      <body name="egg" pos="0.05 0.02 0.115"><freejoint/><geom name="egg" type="ellipsoid" size="0.1 0.06 0.04"/></body>
      <body name="ball" pos="-0.12 0.05 0.125"><freejoint/><geom name="ball" type="sphere" size="0.05"/></body>
      <body name="pill" pos="0.02 -0.1 0.1"><freejoint/><geom name="pill" type="capsule" size="0.03 0.06" euler="80 0 0"/></body>
      <body name="brick" pos="0.15 0.08 0.09"><freejoint/><geom name="brick" type="box" size="0.04 0.03 0.02"/></body>
      <body name="can" pos="-0.1 -0.1 0.1"><freejoint/><geom name="can" type="cylinder" size="0.03 0.04"/></body>
    </worldbody></mujoco>"""
    mj = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(mj)
    rng = np.random.default_rng(3)
    under = mj.geom("under")
    H_b = pose(rotation(mj.geom_quat[under.id]), mj.geom_pos[under.id])
    kernels = {name: jax.jit(KINDS[f"{kind}-ellipsoid"].kernel) for name, kind in
               (("egg", "ellipsoid"), ("ball", "sphere"), ("pill", "capsule"), ("brick", "box"), ("can", "cylinder"))}
    worst = 0.0
    seen = set()
    for _ in range(6):
        mujoco.mj_resetData(mj, data)
        for body in kernels:
            adr = mj.jnt_qposadr[mj.body(body).jntadr[0]]
            data.qpos[adr + 3 : adr + 7] = np.roll(Rotation.random(random_state=rng).as_quat(), 1)
            data.qpos[adr + 2] -= rng.uniform(0.0, 0.03)
        mujoco.mj_forward(mj, data)
        for contact in data.contact[: data.ncon]:
            names = {mj.geom(contact.geom1).name, mj.geom(contact.geom2).name}
            if "under" not in names:
                continue
            other = (names - {"under"}).pop()
            geom = mj.geom(other)
            H_a = pose(np.array(data.geom_xmat[geom.id]).reshape(3, 3), np.array(data.geom_xpos[geom.id]))
            size = np.array(mj.geom_size[geom.id]) * {"egg": 1.0, "brick": 1.0, "ball": np.array([1.0, 0.0, 0.0])}.get(other, np.array([1.0, 1.0, 0.0]))
            slots = kernels[other](jnp.asarray(H_a), jnp.asarray(size), jnp.asarray(H_b), jnp.asarray(mj.geom_size[under.id]))
            normal = np.array(contact.frame[:3]) * (1.0 if mj.geom(contact.geom1).name == "under" else -1.0)
            worst = max(worst, abs(float(slots.depth[0]) + contact.dist))
            assert float(slots.depth[0]) == pytest.approx(-contact.dist, abs=2e-5), other
            np.testing.assert_allclose(np.asarray(slots.normal[0]), normal, atol=2e-2)
            seen.add(other)
    assert seen == set(kernels)
    figures("ellipsoid pairs vs MuJoCo mj_collision: largest depth difference", worst, "m")


@pytest.mark.parametrize("kind, size_a, quaternion", [
    ("ellipsoid", (0.05, 0.05, 0.05), (0.9, 0.1, -0.3, 0.2)), ("ellipsoid", (0.1, 0.06, 0.04), (1.0, 0.0, 0.0, 0.0)),
    ("capsule", (0.03, 0.08, 0.0), (1.0, 0.0, 0.0, 0.0)), ("capsule", (0.03, 0.08, 0.0), tuple(LYING)),
    ("box", (0.1, 0.1, 0.03), (1.0, 0.0, 0.0, 0.0)),
    ("cylinder", (0.03, 0.05, 0.0), (1.0, 0.0, 0.0, 0.0)), ("cylinder", (0.03, 0.05, 0.0), (np.cos(np.pi / 4), np.sin(np.pi / 4), 0.0, 0.0))],
    ids=["sphere-like ellipsoid", "axis-aligned ellipsoid", "standing capsule", "lying capsule", "box face", "cylinder cap", "cylinder side"])
def test_gradients_match_central_differences(kind, size_a, quaternion):
    """The depth, normal and position of a's slot against the pose of a (its place and a
    rotation vector), b an axis-aligned ellipsoid (or a sphere-like one): degenerate poses."""
    size_b = jnp.array([0.08, 0.08, 0.08]) if size_a[0] == size_a[1] else jnp.array([0.12, 0.09, 0.05])
    R0 = rotation(np.asarray(quaternion) / np.linalg.norm(quaternion))
    below = np.abs(R0.T[:, 2]) @ np.asarray(size_a) if kind == "box" else size_a[2] if kind == "ellipsoid" else (
        size_a[1] + (size_a[0] if kind == "capsule" else 0.0) if quaternion[0] == 1.0 and kind != "box" else size_a[0])
    top = size_b[2] + below - 0.002
    x = jnp.array([0.0, 0.0, float(top), 0.0, 0.0, 0.0])
    shape = (jnp.asarray(R0), jnp.asarray(size_a), size_b)
    run, forward, reverse = _slot_programs(kind)
    analytic = np.asarray(forward(x, *shape))
    h = 1e-6
    numeric = np.stack([(run(x.at[i].add(h), *shape) - run(x.at[i].add(-h), *shape)) / (2 * h) for i in range(6)], axis=1)
    assert np.isfinite(analytic).all()
    np.testing.assert_allclose(analytic, numeric, atol=2e-6)
    # Reverse mode too (no NaN from the branches not taken).
    np.testing.assert_allclose(np.asarray(reverse(x, *shape)), analytic, atol=1e-9)


@functools.lru_cache(maxsize=None)
def _slot_programs(kind: str):
    """The jitted slot of a's pair with an ellipsoid b at the origin, ``slot(x, R0, size_a, size_b)``
    (a at ``x (6,)``: its place and a rotation vector applied to ``R0``), and its forward- and
    reverse-mode Jacobians in ``x``: one set of programs per kind, shared by its poses and sizes."""

    def slot(x, R0, size_a, size_b):
        K = jnp.array([[0.0, -x[5], x[4]], [x[5], 0.0, -x[3]], [-x[4], x[3], 0.0]])
        R = jax.scipy.linalg.expm(K) @ R0
        H_a = jnp.eye(4).at[:3, :3].set(R).at[:3, 3].set(x[:3])
        found = KINDS[f"{kind}-ellipsoid"].kernel(H_a, size_a, jnp.eye(4), size_b)
        return jnp.concatenate([found.depth, found.normal[0], found.position[0]])

    return jax.jit(slot), jax.jit(jax.jacfwd(slot)), jax.jit(jax.jacrev(slot))


def egg(radii, mass: float, name: str) -> js.Model:
    a, b, c = radii
    return js.load_model(f"""<mujoco model="{name}"><worldbody><body name="{name}"><freejoint/>
        <geom type="ellipsoid" size="{a} {b} {c}" mass="{mass}"/></body></worldbody></mujoco>""")


CUBE = np.array(list(itertools.product((-0.05, 0.05), repeat=3)))
CUBE_FACES = [[0, 1, 3, 2], [4, 6, 7, 5], [0, 4, 5, 1], [2, 3, 7, 6], [0, 2, 6, 4], [1, 5, 7, 3]]


def hull_cube(path, mass: float) -> js.Model:
    """A free 0.1 m cube of ``mass`` [kg] as the convex hull of a mesh written to ``path``."""
    path.write_text("".join(f"v {x} {y} {z}\n" for x, y, z in CUBE) + "".join("f " + " ".join(str(i + 1) for i in f) + "\n" for f in CUBE_FACES))
    inertia = mass * 0.02 / 12
    return js.load_model(
        f"""<robot name="hull"><link name="link"><inertial><mass value="{mass}"/>
        <inertia ixx="{inertia}" iyy="{inertia}" izz="{inertia}" ixy="0" ixz="0" iyz="0"/></inertial>
        <collision><geometry><mesh filename="{path}"/></geometry></collision></link></robot>"""
    )


@pytest.fixture(scope="module")
def rested(tmp_path_factory):
    """Per scene: the deepest contact between the two bodies at the end [m], the normal force
    on the top over the last 0.25 s ``(K,)`` [N], the touching contacts at the end, and the law's
    ``max_penetration``: an ellipsoid on a flat ellipsoid lying on the ground, a sphere on it
    (at its top), a flat ellipsoid across a lying capsule, an ellipsoid on a slab, on a
    standing drum's cap and on a cube that is a mesh's hull, 1.5 s at 2 ms."""
    flat = egg((0.3, 0.25, 0.05), 10.0, "flat")
    scenes_ = {
        "ellipsoid on an ellipsoid": (flat, 0.05, None, egg((0.08, 0.05, 0.04), 1.0, "top"), 0.1 + 0.04, (0.01, 0.005)),
        "sphere on an ellipsoid": (flat, 0.05, None, scenes.sphere(0.05, mass=1.0), 0.1 + 0.05, (0.0, 0.0)),
        "ellipsoid on a capsule": (scenes.capsule(0.05, 0.3, mass=10.0), 0.05, LYING, egg((0.1, 0.1, 0.02), 1.0, "plate"),
                                   0.1 + 0.02, (0.0, 0.0)),
        "ellipsoid on a box": (scenes.box((0.4, 0.4, 0.1), mass=10.0), 0.05, None, egg((0.08, 0.05, 0.04), 1.0, "top"),
                               0.1 + 0.04, (0.02, 0.01)),
        "ellipsoid on a drum": (scenes.cylinder(0.15, 0.1, mass=10.0), 0.05, None, egg((0.08, 0.05, 0.04), 1.0, "top"),
                                0.1 + 0.04, (0.02, 0.01)),
        "ellipsoid on a hull": (hull_cube(tmp_path_factory.mktemp("ellipsoid_pairs") / "cube.obj", 10.0), 0.05, None,
                                egg((0.04, 0.03, 0.02), 1.0, "top"), 0.1 + 0.02, (0.01, 0.005)),
    }
    models, states = [], []
    for i, (base, base_height, base_quaternion, top, top_height, (dx, dy)) in enumerate(scenes_.values()):
        x = 1.0 * i
        models += [base, top]
        states += [js.State.build(base, base_position=[x, 0.0, base_height - 0.0005],
                                  **({} if base_quaternion is None else {"base_quaternion": base_quaternion})),
                   js.State.build(top, base_position=[x + dx, dy, top_height - 0.0008])]
    world = WorldModel.build(models, dt=0.002)
    steps, kept = 750, 125

    normal, depth, count = rest_on_pairs(world, world.initial_state(states, history=0), steps, kept)
    return {name: (float(depth[i]), np.asarray(normal[:, i]), int(count[i])) for i, name in enumerate(scenes_)}, float(
        world.pair_law.max_penetration)


@pytest.mark.parametrize("scene", ["ellipsoid on an ellipsoid", "sphere on an ellipsoid", "ellipsoid on a capsule", "ellipsoid on a box",
                                   "ellipsoid on a drum", "ellipsoid on a hull"])
def test_bodies_rest_on_ellipsoids_at_the_pair_depth_with_their_weight(rested, scene, figures):
    by_scene, max_penetration = rested
    depth, normal, count = by_scene[scene]
    figures(f"pair rest: {scene}: depth / max_penetration", depth / max_penetration)
    figures(f"pair rest: {scene}: f_n / (m g) - 1", float(normal.mean()) / G - 1)
    assert count == 1
    assert depth == pytest.approx(max_penetration, rel=0.1)
    np.testing.assert_allclose(normal, G, rtol=5e-3)


def test_an_mjcf_scene_of_ellipsoids_loads_and_rests(figures):
    """An MJCF file of free ellipsoids (one on the floor, one on it, one on a box on the floor)
    loads with exact ellipsoids (one point, one shape each) and comes to rest over 1 s at 2 ms,
    each body where MuJoCo's ``mj_step`` puts it within 2 mm (both soft: the terrain law here
    rests 1 mm deep, MuJoCo's default contacts about 0.4 mm)."""
    mujoco = pytest.importorskip("mujoco")
    xml = """<mujoco><option timestep="0.002"/><worldbody><geom name="floor" type="plane" size="2 2 0.1"/>
      <body name="low" pos="0 0 0.052"><freejoint/><geom type="ellipsoid" size="0.12 0.08 0.05" mass="2"/></body>
      <body name="high" pos="0 0 0.145"><freejoint/><geom type="ellipsoid" size="0.06 0.05 0.04" mass="0.5"/></body>
      <body name="brick" pos="0.5 0 0.051"><freejoint/><geom type="box" size="0.1 0.1 0.05" mass="3"/></body>
      <body name="egg" pos="0.5 0 0.14"><freejoint/><geom type="ellipsoid" size="0.05 0.03 0.04" mass="0.3"/></body>
    </worldbody></mujoco>"""
    description = parse_mjcf_world(xml)
    models = [build_model(x, collidable_points=js.ContactSampling().points) for x in description.models]
    names = [model.name for model in models]
    assert all(len(model.point_link) == 1 for model, name in zip(models, names) if name != "brick")
    assert sorted(kind for model in models for kind in model.shape_kind) == ["box", "ellipsoid", "ellipsoid", "ellipsoid"]
    world = WorldModel.build(models, dt=0.002, gravity=description.gravity, terrain=js.Terrain.of(description.terrain))
    steps = 500
    final = jax.jit(lambda s: world_rollout(world, s, None, steps)[0])(world.initial_state([js.State.build(m) for m in models]))
    ours = {name: np.asarray(state.base_position) for name, state in zip(names, final.states)}
    mj = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(mj)
    for _ in range(steps):
        mujoco.mj_step(mj, data)
    assert all(np.isfinite(p).all() for p in ours.values())
    worst = 0.0
    for name in ("low", "high", "brick", "egg"):
        theirs = np.array(data.xpos[mj.body(name).id])
        worst = max(worst, float(np.linalg.norm(ours[name] - theirs)))
        np.testing.assert_allclose(ours[name], theirs, atol=2e-3)
    figures("MJCF scene of ellipsoids, 1 s vs mj_step: largest body distance", worst, "m")
    assert ours["high"][2] == pytest.approx(0.05 + 0.05 + 0.04, abs=2e-3)
