"""The pair table of a world, the broad-phase cull and `collide` end to end: candidates between
models and within a model (compared with the self-collision pairs on the humanoid and its SRDF),
the budget keeps the nearest pairs, jit(vmap) over poses, gradients through collide and the forces."""

from __future__ import annotations

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from collision_worlds import body, pose

import jaxsim_like as js
from jaxsim_like.simulation import ContactParams
from jaxsim_like.simulation.collision import CollisionTable, Contacts, Geometry, collide, pair_forces, query

ASSETS = Path(__file__).resolve().parents[1] / "assets"
COLLIDE = jax.jit(collide)
QUERY = jax.jit(query, static_argnums=0)


@pytest.fixture(scope="module")
def objects():
    return [body(name) for name in ("ball", "cube", "rod", "can")]


def named_pairs(table, kind):
    """``(first, second)`` of every candidate of ``kind``; of every point in a chunk for point-shape."""
    (group,) = [g for g in table.groups if g.kind == kind]
    if kind != "point-shape":
        return list(zip(group.first, group.second))
    chunks = np.reshape(group.first, (len(group.second), -1))
    return [(int(p), s) for chunk, s in zip(chunks, group.second) for p in chunk if p >= 0]


def test_every_link_of_different_models_is_a_candidate(objects):
    table = CollisionTable.build(objects)
    assert table.link_offsets == (0, 1, 2, 3) and table.shape_offsets == (0, 1, 2, 3)
    kinds = {g.kind: g.candidates for g in table.groups}
    # Shapes meet shapes; the cylinder's caps and rims meet the cube and the rod through points,
    # both ways (the ball meets the whole cylinder as a shape).
    rim, corners, rod = 16, 8, 2  # points, met in chunks of 8 of one link against one shape
    chunks = 2 * 2 + 1 + 1
    assert kinds == {
        "sphere-capsule": 1, "sphere-box": 1, "capsule-box": 1, "sphere-cylinder": 1, "capsule-cylinder": 1,
        "box-cylinder": 1, "point-shape": chunks,
    }
    assert len(named_pairs(table, "point-shape")) == 2 * rim + corners + rod
    assert named_pairs(table, "sphere-box") == [(0, 1)] and named_pairs(table, "capsule-box") == [(2, 1)]
    assert named_pairs(table, "box-cylinder") == [(1, 3)]
    assert CollisionTable.build(objects[:1] * 2).groups[0].kind == "sphere-sphere"
    assert CollisionTable.build(objects[:1]).groups == ()
    # capsule-cylinder: its side's 2, then the rim's 2; box-cylinder: its capsule's 3, then the box on the cap's 4
    assert table.size == 1 + 1 + 3 + 1 + 2 + 2 + 3 + 4 + 8 * chunks


