"""The HTML views without a browser: nothing loaded from the network, embedded poses equal to the
forward kinematics, every shape kind and mesh format embedded as parsed, visuals carried through
lumping, contact forces, frame decimation, errors, and the size of a 30 s humanoid recording."""

from __future__ import annotations

import re

import jax
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like import viewer
from jaxsim_like.dynamics import spatial
from jaxsim_like.parsers.meshes import load_mesh_triangles
from jaxsim_like.recording import Recording
from jaxsim_like.viewer.frames import frame_indices
from jaxsim_like.viewer.page import decode, embedded_data

FORWARD_KINEMATICS = jax.jit(js.dynamics.forward_kinematics)
TETRAHEDRON = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
TETRAHEDRON_FACES = [(0, 2, 1), (0, 1, 3), (0, 3, 2), (1, 2, 3)]
INERTIAL = "<inertial><mass>1</mass><inertia><ixx>0.01</ixx><iyy>0.01</iyy><izz>0.01</izz></inertia></inertial>"

KINDS = f"""<sdf version="1.9"><model name="kinds">
  <link name="base">{INERTIAL}
    <visual name="body"><pose>0 0 0.1 0 0 0</pose><geometry><box><size>0.4 0.3 0.2</size></box></geometry>
      <material><diffuse>0.2 0.4 0.6 1</diffuse></material></visual>
    <visual name="egg"><geometry><ellipsoid><radii>0.1 0.05 0.02</radii></ellipsoid></geometry></visual>
    <collision name="body"><geometry><box><size>0.4 0.3 0.2</size></box></geometry></collision>
  </link>
  <link name="sensor"><pose>0.1 0 0.2 0 0 1.2</pose>
    <visual name="lens"><pose>0 0.05 0 0.3 0 0</pose><geometry><sphere><radius>0.03</radius></sphere></geometry>
      <material><diffuse>1 0 0 1</diffuse></material></visual>
  </link>
  <joint name="weld" type="fixed"><parent>base</parent><child>sensor</child></joint>
  <link name="arm"><pose>0 0 0.3 0 0 0</pose>{INERTIAL}
    <visual name="stl"><geometry><mesh><uri>tetra.stl</uri><scale>0.1 0.1 0.1</scale></mesh></geometry></visual>
    <visual name="obj"><pose>0 0 0.2 0 0 0</pose><geometry><mesh><uri>tetra.obj</uri><scale>0.05 0.05 0.05</scale></mesh></geometry></visual>
    <visual name="dae"><pose>0 0 0.4 0 0 0</pose><geometry><mesh><uri>tetra.dae</uri></mesh></geometry></visual>
    <visual name="again"><pose>0.1 0 0.4 0 0 0</pose><geometry><mesh><uri>tetra.dae</uri></mesh></geometry></visual>
    <collision name="c"><geometry><capsule><radius>0.03</radius><length>0.4</length></capsule></geometry></collision>
  </link>
  <joint name="shoulder" type="revolute"><parent>base</parent><child>arm</child><axis><xyz>0 1 0</xyz></axis></joint>
  <link name="tip"><pose>0 0 0.8 0 0 0</pose>{INERTIAL}
    <collision name="rod"><geometry><cylinder><radius>0.02</radius><length>0.2</length></cylinder></geometry></collision>
    <collision name="floor"><geometry><plane><normal>0 1 1</normal><size>2 3</size></plane></geometry></collision>
  </link>
  <joint name="wrist" type="revolute"><parent>arm</parent><child>tip</child><axis><xyz>1 0 0</xyz></axis></joint>
</model></sdf>"""


