"""Mesh triangles (load_mesh_triangles): STL, OBJ (polygons, v/t/n, negative indices), Collada
(triangles, polylist, polygons, node transforms, unit) give the same oriented cube; bad faces fail."""

from __future__ import annotations

import pathlib
import struct

import numpy as np
import pytest

from jaxsim_like.parsers import ModelLoadError
from jaxsim_like.parsers.meshes import load_mesh_triangles

CUBE = np.array([[x, y, z] for x in (0.0, 1.0) for y in (0.0, 1.0) for z in (0.0, 1.0)])
# The 6 faces of the unit cube as quads, counter-clockwise seen from outside, and their triangles.
QUADS = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
TRIANGLES = [t for a, b, c, d in QUADS for t in ((a, b, c), (a, c, d))]


def oriented(vertices: np.ndarray, faces: np.ndarray) -> list[tuple]:
    """Each triangle as the tuple of its corners (rounded), rotated to start at its smallest corner:
    the same list for the same oriented triangles, whatever the vertex numbering."""
    result = []
    for face in faces:
        corners = [tuple(np.round(vertices[i], 9)) for i in face]
        first = corners.index(min(corners))
        result.append(tuple(corners[first:] + corners[:first]))
    return sorted(result)


EXPECTED = oriented(CUBE, np.array(TRIANGLES))


def write_stl(path: pathlib.Path, binary: bool) -> None:
    if binary:
        data = b"cube".ljust(80, b" ") + struct.pack("<I", len(TRIANGLES))
        for face in TRIANGLES:
            data += struct.pack("<3f", 0, 0, 0) + b"".join(struct.pack("<3f", *CUBE[i]) for i in face) + b"\0\0"
        path.write_bytes(data)
        return
    lines = ["solid cube"]
    for face in TRIANGLES:
        lines += ["facet normal 0 0 0", "outer loop", *(f"vertex {x} {y} {z}" for x, y, z in CUBE[list(face)]), "endloop", "endfacet"]
    path.write_text("\n".join(lines + ["endsolid cube"]))


@pytest.mark.parametrize("binary", [True, False])
def test_stl_triangles_share_their_vertices(tmp_path, binary):
    path = tmp_path / "cube.stl"
    write_stl(path, binary)
    vertices, faces = load_mesh_triangles(path, scale=(2, 2, 2))
    assert vertices.shape == (8, 3) and faces.shape == (12, 3) and faces.dtype == np.int64
    assert oriented(vertices / 2, faces) == EXPECTED


def test_obj_quads_texture_normal_and_negative_indices(tmp_path):
    lines = ["o cube", *(f"v {x} {y} {z}" for x, y, z in CUBE), "vt 0 0", "vn 0 0 1"]
    for k, (a, b, c, d) in enumerate(QUADS):
        if k == 0:
            lines.append(f"f {a + 1}/1 {b + 1}/1/1 {c + 1}//1 {d + 1}")
        elif k == 1:
            lines.append(" ".join(["f", *(str(i - 8) for i in (a, b, c, d))]))
        else:
            lines.append(f"f {a + 1} {b + 1} {c + 1} {d + 1}")
    path = tmp_path / "cube.obj"
    path.write_text("\n".join(lines))
    vertices, faces = load_mesh_triangles(path)
    assert oriented(vertices, faces) == EXPECTED


def collada(primitive: str, scene: str = "", unit: str = "1") -> str:
    positions = " ".join(f"{value:g}" for value in CUBE.ravel())
    return f"""<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
  <asset><unit meter="{unit}"/></asset>
  <library_geometries><geometry id="g"><mesh>
    <source id="p"><float_array id="pa" count="24">{positions}</float_array>
      <technique_common><accessor source="#pa" count="8" stride="3"/></technique_common></source>
    <source id="n"><float_array id="na" count="3">0 0 1</float_array></source>
    <vertices id="v"><input semantic="POSITION" source="#p"/></vertices>
    {primitive}
  </mesh></geometry></library_geometries>
  {scene}
</COLLADA>"""


def interleaved(corners) -> str:
    """VERTEX at offset 1 and NORMAL at offset 0, as exporters write them."""
    return " ".join(f"0 {i}" for i in corners)


INPUTS = '<input semantic="NORMAL" source="#n" offset="0"/><input semantic="VERTEX" source="#v" offset="1"/>'
PRIMITIVES = {
    "triangles": f'<triangles count="12">{INPUTS}<p>{interleaved(np.ravel(TRIANGLES))}</p></triangles>',
    "polylist": f'<polylist count="6">{INPUTS}<vcount>{" ".join(["4"] * 6)}</vcount><p>{interleaved(np.ravel(QUADS))}</p></polylist>',
    "polygons": f'<polygons count="6">{INPUTS}{"".join(f"<p>{interleaved(q)}</p>" for q in QUADS)}</polygons>',
}


@pytest.mark.parametrize("kind", sorted(PRIMITIVES))
def test_collada_primitives(tmp_path, kind):
    path = tmp_path / "cube.dae"
    path.write_text(collada(PRIMITIVES[kind]))
    vertices, faces = load_mesh_triangles(path)
    assert oriented(vertices, faces) == EXPECTED


def test_collada_node_transforms_and_unit_move_the_triangles(tmp_path):
    scene = """<library_visual_scenes><visual_scene id="s"><node><translate>1 0 0</translate>
      <instance_geometry url="#g"/><node><rotate>0 0 1 90</rotate><instance_geometry url="#g"/></node>
    </node></visual_scene></library_visual_scenes>"""
    path = tmp_path / "two.dae"
    path.write_text(collada(PRIMITIVES["triangles"], scene, unit="0.01"))
    vertices, faces = load_mesh_triangles(path)
    assert faces.shape == (24, 3)
    rotated = CUBE @ np.array([[0, -1, 0], [1, 0, 0], [0, 0, 1]]).T + [1, 0, 0]
    expected = sorted(oriented(CUBE + [1, 0, 0], np.array(TRIANGLES)) + oriented(rotated, np.array(TRIANGLES)))
    assert oriented(vertices / 0.01, faces) == expected


@pytest.mark.parametrize(
    ("name", "content", "match", "line"),
    [
        ("ahead.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\n", "names a vertex not defined", 4),
        ("short.obj", "v 0 0 0\nv 1 0 0\nf 1 2\n", "invalid OBJ face", 3),
        ("zero.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n", "invalid OBJ face", 4),
        ("points.obj", "v 0 0 0\nv 1 0 0\n", "no triangles", None),
        ("range.dae", collada(f'<triangles count="1">{INPUTS}<p>{interleaved([0, 1, 8])}</p></triangles>'), "out of range", 8),
        ("strip.dae", collada(f'<tristrips count="1">{INPUTS}<p>{interleaved([0, 1, 2])}</p></tristrips>'), "tristrips", 8),
        ("odd.dae", collada(f'<triangles count="1">{INPUTS}<p>0 1 0</p></triangles>'), "not a multiple of 2", 8),
    ],
)
def test_bad_faces_raise_located_errors(tmp_path, name, content, match, line):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(ModelLoadError, match=match) as error:
        load_mesh_triangles(path)
    assert error.value.file == str(path) and error.value.line == line
