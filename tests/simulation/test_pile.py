"""Many bodies in one world: the broad phase keeps every touching pair its budget holds and counts
those it cannot, static geometry (a bin in the terrain, the world's last model) takes none of the
bodies' budget, identical bodies are stepped as one batch, and a small pile of mixed bodies
dropped into a bin comes to rest."""

from __future__ import annotations

import jax
import jax.extend.core as jax_core
import jax.numpy as jnp
import numpy as np
import pytest
from collision_worlds import pose, rotation, solid

import jaxsim_like as js
from jaxsim_like.simulation.collision import collisions as collisions_module
from jaxsim_like.simulation.collision import NEIGHBOURS, CollisionTable, Geometry, query
from jaxsim_like.simulation.collision.broad import bounding_radius, half_extents, near_along_centres, overlapping, support
from jaxsim_like.simulation.collision.points import KIND_CODES
from jaxsim_like.simulation.groups import group_models
from jaxsim_like.simulation.world import WorldModel, world_rollout, world_step

RADIUS = 0.05
ROW = 6  # spheres in a row, each overlapping the next by 1 mm: ROW - 1 touching pairs
BALL = f'<sphere radius="{RADIUS}"/>'
MAX_PENETRATION = 0.001


@pytest.fixture(scope="module")
def row():
    """``ROW`` balls and the world poses ``(L, 4, 4)`` of a row of them along x, touching their
    neighbours; two more far away, touching nothing."""
    balls = [solid(f"ball{i}", BALL, 1.0, 0.001) for i in range(ROW + 2)]
    x = [i * (2 * RADIUS - 0.001) for i in range(ROW)] + [10.0, 20.0]
    poses = np.concatenate([pose((xi, 0.0, 0.0)) for xi in x])
    return balls, jnp.asarray(poses)


def _touching(contacts) -> set[tuple[int, int]]:
    active = np.asarray(contacts.active)
    return {tuple(sorted((int(a), int(b)))) for a, b in zip(np.asarray(contacts.link_a)[active], np.asarray(contacts.link_b)[active])}


@pytest.mark.parametrize("budget", [ROW - 1, ROW + 3, ROW - 3])
def test_the_broad_phase_keeps_every_touching_pair_that_fits_and_counts_the_others(row, budget):
    """With a budget of at least the touching pairs, every one is found and nothing overflows;
    with less, the budget is filled with touching pairs and the overflow counts the rest."""
    balls, poses = row
    table = CollisionTable.build(balls, budget={"sphere-sphere": budget})
    contacts, overflow = jax.jit(query, static_argnums=0)(table, Geometry.of(balls, poses.dtype), poses)
    touching = _touching(contacts)
    expected = {(i, i + 1) for i in range(ROW - 1)}
    if budget >= ROW - 1:
        assert touching == expected and overflow.tolist() == [0]
    else:
        assert touching < expected and len(touching) == budget
        assert overflow.tolist() == [ROW - 1 - budget]


