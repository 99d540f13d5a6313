"""Mesh vertex loading: binary and ASCII STL, OBJ, Collada, scaling, uniqueness and bad files."""

from __future__ import annotations

import pathlib
import struct

import numpy as np
import pytest

from jaxsim_like.parsers import ModelLoadError
from jaxsim_like.parsers.meshes import load_mesh_vertices

CUBE = np.array([[x, y, z] for x in (0.0, 1.0) for y in (0.0, 1.0) for z in (0.0, 1.0)])
# The 12 triangles of the unit cube, as indices into CUBE.
FACES = [
    (0, 1, 3),
    (0, 3, 2),
    (4, 6, 7),
    (4, 7, 5),
    (0, 4, 5),
    (0, 5, 1),
    (2, 3, 7),
    (2, 7, 6),
    (0, 2, 6),
    (0, 6, 4),
    (1, 5, 7),
    (1, 7, 3),
]


def binary_stl(header: bytes = b"binary cube") -> bytes:
    data = header.ljust(80, b" ") + struct.pack("<I", len(FACES))
    for face in FACES:
        data += struct.pack("<3f", 0, 0, 0) + b"".join(struct.pack("<3f", *CUBE[index]) for index in face) + b"\0\0"
    return data


def ascii_stl() -> str:
    lines = ["solid cube"]
    for face in FACES:
        lines += ["  facet normal 0 0 0", "    outer loop"]
        lines += [f"      vertex {x:e} {y:e} {z:e}" for x, y, z in CUBE[list(face)]]
        lines += ["    endloop", "  endfacet"]
    return "\n".join(lines + ["endsolid cube", ""])


def same_points(actual: np.ndarray, expected: np.ndarray) -> bool:
    return actual.shape == expected.shape and np.allclose(np.unique(actual, axis=0), np.unique(expected, axis=0))


def test_binary_stl_gives_the_eight_unique_corners(tmp_path: pathlib.Path):
    path = tmp_path / "cube.stl"
    path.write_bytes(binary_stl())
    assert same_points(load_mesh_vertices(str(path)), CUBE)


def test_binary_stl_whose_header_starts_with_solid(tmp_path: pathlib.Path):
    path = tmp_path / "cube.STL"
    path.write_bytes(binary_stl(header=b"solid exported by a CAD tool"))
    assert same_points(load_mesh_vertices(str(path)), CUBE)


def test_ascii_stl_and_scale(tmp_path: pathlib.Path):
    path = tmp_path / "cube.stl"
    path.write_text(ascii_stl())
    vertices = load_mesh_vertices(str(path), scale=(0.001, 2.0, -1.0))
    assert same_points(vertices, CUBE * [0.001, 2.0, -1.0])


def test_obj_vertices(tmp_path: pathlib.Path):
    lines = ["# cube", "o cube"] + [f"v {x} {y} {z} 0.5 0.5 0.5" for x, y, z in CUBE]
    lines += ["v 0 0 0", "vn 0 0 1", "vt 0.5 0.5"] + [f"f {a + 1} {b + 1} {c + 1}" for a, b, c in FACES]
    path = tmp_path / "cube.obj"
    path.write_text("\n".join(lines))
    assert same_points(load_mesh_vertices(path), CUBE)


def collada(body: str, unit: str = "1") -> str:
    positions = " ".join(f"{value:g}" for value in CUBE.ravel())
    return f"""<?xml version="1.0" encoding="utf-8"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
  <asset><unit name="unit" meter="{unit}"/><up_axis>Z_UP</up_axis></asset>
  <library_geometries>
    <geometry id="cube-mesh" name="cube">
      <mesh>
        <source id="cube-positions">
          <float_array id="cube-positions-array" count="24">{positions}</float_array>
          <technique_common>
            <accessor source="#cube-positions-array" count="8" stride="3">
              <param name="X" type="float"/><param name="Y" type="float"/><param name="Z" type="float"/>
            </accessor>
          </technique_common>
        </source>
        <source id="cube-normals"><float_array id="n" count="3">9 9 9</float_array></source>
        <vertices id="cube-vertices"><input semantic="POSITION" source="#cube-positions"/></vertices>
        <triangles count="1"><input semantic="VERTEX" source="#cube-vertices" offset="0"/><p>0 1 2</p></triangles>
      </mesh>
    </geometry>
  </library_geometries>
  {body}
</COLLADA>
"""


