"""ScienceDiscovery service: composition root, durable sessions, CLI and HTTP/SSE."""