def test_the_default_budget_grows_with_the_bodies_not_their_pairs(row):
    """Of 8 balls' 28 pairs, the default keeps NEIGHBOURS overlaps per ball, each pair counted once
    (16); of 3 balls' 3 pairs, all of them."""
    balls, _ = row
    assert [g.keep for g in CollisionTable.build(balls).groups] == [NEIGHBOURS * len(balls) // 2]
    assert [g.keep for g in CollisionTable.build(balls[:3]).groups] == [3]


# The pile: a 2 x 2 x 2 grid of 0.2 kg bodies in a bin of 4 static walls in the terrain, spheres
# wedged between the walls on the floor, boxes above them (two kinds: a test compiles few narrow
# phases; benchmarks/pile.py drops all four kinds).
CELL, HALF_WIDTH, WALL = 0.065, 0.065, 0.01
KINDS = {
    "sphere": ('<sphere radius="0.03"/>', 0.4 * 0.2 * 0.03**2),
    "box": ('<box size="0.06 0.06 0.06"/>', 0.2 * 0.06**2 / 6),
}
LAYOUT = ["sphere"] * 4 + ["box"] * 4
SETTLE = 1.25  # [s] (its margin: docs/changelog.md, 2026-12-05, issue 34)
DT = 0.002


def _bin() -> js.Terrain:
    transforms, extents = [], []
    for axis in (0, 1):
        for sign in (-1.0, 1.0):
            H = np.eye(4)
            H[axis, 3], H[2, 3] = sign * (HALF_WIDTH + WALL), 0.1
            transforms.append(H)
            extents.append([WALL, HALF_WIDTH + 2 * WALL, 0.1] if axis == 0 else [HALF_WIDTH + 2 * WALL, WALL, 0.1])
    return js.Terrain.plane().with_boxes(np.stack(transforms), np.asarray(extents))


@pytest.fixture(scope="module")
def pile():
    """The pile's world, its start state and its state and outputs after ``SETTLE`` seconds."""
    shapes = {kind: solid(kind, geometry, 0.2, inertia) for kind, (geometry, inertia) in KINDS.items()}
    models = [shapes[kind] for kind in LAYOUT]
    world = WorldModel.build(models, dt=DT, terrain=_bin(), max_penetration=MAX_PENETRATION)
    rng = np.random.default_rng(1)
    states = []
    for i, model in enumerate(models):
        cell = np.array([i % 2 - 0.5, (i // 2) % 2 - 0.5, 0.0]) * CELL + [0.0, 0.0, 0.032 + 0.07 * (i // 4)]
        turn = rng.uniform(-0.2, 0.2, 3) if i >= 4 else np.zeros(3)
        quaternion = np.concatenate([[np.cos(np.linalg.norm(turn) / 2)], np.sinc(np.linalg.norm(turn) / 2 / np.pi) * turn / 2])
        states.append(js.State.build(model, base_position=cell, base_quaternion=quaternion))
    start = world.initial_state(states)
    final, outputs = jax.jit(world_rollout, static_argnames="steps")(world, start, None, steps=int(SETTLE / DT))
    return world, start, final, outputs


def test_static_geometry_takes_no_budget_and_identical_bodies_are_one_batch(pile):
    """The bin's walls are the world's last model, welded to the world: the pairs of the moving
    bodies lead the groups of the table of the bodies alone (same kinds, candidates and budgets),
    the pairs with a wall follow them in their kind's group with a budget of their own (two walls
    per body), and the eight bodies of two kinds (1 and 8 collidable points) are stepped as one
    batch of two kinds, the spheres' points padded to the boxes' 8; their terrain is the floor
    alone, a box's slots 4 (the plane's, :mod:`jaxsim_like.simulation.contact_slots`)."""
    world, start, _, _ = pile
    table = world.collision
    bodies = len(LAYOUT)
    assert world.scenery == 1 and world.models[-1].name == "terrain" and len(world.models[-1].shape_kind) == 4
    weights = np.asarray(world.inverse_weight)
    assert table.links == bodies + 1 and np.all(weights[:bodies] > 0) and weights[bodies] == 0
    alone = CollisionTable.build(world.models[:bodies])
    assert [g.kind for g in table.groups] == [g.kind for g in alone.groups]
    for group, own in zip(table.groups, alone.groups):
        moving = group.candidates - group.static[0]
        assert (group.first[: len(own.first)], group.second[:moving], group.keep - group.static[1]) == (own.first, own.second, own.keep)
    static = {g.kind: g.static for g in table.groups if g.static[0]}
    assert static == {"sphere-box": (16, 8), "box-box": (16, 8)}  # 4 bodies of a kind, 4 walls; 2 walls a body
    solid_pairs = sum(g.candidates for g in alone.groups if g.kind != "point-shape")
    assert solid_pairs == bodies * (bodies - 1) // 2  # one shape per body: every pair of bodies, once
    groups = group_models(world.models, (world.model_params, start.states), (False,) * (bodies + 1))
    group, walls = groups
    assert walls.members == (bodies,)
    assert group.members == tuple(range(bodies)) and group.kind.tolist() == [0] * 4 + [1] * 4
    assert (group.own >= 0).sum(axis=1).tolist() == [1] * 4 + [8] * 4 and group.slot_limit.tolist() == [[1]] * 4 + [[4]] * 4


def test_a_small_pile_in_a_bin_comes_to_rest(pile):
    """After the settling time every body moves slower than 5 mm/s, no contact (with the bin or
    between bodies) is deeper than twice ``max_penetration``, every body is inside the bin and
    no touching pair was left out of the budget."""
    _, _, final, outputs = pile
    assert bool(outputs.finite.all())
    bodies = final.states[: len(LAYOUT)]
    speeds = [float(jnp.linalg.norm(s.base_velocity[:3])) for s in bodies]
    assert max(speeds) < 5e-3, speeds
    terrain = max(float(o.penetration[-1].max(initial=0.0)) for o in outputs.models)  # the walls' model has no points
    pairs = outputs.pairs.contacts
    between = float(jnp.max(jnp.where(pairs.active[-1], pairs.depth[-1], 0.0)))
    assert max(terrain, between) < 2 * MAX_PENETRATION
    assert int(outputs.pairs.overflow.max()) == 0
    positions = np.stack([np.asarray(s.base_position) for s in bodies])
    assert np.all(np.abs(positions[:, :2]) < HALF_WIDTH) and np.all(positions[:, 2] > 0)


def test_bodies_of_different_kinds_step_in_one_padded_batch_as_they_would_alone(tmp_path):
    """A sphere (1 point), a box (8 corners), a cylinder (16 rim points) and a convex mesh (an
    octahedron: its hull, 6 vertices) in the bin, apart, are one batch of four kinds, their points
    padded to 16 and their hulls to the octahedron's; each steps as :func:`.step.step` steps it
    alone, to rounding, with its own points in its outputs. The box is pressed into the floor and
    a wall, so 6 of its corners penetrate, and all 6 carry it: on a terrain of boxes a link rests
    on two faces' slots (8 corners of a box, not 4). Without collisions the bodies' points meet
    the terrain's boxes, as in :func:`.step.step` with ``static_boxes="points"``."""
    octahedron = tmp_path / "octahedron.obj"
    octahedron.write_text("".join(f"v {x} {y} {z}\n" for x, y, z in 0.03 * np.concatenate([np.eye(3), -np.eye(3)]))
                          + "f 1 2 3\nf 2 4 3\nf 4 5 3\nf 5 1 3\nf 2 1 6\nf 4 2 6\nf 5 4 6\nf 1 5 6\n")
    geometries = [KINDS["sphere"], KINDS["box"], ('<cylinder radius="0.03" length="0.06"/>', 0.2 * 0.06**2 / 8),
                  (f'<mesh filename="{octahedron}"/>', 0.2 * 0.03**2 / 5)]
    models = [solid(f"body{i}", geometry, 0.2, inertia) for i, (geometry, inertia) in enumerate(geometries)]
    assert models[3].shape_kind == ("hull",) and models[3].shape_hulls.counts[0] == 6
    positions = [(-0.035, -0.035, 0.0295), (HALF_WIDTH - 0.0295, 0.03, 0.0295), (-0.03, 0.035, 0.0295), (0.035, -0.035, 0.0295)]
    states = [js.State.build(m, base_position=p, base_velocity=[0.01, -0.02, 0.0, 0.1, 0.0, -0.1]) for m, p in zip(models, positions)]
    world = WorldModel.build(models, dt=DT, terrain=_bin(), max_penetration=MAX_PENETRATION, collisions=False)
    (group,) = group_models(world.models, (world.model_params,), (False,) * 4)
    assert group.kinds == 4 and len(group.point_link) == 16 and group.hull_counts == models[3].shape_hulls.counts
    following, outputs = jax.jit(world_step)(world, world.initial_state(states))
    for m, (model, state) in enumerate(zip(models, states)):
        params = js.SimulationParams.build(model, dt=DT, terrain=_bin(), max_penetration=MAX_PENETRATION, static_boxes="points")
        alone, alone_out = jax.jit(js.step)(model, state, params=params)
        for got, want in zip(jax.tree.leaves(following.states[m]), jax.tree.leaves(alone)):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
        for got, want in zip(jax.tree.leaves(outputs.models[m]), jax.tree.leaves(alone_out)):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    box = outputs.models[1]
    assert int(jnp.sum(box.penetration > 0)) == 6 and int(jnp.sum(box.in_contact)) == 6
    assert outputs.pairs is None


def _equations(jaxpr) -> int:
    """The equations of ``jaxpr`` and of the programs nested in it (scan bodies, loops, calls)."""
    count = 0
    for equation in jaxpr.eqns:
        count += 1
        for value in equation.params.values():
            for inner in value if isinstance(value, (list, tuple)) else (value,):
                if isinstance(inner, jax_core.ClosedJaxpr):
                    count += _equations(inner.jaxpr)
                elif isinstance(inner, jax_core.Jaxpr):
                    count += _equations(inner)
    return count


def test_the_rollout_of_a_packed_world_does_not_grow_with_its_identical_bodies():
    """From a packed state, the traced 2-step rollout of a pile of spheres and boxes has as many
    equations with twice the bodies (every pair kind culled to the same budget in both; traced
    only, nothing compiled); it returns a packed state and outputs per group, and unpacking a
    packed state gives back the state per model."""
    shapes = {kind: solid(kind, geometry, 0.2, inertia) for kind, (geometry, inertia) in KINDS.items()}
    sizes = []
    for count in (3, 6):
        models = [shapes[kind] for kind in ("sphere", "box") for _ in range(count)]
        world = WorldModel.build(models, dt=DT, terrain=_bin(), budget=2)
        assert all(group.keep < group.candidates for group in world.collision.groups)
        states = [js.State.build(m, base_position=[0.07 * i, 0.0, 0.05]) for i, m in enumerate(models)]
        start = world.initial_state(states)
        packed = world.pack(start)
        assert packed.members == (tuple(range(2 * count)), (2 * count,))  # the bodies, the bin's walls
        traced, (final, outputs) = jax.make_jaxpr(lambda s: world_rollout(world, s, None, 2), return_shape=True)(packed)
        sizes.append(_equations(traced.jaxpr))
    assert sizes[0] == sizes[1], sizes
    assert jax.tree.structure(final) == jax.tree.structure(packed)
    assert [o.penetration.shape for o in outputs.models] == [(2, 2 * count, 8), (2, 1, 0)]  # (T, G, P) per group, padded; the walls have no points
    assert jax.tree.structure(world.unpack(packed)) == jax.tree.structure(start)
    for got, want in zip(jax.tree.leaves(world.unpack(packed)), jax.tree.leaves(start)):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_the_cull_packs_each_pair_kind_into_its_own_budget():
    """Two pair kinds culled in one pass: 4 candidates with budget 2 (all overlap: two kept, two
    counted) and 3 with budget 2 (one overlaps); the first kind's pairs beyond its budget do not
    spill into the second's."""
    centres = np.zeros((7, 3))
    apart = np.array([0.0, 0.0, 0.0, 0.0, 5.0, 0.0, 5.0])  # candidates 0 and 2 of the second kind
    second = np.stack([apart, np.zeros(7), np.zeros(7)], axis=1)
    radius = jnp.full(7, 0.5)
    extent = jnp.full((7, 3), 0.5)
    kept, held, overflow = jax.jit(overlapping, static_argnums=(6, 7))(
        jnp.asarray(centres), radius, extent, jnp.asarray(second), radius, extent, (4, 3), (2, 2))
    assert np.asarray(kept).tolist() == [0, 1, 1, 0]
    assert np.asarray(held).tolist() == [True, True, True, False]
    assert np.asarray(overflow).tolist() == [2, 0]


def test_each_shapes_world_box_holds_it_and_touches_it():
    """:func:`half_extents` of a box, a capsule, a cylinder and a sphere at random orientations: every
    point of the shape (corners; points on the capsule's end spheres and the cylinder's rims) lies
    within its box, and the box is tight (the farthest of 4,096 samples within 1e-3 of it)."""
    rng = np.random.default_rng(3)
    size = {"box": (0.05, 0.2, 0.1), "capsule": (0.03, 0.15, 0.0), "cylinder": (0.04, 0.1, 0.0), "sphere": (0.07, 0.0, 0.0)}
    circle = np.linspace(0.0, 2 * np.pi, 4096, endpoint=False)
    ball = rng.normal(size=(4096, 3))
    ball /= np.linalg.norm(ball, axis=1, keepdims=True)
    for kind, (a, b, c) in size.items():
        if kind == "box":
            local = np.array([[x, y, z] for x in (-a, a) for y in (-b, b) for z in (-c, c)])
        elif kind == "capsule":
            local = np.concatenate([a * ball + [0.0, 0.0, b], a * ball - [0.0, 0.0, b]])
        elif kind == "cylinder":
            rim = np.stack([a * np.cos(circle), a * np.sin(circle), np.zeros_like(circle)], axis=1)
            local = np.concatenate([rim + [0.0, 0.0, b], rim - [0.0, 0.0, b]])
        else:
            local = a * ball
        for _ in range(4):
            R = np.linalg.qr(rng.normal(size=(3, 3)))[0]
            code = np.array([KIND_CODES[kind]])
            sizes = jnp.asarray([[a, b, c]])
            extent = np.asarray(half_extents(code, sizes, jnp.asarray(R[None]), bounding_radius(code, sizes)))[0]
            reach = np.abs(local @ R.T).max(axis=0)
            assert np.all(reach <= extent + 1e-12), kind
            np.testing.assert_allclose(reach, extent, atol=1e-3 * max(a, b, c), err_msg=kind)


def _shape_points(kind: str, size, rng) -> np.ndarray:
    """Points of a shape's surface in its frame (a box's corners; a hull's vertices: ``size``
    holds them), dense enough that their farthest along any direction is within 1e-3 of it."""
    a, b, c = size if kind != "hull" else (0.0, 0.0, 0.0)
    circle = np.linspace(0.0, 2 * np.pi, 4096, endpoint=False)
    ball = rng.normal(size=(4096, 3))
    ball /= np.linalg.norm(ball, axis=1, keepdims=True)
    if kind == "box":
        return np.array([[x, y, z] for x in (-a, a) for y in (-b, b) for z in (-c, c)])
    if kind == "capsule":
        return np.concatenate([a * ball + [0.0, 0.0, b], a * ball - [0.0, 0.0, b]])
    if kind == "cylinder":
        rim = np.stack([a * np.cos(circle), a * np.sin(circle), np.zeros_like(circle)], axis=1)
        return np.concatenate([rim + [0.0, 0.0, b], rim - [0.0, 0.0, b]])
    if kind == "ellipsoid":
        return ball * [a, b, c]
    if kind == "hull":
        return np.asarray(size)
    return a * ball


def test_each_shapes_support_is_its_farthest_point_along_a_direction():
    """:func:`support` of a box, a sphere, a capsule, a cylinder, an ellipsoid and a hull (16
    vertices) at random poses along random directions: no point of the shape reaches farther,
    and one reaches within 1e-3 of its size (a hull's vertex to rounding); all of them in one call
    as each kind alone."""
    rng = np.random.default_rng(4)
    hull = rng.normal(size=(16, 3)) * [0.034, 0.03, 0.026]
    shapes = {"box": (0.05, 0.2, 0.1), "sphere": (0.07, 0.0, 0.0), "capsule": (0.03, 0.15, 0.0), "cylinder": (0.04, 0.1, 0.0),
              "ellipsoid": (0.05, 0.03, 0.08), "hull": hull}
    calls = []
    for kind, size in shapes.items():
        local = _shape_points(kind, size, rng)
        R = np.stack([np.linalg.qr(rng.normal(size=(3, 3)))[0] for _ in range(8)])
        H = np.tile(np.eye(4), (8, 1, 1))
        H[:, :3, :3], H[:, :3, 3] = R, rng.uniform(-1.0, 1.0, (8, 3))
        direction = rng.normal(size=(8, 3))
        direction /= np.linalg.norm(direction, axis=1, keepdims=True)
        sizes = np.zeros((8, 3)) if kind == "hull" else np.tile(size, (8, 1))
        vertices = np.tile(hull if kind == "hull" else np.zeros((16, 3)), (8, 1, 1))
        reach = np.asarray(support(np.full(8, KIND_CODES[kind]), jnp.asarray(H), jnp.asarray(sizes), jnp.asarray(vertices), jnp.asarray(direction)))
        farthest = np.einsum("kpi,ki->kp", local[None] @ R.transpose(0, 2, 1) + H[:, None, :3, 3], direction).max(axis=1)
        assert np.all(farthest <= reach + 1e-12), kind
        np.testing.assert_allclose(farthest, reach, atol=1e-12 if kind in ("box", "hull") else 1e-3 * 0.2, err_msg=kind)
        calls.append((np.full(8, KIND_CODES[kind]), H, sizes, vertices, direction, reach))
    mixed = support(*(np.concatenate(x) for x in zip(*(call[:-1] for call in calls))))  # every kind in one call
    np.testing.assert_array_equal(np.asarray(mixed), np.concatenate([call[-1] for call in calls]))


def test_the_line_of_centres_keeps_every_touching_pair_with_a_hull_and_culls_pairs_apart(tmp_path):
    """:func:`near_along_centres` of a hull (a cube of 0.2 m as a mesh) and a box, a sphere, a
    capsule, a cylinder or another cube, at 400 random poses each around it: every pair whose
    contacts the world's query finds is kept (their narrow phases, the cylinder's prism inside
    the cylinder); of the pairs apart whose bounding spheres overlap, more than half are culled
    (of two cubes, more than 15 %: a face's normal separates them more often than the line of
    their centres does)."""
    corners = [(x, y, z) for x in (-0.1, 0.1) for y in (-0.1, 0.1) for z in (-0.1, 0.1)]
    faces = [[0, 1, 3, 2], [4, 6, 7, 5], [0, 4, 5, 1], [2, 3, 7, 6], [0, 2, 6, 4], [1, 5, 7, 3]]
    (tmp_path / "cube.obj").write_text("".join(f"v {x} {y} {z}\n" for x, y, z in corners) + "".join(
        "f " + " ".join(str(i + 1) for i in face) + "\n" for face in faces))

    def cube_hull(name):
        return solid(name, f'<mesh filename="{tmp_path / "cube.obj"}"/>', 1.0, 0.01)

    rng = np.random.default_rng(6)
    geometry = {"box": '<box size="0.1 0.16 0.06"/>', "sphere": '<sphere radius="0.05"/>', "capsule": '<capsule radius="0.03" length="0.16"/>',
                "cylinder": '<cylinder radius="0.05" length="0.12"/>'}
    for kind in ("box", "sphere", "capsule", "cylinder", "hull"):
        other = cube_hull("cube_b") if kind == "hull" else solid(kind, geometry[kind], 1.0, 0.01)
        models = [other, cube_hull("cube")]
        table = CollisionTable.build(models)
        assert len(table.groups) == 1 and table.groups[0].kind == f"{kind}-hull"
        geo = Geometry.of(models, jnp.float64)
        R = np.stack([np.linalg.qr(rng.normal(size=(3, 3)))[0] for _ in range(400)])
        R *= np.sign(np.linalg.det(R))[:, None, None]
        offset = rng.normal(size=(400, 3))
        offset *= rng.uniform(0.05, 0.3, (400, 1)) / np.linalg.norm(offset, axis=1, keepdims=True)
        poses = np.tile(np.eye(4), (400, 2, 1, 1))
        poses[:, 0, :3, :3], poses[:, 0, :3, 3] = R, offset
        contacts = jax.jit(jax.vmap(lambda W_H_L: query(table, geo, W_H_L)[0]))(jnp.asarray(poses))
        touching = np.asarray(contacts.active).any(axis=1)
        code = np.asarray(table.shape_code)
        hulls = geo.hulls.padded(table.hull_counts)
        W_H_S = jnp.asarray(poses) @ geo.shape_transform
        near = np.asarray(near_along_centres(code[:1].repeat(400), W_H_S[:, 0], jnp.tile(geo.shape_size[:1], (400, 1)), jnp.tile(hulls.vertices[:1], (400, 1, 1)),
                                             code[1:].repeat(400), W_H_S[:, 1], jnp.tile(geo.shape_size[1:], (400, 1)), jnp.tile(hulls.vertices[1:], (400, 1, 1)), 0.0))
        radius = np.asarray(bounding_radius(code, geo.shape_size))
        if kind == "hull":
            radius = np.full(2, np.sqrt(3) * 0.1)
        spheres = np.linalg.norm(offset, axis=1) <= radius.sum()
        assert touching.sum() > 50, kind
        assert np.all(near[touching]), kind
        apart = spheres & ~touching
        # the line of centres separates a cube from a cube less often than a face's normal does
        assert apart.sum() > 20 and (~near[apart]).mean() > (0.15 if kind == "hull" else 0.5), (kind, apart.sum(), (~near[apart]).mean())


def test_planks_side_by_side_take_no_budget():
    """Eight 2 m planks 0.3 m apart, side by side along y: their bounding spheres overlap (28
    pairs), their world boxes do not: none is kept and nothing overflows, though the default
    budget (16) could not hold the spheres' pairs; turned a quarter about z, side by side along x,
    again none."""
    planks = [solid(f"plank{i}", '<box size="2.0 0.2 0.1"/>', 10.0, 1.0) for i in range(8)]
    table = CollisionTable.build(planks)
    assert [g.keep for g in table.groups] == [16]
    along_y = np.concatenate([pose((0.0, 0.3 * i, 0.0)) for i in range(8)])
    turned = np.concatenate([pose((0.3 * i, 0.0, 0.0), rotation("z", np.pi / 2)) for i in range(8)])
    run = jax.jit(query, static_argnums=0)
    for poses in (along_y, turned):
        contacts, overflow = run(table, Geometry.of(planks, jnp.float64), jnp.asarray(poses))
        assert not np.asarray(contacts.active).any() and np.asarray(overflow).tolist() == [0]


def test_bodies_weigh_their_mass_at_their_origins_without_compiling_a_program():
    """A sphere and a box of one mass (their origins at their centres of mass) weigh ``1 / m``
    at their origins; the inverse weights are computed on the host: no XLA program is compiled
    for them (a pile's bodies of many shapes would each compile one)."""
    mass = 0.7
    bodies = [solid(f"body{i}", shape, mass, 0.01) for i, shape in enumerate(('<sphere radius="0.04"/>', '<box size="0.1 0.2 0.3"/>'))]
    compiled = []

    def on_event(event: str, duration: float, **_) -> None:
        if event == "/jax/core/compile/backend_compile_duration":
            compiled.append(event)

    jax.monitoring.register_event_duration_secs_listener(on_event)
    try:
        weights = [collisions_module.link_inverse_weights(body) for body in bodies]
    finally:
        jax.monitoring.unregister_event_duration_listener(on_event)
    assert compiled == []
    np.testing.assert_allclose(np.concatenate(weights), 1 / mass, rtol=1e-12)


def test_the_touching_budget_steps_the_pile_as_every_slot_and_counts_what_it_drops(pile):
    """The pile's default touching budget is smaller than its table: the settled pile stepped on
    the touching slots alone equals the pile stepped on every slot to rounding (states, tangential
    memories and loads), no slot was dropped; a budget of two slots reports the touching slots
    it left out, which feel no force."""
    world, start, final, outputs = pile
    assert 0 < world.touching < world.collision.size
    assert int(outputs.pairs.dropped.max()) == 0
    every = world.replace(touching=world.collision.size)
    alone, alone_outputs = jax.jit(world_rollout, static_argnames="steps")(every, start, None, steps=int(SETTLE / DT))
    assert alone_outputs.pairs.dropped is None
    for ours, theirs in zip(jax.tree.leaves(final), jax.tree.leaves(alone)):  # a pile's rounding grows over its 625 steps
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=0, atol=1e-10)
    np.testing.assert_allclose(outputs.pairs.forces[-1], alone_outputs.pairs.forces[-1], rtol=0, atol=1e-8)
    touching = int(np.sum(alone_outputs.pairs.contacts.active[-1]))
    assert touching > 2
    _, step_outputs = jax.jit(world_step)(world.replace(touching=2), final)
    pairs = step_outputs.pairs
    assert int(pairs.dropped) == int(np.sum(pairs.contacts.active)) - 2 > 0
    pushed = np.linalg.norm(np.asarray(pairs.forces), axis=-1) > 0
    assert pushed.sum() <= 2 and np.all(np.asarray(pairs.contacts.active)[pushed])
