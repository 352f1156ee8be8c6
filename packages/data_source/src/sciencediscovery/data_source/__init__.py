"""MCP servers as deferred tools, governed web access, source catalog."""
