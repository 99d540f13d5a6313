"""Meshes as convex hulls (``ContactSampling(mesh_hulls=V)``): hulls computed at load time, the
hull-hull narrow phase against box-box and MuJoCo's convex collision, hulls resting on each
other and on the terrain at the design depth with the static normal force, a gradient through a
sliding hull contact against central differences, and hulls in the world step."""

from __future__ import annotations

import importlib
import itertools

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest
from collision_worlds import rotation

import jaxsim_like as js
from jaxsim_like.dynamics import spatial
from jaxsim_like.dynamics.hulls import Hulls
from jaxsim_like.parsers.hulls import convex_hull
from jaxsim_like.simulation import ContactParams, SimulationParams, rollout
from jaxsim_like.simulation.collision import CollisionTable, Geometry, collide, pair_forces, query
from jaxsim_like.simulation.collision.box import box_box, capsule_box
from jaxsim_like.simulation.collision.hull import BOX_COUNTS, HullData, _axes, box_hull, cylinder_hull, features, first_counts, hull_hull, in_world
from jaxsim_like.simulation.collision.hull_round import _nearest, round_hull, signed_distance
from jaxsim_like.simulation.collision.slots import Slots
from jaxsim_like.simulation.contacts import implicit_deformation
from jaxsim_like.simulation.step import contact_point_positions
from jaxsim_like.simulation.world import WorldModel, world_rollout

G, DT, MASS, MU = 9.81, 5e-3, 5.0, 0.5
CUBE = np.array(list(itertools.product((-1.0, 1.0), repeat=3))) * 0.1  # a 0.2 m cube
CUBE_FACES = [[0, 1, 3, 2], [4, 6, 7, 5], [0, 4, 5, 1], [2, 3, 7, 6], [0, 2, 6, 4], [1, 5, 7, 3]]
SLAB = np.array(list(itertools.product((-1.0, 1.0), repeat=3))) * [0.3, 0.2, 0.05]
TETRA = np.array([[0.0, 0.0, 0.0], [0.2, 0.0, 0.0], [0.04, 0.22, 0.0], [0.06, 0.04, 0.18]]) - [0.07, 0.06, 0.04]
TETRA_FACES = [[0, 2, 1], [0, 1, 3], [1, 2, 3], [0, 3, 2]]
OCTAGON = 0.1 * np.stack([np.cos(np.arange(8) * np.pi / 4), np.sin(np.arange(8) * np.pi / 4), np.zeros(8)], axis=1)
PRISM = np.concatenate([OCTAGON + [0.0, 0.0, 0.05], OCTAGON - [0.0, 0.0, 0.05]])  # 16 vertices, two octagons
PRISM_FACES = [list(range(8)), list(range(15, 7, -1))] + [[8 + i, 8 + (i + 1) % 8, (i + 1) % 8, i] for i in range(8)]
BRICK = np.array(list(itertools.product((-1.0, 1.0), repeat=3))) * [0.1, 0.08, 0.06]


def write_obj(path, vertices, faces) -> str:
    with open(path, "w") as handle:
        handle.writelines(f"v {float(x)!r} {float(y)!r} {float(z)!r}\n" for x, y, z in vertices)
        handle.writelines("f " + " ".join(str(i + 1) for i in face) + "\n" for face in faces)
    return str(path)


@pytest.fixture(scope="module")
def meshes(tmp_path_factory):
    """OBJ files of the cube, the slab, the tetrahedron and the octagonal prism."""
    folder = tmp_path_factory.mktemp("hulls")
    return {name: write_obj(folder / f"{name}.obj", vertices, faces)
            for name, vertices, faces in (("cube", CUBE, CUBE_FACES), ("slab", SLAB, CUBE_FACES), ("tetra", TETRA, TETRA_FACES),
                                          ("prism", PRISM, PRISM_FACES))}


def mesh_body(name: str, path: str, mass: float = MASS, inertia: float = MASS * 0.04 / 6) -> js.Model:
    """A free link of ``mass`` [kg] and isotropic ``inertia`` [kg m^2] whose collision is the mesh at ``path``, as a hull."""
    return js.load_model(
        f"""<robot name="{name}"><link name="link"><inertial><mass value="{mass}"/>
        <inertia ixx="{inertia}" iyy="{inertia}" izz="{inertia}" ixy="0" ixz="0" iyz="0"/></inertial>
        <collision><geometry><mesh filename="{path}"/></geometry></collision></link></robot>""",
        contact_sampling=js.ContactSampling(mesh_hulls=32),
    )


def hull_row(vertices: np.ndarray) -> HullData:
    rows = Hulls.of([convex_hull(vertices, 32)], jnp.float64)
    return HullData(*(x[0] for x in (rows.vertices, rows.planes, rows.faces, rows.edges, rows.edge_normals)))


def H(position=(0.0, 0.0, 0.0), R=np.eye(3)) -> jax.Array:
    pose = np.eye(4)
    pose[:3, :3], pose[:3, 3] = R, position
    return jnp.asarray(pose)


