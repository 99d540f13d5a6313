"""ScenarIO helpers: URDF to SDF round trips through the SDF parser, SDF lookups and queries."""

from __future__ import annotations

import math
import pathlib

import numpy as np
import pytest
from lxml import etree

from jaxsim_like.parsers import (
    ModelDescription,
    ModelLoadError,
    find_sdf_file,
    get_empty_world,
    get_model_name_from_sdf,
    get_sdf_string,
    get_world_name_from_sdf,
    parse_model,
    parse_sdf,
    parse_urdf,
    parse_world,
    sdf_string_valid,
    urdffile_to_sdfstring,
    urdfstring_to_sdfstring,
)
from jaxsim_like.parsers.convert import rotation_to_rpy
from jaxsim_like.parsers.urdf import rpy_to_rotation

ASSETS = pathlib.Path(__file__).resolve().parents[1] / "assets"
INERTIA = '<inertia ixx="0.02" ixy="0.001" ixz="0" iyy="0.03" iyz="-0.002" izz="0.04"/>'

ARM = f"""<robot name="arm">
  <link name="world"/>
  <joint name="anchor" type="fixed">
    <origin xyz="0.1 0.2 0.3" rpy="0 0 0.5"/>
    <parent link="world"/><child link="base"/>
  </joint>
  <link name="base">
    <inertial><origin xyz="0 0 0.05" rpy="0.1 0.2 0.3"/><mass value="3"/>{INERTIA}</inertial>
    <collision name="plate"><origin xyz="0 0 0.01"/><geometry><box size="0.2 0.2 0.02"/></geometry></collision>
  </link>
  <joint name="shoulder" type="revolute">
    <origin xyz="0 0 0.1" rpy="0.3 -0.2 1.0"/>
    <parent link="base"/><child link="upper"/>
    <axis xyz="0 1 1"/>
    <limit lower="-1.5" upper="2.0" effort="30" velocity="4"/>
    <dynamics damping="0.3" friction="0.1"/>
  </joint>
  <link name="upper">
    <inertial><origin xyz="0 0 0.2" rpy="1.5707963267948966 0 0"/><mass value="1.5"/>{INERTIA}</inertial>
    <collision><origin rpy="0 1.5707963267948966 0"/><geometry><cylinder radius="0.03" length="0.4"/></geometry></collision>
    <collision><geometry><sphere radius="0.04"/></geometry></collision>
  </link>
  <joint name="elbow" type="continuous">
    <origin xyz="0 0 0.4" rpy="0 0 0"/>
    <parent link="upper"/><child link="fore"/>
    <axis xyz="1 0 0"/>
    <limit effort="10" velocity="6"/>
  </joint>
  <link name="fore">
    <inertial><mass value="0.8"/>{INERTIA}</inertial>
  </link>
  <joint name="slide" type="prismatic">
    <origin xyz="0 0.05 0.3" rpy="-0.4 0.7 0.1"/>
    <parent link="fore"/><child link="finger"/>
    <axis xyz="0 0 -2"/>
    <limit lower="0" upper="0.05" effort="5" velocity="0.2"/>
    <mimic joint="elbow" multiplier="0.01" offset="0.002"/>
  </joint>
  <link name="finger">
    <inertial><mass value="0.1"/><inertia ixx="1e-5" ixy="0" ixz="0" iyy="1e-5" iyz="0" izz="1e-5"/></inertial>
  </link>
  <joint name="tool_mount" type="fixed">
    <origin xyz="0 0 0.02" rpy="3.141592653589793 0 0"/>
    <parent link="finger"/><child link="tool_frame"/>
  </joint>
  <link name="tool_frame"/>
</robot>
"""