def test_self_collision_pairs_skip_parents_and_srdf_disabled_pairs():
    model = js.load_model(ASSETS / "humanoid.urdf", srdf=ASSETS / "humanoid.srdf")
    assert not CollisionTable.build([model]).groups  # self-collision off
    table = CollisionTable.build([model], self_collision=[True], budget=10_000)
    srdf = model.srdf
    shape_link = np.asarray(model.shape_link)
    # A point on a shape of its own link leaves the pairs where the two shapes meet completely,
    # shape to shape; every other point pair of the self-collision table remains.
    L_H_S = np.asarray(model.shape_transform)
    # The rule, by the description links the points and shapes came from (a link lumped into its
    # parent keeps its name there): different links, not parent and child, not SRDF-disabled.
    parent = model.parent
    expected = {
        (p, s) for p, point_link in enumerate(model.point_link) for s, link in enumerate(model.shape_link)
        if point_link != link and parent[point_link] != link and parent[link] != point_link
        and not srdf.collision_disabled(model.point_source[p], model.shape_source[s])
        and not any(_complete(own, model.shape_kind[s]) for own in _sampled_kinds(model, p, L_H_S))
    }
    assert set(model.point_source) - set(model.link_names) and set(model.shape_source) - set(model.link_names)  # lumped links
    assert set(named_pairs(table, "point-shape")) == expected and len(expected) > 100
    shapes = [g for g in table.groups if g.kind != "point-shape"]
    found = {(a, b) for g in shapes for a, b in zip(g.first, g.second)}
    for a, b in found:
        la, lb = shape_link[a], shape_link[b]
        assert la != lb and parent[la] != lb and parent[lb] != la
        assert not srdf.collision_disabled(model.shape_source[a], model.shape_source[b])
    solid = {"sphere", "box", "capsule", "cylinder"}
    solid_shapes = [s for s in range(len(shape_link)) if model.shape_kind[s] in solid]
    allowed = {
        frozenset((a, b)) for i, a in enumerate(solid_shapes) for b in solid_shapes[i + 1 :]
        if shape_link[a] != shape_link[b] and parent[shape_link[a]] != shape_link[b] and parent[shape_link[b]] != shape_link[a]
        and not srdf.collision_disabled(model.shape_source[a], model.shape_source[b])
    }
    assert {frozenset(p) for p in found} == allowed and allowed
    unfiltered = CollisionTable.build([model], self_collision=[True], srdf=[_NoSrdf()], budget=10_000)
    assert sum(g.candidates for g in unfiltered.groups) > sum(g.candidates for g in table.groups)


def _complete(kind_a: str, kind_b: str) -> bool:
    kinds = {kind_a, kind_b}
    return kinds <= {"sphere", "capsule", "box"} or kinds == {"sphere", "cylinder"}


class _NoSrdf:
    def collision_disabled(self, a: str, b: str) -> bool:
        return False


def _sampled_kinds(model, p, L_H_S) -> set[str]:
    """The kinds of the shapes of point ``p``'s link whose surface its ball touches from inside."""
    point, radius, kinds = np.asarray(model.collidable_points)[p], float(model.point_radius[p]), set()
    for s, (link, kind) in enumerate(zip(model.shape_link, model.shape_kind)):
        local = L_H_S[s, :3, :3].T @ (point - L_H_S[s, :3, 3])
        size = np.asarray(model.shape_size)[s]
        if link != model.point_link[p]:
            continue
        if kind == "box":
            on = np.isclose(np.max(np.abs(local) / size), 1.0)
        elif kind == "cylinder":
            on = np.hypot(*local[:2]) <= size[0] + 1e-9 and abs(local[2]) <= size[1] + 1e-9 and (
                np.isclose(np.hypot(*local[:2]), size[0]) or np.isclose(abs(local[2]), size[1]))
        else:
            on = np.isclose(np.linalg.norm(local - [0, 0, np.clip(local[2], -size[1], size[1])]) + radius, size[0])
        if on:
            kinds.add(kind)
    return kinds