def test_the_hull_of_a_mesh_is_its_faces_edges_and_extreme_vertices():
    """Inner points, points inside faces and edges and repeated vertices leave a cube's 8 corners,
    6 square faces and 12 edges;
    a tetrahedron keeps its 4 triangles; a flat mesh has no hull; a round cloud keeps at most the
    cap, every point of it inside every face plane."""
    grid = np.stack(np.meshgrid(*[np.linspace(-0.1, 0.1, 3)] * 3), axis=-1).reshape(-1, 3)  # corners, mid-edges, face centres
    inner = np.random.default_rng(0).uniform(-0.09, 0.09, (40, 3))
    for points in (np.concatenate([grid, CUBE]), np.concatenate([CUBE, inner, CUBE])):  # within the cap, and beyond it
        cube = convex_hull(points, 32)
        assert (cube.vertices.shape, cube.planes.shape, cube.faces.shape, cube.edges.shape) == ((8, 3), (6, 4), (6, 4, 3), (12, 2, 3))
    np.testing.assert_allclose(np.sort(cube.planes[:, :3], axis=0), np.repeat([[-1.0], [0.0], [1.0]], [1, 4, 1], axis=0) * np.ones(3),
                               atol=1e-12)  # the six axis directions
    np.testing.assert_allclose(cube.planes[:, 3], 0.1, atol=1e-12)
    for face, plane in zip(cube.faces, cube.planes):
        np.testing.assert_allclose(face @ plane[:3], plane[3], atol=1e-12)  # the polygon lies on its plane
        assert np.cross(face[1] - face[0], face[2] - face[1]) @ plane[:3] > 0  # counter-clockwise seen from outside
        for edge, normals in zip(cube.edges, cube.edge_normals):  # each edge's two faces: both hold it
            np.testing.assert_allclose(edge @ normals.T, 0.1, atol=1e-12)
            assert abs(normals[0] @ normals[1]) < 1e-12
    tetra = convex_hull(TETRA, 32)
    assert (tetra.planes.shape, tetra.faces.shape, tetra.edges.shape) == ((4, 4), (4, 3, 3), (6, 2, 3))
    assert convex_hull(np.random.default_rng(1).uniform(size=(12, 3)) * [1.0, 1.0, 0.0], 32) is None
    cloud = np.random.default_rng(2).normal(size=(300, 3))
    cloud /= np.linalg.norm(cloud, axis=1, keepdims=True)
    capped = convex_hull(cloud, 16)
    assert len(capped.vertices) == 16
    assert np.all(capped.vertices @ capped.planes[:, :3].T - capped.planes[:, 3] <= 1e-9)


def test_a_flat_mesh_keeps_its_points_and_a_bad_vertex_cap_is_refused(tmp_path):
    """A mesh without volume (a square) has no hull: it stays sampled points; a cap below 4 is a
    ValueError naming the option."""
    square = write_obj(tmp_path / "square.obj", SLAB[SLAB[:, 2] > 0], [[0, 1, 3, 2]])
    flat = mesh_body("flat", square)
    assert flat.shape_kind == () and len(flat.point_link) == 4
    with pytest.raises(ValueError, match="mesh_hulls must be >= 4 or None, got 3"):
        js.load_model(f"""<robot name="r"><link name="l"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0"
            ixz="0" iyz="0"/></inertial><collision><geometry><mesh filename="{square}"/></geometry></collision></link></robot>""",
                      contact_sampling=js.ContactSampling(mesh_hulls=3))


def test_self_collision_meets_a_hull_through_its_narrow_phase(meshes):
    """The self-collision table of a chain whose base is a hull pairs the hull with the ball at the
    chain's end through their narrow phase (one sphere-hull candidate); the hull's vertices do not
    meet the ball as points as well."""
    inertial = '<inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>'
    joint = '<joint name="{0}" type="revolute"><parent link="{1}"/><child link="{2}"/><origin xyz="0 0 0.3"/><axis xyz="0 1 0"/>' \
            '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'
    chain = js.load_model(
        f"""<robot name="chain"><link name="base">{inertial}<collision><geometry><mesh filename="{meshes['cube']}"/></geometry>
        </collision></link><link name="middle">{inertial}</link><link name="tip">{inertial}<collision><geometry>
        <sphere radius="0.05"/></geometry></collision></link>{joint.format("j1", "base", "middle")}{joint.format("j2", "middle", "tip")}
        </robot>""", contact_sampling=js.ContactSampling(mesh_hulls=32))
    assert chain.shape_kind == ("hull", "sphere")
    table = CollisionTable.build([chain], self_collision=[True])
    assert [(group.kind, group.first, group.second) for group in table.groups] == [("sphere-hull", (1,), (0,))]


# Jitted once for every case: run eagerly, each of their operations would compile on its own.
HULL_HULL = jax.jit(lambda H_a, a, H_b, b: hull_hull(in_world(H_a, a), in_world(H_b, b)))
BOX_BOX = jax.jit(box_box)
BOX_HULL = jax.jit(lambda size: box_hull(size, BOX_COUNTS))


@pytest.mark.parametrize("position, R", [
    ((0.0, 0.0, 0.19), np.eye(3)),  # stacked, aligned: 4 corners
    ((0.05, 0.02, 0.195), rotation("z", 0.3)),  # turned: corners and edge crossings
    ((0.05, 0.02, 0.195), rotation("z", np.pi / 4)),  # an octagon of crossings
    ((0.15, 0.0, 0.15), rotation("z", np.pi / 4) @ rotation("y", np.pi / 4)),  # edge on edge
])
def test_cube_hulls_touch_as_box_box_does(position, R):
    """Two cube hulls (and a cube hull on a box made a hull) give box-box's normal and depth, and
    their slots are contacts of box-box (4 of its up to 8, spread over the patch)."""
    cube = hull_row(CUBE)
    slots = HULL_HULL(H(position, R), cube, H(), cube)
    boxed = HULL_HULL(H(position, R), cube, H(), BOX_HULL(jnp.full(3, 0.1)))
    reference = BOX_BOX(H(position, R), jnp.full(3, 0.1), H(), jnp.full(3, 0.1))
    held = np.asarray(reference.valid & (reference.depth > 0))
    for result in (slots, boxed):
        mine = np.asarray(result.valid)
        assert 0 < mine.sum() <= held.sum()
        np.testing.assert_allclose(np.asarray(result.normal)[0], np.asarray(reference.normal)[0], atol=1e-12)
        np.testing.assert_allclose(np.asarray(result.depth)[mine], np.asarray(reference.depth)[held][0], rtol=1e-9)
        for p in np.asarray(result.position)[mine]:
            assert np.min(np.linalg.norm(np.asarray(reference.position)[held] - p, axis=1)) < 1e-9
    if np.allclose(R, np.eye(3)) or np.isclose(R[0, 0], np.cos(0.3)):
        assert np.asarray(slots.valid).sum() == 4  # a face on a face rests on 4 points


