"""Entry-point plugin of sciencediscovery-governance: registers its contributions with the plugin host."""

from sciencediscovery.runtime_core import hookimpl

__all__ = ["hookimpl"]