def assert_same_description(expected: ModelDescription, actual: ModelDescription) -> None:
    """Same tree, poses, axes, limits and inertials; a missing inertial equals a zero one."""
    assert actual.name == expected.name
    assert actual.root == expected.root
    assert actual.fixed_to_world == expected.fixed_to_world
    np.testing.assert_allclose(actual.M_H_root, expected.M_H_root, atol=1e-12)
    assert [link.name for link in actual.links] == [link.name for link in expected.links]
    assert [joint.name for joint in actual.joints] == [joint.name for joint in expected.joints]
    for mine, theirs in zip(expected.joints, actual.joints, strict=True):
        assert (theirs.type, theirs.parent, theirs.child) == (mine.type, mine.parent, mine.child)
        np.testing.assert_allclose(theirs.P_H_C, mine.P_H_C, atol=1e-12, err_msg=mine.name)
        np.testing.assert_allclose(theirs.axis, mine.axis, atol=1e-12, err_msg=mine.name)
        np.testing.assert_allclose(theirs.axis_point, mine.axis_point, atol=1e-12, err_msg=mine.name)
        assert theirs.limits == mine.limits, mine.name
        assert (theirs.damping, theirs.friction) == (mine.damping, mine.friction), mine.name
        assert theirs.mimic == mine.mimic, mine.name
    for mine, theirs in zip(expected.links, actual.links, strict=True):
        if mine.inertial is None or theirs.inertial is None:
            for inertial in (mine.inertial, theirs.inertial):
                assert inertial is None or (inertial.mass == 0.0 and not inertial.inertia.any()), mine.name
        else:
            assert theirs.inertial.mass == mine.inertial.mass, mine.name
            np.testing.assert_allclose(theirs.inertial.L_H_I, mine.inertial.L_H_I, atol=1e-12, err_msg=mine.name)
            np.testing.assert_allclose(theirs.inertial.inertia, mine.inertial.inertia, atol=1e-15, err_msg=mine.name)
        assert [c.name for c in theirs.collisions] == [c.name for c in mine.collisions]
        for ours, converted in zip(mine.collisions, theirs.collisions, strict=True):
            np.testing.assert_allclose(converted.L_H_G, ours.L_H_G, atol=1e-12)
            assert converted.geometry.type == ours.geometry.type
            assert converted.geometry.size == pytest.approx(ours.geometry.size)
            assert (converted.geometry.radius, converted.geometry.length) == (
                ours.geometry.radius,
                ours.geometry.length,
            )
            assert converted.geometry.path == ours.geometry.path
            assert converted.geometry.scale == pytest.approx(ours.geometry.scale)


@pytest.mark.parametrize(
    "rpy",
    [
        (0.0, 0.0, 0.0),
        (0.3, -0.2, 1.0),
        (math.pi, 0.0, 0.0),
        (-2.0, 1.2, 3.0),
        (0.4, math.pi / 2, 0.0),
        (0.0, -math.pi / 2, 0.7),
    ],
)
def test_rotation_to_rpy_inverts_rpy_to_rotation(rpy):
    rotation = rpy_to_rotation(rpy)
    np.testing.assert_allclose(rpy_to_rotation(rotation_to_rpy(rotation)), rotation, atol=1e-12)


def test_sdf_string_structure():
    root = etree.fromstring(urdfstring_to_sdfstring(ARM).encode())
    assert root.tag == "sdf" and root.get("version") == "1.7"
    model = root.find("model")
    assert model.get("name") == "arm"
    assert [link.get("name") for link in model.findall("link")] == ["base", "upper", "fore", "finger", "tool_frame"]
    anchor = model.find("joint[@name='anchor']")
    assert (anchor.get("type"), anchor.findtext("parent"), anchor.findtext("child")) == ("fixed", "world", "base")
    base_pose = [float(value) for value in model.findtext("link[@name='base']/pose").split()]
    np.testing.assert_allclose(base_pose, [0.1, 0.2, 0.3, 0.0, 0.0, 0.5], atol=1e-15)
    frame = model.find("link[@name='tool_frame']/inertial")
    assert float(frame.findtext("mass")) == 0.0
    elbow = model.find("joint[@name='elbow']/axis")
    assert elbow.find("limit/lower") is None and float(elbow.findtext("limit/effort")) == 10.0
    assert model.find("joint[@name='slide']/axis/mimic").get("joint") == "elbow"
    assert model.find("joint[@name='tool_mount']/axis") is None


