"""World: model insertion (files, strings, poses, names), removal and resets applied by the next
run, gravity, physics settings and plugins (ScenarIO's test_world and test_model behaviour)."""

from __future__ import annotations

import numpy as np
import pytest

from jaxsim_like import api

from .helpers import ASSETS, FREE_BOX, SPHERE, approx


def test_insert_models_from_files_and_strings(make_world, caplog):
    """World.insert_model: "Returns: True for success, false otherwise" (a duplicate name, an
    empty or missing path, a malformed description); World.get_model: "The model if it is part
    of the world, None otherwise"."""
    _, world = make_world()
    urdf = FREE_BOX.read_text()
    assert world.insert_model(str(FREE_BOX))
    assert world.model_names() == ("free_box",)
    box = world.get_model("free_box")
    assert box.name() == api.get_model_name_from_sdf(str(FREE_BOX))
    assert approx(box.base_position(), [0, 0, 0], 0) and approx(box.base_orientation(), [1, 0, 0, 0], 0)

    assert not world.insert_model(str(FREE_BOX))
    assert "[free_box] a model with this name is already in world 'default'" in caplog.records[-1].getMessage()
    assert not world.insert_model("")
    assert "empty model file name" in caplog.records[-1].getMessage()
    assert not world.insert_model("/no/such/robot.urdf")
    assert "not found" in caplog.records[-1].getMessage()
    assert not world.insert_model_from_string("<robot name='broken'>")
    assert "malformed XML" in caplog.records[-1].getMessage()
    assert world.model_names() == ("free_box",)

    pose = api.Pose([1, 1, 0], [0, 0, 0, 1])
    assert world.insert_model(str(FREE_BOX), pose, "other_cube")
    assert world.insert_model_from_string(urdf, api.Pose([1, 0, 0], [0, 0, 0, 1]), "cube3")
    assert world.insert_model_from_string(api.urdfstring_to_sdfstring(urdf), api.Pose([2, 0, 0], [0, 0, 0, 1]), "cube4")
    assert world.insert_model_from_file(ASSETS / "free_box.sdf", (np.array([0, 2, 0.5]), np.array([1, 0, 0, 0])), "cube5")
    assert world.model_names() == ("free_box", "other_cube", "cube3", "cube4", "cube5")
    other = world.get_model("other_cube")
    assert other != box and other == world.get_model("other_cube")
    assert approx(other.base_position(), pose.position, 1e-12) and approx(other.base_orientation(), pose.orientation, 1e-12)
    assert approx(world.get_model("cube4").base_position(), [2, 0, 0], 1e-12)
    assert approx(world.get_model("cube5").get_link("box").position(), [0, 2, 0.5], 1e-12)
    assert [m.name() for m in world.models(["cube4", "cube3"])] == ["cube4", "cube3"]
    assert world.get_model("robot") is None  # "The model if it is part of the world, None otherwise."
    assert "[robot] Model does not exist" in caplog.records[-1].getMessage()
    with pytest.raises(api.ModelNotFound, match=r"\[robot\] Model does not exist"):
        world.models(["robot"])


def test_insert_a_model_from_the_resource_path(make_world, monkeypatch):
    monkeypatch.setenv("GZ_SIM_RESOURCE_PATH", str(ASSETS / "models"))
    _, world = make_world()
    assert world.insert_model("model://sphere", api.Pose([0, 0, 1]), "ball_1") and world.insert_model("sphere")
    assert world.model_names() == ("ball_1", "sphere") and approx(world.get_model("ball_1").base_position(), [0, 0, 1], 0)


def test_removal_is_applied_by_the_next_run(make_world):
    sim, world = make_world((FREE_BOX, None, "box"), ground=True)
    box = world.get_model("box")
    assert world.remove_model("box") and world.remove_model("ground_plane")
    assert world.model_names() == ("ground_plane", "box") and box.valid()
    assert sim.run(paused=True)
    assert world.model_names() == () and world.time() == 0.0
    assert not box.valid()
    with pytest.raises(api.ModelNotFound):
        box.base_position()
    assert not world.remove_model("box")
    assert world.insert_model(str(FREE_BOX), None, "box")
    assert world.get_model("box").valid() and not box.valid()  # a new model, not the old handle's


