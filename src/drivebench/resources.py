"""Files that ship inside the package (the Casbin model, scenario data, templates, vector packs), found with
``importlib.resources`` so that a checkout, an editable install and an installed wheel read the same files.

drivebench is installed as plain files (never zipped), so a package's resources are a directory on disk;
``package_dir`` says so loudly instead of handing a zip member to a library that needs a real path.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def package_dir(package: str) -> Path:
    """The directory of ``package`` (e.g. ``"drivebench.policies"``) on disk."""
    root = files(package)
    if not isinstance(root, Path):
        raise RuntimeError(f"{package} is not installed as plain files ({root!r}); reinstall drivebench unzipped")
    return root
