"""URDF parser: frames, inertials, joints, world roots, meshes and a real robot against Pinocchio."""

from __future__ import annotations

import math
import pathlib
import warnings

import numpy as np
import pytest

from jaxsim_like.parsers import ModelLoadError, parse_model, parse_urdf
from jaxsim_like.parsers.urdf import rpy_to_rotation

INERTIA = '<inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/>'


def massive(name: str, mass: float = 1.0) -> str:
    return f'<link name="{name}"><inertial><mass value="{mass}"/>{INERTIA}</inertial></link>'


def robot(*parts: str, name: str = "r") -> str:
    return f'<robot name="{name}">' + "".join(parts) + "</robot>"


def revolute(name: str, parent: str, child: str, body: str = "", kind: str = "revolute") -> str:
    limit = '<limit lower="-1" upper="2" effort="3" velocity="4"/>' if "<limit" not in body else ""
    return f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>{body}{limit}</joint>'


def test_rpy_is_fixed_axis_roll_pitch_yaw():
    half = math.pi / 2
    np.testing.assert_allclose(rpy_to_rotation((0, 0, half)), [[0, -1, 0], [1, 0, 0], [0, 0, 1]], atol=1e-15)
    np.testing.assert_allclose(rpy_to_rotation((0, half, 0)), [[0, 0, 1], [0, 1, 0], [-1, 0, 0]], atol=1e-15)
    # Rz(90) Rx(90): the roll applies first about the fixed x axis, then the yaw about z.
    np.testing.assert_allclose(rpy_to_rotation((half, 0, half)), [[0, 0, 1], [1, 0, 0], [0, 1, 0]], atol=1e-15)


def test_inertial_origin_and_inertia_matrix():
    text = robot(
        '<link name="base"><inertial>'
        '<origin xyz="0.1 -0.2 0.3" rpy="1.5707963267948966 0 1.5707963267948966"/>'
        '<mass value="2.5"/>'
        '<inertia ixx="0.4" ixy="0.01" ixz="-0.02" iyy="0.5" iyz="0.03" izz="0.6"/>'
        "</inertial></link>"
    )
    inertial = parse_urdf(text).link("base").inertial
    assert inertial.mass == 2.5
    expected = np.eye(4)
    expected[:3, :3] = [[0, 0, 1], [1, 0, 0], [0, 1, 0]]
    expected[:3, 3] = [0.1, -0.2, 0.3]
    np.testing.assert_allclose(inertial.L_H_I, expected, atol=1e-15)
    np.testing.assert_array_equal(inertial.inertia, [[0.4, 0.01, -0.02], [0.01, 0.5, 0.03], [-0.02, 0.03, 0.6]])


def test_joint_origin_is_child_pose_in_parent_and_axis_is_normalized():
    body = '<origin xyz="1 2 3" rpy="0 1.5707963267948966 0"/><axis xyz="0 3 4"/>'
    description = parse_urdf(robot(massive("base"), massive("arm"), revolute("j", "base", "arm", body)))
    joint = description.joint("j")
    expected = np.eye(4)
    expected[:3, :3] = [[0, 0, 1], [0, 1, 0], [-1, 0, 0]]
    expected[:3, 3] = [1, 2, 3]
    np.testing.assert_allclose(joint.P_H_C, expected, atol=1e-15)
    np.testing.assert_allclose(joint.axis, [0.0, 0.6, 0.8])
    np.testing.assert_array_equal(joint.axis_point, np.zeros(3))
    assert (joint.parent, joint.child, description.root) == ("base", "arm", "base")


def test_defaults_without_origin_and_axis():
    joint = parse_urdf(robot(massive("base"), massive("arm"), revolute("j", "base", "arm"))).joint("j")
    np.testing.assert_array_equal(joint.P_H_C, np.eye(4))
    np.testing.assert_array_equal(joint.axis, [1.0, 0.0, 0.0])


