"""dm_control's fish in the implicit step (issue 31): a free body of a few grams with fins of a
few hundred milligrams, in a dense fluid (density 5000, MuJoCo's inertia-box model).

Under 1 N m on every joint the fins spin at 2e4 rad/s after one step of 2 ms, where the explicit
quadratic drag overshoots: MuJoCo's Euler (the fluid explicit) rejects its accelerations within
two steps, and our implicit step diverged the same way until the fluid's drag was linearised at
the end of the step (MuJoCo's ``implicitfast`` does the same). Checks, on one compiled rollout:
one step from moving fins equals ``implicitfast``'s to rounding (joint springs off, since ours
takes them implicitly and MuJoCo does not); 0.5 s at the actuators' scale (1e-4 N m) follows it;
0.5 s under 1 N m stays finite."""

from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js

mujoco = pytest.importorskip("mujoco", reason="MJCF needs the mjcf extra (in the test extra)")
_DM_CONTROL = importlib.util.find_spec("dm_control")  # its files only
FISH = Path(_DM_CONTROL.submodule_search_locations[0], "suite", "fish.xml") if _DM_CONTROL else None
pytestmark = pytest.mark.skipif(FISH is None, reason="dm_control's files come with the dm_control package (test extra)")
DT, STEPS = 0.002, 250


class Reference:
    """MuJoCo's fish, its actuators off (ours are not in the step) and the map of our joints to
    its ``qpos``/``qvel``."""

    def __init__(self, model: js.Model, integrator: str):
        self.m = mujoco.MjModel.from_xml_path(str(FISH))
        self.m.opt.timestep = DT
        self.m.opt.integrator = getattr(mujoco.mjtIntegrator, f"mjINT_{integrator.upper()}")
        self.m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_ACTUATION)
        self.d = mujoco.MjData(self.m)
        ids = [mujoco.mj_name2id(self.m, mujoco.mjtObj.mjOBJ_JOINT, name) for name in model.joint_names]
        self.qpos, self.dof = self.m.jnt_qposadr[ids], self.m.jnt_dofadr[ids]

    def rollout(self, tau: float, steps: int, joint_velocities=None, viscosity: float = 0.0, springs: bool = True) -> np.ndarray:
        """``(steps, n)`` joint positions under ``tau`` [N m] on every joint."""
        m, d = self.m, self.d
        m.opt.viscosity = viscosity
        if not springs:
            m.jnt_stiffness[:], m.tendon_stiffness[:] = 0.0, 0.0
        mujoco.mj_resetData(m, d)
        if joint_velocities is not None:
            d.qvel[self.dof] = joint_velocities
        d.qfrc_applied[self.dof] = tau
        positions = []
        for _ in range(steps):
            mujoco.mj_step(m, d)
            positions.append(d.qpos[self.qpos] - m.qpos0[self.qpos])
        return np.array(positions)


@pytest.fixture(scope="module")
def fish() -> js.Model:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", js.ModelLoadWarning)  # its position actuator on a tendon
        model = js.load_model(FISH)
    assert model.floating_base and model.fluid.count == 5 and float(model.fluid.density) == 5000.0
    assert model.shape_kind == ()  # the file disables constraints: no contacts, as in MuJoCo
    return model


@pytest.fixture(scope="module")
def run(fish, sim):
    """``run(tau, model=fish, joint_velocities=None)``: our 0.5 s rollout (one compilation), the
    joint positions after each step ``(STEPS, n)`` and whether every state is finite."""
    params = js.SimulationParams.build(fish, dt=DT, gravity=np.zeros(3))

    def rollout(tau: float, model: js.Model = fish, joint_velocities=None):
        state = js.State.build(model, base_position=[0.0, 0.0, 0.1], joint_velocities=joint_velocities)
        _, states, outputs = sim(model, state, params, steps=STEPS, torques=np.full(model.dofs, tau))
        return np.asarray(states.joint_positions), bool(np.all(outputs.finite))

    return rollout


def test_one_step_equals_mujocos_implicitfast(fish, run):
    """From fins moving at 2 rad/s and a still body, in a viscous fluid: the first step equals
    MuJoCo's ``implicitfast`` to rounding (the drag's damping at work: Stokes and quadratic)."""
    qd = 2.0 * np.cos(np.arange(fish.dofs))
    viscous = fish.replace(
        joint_stiffness=jnp.zeros(fish.dofs),
        tendons=fish.tendons.replace(stiffness=jnp.zeros_like(fish.tendons.stiffness)),
        fluid=fish.fluid.replace(viscosity=jnp.asarray(0.5)),
    )
    ours, _ = run(1e-4, model=viscous, joint_velocities=qd)
    theirs = Reference(fish, "implicitfast").rollout(1e-4, 1, joint_velocities=qd, viscosity=0.5, springs=False)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=0, atol=1e-13)
    explicit = Reference(fish, "euler").rollout(1e-4, 1, joint_velocities=qd, viscosity=0.5, springs=False)
    assert np.abs(explicit[0] - theirs[0]).max() > 1e-6  # the drag's damping matters in this step


def test_half_a_second_follows_mujocos_implicitfast(fish, run, figures):
    """1e-4 N m on every joint (the actuators' scale), joint springs on: within 5e-3 rad of
    MuJoCo's ``implicitfast`` over 0.5 s (ours takes the springs implicitly)."""
    ours, finite = run(1e-4)
    theirs = Reference(fish, "implicitfast").rollout(1e-4, STEPS)
    distance = np.abs(ours - theirs).max(axis=1)
    for t in (0.1, 0.25, 0.5):
        figures(f"dm_control fish: max |q - q_MuJoCo implicitfast| at {t} s", float(distance[round(t / DT) - 1]), "rad")
    assert finite and distance.max() < 5e-3
    assert np.abs(theirs).max() > 0.05  # the fins move


def test_one_newton_metre_stays_finite(fish, run):
    """1 N m on every joint for 0.5 s: finite, where MuJoCo's Euler (the fluid explicit) rejects
    its accelerations within the first steps."""
    positions, finite = run(1.0)
    assert finite and np.all(np.isfinite(positions))
    reference = Reference(fish, "euler")
    reference.rollout(1.0, 5)
    assert reference.d.warning[mujoco.mjtWarning.mjWARN_BADQACC].number > 0