def test_resets_are_visible_after_a_run(make_world):
    sim, world = make_world((FREE_BOX, api.Pose([0, 0, 1]), "box"))
    box = world.get_model("box")
    assert box.reset_base_pose([5, 5, 1], [0, 1, 0, 0])
    assert box.reset_base_world_velocity([0, 0, 5.0], [0.1, 0.5, -3.0])
    assert approx(box.base_position(), [0, 0, 1], 0) and approx(box.base_world_linear_velocity(), [0, 0, 0], 0)
    assert sim.run(paused=True) and world.time() == 0.0
    assert approx(box.base_position(), [5, 5, 1], 1e-12) and approx(box.base_orientation(), [0, 1, 0, 0], 1e-12)
    assert approx(box.base_world_linear_velocity(), [0, 0, 5], 1e-12)
    assert approx(box.base_world_angular_velocity(), [0.1, 0.5, -3.0], 1e-12)
    assert approx(box.get_link("box").world_angular_velocity(), [0.1, 0.5, -3.0], 1e-12)
    R = api.Pose([0, 0, 0], [0, 1, 0, 0]).transform[:3, :3]
    assert approx(box.base_body_angular_velocity(), R.T @ [0.1, 0.5, -3.0], 1e-12)
    assert sim.run()
    assert box.base_world_linear_velocity()[2] == pytest.approx(5.0 - 9.8 * 0.001)
    assert box.reset_base_position([0, 0, 3]) and box.reset_base_orientation([1, 0, 0, 0])
    assert sim.run(paused=True) and approx(box.base_position(), [0, 0, 3], 1e-12)
    assert not box.reset_base_orientation([0, 0, 0, 0])


def test_gravity_and_physics_engines(make_world):
    sim, world = make_world((SPHERE, api.Pose([0, 0, 10]), "sphere"))
    assert approx(world.gravity(), [0, 0, -9.8], 1e-12)
    assert world.set_gravity([0, 0, -1.0])
    sphere = world.get_model("sphere")
    for _ in range(100):
        sim.run()
    # Semi-implicit Euler: z = z0 - g dt^2 n (n + 1) / 2.
    assert sphere.base_position()[2] == pytest.approx(10 - 1.0 * 0.001**2 * 100 * 101 / 2, abs=1e-12)
    assert not world.set_gravity([0, -9.8])
    assert not world.set_physics_engine(7)
    assert world.set_physics_engine(api.PhysicsEngine.rk4)
    assert sphere.reset_base_pose([0, 0, 10]) and sphere.reset_base_world_velocity()
    for _ in range(100):
        sim.run()
    assert sphere.base_position()[2] == pytest.approx(10 - 0.5 * 1.0 * 0.1**2, abs=1e-12)  # exact with rk4


def test_world_plugins_run_before_every_physics_step(make_world):
    sim, world = make_world((SPHERE, api.Pose([0, 0, 10]), "sphere"), steps_per_run=3)
    calls = []
    assert world.insert_world_plugin(lambda w: calls.append(("world", w.time())))
    sphere = world.get_model("sphere")
    assert sphere.insert_model_plugin(lambda m: calls.append((m.name(), m.base_position()[2])))
    assert api.insert_plugin_to_gazebo_entity(sphere.get_link("ball"), lambda link: link.apply_world_force([0, 0, 9.8]))
    sim.run(paused=True)
    assert calls == []
    sim.run()
    assert [c[0] for c in calls] == ["world", "sphere"] * 3
    assert [c[1] for c in calls[::2]] == pytest.approx([0.0, 0.001, 0.002])
    assert sphere.base_position()[2] == pytest.approx(10.0, abs=1e-12)  # the link plugin holds it against gravity