def test_limits_dynamics_and_mimic():
    body = (
        '<limit lower="-0.5" upper="1.5" effort="20" velocity="3"/>'
        '<dynamics damping="0.7" friction="0.2"/>'
        '<mimic joint="leader" multiplier="-2" offset="0.1"/>'
    )
    text = robot(
        massive("base"),
        massive("a"),
        massive("b"),
        revolute("leader", "base", "a"),
        revolute("follower", "a", "b", body, kind="prismatic"),
    )
    joint = parse_urdf(text).joint("follower")
    assert joint.type == "prismatic"
    limits = joint.limits
    assert (limits.lower, limits.upper, limits.effort, limits.velocity) == (-0.5, 1.5, 20.0, 3.0)
    assert (joint.damping, joint.friction) == (0.7, 0.2)
    assert (joint.mimic.joint, joint.mimic.multiplier, joint.mimic.offset) == ("leader", -2.0, 0.1)


def test_mimic_defaults():
    body = '<mimic joint="leader"/>'
    text = robot(
        massive("base"), massive("a"), massive("b"), revolute("leader", "base", "a"), revolute("f", "a", "b", body)
    )
    mimic = parse_urdf(text).joint("f").mimic
    assert (mimic.multiplier, mimic.offset) == (1.0, 0.0)


def test_continuous_joint_has_infinite_position_limits_but_keeps_effort_and_velocity():
    limited = '<limit lower="-1" upper="1" effort="5" velocity="6"/>'
    text = robot(
        massive("base"),
        massive("wheel"),
        massive("rotor"),
        revolute("axle", "base", "wheel", limited, kind="continuous"),
        '<joint name="spin" type="continuous"><parent link="base"/><child link="rotor"/></joint>',
    )
    description = parse_urdf(text)
    axle = description.joint("axle").limits
    assert (axle.lower, axle.upper, axle.effort, axle.velocity) == (-math.inf, math.inf, 5.0, 6.0)
    spin = description.joint("spin").limits
    assert (spin.lower, spin.upper, spin.effort, spin.velocity) == (-math.inf, math.inf, math.inf, math.inf)


def test_infinite_position_limits_are_allowed_in_limit():
    body = '<limit lower="-inf" upper="inf" effort="1" velocity="1"/>'
    joint = parse_urdf(robot(massive("base"), massive("arm"), revolute("j", "base", "arm", body))).joint("j")
    assert (joint.limits.lower, joint.limits.upper) == (-math.inf, math.inf)


def test_world_root_welds_the_child():
    text = robot(
        '<link name="world"/>',
        massive("base"),
        massive("arm"),
        '<joint name="weld" type="fixed"><origin xyz="0 0 1" rpy="0 0 1.5707963267948966"/>'
        '<parent link="world"/><child link="base"/></joint>',
        revolute("j", "base", "arm"),
    )
    description = parse_urdf(text)
    assert description.fixed_to_world
    assert description.root == "base"
    assert [link.name for link in description.links] == ["base", "arm"]
    assert [joint.name for joint in description.joints] == ["j"]
    expected = np.eye(4)
    expected[:3, :3] = [[0, -1, 0], [1, 0, 0], [0, 0, 1]]
    expected[2, 3] = 1.0
    np.testing.assert_allclose(description.M_H_root, expected, atol=1e-15)


def test_floating_joint_from_world_is_a_free_base_at_its_origin():
    text = robot(
        '<link name="world"/>',
        massive("base"),
        '<joint name="free" type="floating"><origin xyz="0 0 0.5"/><parent link="world"/><child link="base"/></joint>',
    )
    description = parse_urdf(text)
    assert not description.fixed_to_world
    assert (description.root, description.joints) == ("base", [])
    np.testing.assert_allclose(description.M_H_root[:3, 3], [0, 0, 0.5])


def test_moving_joint_from_world_keeps_world_as_fixed_massless_root():
    text = robot('<link name="world"/>', massive("pendulum"), revolute("hinge", "world", "pendulum"))
    description = parse_urdf(text)
    assert description.fixed_to_world
    assert description.root == "world"
    assert description.link("world").inertial is None
    assert description.joint("hinge").parent == "world"


def test_world_without_root_joint_or_as_child_is_rejected():
    with pytest.raises(ModelLoadError, match="link 'world' has no joint"):
        parse_urdf(robot('<link name="world"/>', massive("base")))
    with pytest.raises(ModelLoadError, match="must be the root"):
        parse_urdf(robot('<link name="world"/>', massive("base"), revolute("j", "base", "world")))


