"""Pinocchio as a benchmark peer and as the reference for agreement checks.

Pinocchio's free-flyer: q = [W_p_B; quaternion xyzw; joints], v = [B_v (linear, body frame);
B_ω (body frame); joints], and ABA returns the derivative of that v. Joints are ordered as
`model.names[2:]` (0 is the universe, 1 the free-flyer).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence

import numpy as np
import pinocchio as pin

from benchmarks import states as st
from benchmarks import timing

ALGORITHMS = ("FK", "RNEA", "CRBA", "ABA")


def load(urdf_path: str) -> pin.Model:
    """The URDF as a floating-base Pinocchio model."""
    return pin.buildModelFromUrdf(str(urdf_path), pin.JointModelFreeFlyer())


def joint_names(model: pin.Model) -> list[str]:
    """Names of the actuated joints in Pinocchio's order; every one must have one DoF."""
    names = list(model.names[2:])
    for joint in list(model.joints)[2:]:
        if joint.nq != 1 or joint.nv != 1:
            raise ValueError(f"{joint.shortname()} has nq={joint.nq}, nv={joint.nv}: only 1-DoF joints supported")
    return names


def _indices(model: pin.Model, names: Sequence[str]) -> np.ndarray:
    """For each name, its position in Pinocchio's joint order."""
    order = joint_names(model)
    missing = sorted(set(names) ^ set(order))
    if missing:
        raise ValueError(f"joint sets differ between the libraries: {missing}")
    return np.array([order.index(name) for name in names])


def to_pinocchio(model: pin.Model, state: dict[str, np.ndarray], names: Sequence[str]) -> dict[str, np.ndarray]:
    """q, v, a, tau for one state (see benchmarks.states) whose joint columns follow `names`."""
    index = _indices(model, names)
    quaternion = state["base_quaternion"]
    q = np.zeros(model.nq)
    q[:3] = state["base_position"]
    q[3:7] = [quaternion[1], quaternion[2], quaternion[3], quaternion[0]]
    q[7:][index] = state["joint_positions"]
    v = np.zeros(model.nv)
    v[:6] = st.mixed_to_body_velocity(quaternion, state["base_velocity"])
    v[6:][index] = state["joint_velocities"]
    a = np.zeros(model.nv)
    a[:6] = st.mixed_to_body_acceleration(quaternion, state["base_velocity"], state["base_acceleration"])
    a[6:][index] = state["joint_accelerations"]
    tau = np.zeros(model.nv)
    tau[6:][index] = state["joint_torques"]
    return {"q": q, "v": v, "a": a, "tau": tau}


def aba(model: pin.Model, state: dict[str, np.ndarray], names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Forward dynamics of one state: (body-frame base acceleration (6,), joint accelerations in `names` order)."""
    arguments = to_pinocchio(model, state, names)
    ddq = pin.aba(model, model.createData(), arguments["q"], arguments["v"], arguments["tau"])
    return ddq[:6].copy(), ddq[6:][_indices(model, names)]


def _calls(model: pin.Model, data: pin.Data) -> dict:
    return {
        "FK": lambda x: pin.forwardKinematics(model, data, x["q"]),
        "RNEA": lambda x: pin.rnea(model, data, x["q"], x["v"], x["a"]),
        "CRBA": lambda x: pin.crba(model, data, x["q"]),
        "ABA": lambda x: pin.aba(model, data, x["q"], x["v"], x["tau"]),
    }


def timings(urdf_path: str, num_states: int = 100, rounds: int = 10, seed: int = 0) -> list[dict]:
    """Median µs per call of each algorithm, each call timed alone over `num_states` states x `rounds`.

    FK is `forwardKinematics` (joint placements, no frames); CRBA fills the upper triangle only.
    """
    model = load(urdf_path)
    data = model.createData()
    names = joint_names(model)
    batch = st.random_states(len(names), num_states, seed)
    arguments = [to_pinocchio(model, st.take(batch, i), names) for i in range(num_states)]
    rows = []
    for algorithm, call in _calls(model, data).items():
        for x in arguments[:5]:
            call(x)
        samples = []
        for _ in range(rounds):
            for x in arguments:
                start = time.perf_counter()
                call(x)
                samples.append(time.perf_counter() - start)
        rows.append({"library": "pinocchio", "algorithm": algorithm, "single_us": 1e6 * statistics.median(samples)})
    return rows


def load_time(urdf_path: str, repeats: int = 10) -> dict:
    """Seconds of `buildModelFromUrdf` with a free-flyer: first and median."""
    return timing.first_and_median(lambda: load(urdf_path), repeats)
