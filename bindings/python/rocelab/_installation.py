"""Where this package finds what it was built with: the ``rocelab`` command (lab up/down,
the soft switch and NIC processes of the virtual backend, sweep workers) and the source
tree (its examples). ``_paths`` is written by bindings/CMakeLists.txt; environment
variables override it. A leaf module: it imports nothing else of the package."""

import os

__all__ = ["rocelab_binary", "source_dir"]


def rocelab_binary():
    """The ``rocelab`` command this package was built with ($ROCELAB_BINARY overrides)."""
    env = os.environ.get("ROCELAB_BINARY")
    if env:
        return env
    try:
        from . import _paths
        return _paths.rocelab_binary
    except ImportError:
        return "rocelab"


def source_dir():
    """The rocelab source tree this package was built from ($ROCELAB_SOURCE_DIR overrides)."""
    env = os.environ.get("ROCELAB_SOURCE_DIR")
    if env:
        return env
    try:
        from . import _paths
        return _paths.source_dir
    except ImportError:
        return os.getcwd()
