"""Mass matrix, inverse dynamics (with external link wrenches) and forward dynamics against
Pinocchio, for every case and velocity representation (bias and gravity forces in the mixed one,
``FULL``); forward dynamics far from the world origin and in float32.

Generalised forces of ours are ``G_r^T`` times Pinocchio's; Pinocchio's ``fext`` are the same
link wrenches moved to each joint frame. Our base acceleration is the derivative of the base
velocity in r; Pinocchio's is the body one (converted in the conftest)."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from .conftest import FULL, REPRESENTATIONS, Case, assert_close, inputs_of, state_of

REPOSITORY = Path(__file__).resolve().parents[2]
HUMANOID = LAB_CASE = Case("humanoid", True)
"""The float32 tests read this case's compiled program: they run on its worker (tests/conftest.py)."""
DISTANCES = (0.0, 10.0, 100.0)  # of the base from the world origin [m]


def test_mass_matrix(lab, case, rep):
    lab.results(case).check(rep, "mass_matrix")


def test_inverse_dynamics_with_link_wrenches(lab, case, rep):
    lab.results(case).check(rep, "rnea")


def test_bias_and_gravity_forces(lab, case):
    results = lab.results(case)
    results.require_extended()
    results.check(FULL, "bias_forces")
    results.check(FULL, "gravity_forces")


def test_forward_dynamics_with_link_wrenches(lab, case, rep):
    lab.results(case).check(rep, "aba")


def moved_samples(lab, distance: float) -> list:
    """The humanoid's samples with the base ``distance`` metres from the world origin."""
    samples = lab.results(HUMANOID).samples[:2]
    return [dataclasses.replace(s, position=s.position / np.linalg.norm(s.position) * distance) for s in samples]


FLOAT32_SCRIPT = """
import json, sys
import jax, jax.numpy as jnp, numpy as np
import jaxsim_like as js
from jaxsim_like import dynamics as D
data = json.load(sys.stdin)
model = js.load_model(data["path"])
aba = jax.jit(lambda m, s, t, f: jnp.concatenate(D.forward_dynamics(m, s, joint_torques=t, link_wrenches=f)))
out = []
for x in data["samples"]:
    state = js.State.build(model, base_position=x["position"], base_quaternion=x["quaternion"], base_velocity=x["velocity"],
                           joint_positions=x["q"], joint_velocities=x["qd"], velocity_representation="mixed")
    out.append(np.asarray(aba(model, state, np.asarray(x["tau"], np.float32), np.asarray(x["wrenches"], np.float32))).astype(float).tolist())
print(json.dumps({"dtype": str(model.link_mass.dtype), "accelerations": out}))
"""


@pytest.fixture(scope="module")
def float32_run(lab):
    """ABA of the humanoid in float32 (a subprocess with x64 disabled) at every distance, and in float64."""
    results = lab.results(HUMANOID)
    samples = [moved_samples(lab, distance)[0] for distance in DISTANCES]
    payload = []
    for sample in samples:
        state = state_of(results.model, sample, "mixed")
        inputs = inputs_of(sample, "mixed", results.twin.link_poses(sample))
        payload.append({
            "position": sample.position.tolist(), "quaternion": sample.quaternion.tolist(),
            "velocity": np.asarray(state.base_velocity).tolist(), "q": sample.q.tolist(), "qd": sample.qd.tolist(),
            "tau": sample.tau.tolist(), "wrenches": np.asarray(inputs["link_wrenches"]).tolist(),
        })
    env = dict(os.environ, JAX_ENABLE_X64="0", JAX_PLATFORMS="cpu")
    run = subprocess.run([sys.executable, "-c", FLOAT32_SCRIPT], input=json.dumps({"path": str(HUMANOID.path), "samples": payload}),
                         env=env, cwd=REPOSITORY, capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stderr
    single = json.loads(run.stdout.strip().splitlines()[-1])
    assert single["dtype"] == "float32"
    double = [results.evaluate_sample(sample)["mixed"]["aba"] for sample in samples]
    return dict(zip(DISTANCES, zip(single["accelerations"], double)))


@pytest.mark.parametrize("distance", DISTANCES)
def test_float32_forward_dynamics_agrees_with_float64(float32_run, distance):
    """The library works in float32: ABA of the humanoid (with the base ``distance`` metres from
    the world origin) has no NaN and agrees with float64 at 1e-3 (relative norm)."""
    single, double = (np.asarray(x) for x in float32_run[distance])
    assert np.all(np.isfinite(single))
    relative = np.linalg.norm(single - double) / np.linalg.norm(double)
    assert_close(relative, 0.0, f"float32 vs float64 ABA at {distance:g} m (relative norm)", tolerance=1e-3)


@pytest.mark.parametrize("distance", DISTANCES[1:])
def test_forward_dynamics_far_from_the_world_origin(lab, distance):
    """Dynamics do not depend on where the robot stands: at 1e-9 from Pinocchio anywhere."""
    results = lab.results(HUMANOID)
    for k, sample in enumerate(moved_samples(lab, distance)):
        ours = results.evaluate_sample(sample)
        for rep in REPRESENTATIONS:
            reference = results.twin.reference(sample, rep)
            for quantity in ("mass_matrix", "rnea", "aba"):
                assert_close(ours[rep][quantity], reference[quantity], f"{quantity} at {distance:g} m [{rep}]", where=f"sample {k}")
