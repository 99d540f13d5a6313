"""Figures of recorded rollouts and optimisations (needs matplotlib: ``pip install jaxsim_like[plot]``)."""

from __future__ import annotations

import os
from typing import Sequence

import numpy as np

from .recording import Recording


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise ImportError("plots need matplotlib: pip install 'jaxsim_like[plot]'") from error
    return plt


def plot_recording(recording: Recording, path: str | os.PathLike, *, world: int = 0, max_joints: int = 12) -> None:
    """Save a figure of a recording: joint positions, base height, total contact force, joint torques.

    For a batched recording, ``world`` selects the world to draw.
    """
    plt = _pyplot()

    def pick(array: np.ndarray, sample_axes: int) -> np.ndarray:
        return array[world] if array.ndim > sample_axes + 1 else array

    t = recording.time
    q = pick(recording.joint_positions, 1)
    tau = pick(recording.joint_torques, 1)
    z = pick(recording.base_position, 1)[:, 2]
    force = pick(recording.contact_forces, 2).sum(axis=1)
    figure, axes = plt.subplots(2, 2, figsize=(12, 7), sharex=True)
    shown = min(q.shape[1], max_joints)
    for k in range(shown):
        axes[0, 0].plot(t, q[:, k], label=recording.joint_names[k])
        axes[1, 1].plot(t, tau[:, k])
    axes[0, 0].set_ylabel("joint position [rad, m]")
    if shown:
        axes[0, 0].legend(fontsize=6, ncol=2)
    axes[0, 1].plot(t, z)
    axes[0, 1].set_ylabel("base height [m]")
    for k, label in enumerate("xyz"):
        axes[1, 0].plot(t, force[:, k], label=f"f_{label}")
    axes[1, 0].set_ylabel("total contact force [N]")
    axes[1, 0].legend()
    axes[1, 1].set_ylabel("applied joint torque [N m, N]")
    for axis in axes[1]:
        axis.set_xlabel("time [s]")
    figure.suptitle(f"{recording.metadata.get('model', '')}: rollout")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def plot_losses(losses: Sequence[float], path: str | os.PathLike, *, title: str = "optimisation") -> None:
    """Save a figure of a loss curve (log scale when positive)."""
    plt = _pyplot()
    values = np.asarray(losses, dtype=float)
    figure, axis = plt.subplots(figsize=(6, 4))
    axis.plot(np.arange(values.size), values)
    if np.all(values > 0):
        axis.set_yscale("log")
    axis.set_xlabel("iteration")
    axis.set_ylabel("loss")
    axis.set_title(title)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