def test_the_budget_keeps_the_overlapping_pairs_and_counts_the_others(objects):
    ball = objects[0]
    table = CollisionTable.build([ball] * 4, budget={"sphere-sphere": 2})
    (group,) = table.groups
    assert group.candidates == 6 and group.keep == 2 and table.size == 2
    poses = [pose((0, 0, 0)), pose((0.19, 0, 0)), pose((5, 0, 0)), pose((0, 0.15, 0))]  # 0-1 and 0-3 touch
    contacts = COLLIDE(table, [ball] * 4, [jnp.asarray(p) for p in poses])
    assert sorted(zip(np.asarray(contacts.link_a).tolist(), np.asarray(contacts.link_b).tolist())) == [(0, 1), (0, 3)]
    np.testing.assert_allclose(sorted(np.asarray(contacts.depth)), [0.01, 0.05], atol=1e-12)
    assert np.asarray(contacts.active).all()
    # Points are culled by chunks: a can standing on a slab, the slab's corners and the can's
    # bottom rim overlap (two chunks; the top rim's box lies above the slab's). With room for them
    # the bottom rim touches; with room for one, the one left out is counted.
    slab, can = body("slab"), objects[3]
    models = [slab, can, slab]
    poses = jnp.concatenate([jnp.asarray(p) for p in (pose(), pose((0.05, 0.0, 0.198)), pose((3.0, 0.0, 0.0)))])
    for budget, overflow in ((2, 0), (1, 1)):
        culled = CollisionTable.build(models, budget={"point-shape": budget})
        assert [g.keep for g in culled.groups if g.kind == "point-shape"] == [budget]
        contacts, spilled = QUERY(culled, Geometry.of(models, poses.dtype), poses)
        assert int(spilled[-1]) == overflow
        if budget == 2:
            active = np.asarray(contacts.active)
            assert active.sum() == 8 and set(np.asarray(contacts.link_a)[active]) == {1} and set(np.asarray(contacts.link_b)[active]) == {0}
            np.testing.assert_allclose(np.asarray(contacts.depth)[active], 0.002, atol=1e-12)
    with pytest.raises(ValueError, match="budget names unknown pair kinds"):
        CollisionTable.build([ball] * 2, budget={"ball-ball": 1})


def test_capsules_apart_take_none_of_their_kinds_budget(objects):
    """Two upright rods 0.113 m apart (their radii 0.05 each) overlap each other's bounding
    spheres and boxes, yet take no room in a budget of one capsule pair: the touching pair beside
    them fits. Closer, at 0.099 m, they touch, and the pair left out is counted."""
    rod = objects[2]
    table = CollisionTable.build([rod] * 3, budget={"capsule-capsule": 1})
    for apart, overflow in ((0.08, 0), (0.07, 1)):
        poses = jnp.concatenate([jnp.asarray(p) for p in (pose(), pose((-0.09, 0.0, 0.0)), pose((apart, apart, 0.0)))])
        contacts, spilled = QUERY(table, Geometry.of([rod] * 3, poses.dtype), poses)
        assert int(spilled[0]) == overflow
        active = np.asarray(contacts.active)
        assert set(zip(np.asarray(contacts.link_a)[active].tolist(), np.asarray(contacts.link_b)[active].tolist())) == {(0, 1)}
        np.testing.assert_allclose(np.asarray(contacts.depth)[active], 0.01, atol=1e-12)


def world_poses(lift):
    """A ball on a cube, a can whose top rim and side enter the cube's side: contacts sphere-box,
    box-cylinder and points of the can in the box, every pose lifted by ``lift (3,)`` [m]."""
    base = [pose((0.02, 0.01, 0.198)), pose((0, 0, 0)), pose((0, 0.195, -0.1))]
    return [jnp.asarray(p).at[0, 2, 3].add(lift[i]) for i, p in enumerate(base)]


def test_collide_jits_and_vmaps_over_poses(objects):
    models = [objects[0], objects[1], objects[3]]
    table = CollisionTable.build(models)
    lifts = jnp.asarray(np.random.default_rng(0).uniform(-0.0008, 0.0008, (5, 3)))
    batched = jax.jit(jax.vmap(lambda lift: collide(table, models, world_poses(lift))))(lifts)
    for k in (0, 4):
        one = COLLIDE(table, models, world_poses(lifts[k]))
        for a, b in zip(jax.tree.leaves(one), jax.tree.leaves(batched)):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b)[k], atol=1e-12)
    active = np.asarray(batched.active)
    assert active.shape == (5, table.size) and active.sum(axis=1).min() >= 3
    pairs = {(int(a), int(b)) for a, b in zip(np.asarray(batched.link_a)[0][active[0]], np.asarray(batched.link_b)[0][active[0]])}
    assert pairs == {(0, 1), (1, 2), (2, 1)}  # the can's side and its rim points
    assert all(np.isfinite(np.asarray(x)).all() for x in jax.tree.leaves(batched))


