"""Built-in specialist definitions and the subagent lifecycle."""