@pytest.mark.parametrize("position, R", [
    ((0.0, 0.0, 0.149), rotation("z", 0.3)),  # a prism's octagon on the box's top face
    ((0.148, 0.0, 0.0), rotation("y", np.pi / 2) @ rotation("z", 0.2)),  # an octagon against the box's side
    ((0.175, 0.125, 0.145), rotation("x", 0.7) @ rotation("y", 0.4)),  # a rim across the box's corner
])
def test_a_box_meets_a_hull_with_its_own_corners_and_edges(meshes, position, R):
    """Against hulls alone a box keeps its 8 corners and 12 edges in the narrow phase, not padded
    to the hulls' counts (16 vertices, 10 faces, 24 edges of the prism): its slots are those of the
    padded box (the padding repeats, so it changes nothing but the features' numbers), and the
    table counts the features of the box's own corners. Where hulls also meet hulls, the boxes
    are padded to the hulls' counts."""
    prism = hull_row(PRISM)
    counts = (prism.vertices.shape[0], prism.planes.shape[0], prism.faces.shape[1], prism.edges.shape[0])
    half = jnp.asarray([0.1, 0.08, 0.1])
    own = HULL_HULL(H(), BOX_HULL(half), H(position, R), prism)
    padded = HULL_HULL(H(), box_hull(half, counts), H(position, R), prism)
    assert np.asarray(own.valid).any()
    for name in ("position", "normal", "depth", "valid"):
        np.testing.assert_allclose(np.asarray(getattr(own, name)), np.asarray(getattr(padded, name)), atol=1e-15)
    assert first_counts(["box-hull"], counts) == BOX_COUNTS
    assert first_counts(["box-hull", "hull-hull"], counts) == tuple(max(a, b) for a, b in zip(BOX_COUNTS, counts))
    prism_body = mesh_body("prism", meshes["prism"])
    table = CollisionTable.build([js.scenes.box((0.2, 0.16, 0.2), mass=1.0), prism_body])
    (group,) = [g for g in table.groups if g.kind == "box-hull"]
    assert group.features == features(BOX_COUNTS, table.hull_counts)


@pytest.mark.parametrize("below, position, R, turn", [
    (SLAB, (0.0, 0.0, 0.1498), np.eye(3), np.eye(3)),  # flush on the slab, 0.2 mm deep: 4 corners
    (SLAB, (0.05, 0.02, 0.149), rotation("z", 0.3), np.eye(3)),  # turned: corners and edge crossings
    (CUBE, (0.0, 0.0, 0.1998), np.eye(3), rotation("x", 1.8) @ rotation("z", 0.6)),  # on an equal cube, the pair turned
])
def test_a_cube_hull_touches_a_slab_in_float32_as_in_float64(below, position, R, turn):
    """In float32 (GPU batches), the parallel edges of a cube and a slab are parallel only to within
    rounding: they make no separating axis of their own (one did, with no overlap, so a cube resting
    flush on a slab got no contact at XLA's backend optimisation level 0). A cube on an equal cube,
    turned: each corner lies on the other's side faces, parallel to the normal within rounding,
    which made it leave the hull at once (no depth: 2 or 3 of its 4 contacts). The slots are
    float64's to float32's rounding, in any order."""
    poses = (H(turn @ np.asarray(position), turn @ R), H(R=turn))
    hulls = (hull_row(CUBE), hull_row(below))
    single = jax.tree.map(lambda x: x.astype(jnp.float32), (poses, hulls))
    reference = HULL_HULL(poses[0], hulls[0], poses[1], hulls[1])
    slots = HULL_HULL(single[0][0], single[1][0], single[0][1], single[1][1])
    assert slots.depth.dtype == jnp.float32
    np.testing.assert_array_equal(np.asarray(slots.valid), np.asarray(reference.valid))
    assert np.asarray(slots.valid).sum() >= 4
    held = np.asarray(reference.valid)
    np.testing.assert_allclose(np.asarray(slots.depth)[held], np.asarray(reference.depth)[held], atol=1e-6)
    for point in np.asarray(slots.position)[held]:  # the same contacts, in any order (coincident corners)
        assert np.min(np.linalg.norm(np.asarray(reference.position)[held] - point, axis=1)) < 1e-6