def test_floating_and_planar_joints_are_parsed_then_rejected_inside_the_tree():
    text = robot(
        massive("base"),
        massive("puck"),
        '<joint name="slide" type="planar"><parent link="base"/><child link="puck"/></joint>',
    )
    with pytest.raises(ModelLoadError, match="planar joint 'slide'") as error:
        parse_urdf(text)
    assert error.value.line == 1 and error.value.element == '<joint name="slide">'


def test_collisions_boxes_spheres_cylinders_and_meshes(tmp_path: pathlib.Path):
    (tmp_path / "meshes").mkdir()
    (tmp_path / "meshes" / "part.stl").write_bytes(b"solid x\nendsolid x\n")
    text = robot(
        '<link name="base"><inertial><mass value="1"/>' + INERTIA + "</inertial>"
        '<visual><geometry><box size="9 9 9"/></geometry><material name="red"><color rgba="1 0 0 1"/></material></visual>'
        '<collision name="hull"><origin xyz="0 0 0.1"/><geometry><box size="0.1 0.2 0.3"/></geometry></collision>'
        '<collision><geometry><sphere radius="0.05"/></geometry></collision>'
        '<collision><geometry><cylinder radius="0.02" length="0.4"/></geometry></collision>'
        '<collision><geometry><mesh filename="meshes/part.stl" scale="0.001 0.002 0.003"/></geometry></collision>'
        "</link>"
    )
    path = tmp_path / "robot.urdf"
    path.write_text(text)
    collisions = parse_urdf(path).link("base").collisions
    assert [collision.geometry.type for collision in collisions] == ["box", "sphere", "cylinder", "mesh"]
    assert collisions[0].name == "hull" and collisions[0].geometry.size == (0.1, 0.2, 0.3)
    np.testing.assert_allclose(collisions[0].L_H_G[:3, 3], [0, 0, 0.1])
    assert collisions[1].geometry.radius == 0.05
    assert (collisions[2].geometry.radius, collisions[2].geometry.length) == (0.02, 0.4)
    mesh = collisions[3].geometry
    assert mesh.uri == "meshes/part.stl"
    assert mesh.path == str(tmp_path / "meshes" / "part.stl")
    assert mesh.scale == (0.001, 0.002, 0.003)
    assert len({collision.name for collision in collisions}) == 4
    assert collisions[0].location.line == 1 and collisions[0].location.file == str(path)


