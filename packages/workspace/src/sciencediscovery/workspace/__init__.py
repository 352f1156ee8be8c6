"""Workspace mounts and file tools."""