def test_pairs_of_hulls_in_the_second_hulls_frame_are_the_pairs_in_world_axes():
    """The narrow phases as the step runs them, in the frame of the hull b (only a's hull moved
    into it; a ball's and a capsule's pose moved instead), their slots then placed in world
    axes: the slots of both hulls in world axes, to rounding, at random poses of both where a
    prism crosses a tetrahedron and a capsule meets the prism."""
    rng = np.random.default_rng(3)
    prism, tetra = hull_row(PRISM), hull_row(TETRA)
    framed = jax.jit(jax.vmap(lambda H_a, H_b: hull_hull(tetra, prism, spatial.inverse_transform(H_b) @ H_a).placed(H_b)))
    world = jax.jit(jax.vmap(lambda H_a, H_b: hull_hull(in_world(H_a, tetra), in_world(H_b, prism))))
    round_framed = jax.jit(jax.vmap(lambda H_a, H_b: round_hull(spatial.inverse_transform(H_b) @ H_a, jnp.asarray([0.03, 0.05, 0.0]), prism).placed(H_b)))
    round_world = jax.jit(jax.vmap(lambda H_a, H_b: round_hull(H_a, jnp.asarray([0.03, 0.05, 0.0]), in_world(H_b, prism))))
    quaternions = rng.normal(size=(32, 4))
    turns = np.asarray(jax.vmap(spatial.quaternion_to_rotation)(jnp.asarray(quaternions / np.linalg.norm(quaternions, axis=1, keepdims=True))))
    centres = rng.uniform(-0.5, 0.5, (16, 3))
    H_b = jnp.stack([H(centre, R) for centre, R in zip(centres, turns[:16])])
    H_a = jnp.stack([H(centre + rng.uniform(-0.08, 0.08, 3), R) for centre, R in zip(centres, turns[16:])])
    # The capsules about 0.12 m from the prism's centre: at its surface, not deep inside (where
    # the deepest point's faces tie, and either normal is right).
    away = rng.normal(size=(16, 3))
    H_c = jnp.stack([H(centre + 0.12 * a / np.linalg.norm(a), R) for centre, a, R in zip(centres, away, turns[16:])])
    for mine, reference in ((framed(H_a, H_b), world(H_a, H_b)), (round_framed(H_c, H_b), round_world(H_c, H_b))):
        assert np.any(np.asarray(reference.valid) & (np.asarray(reference.depth) > 0))
        np.testing.assert_array_equal(np.asarray(mine.valid), np.asarray(reference.valid))
        if reference.feature is not None:
            np.testing.assert_array_equal(np.asarray(mine.feature), np.asarray(reference.feature))
        for field in ("position", "normal", "depth"):
            np.testing.assert_allclose(np.asarray(getattr(mine, field)), np.asarray(getattr(reference, field)), atol=1e-12)


ROUND_HULL = jax.jit(lambda H_a, size_a, H_b, b: round_hull(H_a, size_a, in_world(H_b, b)))
CAPSULE_BOX = jax.jit(capsule_box)


@pytest.mark.parametrize("size, position, R", [
    ((0.05, 0.0, 0.0), (0.03, 0.02, 0.14), np.eye(3)),  # a ball on a face
    ((0.05, 0.0, 0.0), (0.12, 0.0, 0.12), np.eye(3)),  # on an edge
    ((0.05, 0.0, 0.0), (0.12, 0.11, 0.13), np.eye(3)),  # on a corner
    ((0.05, 0.0, 0.0), (0.02, 0.01, 0.05), np.eye(3)),  # inside
    ((0.05, 0.2, 0.0), (0.05, 0.0, 0.145), rotation("y", np.pi / 2)),  # a capsule lying across the top
    ((0.05, 0.05, 0.0), (0.0, 0.02, 0.142), rotation("y", 1.4) @ rotation("x", 0.2)),  # shorter, tilted: its nearest point
    ((0.03, 0.1, 0.0), (0.0, 0.0, 0.23), np.eye(3)),  # standing on the top face
])
def test_spheres_and_capsules_touch_a_cube_hull_as_they_touch_the_box(size, position, R):
    """A ball or a capsule against a cube hull: the contacts of capsule-box against the same box
    (the hull's signed distance is exact)."""
    slots = ROUND_HULL(H(position, R), jnp.asarray(size), H(), hull_row(CUBE))
    reference = CAPSULE_BOX(H(position, R), jnp.asarray(size), H(), jnp.full(3, 0.1))
    held = np.asarray(reference.valid)
    np.testing.assert_array_equal(np.asarray(slots.valid), held)
    for name in ("position", "normal", "depth"):
        np.testing.assert_allclose(np.asarray(getattr(slots, name))[held], np.asarray(getattr(reference, name))[held], atol=1e-8)


NEAREST = jax.jit(jax.vmap(_nearest, in_axes=(0, 0, None, None)))
ALONG = jax.jit(jax.vmap(jax.vmap(lambda point, hull: signed_distance(point, hull)[0], in_axes=(0, None)), in_axes=(0, None)))


def test_the_nearest_point_of_a_segment_is_the_least_of_its_signed_distance():
    """The point of a capsule's segment nearest to a hull, or deepest in it (closed-form
    candidates, ``hull_round._nearest``), against 2001 samples along the segment, at 200 random
    segments crossing, touching and missing the octagonal prism: no sample is nearer (to 1e-12
    m), and it is within the samples' spacing of the nearest sample (the distance is
    1-Lipschitz)."""
    prism = hull_row(PRISM)
    rng = np.random.default_rng(3)
    half = 0.08
    axis = rng.normal(size=(200, 3))
    axis /= np.linalg.norm(axis, axis=1, keepdims=True)
    centre = rng.uniform(-0.15, 0.15, (200, 3))
    t = np.asarray(NEAREST(jnp.asarray(centre), jnp.asarray(axis), half, prism))
    at = ALONG(jnp.asarray((centre + t[:, None] * axis)[:, None]), prism)[:, 0]
    samples = np.linspace(-half, half, 2001)
    along = np.asarray(ALONG(jnp.asarray(centre[:, None] + samples[None, :, None] * axis[:, None]), prism))
    least = along.min(axis=1)
    assert (least < 0).sum() > 40 and (least > 0).sum() > 40  # crossing and missing
    assert np.all(np.asarray(at) <= least + 1e-12)
    assert np.all(np.asarray(at) >= least - (samples[1] - samples[0]))


AXES = jax.jit(jax.vmap(lambda a, b, H_a: _axes(in_world(H_a, a), b), in_axes=(None, None, 0)))


def projected_overlap(a: np.ndarray, b: np.ndarray, axes: np.ndarray) -> np.ndarray:
    """How far the vertices ``a (V_a, 3)`` and ``b (V_b, 3)`` overlap along each unit axis of ``axes (N, 3)``, whichever way."""
    pa, pb = axes @ a.T, axes @ b.T
    return np.minimum(pb.max(axis=1) - pa.min(axis=1), pa.max(axis=1) - pb.min(axis=1))