def write_tetrahedron(folder) -> None:
    stl = ["solid t"]
    for face in TETRAHEDRON_FACES:
        stl += ["facet normal 0 0 0", "outer loop", *(f"vertex {x} {y} {z}" for x, y, z in TETRAHEDRON[list(face)]), "endloop", "endfacet"]
    (folder / "tetra.stl").write_text("\n".join(stl + ["endsolid t"]))
    obj = [f"v {x} {y} {z}" for x, y, z in TETRAHEDRON] + [f"f {a + 1} {b + 1} {c + 1}" for a, b, c in TETRAHEDRON_FACES]
    (folder / "tetra.obj").write_text("\n".join(obj))
    positions = " ".join(f"{v:g}" for v in TETRAHEDRON.ravel())
    corners = " ".join(str(i) for face in TETRAHEDRON_FACES for i in face)
    (folder / "tetra.dae").write_text(f"""<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
  <asset><unit meter="0.5"/></asset><library_geometries><geometry id="g"><mesh>
  <source id="p"><float_array id="pa" count="12">{positions}</float_array></source>
  <vertices id="v"><input semantic="POSITION" source="#p"/></vertices>
  <triangles count="4"><input semantic="VERTEX" source="#v" offset="0"/><p>{corners}</p></triangles>
  </mesh></geometry></library_geometries></COLLADA>""")


@pytest.fixture(scope="module")
def kinds(tmp_path_factory):
    folder = tmp_path_factory.mktemp("kinds")
    write_tetrahedron(folder)
    path = folder / "kinds.sdf"
    path.write_text(KINDS)
    model, description = viewer.load(path)
    return model, description, folder, embedded_data(viewer.html_string(model, description=description))


@pytest.fixture(scope="module")
def humanoid():
    return js.load_model(js.models.path("humanoid"))


def synthetic_recording(model, worlds: int, steps: int, dt: float, seed: int = 0) -> Recording:
    """A batched recording with random joint positions, base poses and a few contact forces."""
    rng = np.random.default_rng(seed)
    points = len(model.point_link)
    quaternions = rng.normal(size=(worlds, steps, 4))
    forces = np.zeros((worlds, steps, points, 3))
    active = rng.random((worlds, steps, points)) < 0.05
    forces[active] = rng.normal(size=(int(active.sum()), 3)) * [5, 5, 50]
    return Recording(
        time=dt * np.arange(1, steps + 1),
        base_position=rng.normal(size=(worlds, steps, 3)),
        base_quaternion=quaternions / np.linalg.norm(quaternions, axis=-1, keepdims=True),
        base_velocity=np.zeros((worlds, steps, 6)),
        joint_positions=rng.uniform(-1, 1, (worlds, steps, model.dofs)),
        joint_velocities=np.zeros((worlds, steps, model.dofs)),
        joint_torques=np.zeros((worlds, steps, model.dofs)),
        contact_forces=forces,
        joint_names=tuple(model.joint_names),
        link_names=tuple(model.link_names),
        point_link=tuple(model.point_link),
    )


def test_the_page_loads_nothing_from_the_network(humanoid):
    text = viewer.html_string(humanoid)
    assert not re.search(r"""(?:src|href|action)\s*=\s*["']?\s*(?:[a-z]+:)?//""", text, re.IGNORECASE)
    assert not re.search(r"""\bimport\s*(?:\(|[\w{}*,\s]+from\s)|url\(\s*["']?\s*(?:[a-z]+:)?//|@import""", text)
    for call in ("<script src", "<link", "fetch(", "XMLHttpRequest", "WebSocket", "importScripts", "<iframe"):
        assert call not in text
    assert "@license" in text and "three.js r187" in text  # the vendored three.js keeps its notice


