"""Reading a `.cubin` directly: keq runs nvdisasm on it and parses the listing.

nvdisasm is looked up as kernels/build.py does: `$NVDISASM`, PATH, then the PyPI package
`nvidia-cuda-nvdisasm` inside this interpreter's site-packages (`nvidia/cu13/bin/nvdisasm`,
`nvidia/cuda_nvdisasm/bin/nvdisasm`, any `nvidia/*/bin/nvdisasm`). Without it, one line says
how to install it (`pip install -e '.[sass]'`).
"""

from __future__ import annotations

import glob
import os
import shutil
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

from semantics.errors import KeqError
from semantics.sass.nodes import SassModule
from semantics.sass.parser import parse_sass

INSTALL_HINT = ("nvdisasm not found: keq needs it to read a .cubin; install it with "
                "`pip install -e '.[sass]'` (PyPI nvidia-cuda-nvdisasm), put CUDA's bin "
                "directory on PATH, or set $NVDISASM")


class DisassemblerError(KeqError):
    """nvdisasm is missing or refused the file (exit code 3 at the CLI)."""


def find_nvdisasm() -> str | None:
    env = os.environ.get("NVDISASM")
    if env:
        return env if os.access(env, os.X_OK) else None
    on_path = shutil.which("nvdisasm")
    if on_path:
        return on_path
    roots = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    try:
        roots.update(site.getsitepackages())
    except AttributeError:                          # some virtualenv site modules lack it
        pass
    roots.add(str(Path(sys.prefix) / "lib"))
    for root in sorted(roots):
        for pattern in ("nvidia/cu13/bin/nvdisasm", "nvidia/cuda_nvdisasm/bin/nvdisasm",
                        "nvidia/*/bin/nvdisasm"):
            for cand in sorted(glob.glob(os.path.join(root, pattern))):
                if os.access(cand, os.X_OK):
                    return cand
    return None


def disassemble(path: str | Path, nvdisasm: str | None = None) -> str:
    """nvdisasm's default listing of a cubin."""
    tool = nvdisasm or find_nvdisasm()
    if tool is None:
        raise DisassemblerError(INSTALL_HINT)
    if not Path(path).is_file():
        raise DisassemblerError(f"{path}: no such file")
    try:
        res = subprocess.run([tool, str(path)], capture_output=True, text=True, timeout=300)
    except OSError as e:
        raise DisassemblerError(f"cannot run {tool}: {e.strerror or e}") from None
    except subprocess.TimeoutExpired:
        raise DisassemblerError(f"{tool} took over 300 s on {path}") from None
    if res.returncode != 0:
        first = (res.stderr.strip() or res.stdout.strip() or f"exit code {res.returncode}")
        raise DisassemblerError(f"{path}: nvdisasm failed: {first.splitlines()[0]}")
    return res.stdout


def parse_cubin(path: str | Path, nvdisasm: str | None = None) -> SassModule:
    """Disassemble and parse a cubin; errors in the listing name `FILE.cubin (nvdisasm)`."""
    return parse_sass(disassemble(path, nvdisasm), f"{path} (nvdisasm)")