@pytest.mark.parametrize("first", ["tetra", "cylinder"])
def test_the_least_overlap_of_two_hulls_is_the_least_over_every_candidate_axis(first):
    """Two hulls' least overlap over their face normals and the edge pairs that can meet
    (``hull._axes``: an edge pair chosen by ``overlap |overlap|``, no root per pair), the smaller
    of the two, against the overlap of their vertices projected on every face normal and every
    cross product of two edges, pair by pair (no Gauss map): equal, at 200 random poses of a
    tetrahedron or a cylinder's prism crossing the octagonal prism; the edge pair's overlap is its
    projected overlap."""
    rng = np.random.default_rng(5)
    b = hull_row(PRISM)
    a = hull_row(TETRA) if first == "tetra" else cylinder_hull(jnp.asarray([0.05, 0.04, 0.0]), (32, 18, 16, 48))
    quaternions = rng.normal(size=(200, 4))
    turns = np.asarray(jax.vmap(spatial.quaternion_to_rotation)(jnp.asarray(quaternions / np.linalg.norm(quaternions, axis=1, keepdims=True))))
    poses = jnp.stack([H(rng.uniform(-0.12, 0.12, 3), R) for R in turns])
    _, face_overlap, (first, second), edge_overlap, _ = jax.tree.map(np.asarray, AXES(a, b, poses))
    E_b = b.edges.shape[0]
    least = np.minimum(face_overlap.min(axis=1), edge_overlap)
    checked = 0
    for k, pose in enumerate(np.asarray(poses)):
        vertices_a = np.asarray(a.vertices) @ pose[:3, :3].T + pose[:3, 3]
        edges_a = np.asarray(a.edges) @ pose[:3, :3].T + pose[:3, 3]
        d_a = edges_a[:, 1] - edges_a[:, 0]
        d_b = np.asarray(b.edges)[:, 1] - np.asarray(b.edges)[:, 0]
        crosses = np.cross(d_a[:, None], d_b[None]).reshape(-1, 3)
        lengths = np.linalg.norm(crosses, axis=1)
        usable = lengths > 1e-6 * np.linalg.norm(d_a[:, None], axis=-1).repeat(len(d_b), 1).reshape(-1) * np.tile(np.linalg.norm(d_b, axis=1), len(d_a))
        faces = np.concatenate([np.asarray(a.planes)[:, :3] @ pose[:3, :3].T, np.asarray(b.planes)[:, :3]])
        axes = np.concatenate([faces, crosses[usable] / lengths[usable, None]])
        projected = projected_overlap(vertices_a, np.asarray(b.vertices), axes)
        if projected.min() <= 0:
            continue  # apart: a separating axis, whatever its overlap
        checked += 1
        np.testing.assert_allclose(least[k], projected.min(), rtol=1e-9, atol=1e-12)
        if np.isfinite(edge_overlap[k]):
            pair = crosses[first[k] * E_b + second[k]] / np.linalg.norm(crosses[first[k] * E_b + second[k]])
            np.testing.assert_allclose(edge_overlap[k], projected_overlap(vertices_a, np.asarray(b.vertices), pair[None])[0], rtol=1e-9, atol=1e-12)
    assert checked > 50


def test_the_deepest_contact_of_two_hulls_agrees_with_mujoco():
    """A tetrahedron and a brick at random poses, 1 to 5 mm into each other, against MuJoCo's
    deepest contact (its convex collision, GJK and EPA, at a tight tolerance): on a face, depth
    and normal within 1e-6; edge on edge, where EPA is less exact, ours is the least overlap
    (MuJoCo's depth, and the overlap along its normal, are no less, to 1e-6)."""
    tetra, brick = hull_row(TETRA), hull_row(BRICK)
    vertex = lambda x: " ".join(repr(float(v)) for v in x.ravel())  # noqa: E731
    mj = mujoco.MjModel.from_xml_string(f"""<mujoco><asset><mesh name="tetra" vertex="{vertex(TETRA)}"/>
        <mesh name="brick" vertex="{vertex(BRICK)}"/></asset><worldbody>
        <body><freejoint/><geom type="mesh" mesh="tetra"/></body><body><freejoint/><geom type="mesh" mesh="brick"/></body>
        </worldbody></mujoco>""")
    mj.opt.ccd_tolerance, mj.opt.ccd_iterations = 1e-12, 500
    data = mujoco.MjData(mj)
    rng = np.random.default_rng(0)
    faces = 0
    for _ in range(12):
        R_a, R_b = (spatial.quaternion_to_rotation(jnp.asarray(q / np.linalg.norm(q))) for q in rng.normal(size=(2, 4)))
        direction = rng.normal(size=3)
        direction /= np.linalg.norm(direction)
        target, low, high = rng.uniform(1e-3, 5e-3), 0.0, 0.5
        for _ in range(45):  # bisect the distance along `direction` to the target depth
            middle = 0.5 * (low + high)
            slots = HULL_HULL(H(middle * direction, R_a), tetra, H((0.0, 0.0, 0.0), R_b), brick)
            low, high = (middle, high) if float(jnp.max(slots.depth)) > target else (low, middle)
        ours = float(jnp.max(jnp.where(slots.valid, slots.depth, -jnp.inf)))
        normal = np.asarray(slots.normal[0])
        quaternion = [np.asarray(spatial.rotation_to_quaternion(R)) for R in (R_a, R_b)]
        data.qpos[:] = np.concatenate([middle * direction, quaternion[0], np.zeros(3), quaternion[1]])
        mujoco.mj_kinematics(mj, data)
        mujoco.mj_collision(mj, data)
        deepest = min(data.contact[: data.ncon], key=lambda c: c.dist)
        theirs = -np.asarray(deepest.frame[:3])  # MuJoCo's points from the tetrahedron (a) to the brick (b)
        a_world = np.asarray(in_world(H(middle * direction, R_a), tetra).vertices)
        b_world = np.asarray(in_world(H((0.0, 0.0, 0.0), R_b), brick).vertices)
        overlap = np.max(b_world @ theirs) - np.min(a_world @ theirs)
        if int(slots.feature[0]) < len(TETRA) + len(BRICK) + 3 * 4:  # a face's contact, not the edges' point (its last candidate)
            faces += 1
            assert ours == pytest.approx(-deepest.dist, abs=1e-6)
            np.testing.assert_allclose(normal, theirs, atol=1e-6)
        else:
            assert -deepest.dist >= ours - 1e-6 and overlap >= ours - 1e-9
    assert faces >= 5  # of the 12: both kinds of contact are checked


