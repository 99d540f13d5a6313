"""Random robot states and inputs for the benchmarks, and their conversion to Pinocchio's conventions.

A state here is a dict of NumPy arrays with a leading batch axis of `count`:
- base_position (count, 3): W_p_B, m.
- base_quaternion (count, 4): W_Q_B, unit, wxyz.
- base_velocity (count, 6): mixed representation [W_ṗ_B; W_ω_WB], m/s and rad/s.
- joint_positions, joint_velocities, joint_torques, joint_accelerations (count, n).
- base_acceleration (count, 6): mixed representation [W_p̈_B; W_ω̇_WB].
Joint columns follow the joint order of whichever library consumes them.
"""

from __future__ import annotations

import numpy as np


def random_states(dofs: int, count: int, seed: int = 0) -> dict[str, np.ndarray]:
    """`count` random floating-base states and inputs for a model with `dofs` joints."""
    rng = np.random.default_rng(seed)
    quaternion = rng.normal(size=(count, 4))
    quaternion /= np.linalg.norm(quaternion, axis=1, keepdims=True)
    return {
        "base_position": rng.uniform(-1.0, 1.0, size=(count, 3)),
        "base_quaternion": quaternion,
        "base_velocity": rng.normal(size=(count, 6)),
        "joint_positions": rng.uniform(-1.0, 1.0, size=(count, dofs)),
        "joint_velocities": rng.normal(size=(count, dofs)),
        "joint_torques": rng.normal(scale=5.0, size=(count, dofs)),
        "base_acceleration": rng.normal(size=(count, 6)),
        "joint_accelerations": rng.normal(size=(count, dofs)),
    }


def take(states: dict[str, np.ndarray], index: int) -> dict[str, np.ndarray]:
    """The single (unbatched) state at `index`."""
    return {key: value[index] for key, value in states.items()}


def batch(states: dict[str, np.ndarray], size: int) -> dict[str, np.ndarray]:
    """`size` states, cycling through those available."""
    count = next(iter(states.values())).shape[0]
    indices = np.arange(size) % count
    return {key: value[indices] for key, value in states.items()}


def rotation_from_wxyz(quaternion: np.ndarray) -> np.ndarray:
    """W_R_B (3, 3) from a unit quaternion wxyz."""
    w, x, y, z = quaternion
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def mixed_to_body_velocity(quaternion: np.ndarray, mixed_velocity: np.ndarray) -> np.ndarray:
    """Base velocity [W_ṗ_B; W_ω] to the body representation [B_R_W W_ṗ_B; B_R_W W_ω]."""
    rotation_t = rotation_from_wxyz(quaternion).T
    return np.concatenate([rotation_t @ mixed_velocity[:3], rotation_t @ mixed_velocity[3:]])


def mixed_to_body_acceleration(
    quaternion: np.ndarray, mixed_velocity: np.ndarray, mixed_acceleration: np.ndarray
) -> np.ndarray:
    """d/dt of the body velocity from the mixed velocity and its derivative [W_p̈_B; W_ω̇].

    With B_v = B_R_W [ṗ; ω] and d/dt B_R_W = -B_R_W [ω]x:
    B_v̇ = [B_R_W (p̈ - ω x ṗ); B_R_W ω̇].
    """
    rotation_t = rotation_from_wxyz(quaternion).T
    linear = mixed_acceleration[:3] - np.cross(mixed_velocity[3:], mixed_velocity[:3])
    return np.concatenate([rotation_t @ linear, rotation_t @ mixed_acceleration[3:]])