def test_embedded_poses_are_the_forward_kinematics(humanoid):
    recording = synthetic_recording(humanoid, worlds=2, steps=40, dt=0.01)
    data = embedded_data(viewer.html_string(humanoid, recording, fps=25.0))
    indices = frame_indices(recording.time, 25.0)
    np.testing.assert_array_equal(indices, [*range(0, 40, 4), 39])
    np.testing.assert_allclose(data["times"], recording.time[indices])
    (model_data,) = data["models"]
    poses = decode(model_data["poses"]).reshape(2, len(indices), humanoid.number_of_links, 7)
    for world, frame in [(0, 0), (1, 3), (1, len(indices) - 1)]:
        sample = indices[frame]
        state = js.State.build(
            humanoid,
            base_position=recording.base_position[world, sample],
            base_quaternion=recording.base_quaternion[world, sample],
            joint_positions=recording.joint_positions[world, sample],
        )
        W_H_L = np.asarray(FORWARD_KINEMATICS(humanoid, state))
        np.testing.assert_allclose(poses[world, frame, :, :3], W_H_L[:, :3, 3], atol=2e-6)
        rotations = np.asarray(spatial.quaternion_to_rotation(poses[world, frame, :, 3:].astype(float)))
        np.testing.assert_allclose(rotations, W_H_L[:, :3, :3], atol=2e-6)
    contacts = model_data["contacts"]
    start, index = decode(contacts["start"], "<i4"), decode(contacts["index"], "<i4")
    force = decode(contacts["force"]).reshape(-1, 3)
    slot = 1 * len(indices) + 3  # world 1, frame 3
    expected = recording.contact_forces[1, indices[3]]
    np.testing.assert_array_equal(index[start[slot] : start[slot + 1]], np.flatnonzero(np.linalg.norm(expected, axis=1)))
    np.testing.assert_allclose(force[start[slot] : start[slot + 1]], expected[np.linalg.norm(expected, axis=1) > 0], rtol=1e-6)
    assert data["worlds"] == 2 and len(decode(data["offsets"])) == 6
    assert data["models"][0]["force_scale"] == pytest.approx(1 / (float(humanoid.total_mass) * 9.81))


def test_every_shape_kind_and_mesh_format_round_trips(kinds):
    model, description, folder, data = kinds
    (embedded,) = data["models"]
    by_source = {}
    for shape in embedded["shapes"]:
        by_source.setdefault((shape["source"], shape["group"]), []).append(shape)
    visual_types = sorted(s["type"] for s in embedded["shapes"] if s["group"] == "visual")
    assert visual_types == sorted(["box", "ellipsoid", "sphere", "mesh", "mesh", "mesh", "mesh", "cylinder", "plane"])
    assert sorted(s["type"] for s in embedded["shapes"] if s["group"] == "collision") == ["box", "capsule", "cylinder", "plane"]
    body, egg = by_source["base", "visual"]
    assert body["size"] == [0.4, 0.3, 0.2] and body["rgba"] == [0.2, 0.4, 0.6, 1.0]
    assert egg["size"] == [0.1, 0.05, 0.02] and egg["rgba"] == list(viewer.scene.DEFAULT_VISUAL_RGBA)
    rod, floor = by_source["tip", "visual"]  # no visual: drawn with its collisions, in its own colour
    assert (rod["radius"], rod["length"]) == (0.02, 0.2) and rod["rgba"][:3] == list(viewer.scene.PALETTE[model.link_index("tip")])
    np.testing.assert_allclose(floor["normal"], np.array([0, 1, 1]) / np.sqrt(2))
    assert floor["size"] == [2.0, 3.0] and floor["rgba"] == list(viewer.scene.GROUND_RGBA)
    (capsule,) = by_source["arm", "collision"]
    assert (capsule["radius"], capsule["length"]) == (0.03, 0.4)
    meshes = [s["mesh"] for s in by_source["arm", "visual"]]
    assert meshes == [0, 1, 2, 2] and len(data["meshes"]) == 3  # one copy of a file used twice
    for (name, scale), mesh in zip([("tetra.stl", 0.1), ("tetra.obj", 0.05), ("tetra.dae", 1.0)], data["meshes"]):
        vertices, faces = load_mesh_triangles(folder / name, (scale,) * 3)
        np.testing.assert_allclose(decode(mesh["vertices"]).reshape(-1, 3), vertices, rtol=1e-7)
        np.testing.assert_array_equal(decode(mesh["faces"], mesh["index"]).reshape(-1, 3), faces)
        assert mesh["index"] == "<u2"
    arm = description.link("arm")
    for shape, visual in zip(by_source["arm", "visual"], arm.visuals):
        np.testing.assert_allclose(np.reshape(shape["pose"], (4, 4)), visual.L_H_G)
        assert shape["link"] == model.link_index("arm")


