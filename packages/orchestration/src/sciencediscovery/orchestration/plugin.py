"""Entry-point plugin of sciencediscovery-orchestration: registers its contributions with the plugin host."""

from sciencediscovery.runtime_core import hookimpl

__all__ = ["hookimpl"]