def test_package_uri_resolved_through_ros_package_path(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch):
    mesh = tmp_path / "workspace" / "my_robot_description" / "meshes" / "arm.stl"
    mesh.parent.mkdir(parents=True)
    mesh.write_bytes(b"solid x\nendsolid x\n")
    monkeypatch.setenv("ROS_PACKAGE_PATH", str(tmp_path / "workspace"))
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)
    text = robot(
        '<link name="base"><inertial><mass value="1"/>' + INERTIA + "</inertial>"
        '<collision><geometry><mesh filename="package://my_robot_description/meshes/arm.stl"/></geometry></collision>'
        '<collision><geometry><mesh filename="package://my_robot_description/meshes/missing.stl"/></geometry></collision>'
        "</link>"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found, missing = (collision.geometry for collision in parse_urdf(text).link("base").collisions)
    assert found.path == str(mesh)
    assert found.uri == "package://my_robot_description/meshes/arm.stl"
    assert missing.path is None


def test_extensions_transmissions_and_ros2_control_are_ignored():
    text = robot(
        '<material name="grey"><color rgba="0.5 0.5 0.5 1"/></material>',
        massive("base"),
        massive("arm"),
        revolute("j", "base", "arm", "<calibration rising='0.1'/><safety_controller k_velocity='1'/>"),
        '<gazebo reference="arm"><mu1>0.5</mu1><sensor type="imu" name="imu"/></gazebo>',
        '<transmission name="t"><type>transmission_interface/SimpleTransmission</type>'
        '<joint name="j"><hardwareInterface>EffortJointInterface</hardwareInterface></joint></transmission>',
        '<ros2_control name="hw" type="system"><hardware><plugin>mock</plugin></hardware></ros2_control>',
    )
    description = parse_urdf(text)
    assert [link.name for link in description.links] == ["base", "arm"]
    assert [joint.name for joint in description.joints] == ["j"]


def test_massless_fixed_leaves_are_frames_and_load():
    text = robot(
        massive("base"),
        '<link name="imu_frame"/>',
        '<joint name="imu" type="fixed"><parent link="base"/><child link="imu_frame"/></joint>',
    )
    description = parse_urdf(text)
    assert description.link("imu_frame").inertial is None


def test_massless_moving_link_with_a_massive_child_loads():
    text = robot(
        massive("base"),
        '<link name="virtual"/>',
        massive("hand"),
        revolute("wrist_pitch", "base", "virtual"),
        revolute("wrist_yaw", "virtual", "hand"),
    )
    assert parse_urdf(text).link("virtual").inertial is None


def test_errors_point_at_the_offending_element():
    text = "\n".join(
        [
            '<robot name="r">',
            massive("base"),
            massive("arm"),
            '<joint name="j" type="revolute"><parent link="base"/><child link="arm"/>',
            '  <origin xyz="0 0 x"/>',
            '<limit effort="1" velocity="1"/></joint>',
            "</robot>",
        ]
    )
    with pytest.raises(ModelLoadError) as error:
        parse_urdf(text)
    assert (error.value.file, error.value.line, error.value.element) == (None, 5, "<origin>")
    assert "'x' is not a number" in str(error.value)


def test_parse_model_dispatches_urdf_and_accepts_paths(tmp_path: pathlib.Path):
    path = tmp_path / "r.urdf"
    path.write_text(robot(massive("base")))
    assert parse_model(path).name == "r"
    assert parse_model(str(path)).source == str(path)
    assert parse_model(robot(massive("base"))).source is None


@pytest.fixture(scope="module")
def icub_file() -> str:
    icub_models = pytest.importorskip("icub_models")
    return str(icub_models.get_model_file("iCubGazeboV2_5"))


def _link_poses(description) -> dict[str, np.ndarray]:
    poses = {description.root: description.M_H_root}
    pending = list(description.joints)
    while pending:
        joint = next(joint for joint in pending if joint.parent in poses)
        poses[joint.child] = poses[joint.parent] @ joint.P_H_C
        pending.remove(joint)
    return poses


def test_icub_matches_pinocchio(icub_file: str):
    pinocchio = pytest.importorskip("pinocchio")
    description = parse_urdf(icub_file)
    assert (len(description.links), len(description.joints)) == (213, 212)
    assert description.root == "root_link" and not description.fixed_to_world
    moving = [joint for joint in description.joints if joint.type != "fixed"]
    model = pinocchio.buildModelFromUrdf(icub_file)
    assert len(moving) == model.nq == 32
    masses = [link.inertial.mass for link in description.links if link.inertial is not None]
    pin_mass = sum(model.inertias[index].mass for index in range(model.njoints))
    assert sum(masses) == pytest.approx(pin_mass, rel=1e-12)

    data = model.createData()
    q = pinocchio.neutral(model)
    pinocchio.forwardKinematics(model, data, q)
    pinocchio.updateFramePlacements(model, data)
    poses = _link_poses(description)
    for link in description.links:
        frame = model.getFrameId(link.name, pinocchio.BODY)
        np.testing.assert_allclose(poses[link.name], data.oMf[frame].homogeneous, atol=1e-9, err_msg=link.name)
    com = sum(
        link.inertial.mass * (poses[link.name] @ link.inertial.L_H_I)[:3, 3]
        for link in description.links
        if link.inertial is not None
    ) / sum(masses)
    # Pinocchio's centerOfMass skips the universe, where a fixed base lumps root_link: sum all.
    pin_com = (
        sum(
            model.inertias[index].mass * data.oMi[index].act(model.inertias[index].lever)
            for index in range(model.njoints)
        )
        / pin_mass
    )
    np.testing.assert_allclose(com, pin_com, atol=1e-9)


def test_icub_meshes_resolve_next_to_the_description(icub_file: str):
    description = parse_urdf(icub_file)
    meshes = [c.geometry for link in description.links for c in link.collisions if c.geometry.type == "mesh"]
    assert meshes and all(mesh.path is not None and mesh.uri.startswith("package://iCub/") for mesh in meshes)
