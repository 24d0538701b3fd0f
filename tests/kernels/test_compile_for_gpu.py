"""The kernels compile for NVIDIA GPUs (sm_90, sm_80) with the launchers' tile sizes, within each
target's shared memory, checked here without a GPU (in a subprocess, away from the interpreter)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("triton")

ROOT = Path(__file__).resolve().parents[2]


def test_kernels_compile_for_hopper_and_ampere():
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    done = subprocess.run([sys.executable, "-m", "tests.kernels.compile_for_gpu"], check=False, cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert done.stdout.count("shared") == 16