def test_visuals_survive_lumping_with_their_poses(kinds):
    model, description, _, data = kinds
    assert "sensor" not in model.link_names and "sensor" in model.frame_names
    (lens,) = [s for s in data["models"][0]["shapes"] if s["source"] == "sensor"]
    assert lens["link"] == model.link_index("base") and lens["rgba"] == [1.0, 0.0, 0.0, 1.0]
    B_H_S = description.joint("weld").P_H_C
    np.testing.assert_allclose(np.reshape(lens["pose"], (4, 4)), B_H_S @ description.link("sensor").visuals[0].L_H_G, atol=1e-12)
    # In the world, the lumped visual sits where the sensor frame's forward kinematics puts it.
    state = js.State.build(model, base_position=[0.3, -0.2, 0.5], joint_positions=[0.4, -0.7])
    W_H_L = FORWARD_KINEMATICS(model, state)
    W_H_F = np.asarray(jax.jit(js.dynamics.kinematics.frame_poses)(model, W_H_L))[model.frame_index("sensor")]
    np.testing.assert_allclose(
        np.asarray(W_H_L)[model.link_index("base")] @ np.reshape(lens["pose"], (4, 4)),
        W_H_F @ description.link("sensor").visuals[0].L_H_G,
        atol=1e-12,
    )


def test_a_model_alone_is_drawn_with_its_solid_shapes_standing_on_the_ground(humanoid):
    data = embedded_data(viewer.html_string(humanoid))
    (embedded,) = data["models"]
    assert data["times"] == [0.0] and embedded["contacts"] is None
    assert len(embedded["shapes"]) == 2 * len(humanoid.shape_kind)
    poses = decode(embedded["poses"]).reshape(humanoid.number_of_links, 7)
    W_H_L = np.asarray(FORWARD_KINEMATICS(humanoid, viewer.resting_state(humanoid)))[np.asarray(humanoid.point_link)]
    points = np.einsum("pij,pj->pi", W_H_L[:, :3, :3], np.asarray(humanoid.collidable_points)) + W_H_L[:, :3, 3]
    assert points[:, 2].min() == pytest.approx(0.0, abs=1e-12)
    assert poses[0, 2] == pytest.approx(float(viewer.resting_state(humanoid).base_position[2]), abs=1e-6)


def test_bad_recordings_are_clear_errors(humanoid):
    recording = synthetic_recording(humanoid, worlds=2, steps=3, dt=0.01)
    with pytest.raises(ValueError, match=r"worlds must be indices of the recording's 2 world\(s\)"):
        viewer.html_string(humanoid, recording, worlds=[2])
    renamed = Recording(**{**recording.__dict__, "joint_names": ("other",) + recording.joint_names[1:]})
    with pytest.raises(ValueError, match=f"no joint\\(s\\) {humanoid.joint_names[0]}"):
        viewer.html_string(humanoid, renamed)
    fewer = Recording(**{**recording.__dict__, "contact_forces": recording.contact_forces[:, :, :5], "point_link": recording.point_link[:5]})
    with pytest.raises(ValueError, match="the recording has 5 contact points"):
        viewer.html_string(humanoid, fewer)
    with pytest.raises(ValueError, match="fps must be positive"):
        viewer.html_string(humanoid, recording, fps=0)


def test_a_30_s_humanoid_recording_stays_small(humanoid, tmp_path):
    recording = synthetic_recording(humanoid, worlds=1, steps=15000, dt=0.002)
    path = viewer.export_html(tmp_path / "long.html", humanoid, recording)
    data = embedded_data(path.read_text())
    assert len(data["times"]) == 884  # every 17th of 15000 samples at 500 Hz (29.4 frames per second), and the last
    assert path.stat().st_size < 2.5e6  # 1.9 MB when measured