def relative_velocity(contacts: Contacts, W_v: jax.Array) -> jax.Array:
    """``(C, 3)``: a's material point minus b's at each contact, from the links' inertial
    velocities ``W_v (L, 6)`` (``[linear; angular]``, world axes, about the world origin)."""
    def at(link):
        return W_v[link, :3] + jnp.cross(W_v[link, 3:], contacts.position)

    return at(contacts.link_a) - at(contacts.link_b)


def link_wrenches(contacts: Contacts, forces: jax.Array, links: int) -> jax.Array:
    """``(links, 6)``: the wrenches ``[force; torque]`` about the world origin of the forces
    ``(C, 3)`` on a at the contacts (b gets the opposite)."""
    forces = jnp.where(contacts.active[:, None], forces, 0.0)
    wrench = jnp.concatenate([forces, jnp.cross(contacts.position, forces)], axis=-1)
    return jnp.zeros((links, 6), forces.dtype).at[contacts.link_a].add(wrench).at[contacts.link_b].add(-wrench)


def test_gradients_through_collide_and_the_forces_match_finite_differences(objects):
    ball, cube = objects[0], objects[1]
    models = [ball, cube, ball]  # a ball on the cube, another leaning on it
    table = CollisionTable.build(models)
    params = ContactParams.from_mass(1.0, max_penetration=0.002)
    velocities = jnp.asarray(np.random.default_rng(1).normal(size=(3, 6))) * 0.1
    base = jnp.asarray(np.stack([pose((0.02, 0.01, 0.198)), pose(), pose((0.21, 0.01, 0.248))]))

    def total_force(offset):
        poses = list(base.at[:, 0, :3, 3].add(offset.reshape(3, 3)))
        contacts = collide(table, models, poses)
        memory = jnp.full(contacts.normal.shape, 1e-4)  # a tangential deformation: the memory is differentiated too
        mass = jnp.ones(contacts.depth.shape)
        forces = pair_forces(params, contacts, relative_velocity(contacts, velocities), memory, 1e-3, mass, 3)
        wrenches = link_wrenches(contacts, forces.step_forces, 3)
        return jnp.sum(wrenches[0] * jnp.arange(1.0, 7.0)) + jnp.sum(wrenches[2] ** 2) + jnp.sum(forces.matrices[:, 2, 2])

    value_and_grad = jax.jit(jax.value_and_grad(total_force))  # one program for the values too
    offset = jnp.asarray(np.random.default_rng(2).uniform(-5e-4, 5e-4, 9))
    contacts = COLLIDE(table, models, list(base.at[:, 0, :3, 3].add(offset.reshape(3, 3))))
    assert int(np.sum(contacts.active)) == 2
    step = 1e-8
    numeric = [(value_and_grad(offset + step * e)[0] - value_and_grad(offset - step * e)[0]) / (2 * step) for e in np.eye(9)]
    np.testing.assert_allclose(value_and_grad(offset)[1], numeric, rtol=1e-5, atol=1e-6 * np.max(np.abs(numeric)))
    assert np.isfinite(np.asarray(value_and_grad(-base[:, 0, :3, 3].reshape(-1))[1])).all()  # every centre at the origin


def test_bad_arguments_are_clear_errors(objects):
    ball, cube = objects[0], objects[1]
    table = CollisionTable.build([ball, cube])
    assert table.links == 2 and table.counts(1) == (1, 1, 8)
    with pytest.raises(ValueError, match=r"one pose array per model of the table \(2\), got 2 models and 1"):
        collide(table, [ball, cube], [pose()])
    with pytest.raises(ValueError, match=r"model 1 \('ball': 1 links, 1 shapes, 1 points\) is not the model the table was built for"):
        collide(table, [ball, ball], [pose(), pose()])
    with pytest.raises(ValueError, match=r"one entry per model \(2\); got 1, 2 and 2"):
        CollisionTable.build([ball, cube], self_collision=[True])
    with pytest.raises(ValueError, match=r"others\[m\] needs one entry per link of model m: \[1, 1\]"):
        CollisionTable.build([ball, cube], others=[[True, False], None])
    with pytest.raises(ValueError, match="budget of 'box-box' must be an integer >= 1, got 0"):
        CollisionTable.build([ball, cube], budget={"box-box": 0})
    with pytest.raises(ValueError, match="needs concrete models"):
        jax.jit(lambda m: CollisionTable.build([m, cube]).size)(ball)


