"""Value types, enums, exceptions and module helpers of the object API (no physics)."""

from __future__ import annotations

import logging
import os

import numpy as np
import pytest

from jaxsim_like import api
from jaxsim_like.api.utils import log

from .helpers import ARM, FREE_BOX


def test_enums_have_scenario_values():
    assert [int(api.JointControlMode[name]) for name in (
        "invalid", "idle", "force", "velocity", "velocity_follower_dart", "position", "position_interpolated")] == list(range(7))
    assert [int(api.JointType[name]) for name in ("invalid", "fixed", "revolute", "prismatic", "ball")] == list(range(5))
    assert api.JointControlMode_position == api.JointControlMode.position == 5
    assert api.PhysicsEngine_dart == 0 and api.PhysicsEngine.implicit_euler is api.PhysicsEngine.dart
    assert api.Verbosity_debug == 4 and api.JointType_prismatic == 3


def test_pose():
    assert api.Pose.identity() == api.Pose_identity() == api.Pose([0, 0, 0], [1, 0, 0, 0])
    pose = api.Pose([1, 2, 3], [0, 0, 0, 1])
    assert pose.position == (1, 2, 3) and pose.orientation == (0, 0, 0, 1)
    assert np.allclose(pose.transform[:3, :3], np.diag([-1, -1, 1]))
    back = api.Pose.from_transform(pose.transform)
    assert np.allclose(back.position, pose.position) and np.allclose(back.orientation, pose.orientation)
    with pytest.raises(ValueError, match="position must have 3 elements"):
        api.Pose([1, 2])
    pair = api.PosePair(pose, api.Pose.identity())
    assert pair.first == pose and pair.second == api.Pose.identity()


def test_pid_limits_and_contacts():
    pid = api.PID(10, 0.5, 0.1)
    assert (pid.p, pid.i, pid.d, pid.cmd_offset) == (10, 0.5, 0.1, 0)
    assert pid.i_min == pid.cmd_min == -np.inf and pid.i_max == pid.cmd_max == np.inf
    assert api.PID.from_array(api.PID(1, 2, 3, i_min=-1, i_max=1, cmd_min=-5, cmd_max=5, cmd_offset=0.5).as_array()) == api.PID(
        1, 2, 3, -1, 1, -5, 5, 0.5
    )
    with pytest.raises(ValueError, match="NaN"):
        api.PID(float("nan"))
    assert api.Limit(-1, 1).max == 1
    limit = api.JointLimit([-1, -2], [1, 2])
    assert limit.min == (-1, -2) and limit.max == (1, 2)
    with pytest.raises(ValueError, match="same size"):
        api.JointLimit([0], [1, 2])
    contact = api.Contact("a::b", "c::d")
    assert contact.points == () and contact.body_b == "c::d"


def test_exception_messages():
    assert str(api.LinkNotFound("foot")) == "[foot] Link does not exist"
    assert str(api.JointNotFound("knee")) == "[knee] Joint does not exist"
    assert str(api.ModelNotFound("robot")) == "[robot] Model does not exist"
    assert str(api.DOFMismatch(1, 3, "knee")) == "[knee] Nr of DoFs joint=1 data=3"
    assert str(api.JointError("bad", "knee")) == "[knee] bad"
    assert str(api.NotImplementedError("gui")) == "Symbol not implemented: gui"
    for error in (api.LinkNotFound, api.JointNotFound, api.ModelNotFound, api.DOFMismatch, api.ModelError, api.LinkError):
        assert issubclass(error, RuntimeError)


def test_normalize_and_denormalize_broadcast():
    low, high = np.array([-1.0, 0.0, 2.0]), np.array([1.0, 10.0, 2.0])
    values = np.array([0.5, 2.5, 7.0])
    normalized = api.normalize(values, low, high)
    assert np.allclose(normalized, [0.5, -0.5, 7.0])  # unchanged where low == high
    assert np.allclose(api.denormalize(normalized, low, high), values)
    assert np.allclose(api.normalize([0.0, 5.0], 0.0, 10.0), [-1.0, 0.0])  # scalar limits broadcast
    assert np.allclose(api.denormalize(1.0, [0.0, -2.0], [4.0, 2.0]), [4.0, 2.0])
    with pytest.raises(ValueError, match="broadcast"):
        api.normalize([1.0, 2.0, 3.0], [0.0, 0.0], [1.0, 1.0])


def test_random_string_and_verbosity():
    first, second = api.get_random_string(16), api.get_random_string(16)
    assert len(first) == 16 and first.isalnum() and first != second
    assert api.get_random_string(0) == ""
    api.set_verbosity(api.Verbosity_debug)
    assert log.level == logging.DEBUG
    api.set_verbosity(api.Verbosity.suppress_all)
    assert log.level > logging.CRITICAL
    api.set_verbosity()
    assert log.level == logging.WARNING
    with pytest.raises(ValueError, match="unknown verbosity"):
        api.set_verbosity(9)


def test_sdf_helpers_with_scenario_argument_names():
    assert api.get_model_name_from_sdf(str(FREE_BOX)) == "free_box"  # a URDF, as sdformat converts it
    assert api.get_model_name_from_sdf(api.get_ground_plane()) == "ground_plane"
    assert api.get_world_name_from_sdf(api.get_empty_world()) == "default"
    assert api.sdf_string_valid(api.get_sdf_string(file_name=str(ARM)))
    assert api.urdfstring_to_sdfstring(ARM.read_text()).lstrip().startswith("<?xml")
    assert api.get_install_prefix() == ""
    world = object()
    assert api.ToGazeboWorld(world) is world and api.ToGazeboModel(world) is world


def test_fuel_reads_the_local_cache(tmp_path, monkeypatch):
    folder = tmp_path / "fuel.gazebosim.org" / "openrobotics" / "models" / "ground plane" / "2"
    folder.mkdir(parents=True)
    (folder / "model.sdf").write_text(api.get_ground_plane())
    monkeypatch.setenv("GZ_FUEL_CACHE_PATH", str(tmp_path))
    path = api.get_model_file_from_fuel("https://fuel.gazebosim.org/1.0/OpenRobotics/models/Ground Plane", use_cache=True)
    assert path == os.path.join(str(folder), "model.sdf")
    with pytest.raises(api.NotImplementedError, match="nothing is downloaded"):
        api.get_model_file_from_fuel("https://fuel.gazebosim.org/1.0/OpenRobotics/models/Ground Plane/3")
    with pytest.raises(ValueError, match="not a Fuel model URI"):
        api.get_model_file_from_fuel("ground_plane")