@pytest.fixture(scope="module")
def resting(meshes):
    """A mesh cube on a mesh slab (welded) through `collide` and the linearly implicit pair law
    (see test_collision_rest), 400 steps of 5 ms from the given start: its positions, the normal
    force and the number of contacts."""
    top, slab = mesh_body("top", meshes["cube"]), mesh_body("slab", meshes["slab"])
    table = CollisionTable.build([top, slab])
    params = ContactParams.from_mass(MASS, max_penetration=0.002, friction=MU, points_in_contact=4)
    inertia = MASS * 0.04 / 6 * jnp.eye(3)

    def step(state, _):
        p, R, v, w, memory = state
        pose = jnp.eye(4).at[:3, :3].set(R).at[:3, 3].set(p)
        contacts = collide(table, [top, slab], (pose[None], jnp.eye(4)[None]))
        r = contacts.position - p
        J = jnp.concatenate([jnp.broadcast_to(jnp.eye(3), r.shape + (3,)), -spatial.skew(r)], axis=-1)
        velocity = jnp.einsum("cij,j->ci", J, jnp.concatenate([v, w]))
        deformation = memory[contacts.slot]
        law = pair_forces(params, contacts, velocity, deformation, DT, jnp.full(contacts.depth.shape, MASS), 2)
        M = jax.scipy.linalg.block_diag(MASS * jnp.eye(3), R @ inertia @ R.T) + DT * jnp.einsum("cji,cjk,ckl->il", J, law.matrices, J)
        f = jnp.concatenate([jnp.array([0.0, 0.0, -MASS * G]), jnp.zeros(3)]) + jnp.einsum("cji,cj->i", J, law.step_forces)
        dnu = jnp.linalg.solve(M, DT * f)
        end_forces = law.step_forces - law.resist(jnp.einsum("cij,j->ci", J, dnu))
        memory = jnp.zeros_like(memory).at[contacts.slot].set(
            implicit_deformation(params, law, contacts.normal, deformation, velocity + jnp.einsum("cij,j->ci", J, dnu), DT))
        v, w = v + dnu[:3], w + dnu[3:]
        R = spatial.quaternion_to_rotation(spatial.quaternion_exp(w * DT)) @ R
        return (p + DT * v, R, v, w, memory), (p, jnp.sum(end_forces[:, 2]), jnp.sum(contacts.active))

    def simulate(p, R, v, steps=400):
        return jax.lax.scan(step, (p, R, v, jnp.zeros(3), jnp.zeros((table.candidate_slots, 3))), None, steps)

    return simulate


def test_a_hull_rests_on_a_hull_at_the_design_depth_with_the_weight(resting):
    """The mesh cube on the mesh slab, aligned and turned 45 degrees: the normal force is its
    weight within 0.5 %, at rest on 4 contacts, as deep as `max_penetration` within 10 %."""
    for R in (np.eye(3), rotation("z", np.pi / 4)):
        final, (positions, normal_force, active) = jax.jit(resting)(jnp.array([0.05, 0.02, 0.151]), jnp.asarray(R), jnp.zeros(3))
        np.testing.assert_allclose(normal_force[-50:], MASS * G, rtol=5e-3)
        assert int(active[-1]) == 4 and np.abs(np.asarray(final[2])).max() < 1e-3
        depth = 0.05 + 0.1 - float(positions[-1, 2])
        assert depth == pytest.approx(0.002, rel=0.1)


def test_the_gradient_through_a_sliding_hull_equals_central_differences(resting):
    """The mesh cube thrown along the slab at 0.3 to 0.5 m/s slides to a stop: the gradient of
    where it stops after 0.5 s with respect to the throw equals central differences to 1e-4."""
    def stop(speed):
        _, (positions, _, _) = resting(jnp.array([-0.15, 0.0, 0.148]), jnp.eye(3), jnp.array([speed, 0.0, 0.0]), steps=100)
        return positions[-1, 0]

    value_and_grad = jax.jit(jax.value_and_grad(stop))
    value, gradient = value_and_grad(0.4)
    assert float(value) > -0.15 + 1e-3
    h = 1e-5
    numeric = (value_and_grad(0.4 + h)[0] - value_and_grad(0.4 - h)[0]) / (2 * h)
    assert np.isfinite(float(gradient)) and float(gradient) == pytest.approx(float(numeric), rel=1e-4)


def test_a_hull_rests_on_the_terrain_on_its_vertices(meshes):
    """The mesh tetrahedron on the ground: its hull's vertices are its contact points (no sampled
    points); it rests on its base face's 3 corners, as deep as `max_penetration` within 10 % on
    average (its centre of mass is not over their centre: the corners carry unequal loads), the
    normal force its weight within 0.5 %."""
    tetra = mesh_body("tetra", meshes["tetra"], mass=1.0, inertia=0.002)
    np.testing.assert_allclose(np.sort(np.asarray(tetra.collidable_points), axis=0), np.sort(TETRA, axis=0), atol=1e-12)
    params = SimulationParams.build(tetra, dt=DT, contact=ContactParams.from_mass(1.0, max_penetration=0.001, friction=MU))
    start = js.State.build(tetra, base_position=[0.0, 0.0, 0.04])
    _, (_, outputs) = jax.jit(lambda s: rollout(tetra, s, jnp.zeros((400, 0)), params=params))(start)
    forces = np.asarray(outputs.contact_forces[-1])
    np.testing.assert_allclose(forces[:, 2].sum(), G, rtol=5e-3)
    touching = np.asarray(outputs.penetration[-1]) > 0
    assert touching.sum() == 3
    assert np.asarray(outputs.penetration[-1])[touching].mean() == pytest.approx(0.001, rel=0.1)