def test_collada_positions_with_unit_and_node_transforms(tmp_path: pathlib.Path):
    scene = """<library_visual_scenes><visual_scene id="scene">
      <node id="moved"><translate>1 0 0</translate><rotate>0 0 1 90</rotate>
        <instance_geometry url="#cube-mesh"/></node>
    </visual_scene></library_visual_scenes>"""
    path = tmp_path / "cube.dae"
    path.write_text(collada(scene, unit="0.01"))
    rotated = CUBE @ np.array([[0, -1, 0], [1, 0, 0], [0, 0, 1]]).T + [1, 0, 0]
    assert same_points(load_mesh_vertices(str(path)), rotated * 0.01)


def test_collada_without_scene_reads_the_geometries(tmp_path: pathlib.Path):
    path = tmp_path / "cube.dae"
    path.write_text(collada(""))
    assert same_points(load_mesh_vertices(str(path), scale=(2, 2, 2)), CUBE * 2)


def test_collada_with_controllers_is_rejected(tmp_path: pathlib.Path):
    scene = '<library_visual_scenes><visual_scene id="s"><node><instance_controller url="#skin"/></node></visual_scene></library_visual_scenes>'
    path = tmp_path / "skinned.dae"
    path.write_text(collada(scene))
    with pytest.raises(ModelLoadError, match="controllers") as error:
        load_mesh_vertices(str(path))
    assert error.value.file == str(path)


@pytest.mark.parametrize(
    ("name", "content", "match"),
    [
        ("garbage.stl", b"\x00\x01\x02 not a mesh", "not a binary or ASCII STL"),
        ("truncated.stl", binary_stl()[:-60], "not a binary or ASCII STL"),
        ("empty.stl", b"solid empty\nfacet\nendsolid empty\n", "no vertices"),
        (
            "nan.stl",
            b"solid x\nfacet normal 0 0 1\nouter loop\nvertex nan 0 0\nendloop\nendfacet\nendsolid x\n",
            "non-finite",
        ),
        ("words.obj", b"v 0 0 0\nv 1 one 0\n", "invalid OBJ vertex"),
        ("short.obj", b"v 0 0\n", "invalid OBJ vertex"),
        ("broken.dae", b"<COLLADA><library_geometries>", "malformed XML"),
        ("other.dae", b"<scene/>", "not a Collada"),
        ("part.ply", b"ply\n", "unsupported mesh format"),
    ],
)
def test_unreadable_meshes_raise_model_load_error_naming_the_file(
    tmp_path: pathlib.Path, name: str, content: bytes, match: str
):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(ModelLoadError, match=match) as error:
        load_mesh_vertices(str(path))
    assert error.value.file == str(path)
    assert name in str(error.value)


def test_obj_error_reports_the_line(tmp_path: pathlib.Path):
    path = tmp_path / "bad.obj"
    path.write_text("# header\nv 0 0 0\nv 1 x 0\n")
    with pytest.raises(ModelLoadError) as error:
        load_mesh_vertices(str(path))
    assert error.value.line == 3


def test_missing_mesh_and_folder(tmp_path: pathlib.Path):
    with pytest.raises(ModelLoadError, match="not found"):
        load_mesh_vertices(str(tmp_path / "missing.stl"))
    (tmp_path / "folder.stl").mkdir()
    with pytest.raises(ModelLoadError):
        load_mesh_vertices(str(tmp_path / "folder.stl"))


def test_icub_binary_mesh():
    icub_models = pytest.importorskip("icub_models")
    folder = pathlib.Path(icub_models.get_model_file("iCubGazeboV2_5")).parents[2] / "meshes" / "simmechanics"
    mesh = folder / "sim_sea_2-5_head_prt-binary.stl"
    if not mesh.is_file():
        pytest.skip("icub-models ships no head mesh")
    vertices = load_mesh_vertices(str(mesh), scale=(0.001, 0.001, 0.001))
    assert vertices.ndim == 2 and vertices.shape[1] == 3 and vertices.shape[0] > 100
    assert len(np.unique(vertices, axis=0)) == len(vertices)
    assert np.all(np.abs(vertices) < 0.5)