def test_pair_kinds_of_one_computation_share_one_narrow_phase(objects, monkeypatch):
    """Two of each solid shape but hulls give every pair kind of them (eleven); the traced query evaluates four
    narrow phases, one per family: round shapes (spheres, capsules, cylinders' sides), round shapes
    against boxes, boxes against boxes, and swept points (a sphere against a cylinder among them)."""
    from jaxsim_like.simulation.collision import kinds

    traced = {}

    def counted(name, kernel):
        def kernel_counted(*args):
            traced[name] = traced.get(name, 0) + 1
            return kernel(*args)

        return kernel_counted

    for name, family in kinds.FAMILIES.items():
        monkeypatch.setitem(kinds.FAMILIES, name, family._replace(kernel=counted(name, family.kernel)))
    monkeypatch.setattr(kinds, "point_shape", counted(kinds.POINTS, kinds.point_shape))
    models = objects * 2
    table = CollisionTable.build(models)
    # The kinds of hulls (sphere-, capsule-, box-, cylinder-, hull-hull) need meshes, those of ellipsoids (6) ellipsoids.
    assert len(table.groups) == len(kinds.KINDS) - 11 == 11
    poses = jnp.asarray(np.concatenate([pose((0.3 * i, 0.0, 0.0)) for i in range(len(models))]))
    jax.make_jaxpr(query, static_argnums=0)(table, Geometry.of(models, poses.dtype), poses)
    assert traced == {"round": 1, "round-box": 1, "box-box": 1, kinds.POINTS: 1}


def test_two_cylinders_caps_are_computed_for_cylinder_pairs_only(objects):
    """The caps' slot (`cylinder.caps_facing`, its rays from a cap's centre to its rim) is traced for
    the cylinder-cylinder pairs alone, not for every pair of the round narrow phase: two balls, two
    rods and three cans give 15 round pairs, 3 of them cans (other arrays of 16 points: the
    box-box crossings, 1 pair, and the capsule-box nearest point's candidates, 14 pairs)."""
    from jaxsim_like.simulation.collision import cylinder

    models = objects * 2 + [objects[3]]
    table = CollisionTable.build(models)
    sizes = {g.kind: g.keep for g in table.groups}
    assert sum(sizes[k] for k in ("sphere-sphere", "sphere-capsule", "capsule-capsule", "capsule-cylinder", "cylinder-cylinder")) == 15
    poses = jnp.asarray(np.concatenate([pose((0.3 * i, 0.0, 0.0)) for i in range(len(models))]))
    jaxpr = jax.make_jaxpr(query, static_argnums=0)(table, Geometry.of(models, poses.dtype), poses)

    def shapes(closed):
        for eqn in closed.eqns:
            yield from (v.aval.shape for v in eqn.outvars if hasattr(v.aval, "shape"))
            for param in eqn.params.values():
                for sub in param if isinstance(param, (list, tuple)) else (param,):
                    if hasattr(sub, "jaxpr"):
                        yield from shapes(sub.jaxpr if hasattr(sub.jaxpr, "eqns") else sub.jaxpr.jaxpr)

    rays = {shape[0] for shape in shapes(jaxpr.jaxpr) if len(shape) == 3 and shape[1:] == (cylinder._CAP_RAYS, 3)}
    assert sizes["cylinder-cylinder"] == 3 and 3 in rays and 15 not in rays
