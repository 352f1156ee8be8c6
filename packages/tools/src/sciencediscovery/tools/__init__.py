"""Tool registry, deferred discovery, governed dispatcher, sanitization, error and loop policy."""