def test_world_joint_keeps_its_name_and_a_free_urdf_has_none():
    assert etree.fromstring(urdfstring_to_sdfstring(ARM).encode()).find("model/joint").get("name") == "anchor"
    free = '<robot name="b"><link name="box"><inertial><mass value="1"/>' + INERTIA + "</inertial></link></robot>"
    assert etree.fromstring(urdfstring_to_sdfstring(free).encode()).find("model/joint") is None


def test_conversion_rejects_invalid_urdf_and_paths(tmp_path: pathlib.Path):
    with pytest.raises(ModelLoadError, match="unknown joint type"):
        urdfstring_to_sdfstring(ARM.replace('type="continuous"', 'type="hinge"'))
    with pytest.raises(ModelLoadError, match="URDF XML string"):
        urdfstring_to_sdfstring(str(tmp_path / "arm.urdf"))
    with pytest.raises(FileNotFoundError):
        urdffile_to_sdfstring(tmp_path / "missing.urdf")


def test_empty_world():
    world = get_empty_world()
    root = etree.fromstring(world.encode())
    assert root.tag == "sdf" and root.get("version") == "1.7"
    assert get_world_name_from_sdf(world) == "default"
    assert root.find("world/model") is None
    assert root.find("world/physics").get("type") == "dart"
    assert root.find("world/light").get("name") == "sun"


def test_model_and_world_names(tmp_path: pathlib.Path):
    world = get_empty_world().replace(
        "<light", '<model name="first"><link name="l"/></model><model name="second"><link name="l"/></model><light'
    )
    assert get_model_name_from_sdf(world) == "first"
    assert get_model_name_from_sdf(world, model_index=1) == "second"
    with pytest.raises(ModelLoadError, match="no model with index 2"):
        get_model_name_from_sdf(world, model_index=2)
    with pytest.raises(ModelLoadError, match="no world with index 1"):
        get_world_name_from_sdf(world, world_index=1)
    path = tmp_path / "arm.sdf"
    path.write_text(urdfstring_to_sdfstring(ARM))
    assert get_model_name_from_sdf(str(path)) == "arm"
    with pytest.raises(ModelLoadError, match="not an SDF document"):
        get_model_name_from_sdf(ARM)


