"""hvac's source distribution, fetched once and kept in the repository's git-ignored ``build/``.

hvac ships its own integration tests (``tests/integration_tests/``, ``tests/utils/``) only in the
sdist on the package index. :func:`sdist_root` downloads the pinned release with pip (hash-checked),
unpacks it next to the archive and returns the unpacked directory; later calls reuse it. Concurrent
callers (pytest-xdist workers) serialise on a lock file. When the index cannot be reached the caller
gets :class:`SdistUnavailable` with pip's last lines as the reason, to skip with.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

HVAC_VERSION = "2.4.0"
#: sha256 of hvac-2.4.0.tar.gz as published on PyPI
HVAC_SDIST_SHA256 = "e0056ad9064e7923e874e6769015b032580b639e29246f5ab1044f7959c1c7e0"
REPO_ROOT = Path(__file__).resolve().parents[2]
CACHE_DIR = REPO_ROOT / "build" / "hvac-sdist"
DOWNLOAD_TIMEOUT = 300  # seconds


class SdistUnavailable(RuntimeError):
    """The sdist could not be downloaded or unpacked; ``str(exc)`` says why."""


def _download(target: Path) -> Path:
    with tempfile.TemporaryDirectory(dir=target) as tmp:
        requirement = Path(tmp) / "requirements.txt"
        requirement.write_text(f"hvac=={HVAC_VERSION} --hash=sha256:{HVAC_SDIST_SHA256}\n")
        try:
            proc = subprocess.run(
                [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "--require-hashes",
                 "--disable-pip-version-check", "-d", tmp, "-r", str(requirement)],
                capture_output=True, text=True, timeout=DOWNLOAD_TIMEOUT, check=False)
        except subprocess.TimeoutExpired:
            raise SdistUnavailable(f"pip download hvac=={HVAC_VERSION} took more than {DOWNLOAD_TIMEOUT}s") from None
        archive = Path(tmp) / f"hvac-{HVAC_VERSION}.tar.gz"
        if proc.returncode != 0 or not archive.is_file():
            tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-5:])
            raise SdistUnavailable(f"cannot download hvac=={HVAC_VERSION} from the package index:\n{tail}")
        final = target / archive.name
        os.replace(archive, final)
        return final


def _unpack(archive: Path, target: Path) -> Path:
    with tempfile.TemporaryDirectory(dir=target) as tmp:
        with tarfile.open(archive) as tar:
            if hasattr(tarfile, "data_filter"):
                tar.extractall(tmp, filter="data")
            else:  # pragma: no cover - Python < 3.11.4
                tar.extractall(tmp)  # noqa: S202 - pinned, hash-checked archive
        unpacked = Path(tmp) / f"hvac-{HVAC_VERSION}"
        if not (unpacked / "tests" / "integration_tests").is_dir():
            raise SdistUnavailable(f"{archive.name} has no tests/integration_tests/")
        final = target / unpacked.name
        os.replace(unpacked, final)
        return final


def sdist_root(cache_dir: Path = CACHE_DIR) -> Path:
    """The unpacked ``hvac-<version>/`` directory (contains ``tests/`` and ``hvac/``).

    Raises :class:`SdistUnavailable` when the package index is unreachable or the archive is bad.
    """
    cache_dir.mkdir(parents=True, exist_ok=True)
    unpacked = cache_dir / f"hvac-{HVAC_VERSION}"
    with open(cache_dir / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (unpacked / "tests" / "integration_tests").is_dir():
            return unpacked
        shutil.rmtree(unpacked, ignore_errors=True)
        archive = cache_dir / f"hvac-{HVAC_VERSION}.tar.gz"
        if not archive.is_file():
            archive = _download(cache_dir)
        return _unpack(archive, cache_dir)
