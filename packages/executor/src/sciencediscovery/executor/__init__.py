"""Sandboxed scientific code execution and reproducible environment records."""