@pytest.fixture
def resource_path(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> pathlib.Path:
    for variable in ("SDF_PATH", "IGN_GAZEBO_RESOURCE_PATH", "GAZEBO_MODEL_PATH"):
        monkeypatch.delenv(variable, raising=False)
    models = tmp_path / "models"
    (models / "plain").mkdir(parents=True)
    (models / "plain" / "model.sdf").write_text(get_empty_world())
    (models / "configured").mkdir()
    (models / "configured" / "model.config").write_text(
        '<model><name>c</name><sdf version="1.7">robot.sdf</sdf></model>'
    )
    (models / "configured" / "robot.sdf").write_text(get_empty_world())
    (models / "arena.sdf").write_text(get_empty_world())
    (models / "empty").mkdir()
    monkeypatch.setenv("GZ_SIM_RESOURCE_PATH", str(models))
    return models


def test_find_sdf_file(resource_path: pathlib.Path, tmp_path: pathlib.Path):
    assert find_sdf_file("plain") == str(resource_path / "plain" / "model.sdf")
    assert find_sdf_file("model://plain") == str(resource_path / "plain" / "model.sdf")
    assert find_sdf_file("configured") == str(resource_path / "configured" / "robot.sdf")
    assert find_sdf_file("arena.sdf") == str(resource_path / "arena.sdf")
    assert find_sdf_file("plain/model.sdf") == str(resource_path / "plain" / "model.sdf")
    assert find_sdf_file(str(resource_path / "arena.sdf")) == str(resource_path / "arena.sdf")
    for missing in ("nowhere", "empty", "model://nowhere"):
        with pytest.raises(FileNotFoundError, match="GZ_SIM_RESOURCE_PATH"):
            find_sdf_file(missing)


def test_get_sdf_string(resource_path: pathlib.Path, tmp_path: pathlib.Path):
    assert get_sdf_string("arena.sdf") == get_empty_world()
    assert get_sdf_string(get_empty_world()) == get_empty_world()
    urdf = tmp_path / "arm.urdf"
    urdf.write_text(ARM)
    assert get_sdf_string(str(urdf)) == urdffile_to_sdfstring(urdf)
    assert get_sdf_string(ARM) == urdfstring_to_sdfstring(ARM)
    with pytest.raises(FileNotFoundError):
        get_sdf_string("nowhere.sdf")
    with pytest.raises(ModelLoadError):
        get_sdf_string('<sdf version="1.7"><model name="m"><link name="l"><pose>0 0</pose></link></model></sdf>')


def test_sdf_string_valid():
    assert sdf_string_valid(get_empty_world())
    assert sdf_string_valid(urdfstring_to_sdfstring(ARM))
    assert not sdf_string_valid('<sdf version="1.7"><model name="m"><link name="l"></model></sdf>')
    assert not sdf_string_valid(ARM)
    assert not sdf_string_valid("<sdf")


def round_trip(description: ModelDescription, sdf_string: str) -> None:
    assert_same_description(description, parse_sdf(sdf_string))


def test_round_trip_of_a_hand_written_arm():
    description = parse_urdf(ARM)
    assert description.fixed_to_world and description.root == "base"
    round_trip(description, urdfstring_to_sdfstring(ARM))


def test_round_trip_of_a_moving_joint_from_world():
    text = (
        '<robot name="pendulum"><link name="world"/>'
        '<joint name="hinge" type="revolute"><origin xyz="0 0 2" rpy="0.2 0 0"/><parent link="world"/>'
        '<child link="bob"/><axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="1" velocity="2"/></joint>'
        '<link name="bob"><inertial><origin xyz="0 0 -1"/><mass value="1"/>' + INERTIA + "</inertial></link></robot>"
    )
    round_trip(parse_urdf(text), urdfstring_to_sdfstring(text))


def test_round_trip_with_meshes(tmp_path: pathlib.Path):
    (tmp_path / "meshes").mkdir()
    (tmp_path / "meshes" / "shell.stl").write_bytes(b"solid s\nendsolid s\n")
    text = ARM.replace(
        '<collision><geometry><sphere radius="0.04"/></geometry></collision>',
        '<collision><geometry><mesh filename="meshes/shell.stl" scale="0.001 0.001 0.002"/></geometry></collision>',
    )
    path = tmp_path / "arm.urdf"
    path.write_text(text)
    description = parse_urdf(path)
    assert description.link("upper").collisions[1].geometry.path == str(tmp_path / "meshes" / "shell.stl")
    round_trip(description, urdffile_to_sdfstring(path))


@pytest.mark.parametrize("name", sorted(path.name for path in ASSETS.glob("*.urdf")))
def test_round_trip_of_the_test_assets(name: str):
    round_trip(parse_urdf(ASSETS / name), urdffile_to_sdfstring(ASSETS / name))


def test_round_trip_of_icub():
    icub_models = pytest.importorskip("icub_models")
    path = str(icub_models.get_model_file("iCubGazeboV2_5"))
    round_trip(parse_urdf(path), urdffile_to_sdfstring(path))


def test_parse_model_and_parse_world_dispatch_on_the_root_tag():
    assert parse_model(urdfstring_to_sdfstring(ARM)).name == "arm"
    assert parse_model(ARM).name == "arm"
    world = parse_world(get_empty_world())
    assert (world.name, world.models) == ("default", [])
