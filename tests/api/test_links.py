"""Links: wrenches applied for a duration, velocities against finite differences of poses, and
Gazebo Sim's link queries (ScenarIO's test_external_wrench and test_link_velocities behaviour)."""

from __future__ import annotations

import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like import api

from .helpers import ARM, FREE_BOX, SPHERE, approx


def _angular_velocity(R_before: np.ndarray, R_after: np.ndarray, dt: float) -> np.ndarray:
    """World angular velocity of the rotation between two orientations ``dt`` apart (central difference)."""
    omega = (R_after - R_before) / dt @ ((R_after + R_before) / 2).T
    return np.array([omega[2, 1] - omega[1, 2], omega[0, 2] - omega[2, 0], omega[1, 0] - omega[0, 1]]) / 2


def test_a_world_force_acts_for_exactly_its_duration(make_world):
    sim, world = make_world((SPHERE, api.Pose([0, 0, 1.0], [1, 0, 0, 0]), "sphere"))
    sphere = world.get_model("sphere")
    link = sphere.get_link("ball")
    height = link.position()[2]
    assert link.apply_world_force(-np.array(world.gravity()) * sphere.total_mass(), duration=0.5)
    for _ in range(500):
        assert sim.run()
        assert link.position()[2] == pytest.approx(height, abs=1e-12)
    sim.run()
    assert link.world_linear_velocity()[2] == pytest.approx(-9.8 * sim.step_size(), abs=1e-12)
    for _ in range(499):
        sim.run()
        assert link.position()[2] < height
    assert not link.apply_world_force([0, 0, 1], duration=-1)


def test_a_model_inserted_away_from_the_origin_records_its_link_origins_once(make_world):
    """Before any run, the link origins that contact wrenches are taken about are the links' positions
    (the base position counted once)."""
    sim, world = make_world((FREE_BOX, api.Pose([3, -2, 1], [1, 0, 0, 0]), "box"))
    link = world.get_model("box").get_link("box")
    assert approx(link._observation().step_origins[link._index], link.position(), 1e-12)


def test_link_velocities_agree_with_finite_differences_of_poses(make_world):
    sim, world = make_world((ARM, None, "arm7"), (FREE_BOX, api.Pose([3, 0, 1]), "box"))
    box, arm = world.get_model("box"), world.get_model("arm7")
    assert world.set_gravity([0, 0, 0]) and box.reset_base_world_velocity([0.3, -0.2, 0.5], [1.0, 2.0, 3.0])
    assert arm.set_joint_control_mode(api.JointControlMode.force)
    assert arm.set_joint_generalized_force_targets([5, -8, 3, 6, 1, -2, 0.5])
    for _ in range(50):
        sim.run()
    dt = sim.step_size()
    offset = np.array([0.1, -0.05, 0.02])

    # The free box: semi-implicit Euler moves its pose with the velocity at the end of the step.
    link = box.get_link("box")
    H0 = link.world_pose().transform
    sim.run()
    H1 = link.world_pose().transform
    assert approx((H1[:3, 3] - H0[:3, 3]) / dt, link.world_linear_velocity(), 1e-12)
    assert approx(_angular_velocity(H0[:3, :3], H1[:3, :3], dt), link.world_angular_velocity(), 1e-5)
    assert approx(H1[:3, :3].T @ link.world_linear_velocity(), link.body_linear_velocity(), 1e-12)

    # The arm's links: poses a small step h along the joint velocities, set by resets and paused runs.
    q, qd, h = np.array(arm.joint_positions()), np.array(arm.joint_velocities()), 1e-6
    links = [arm.get_link(name) for name in ("link2", "link4", "link7")]
    velocities = [(l.world_linear_velocity(), l.world_angular_velocity(), l.world_linear_velocity(offset), l.body_angular_velocity()) for l in links]
    poses = []
    for sign in (1, -1):
        assert arm.reset_joint_positions(q + sign * h * qd) and sim.run(paused=True)
        poses.append([l.world_pose().transform for l in links])
    for (v, w, v_offset, w_body), H_plus, H_minus in zip(velocities, *poses):
        assert approx((H_plus[:3, 3] - H_minus[:3, 3]) / (2 * h), v, 1e-8)
        assert approx(_angular_velocity(H_minus[:3, :3], H_plus[:3, :3], 2 * h), w, 1e-8)
        points = [H[:3, :3] @ offset + H[:3, 3] for H in (H_minus, H_plus)]
        assert approx((points[1] - points[0]) / (2 * h), v_offset, 1e-8)
        assert approx(H_plus[:3, :3].T @ w, w_body, 1e-5)
    assert np.linalg.norm(qd) > 0.1 and np.linalg.norm(arm.get_link("link7").world_linear_acceleration()) > 0.1


