"""Collidable points of collision shapes, in the link frame."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from jaxsim_like.parsers.description import Collision, Geometry, LinkDescription, SourceLocation
from jaxsim_like.parsers.errors import ModelLoadError
from jaxsim_like.loading import ContactSampling
from jaxsim_like.parsers.shapes import collidable_points, hull_vertices, link_collidable_points

# A rotation that permutes the axes, (x, y, z) -> (z, x, y): exact in floating point.
_R = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
_T = np.array([1.0, -2.0, 0.5])


def _pose(rotation: np.ndarray = _R, translation: np.ndarray = _T) -> np.ndarray:
    L_H_G = np.eye(4)
    L_H_G[:3, :3] = rotation
    L_H_G[:3, 3] = translation
    return L_H_G


def _rotation(axis, angle: float) -> np.ndarray:
    axis = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def _in_shape_frame(points: np.ndarray, L_H_G: np.ndarray) -> np.ndarray:
    return (points - L_H_G[:3, 3]) @ L_H_G[:3, :3]


def _sorted_rows(points: np.ndarray) -> np.ndarray:
    return points[np.lexsort(points.T[::-1])]


def test_box_corners_under_a_rotated_and_translated_pose():
    collision = Collision("box", _pose(), Geometry("box", size=(0.2, 0.4, 0.6)))
    points = collidable_points(collision).centres
    expected = [
        [sz * 0.3 + 1.0, sx * 0.1 - 2.0, sy * 0.2 + 0.5]
        for sx in (-1, 1)
        for sy in (-1, 1)
        for sz in (-1, 1)
    ]
    assert points.shape == (8, 3)
    np.testing.assert_allclose(_sorted_rows(points), _sorted_rows(np.array(expected)), atol=1e-15)


def test_box_edge_samples_lie_evenly_on_the_twelve_edges():
    L_H_G = _pose(_rotation([1, 2, 3], 0.7))
    points = collidable_points(Collision("box", L_H_G, Geometry("box", size=(1.0, 2.0, 4.0))), box_edge_samples=3).centres
    assert points.shape == (8 + 12 * 3, 3)
    local = _in_shape_frame(points, L_H_G)
    half = np.array([0.5, 1.0, 2.0])
    on_face = np.isclose(np.abs(local), half)
    assert np.all(on_face.sum(axis=1) >= 2)
    edge = local[8:]
    assert np.all(on_face[8:].sum(axis=1) == 2)
    free = edge[~on_face[8:]]
    free_half = np.broadcast_to(half, edge.shape)[~on_face[8:]]
    np.testing.assert_allclose(np.sort(np.unique(np.round(free / free_half, 12))), [-0.5, 0.0, 0.5])
    assert len(np.unique(np.round(points, 12), axis=0)) == 44


def test_a_sphere_is_one_point_of_its_radius_at_its_centre():
    L_H_G = _pose(_rotation([0, 1, 0], 0.3))
    points = collidable_points(Collision("ball", L_H_G, Geometry("sphere", radius=0.25)), sphere_samples=7)
    np.testing.assert_allclose(points.centres, [_T], atol=1e-15)
    np.testing.assert_array_equal(points.radii, [0.25])


def test_ellipsoid_points_are_on_the_surface():
    L_H_G = _pose(_rotation([1, 1, 0], 1.1))
    radii = np.array([0.1, 0.2, 0.3])
    swept = collidable_points(Collision("egg", L_H_G, Geometry("ellipsoid", size=tuple(radii))), sphere_samples=40)
    points = swept.centres
    assert points.shape == (40, 3)
    np.testing.assert_array_equal(swept.radii, 0.0)
    np.testing.assert_allclose(np.sum((_in_shape_frame(points, L_H_G) / radii) ** 2, axis=1), 1.0, rtol=1e-12)


def test_cylinder_points_are_on_the_two_rims():
    L_H_G = _pose(_rotation([1, 0, 1], -0.4))
    geometry = Geometry("cylinder", radius=0.05, length=0.3)
    points = collidable_points(Collision("can", L_H_G, geometry), cylinder_samples=12).centres
    assert points.shape == (24, 3)
    local = _in_shape_frame(points, L_H_G)
    np.testing.assert_allclose(np.linalg.norm(local[:, :2], axis=1), 0.05, rtol=1e-12)
    np.testing.assert_allclose(np.sort(local[:, 2]), [-0.15] * 12 + [0.15] * 12, atol=1e-12)
    assert collidable_points(Collision("can", L_H_G, geometry)).centres.shape == (32, 3)


def test_a_capsule_is_the_two_ends_of_its_segment_of_its_radius():
    L_H_G = _pose()
    points = collidable_points(
        Collision("pill", L_H_G, Geometry("capsule", radius=0.1, length=0.4)), cylinder_samples=8, sphere_samples=30
    )
    np.testing.assert_allclose(_in_shape_frame(points.centres, L_H_G), [[0.0, 0.0, 0.2], [0.0, 0.0, -0.2]], atol=1e-15)
    np.testing.assert_array_equal(points.radii, [0.1, 0.1])


def test_planes_have_no_points():
    points = collidable_points(Collision("ground", np.eye(4), Geometry("plane", size=(10.0, 10.0))))
    assert points.centres.shape == (0, 3) and points.radii.shape == (0,)


def test_unknown_geometry_is_a_model_load_error():
    location = SourceLocation(file="robot.urdf", line=7, element="<collision>")
    with pytest.raises(ModelLoadError, match="unknown geometry type 'torus'") as error:
        collidable_points(Collision("ring", np.eye(4), Geometry("torus"), location))
    assert (error.value.file, error.value.line) == ("robot.urdf", 7)


@pytest.mark.parametrize(
    "options",
    [{"box_edge_samples": -1}, {"sphere_samples": 1}, {"cylinder_samples": 2}, {"mesh_max_points": -1}],
)
def test_bad_options(options):
    with pytest.raises(ValueError):
        collidable_points(Collision("box", np.eye(4), Geometry("box", size=(1.0, 1.0, 1.0))), **options)


def test_link_points_concatenate_all_collisions():
    link = LinkDescription(
        name="body",
        collisions=[
            Collision("box", _pose(), Geometry("box", size=(0.2, 0.4, 0.6))),
            Collision("ball", np.eye(4), Geometry("sphere", radius=0.5)),
            Collision("floor", np.eye(4), Geometry("plane")),
        ],
    )
    points = link_collidable_points(link, sphere_samples=20)
    assert points.centres.shape == (9, 3)
    np.testing.assert_allclose(points.centres[:8], collidable_points(link.collisions[0]).centres)
    np.testing.assert_allclose(points.centres[8], 0.0)
    np.testing.assert_array_equal(points.radii, [0.0] * 8 + [0.5])
    assert link_collidable_points(LinkDescription(name="empty")).centres.shape == (0, 3)


def test_missing_mesh_warns_and_gives_no_points():
    link = LinkDescription(
        name="shin",
        collisions=[Collision("shin_mesh", np.eye(4), Geometry("mesh", uri="package://robot/meshes/shin.stl"))],
    )
    with pytest.warns(UserWarning, match=r"package://robot/meshes/shin\.stl.*shin_mesh.*link 'shin'"):
        points = link_collidable_points(link)
    assert points.centres.shape == (0, 3)
    with pytest.warns(UserWarning, match="shin_mesh"):
        assert collidable_points(link.collisions[0]).centres.shape == (0, 3)


_CUBE = np.array([[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)])
# The 12 triangles of the cube above, by vertex index (outward normals).
_CUBE_FACES = [
    (0, 1, 3), (0, 3, 2), (4, 6, 7), (4, 7, 5), (0, 4, 5), (0, 5, 1),
    (2, 3, 7), (2, 7, 6), (0, 2, 6), (0, 6, 4), (1, 5, 7), (1, 7, 3),
]


def _write_binary_stl(path, vertices: np.ndarray, faces) -> None:
    data = bytearray(b"binary cube".ljust(80, b" "))
    data += struct.pack("<I", len(faces))
    for face in faces:
        a, b, c = (vertices[index] for index in face)
        normal = np.cross(b - a, c - a)
        data += struct.pack("<12fH", *normal, *a, *b, *c, 0)
    path.write_bytes(bytes(data))


def _write_obj(path, vertices: np.ndarray, faces) -> None:
    lines = ["# cube", "o cube"]
    lines += [f"v {x} {y} {z}" for x, y, z in vertices]
    lines += ["f " + " ".join(str(index + 1) for index in face) for face in faces]
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("suffix", ["stl", "obj"])
def test_mesh_points_are_its_distinct_scaled_vertices(tmp_path, suffix):
    path = tmp_path / f"cube.{suffix}"
    (_write_binary_stl if suffix == "stl" else _write_obj)(path, _CUBE, _CUBE_FACES)
    geometry = Geometry("mesh", uri=f"cube.{suffix}", path=str(path), scale=(2.0, 1.0, 0.5))
    points = collidable_points(Collision("cube", _pose(), geometry)).centres
    expected = (_CUBE * [2.0, 1.0, 0.5]) @ _R.T + _T
    assert points.shape == (8, 3)
    np.testing.assert_allclose(_sorted_rows(points), _sorted_rows(expected), atol=1e-6)


def test_large_meshes_are_subsampled_deterministically(tmp_path):
    path = tmp_path / "cube.stl"
    _write_binary_stl(path, _CUBE, _CUBE_FACES)
    collision = Collision("cube", np.eye(4), Geometry("mesh", uri="cube.stl", path=str(path)))
    points = collidable_points(collision, mesh_max_points=4).centres
    assert points.shape == (4, 3)
    np.testing.assert_array_equal(points, collidable_points(collision, mesh_max_points=4).centres)
    # Farthest-point sampling keeps extremal vertices: every point is a corner, all distinct.
    assert all(np.any(np.all(np.isclose(_CUBE, point, atol=1e-6), axis=1)) for point in points)
    assert len(np.unique(np.round(points, 6), axis=0)) == 4
    distances = np.linalg.norm(points[:, None] - points[None], axis=2)
    np.testing.assert_allclose(distances.max(), np.sqrt(3.0), rtol=1e-6)
    assert collidable_points(collision, mesh_max_points=None).centres.shape == (8, 3)


def test_mesh_points_come_from_the_hull(tmp_path):
    # A cube's 8 corners after 4 points inside it: only corners can touch a plane first.
    inner = np.array([[0.0, 0.0, 0.0], [0.2, 0.1, -0.3], [0.4, -0.4, 0.1], [-0.45, 0.45, 0.45]])
    vertices = np.concatenate([inner, _CUBE])
    np.testing.assert_array_equal(hull_vertices(vertices), np.arange(4, 12))
    geometry = Geometry("mesh", uri="cloud", vertices=vertices)
    points = collidable_points(Collision("cloud", np.eye(4), geometry), mesh_max_points=6).centres
    assert points.shape == (6, 3) and all(np.any(np.all(np.isclose(_CUBE, p), axis=1)) for p in points)
    assert collidable_points(Collision("cloud", np.eye(4), geometry), mesh_max_points=0).centres.shape == (0, 3)
    assert collidable_points(Collision("cloud", np.eye(4), geometry), mesh_max_points=None).centres.shape == (12, 3)


def test_the_icub_meshes_are_hulls_by_default_and_points_on_request():
    """Every iCub collision mesh is a hull of at most 16 vertices, its vertices its points; with
    ``mesh_max_points=8`` each is 8 sampled points and no shape."""
    icub_models = pytest.importorskip("icub_models")
    import jaxsim_like as js
    from jaxsim_like.parsers import parse_model

    path = str(icub_models.get_model_file("iCubGazeboV2_5"))
    description = parse_model(path)
    meshes = sum(c.geometry.type == "mesh" for link in description.links for c in link.collisions)
    others = sum(len(ContactSampling().points(LinkDescription(link.name, collisions=[c])).radii)
                 for link in description.links for c in link.collisions if c.geometry.type != "mesh")
    model = js.load_model(path)
    assert model.shape_kind.count("hull") == meshes
    assert 4 * meshes <= len(model.point_link) - others <= 16 * meshes
    points = js.load_model(path, contact_sampling=ContactSampling(mesh_max_points=8))
    assert len(points.point_link) == 8 * meshes + others and "hull" not in points.shape_kind  # 2384 with 64 points per mesh before
