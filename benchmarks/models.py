"""The URDF files the benchmarks run on."""

from __future__ import annotations

from pathlib import Path

import icub_models

REPOSITORY = Path(__file__).resolve().parents[1]
CHOICES = ("humanoid", "icub", "all")
MUJOCO_HUMANOID = "mujoco_humanoid"


def model_paths(choice: str = "all") -> dict[str, Path]:
    """Name -> URDF path for `choice` (one of CHOICES); the humanoid ships with jaxsim_like."""
    paths = {
        "humanoid": REPOSITORY / "jaxsim_like" / "models" / "humanoid" / "humanoid.urdf",
        "icub": Path(icub_models.get_model_file("iCubGazeboV2_5")),
    }
    return paths if choice == "all" else {choice: paths[choice]}


def model_files(choice: str = "all") -> dict[str, Path]:
    """:func:`model_paths`, and for ``MUJOCO_HUMANOID`` MuJoCo's own humanoid MJCF (see
    :data:`benchmarks.peers.mjx_peer.MUJOCO_HUMANOID`)."""
    if choice == MUJOCO_HUMANOID:
        from benchmarks.peers import mjx_peer

        return {choice: mjx_peer.MUJOCO_HUMANOID}
    return model_paths(choice)