@pytest.mark.parametrize("name", ["cube", "prism"])
def test_a_hull_rests_on_the_terrain_on_4_spread_vertices(meshes, name):
    """A mesh cube and an octagonal prism (16 vertices, 8 on the face it rests on) on the ground at
    10 ms: at most 4 terrain slots per hull, the cube's 4 corners and 4 of the octagon's corners
    spread over it carry the weight (0.5 %) as deep as `max_penetration` (10 %), and the body is
    still (the 4 deepest of the octagon's, at equal depth, would be 4 neighbours: it would rock)."""
    body = mesh_body(name, meshes[name], mass=MASS, inertia=MASS * 0.02 / 6)
    params = SimulationParams.build(body, dt=0.01, contact=ContactParams.from_mass(MASS, max_penetration=0.001, friction=MU))
    assert params.contact_slots == (4,)
    start = js.State.build(body, base_position=[0.0, 0.0, 0.15])
    final, (_, outputs) = jax.jit(lambda s: rollout(body, s, jnp.zeros((300, 0)), params=params))(start)
    forces = np.asarray(outputs.contact_forces[-1])
    carrying = forces[:, 2] > 0
    assert carrying.sum() == 4
    np.testing.assert_allclose(forces[:, 2].sum(), MASS * G, rtol=5e-3)
    np.testing.assert_allclose(np.asarray(outputs.penetration[-1])[carrying], 0.001, rtol=0.1)
    corners = np.asarray(jax.jit(contact_point_positions)(body, final))[carrying, :2]  # jitted: one program, not one per operation
    assert np.ptp(corners, axis=0).min() > 0.14  # spread over the face: across it both ways
    assert float(jnp.linalg.norm(final.base_velocity)) < 1e-6


def test_hulls_and_a_ball_stack_in_the_world_step(meshes):
    """A ball on a mesh cube on a mesh cube on the ground, in the world step: each carries what is
    above it (the ball 1 kg, the cubes 5 kg; 0.5 %), the ball on 1 contact, the cube on 4; the
    cubes come to rest."""
    lower, upper = mesh_body("lower", meshes["cube"]), mesh_body("upper", meshes["cube"])
    ball = js.load_model("""<robot name="ball"><link name="link"><inertial><mass value="1"/>
        <inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial>
        <collision><geometry><sphere radius="0.05"/></geometry></collision></link></robot>""")
    world = WorldModel.build([lower, upper, ball], dt=0.002)
    assert sorted(g.kind for g in world.collision.groups) == ["hull-hull", "sphere-hull"]
    states = [js.State.build(lower, base_position=[0.0, 0.0, 0.1]), js.State.build(upper, base_position=[0.03, 0.02, 0.302]),
              js.State.build(ball, base_position=[0.05, 0.0, 0.454])]
    final, outputs = jax.jit(world_rollout, static_argnames="steps")(world, world.initial_state(states), None, steps=500)
    last = jax.tree.map(lambda x: np.asarray(x[-1]), outputs.pairs)
    active, link_a, link_b = last.contacts.active, last.contacts.link_a, last.contacts.link_b
    on_lower = active & (link_a == 0)  # global links: lower 0, upper 1, ball 2; forces on a, from b
    on_ball = active & (link_a == 2)
    assert on_lower.sum() == 4 and on_ball.sum() == 1 and np.all(link_b[on_lower] == 1) and np.all(link_b[on_ball] == 1)
    np.testing.assert_allclose(last.forces[on_ball].sum(axis=0)[2], G, rtol=5e-3)
    np.testing.assert_allclose(last.forces[on_lower].sum(axis=0)[2], -(MASS + 1.0) * G, rtol=5e-3)
    np.testing.assert_allclose(np.asarray(outputs.models[0].contact_forces[-1]).sum(axis=0)[2], (2 * MASS + 1.0) * G, rtol=5e-3)
    assert max(float(jnp.linalg.norm(s.base_velocity)) for s in final.states[:2]) < 1e-3
    assert abs(float(final.states[2].base_velocity[2])) < 1e-4  # the ball may roll (the cubes' settling set it going)