def test_gazebo_link_queries(make_world):
    sim, world = make_world((FREE_BOX, api.Pose([0, 0, 1], [np.cos(np.pi / 4), 0, 0, np.sin(np.pi / 4)]), "box"))
    assert world.set_gravity([0, 0, 0])
    box = world.get_model("box")
    link = box.get_link("box")
    assert link.is_canonical() and link.parent_model() == box and link.mass() == 1.0
    pose = link.world_pose()
    assert approx(pose.position, [0, 0, 1], 1e-12) and approx(pose.orientation, link.orientation(), 1e-12)
    assert approx(link.world_inertial_pose().position, [0, 0, 1], 1e-12)
    R = pose.transform[:3, :3]
    inertia = np.diag([0.008333333333333333, 0.0041666666666666675, 0.010833333333333334])
    assert approx(link.world_inertia_matrix(), R @ inertia @ R.T, 1e-12)
    box_in_link = link.axis_aligned_box()
    assert approx(box_in_link.min, [-0.1, -0.15, -0.05], 1e-12) and approx(box_in_link.max, [0.1, 0.15, 0.05], 1e-12)
    in_world = link.world_axis_aligned_box()  # yawed by 90 degrees: x and y swap
    assert approx(in_world.min, [-0.15, -0.1, 0.95], 1e-12) and approx(in_world.max, [0.15, 0.1, 1.05], 1e-12)

    assert link.set_linear_velocity([1.0, 0, 0]) and link.set_angular_velocity([0, 0, 2.0])  # link axes
    sim.run(paused=True)
    assert approx(link.world_linear_velocity(), [0, 1, 0], 1e-12) and approx(link.world_angular_velocity(), [0, 0, 2], 1e-12)
    model = js.load_model(FREE_BOX)
    state = js.State.build(model, base_position=box.base_position(), base_quaternion=box.base_orientation(),
                           base_velocity=np.concatenate([box.base_world_linear_velocity(), box.base_world_angular_velocity()]))
    assert link.world_kinetic_energy() == pytest.approx(float(js.dynamics.kinetic_energy(model, state)), rel=1e-12)

    assert box.reset_base_world_velocity() and sim.run(paused=True)
    assert link.add_world_force([2.0, 0, 0])  # one step at the centre of mass
    sim.run()
    sim.run()
    assert approx(link.world_linear_velocity(), [2.0 * sim.step_size(), 0, 0], 1e-12)
    assert approx(link.world_angular_velocity(), np.zeros(3), 1e-12)
    assert box.reset_base_world_velocity() and link.apply_world_torque([0, 0, 0.01])
    sim.run()
    expected = np.linalg.solve(link.world_inertia_matrix(), [0, 0, 0.01]) * sim.step_size()
    assert approx(link.world_angular_velocity(), expected, 1e-12)
    # A force away from the centre of mass also turns the box: r x f about it.
    assert box.reset_base_world_velocity() and link.add_world_force([0, 0, 1.0], position=[0.1, 0, 0])
    sim.run()
    arm_world = R @ np.array([0.1, 0, 0])
    expected = np.linalg.solve(link.world_inertia_matrix(), np.cross(arm_world, [0, 0, 1.0])) * sim.step_size()
    assert approx(link.world_angular_velocity(), expected, 1e-6)


def test_fixed_base_links_cannot_be_given_a_velocity(make_world, caplog):
    _, world = make_world((ARM, None, "arm7"))
    assert not world.get_model("arm7").get_link("link3").set_linear_velocity([1, 0, 0])
    assert "fixed base" in caplog.records[-1].getMessage()
