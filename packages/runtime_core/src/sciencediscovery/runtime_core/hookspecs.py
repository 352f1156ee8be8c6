"""Hook specifications owned by the kernel.

Other owner packages declare their hooks in their own ``hookspecs`` module
and add them through :func:`add_hookspecs`, the way pytest plugins use
``pytest_addhooks``.
"""

from __future__ import annotations

from typing import Any

from .plugins import hookspec


@hookspec(historic=True)
def add_hookspecs(plugin_manager: Any) -> None:
    """Add hook specifications to ``plugin_manager`` with ``plugin_manager.add_hookspecs(module)``.

    Called once for every plugin as it is registered, so a package that owns
    hooks makes them known before anything implements them is validated.
    """
