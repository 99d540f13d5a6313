"""Helpers of the object-API tests: asset paths, gains, fresh simulators.

Compilation is cached by JAX per world structure, so every test may build its own simulator:
a world with the same models as an earlier test reuses the compiled run and observation.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from jaxsim_like import api

ASSETS = Path(__file__).resolve().parents[1] / "assets"
API_ASSETS = Path(__file__).resolve().parent / "assets"
ARM = API_ASSETS / "arm7.urdf"
ARM_SRDF = API_ASSETS / "arm7.srdf"
FREE_BOX = ASSETS / "free_box.urdf"
SPHERE = ASSETS / "sphere.urdf"
PENDULUM = ASSETS / "pendulum.urdf"

# Position PIDs that hold the arm against gravity and track a 0.33 Hz sinusoid at 1 kHz.
ARM_GAINS = {
    "joint1": api.PID(1000, 0, 10),
    "joint2": api.PID(2000, 0, 50),
    "joint3": api.PID(1000, 0, 10),
    "joint4": api.PID(1000, 0, 20),
    "joint5": api.PID(200, 0, 3),
    "joint6": api.PID(300, 0, 5),
    "joint7": api.PID(50, 0, 0.5),
}


def simulator(step_size: float = 0.001, steps_per_run: int = 1, physics: bool = True) -> api.Simulator:
    """An initialized simulator that runs as fast as possible, with its empty default world, to
    which ``set_physics_engine`` gave physics (unless ``physics`` is False)."""
    sim = api.Simulator(step_size=step_size, rtf=float("inf"), steps_per_run=steps_per_run)
    assert sim.initialize()
    if physics:
        assert sim.get_world().set_physics_engine(api.PhysicsEngine_dart)
    return sim


def arm_in_position_mode(sim: api.Simulator, world: api.World) -> api.Model:
    """The arm of ``world`` with joint 1 and 6 mid-range, its PIDs at 1 kHz, in position mode."""
    arm = world.get_model("arm7")
    for name in ("joint1", "joint6"):
        joint = arm.get_joint(name)
        limit = joint.position_limit()
        assert joint.reset_position((limit.min + limit.max) / 2)
    assert sim.run(paused=True)
    assert arm.set_controller_period(sim.step_size())
    for name, pid in ARM_GAINS.items():
        assert arm.get_joint(name).set_pid(pid)
    assert arm.set_joint_control_mode(api.JointControlMode_position)
    return arm


def approx(value, expected, atol: float) -> bool:
    return np.allclose(np.asarray(value, dtype=float), np.asarray(expected, dtype=float), rtol=0, atol=atol)