def test_a_can_stands_on_a_hull_and_a_hull_on_a_can(meshes):
    """A cylinder meets a hull as the prism on its rims (:func:`...collision.hull.cylinder_hull`):
    a can (1 kg) stands on a mesh cube on the ground, carried by 4 contacts (1 kg within 0.5 %), and
    a mesh cube stands on a drum; before, a cylinder and a hull never touched (the can fell
    through), and the hull's vertices met the cylinder as points (no longer: the prism's narrow
    phase is complete)."""
    lower, upper = mesh_body("lower", meshes["cube"]), mesh_body("upper", meshes["cube"])
    can = js.load_model("""<robot name="can"><link name="link"><inertial><mass value="1"/>
        <inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial>
        <collision><geometry><cylinder radius="0.04" length="0.1"/></geometry></collision></link></robot>""")
    drum = js.load_model("""<robot name="drum"><link name="link"><inertial><mass value="5"/>
        <inertia ixx="0.05" iyy="0.05" izz="0.05" ixy="0" ixz="0" iyz="0"/></inertial>
        <collision><geometry><cylinder radius="0.2" length="0.1"/></geometry></collision></link></robot>""")
    world = WorldModel.build([lower, can, drum, upper], dt=0.002)
    assert sorted(g.kind for g in world.collision.groups) == ["cylinder-cylinder", "cylinder-hull", "hull-hull", "point-shape"]
    states = [js.State.build(lower, base_position=[0.0, 0.0, 0.1]), js.State.build(can, base_position=[0.02, 0.01, 0.252]),
              js.State.build(drum, base_position=[1.0, 0.0, 0.05]), js.State.build(upper, base_position=[1.03, 0.02, 0.202])]
    final, outputs = jax.jit(world_rollout, static_argnames="steps")(world, world.initial_state(states), None, steps=500)
    last = jax.tree.map(lambda x: np.asarray(x[-1]), outputs.pairs)
    active, link_a, link_b = last.contacts.active, last.contacts.link_a, last.contacts.link_b
    on_lower = active & (((link_a == 0) & (link_b == 1)) | ((link_a == 1) & (link_b == 0)))  # global links: lower 0, can 1, drum 2, upper 3
    assert on_lower.sum() == 4
    np.testing.assert_allclose(abs(last.forces[on_lower].sum(axis=0)[2]), G, rtol=5e-3)
    np.testing.assert_allclose(float(final.states[1].base_position[2]), 0.25, atol=1.5e-3)  # the cube's top at 0.2, the can's half length 0.05
    np.testing.assert_allclose(float(final.states[3].base_position[2]), 0.2, atol=1.5e-3)  # the drum's cap at 0.1, the cube's half size 0.1
    assert max(float(jnp.linalg.norm(s.base_velocity)) for s in final.states) < 1e-3


def test_chunks_of_a_budget_that_hold_no_pair_are_skipped_and_change_nothing(meshes, monkeypatch):
    """Ten prisms and ten balls in a row, three pairs of prisms and two balls on prisms touching, in
    budgets of 40 hull pairs and 40 ball-hull pairs: the narrow phases evaluate the chunks that
    hold a pair and skip the rest (:func:`collide._evaluated`), with the contacts of every chunk
    evaluated, to rounding, and the same gradient of the depths through the poses; under ``vmap``
    over two worlds, one of them touching nowhere, the same contacts."""
    collide_module = importlib.import_module("jaxsim_like.simulation.collision.collide")
    # Which chunks run: 80 entries, pairs in the first and the third chunk of 16.
    real = np.zeros(80, bool)
    real[[0, 4, 40, 41]] = True
    marked = jax.jit(lambda r, x: collide_module._evaluated(
        lambda v: Slots(jnp.zeros((1, 3)), jnp.ones((1, 3)), v[None], jnp.ones(1, bool)), r, x))(jnp.asarray(real), jnp.arange(80.0))
    ran = np.repeat([True, False, True, False, False], 16)
    np.testing.assert_array_equal(np.asarray(marked.depth)[:, 0], np.where(ran, np.arange(80.0), -1.0))
    np.testing.assert_array_equal(np.asarray(marked.valid)[:, 0], ran)
    prism = mesh_body("prism", meshes["prism"])
    ball = js.load_model("""<robot name="ball"><link name="link"><inertial><mass value="1"/>
        <inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial>
        <collision><geometry><sphere radius="0.05"/></geometry></collision></link></robot>""")
    models = [prism] * 10 + [ball] * 10
    table = CollisionTable.build(models, budget={"hull-hull": 40, "sphere-hull": 40})
    geometry = Geometry.of(models, jnp.float64)
    poses = np.tile(np.eye(4), (20, 1, 1))
    poses[:10, 0, 3] = np.arange(10) * 0.5
    poses[1:6:2, 0, 3] = poses[0:6:2, 0, 3] + 0.19  # prisms 1, 3, 5 overlap 0, 2, 4 by 1 cm
    poses[10:, 0, 3], poses[10:, 2, 3] = np.arange(10) * 0.5 + 5.0, 0.0
    poses[10:12, 0, 3], poses[10:12, 2, 3] = poses[6:8, 0, 3], 0.095  # balls 10, 11 on prisms 6, 7, 5 mm deep

    def depths(H):
        contacts, _ = query(table, geometry, H)
        return jnp.sum(jnp.where(contacts.active, contacts.depth, 0.0)), contacts

    chunked = jax.jit(jax.value_and_grad(depths, has_aux=True))(jnp.asarray(poses))
    monkeypatch.setattr(collide_module, "NARROW_CHUNK", 1000)
    whole = jax.jit(jax.value_and_grad(depths, has_aux=True))(jnp.asarray(poses))
    (total, contacts), gradient = chunked
    (reference_total, reference), reference_gradient = whole
    active = np.asarray(reference.active)
    assert active.sum() == 3 * 4 + 2 and np.array_equal(np.asarray(contacts.active), active)
    np.testing.assert_allclose(float(total), float(reference_total), atol=1e-12)
    for field in ("position", "normal", "depth"):
        np.testing.assert_allclose(np.asarray(getattr(contacts, field))[active], np.asarray(getattr(reference, field))[active], atol=1e-12)
    np.testing.assert_allclose(np.asarray(gradient), np.asarray(reference_gradient), atol=1e-12)
    # Under vmap (two worlds) the condition is a selection: every chunk runs, the same contacts.
    monkeypatch.undo()
    apart = poses.copy()
    apart[:, 2, 3] += np.arange(20) * 0.5  # nothing touches
    both = jax.jit(jax.vmap(lambda H: depths(H)[1]))(jnp.asarray(np.stack([poses, apart])))
    assert not np.asarray(both.active)[1].any() and np.array_equal(np.asarray(both.active)[0], active)
    np.testing.assert_allclose(np.asarray(both.depth)[0][active], np.asarray(contacts.depth)[active], atol=1e-12)
