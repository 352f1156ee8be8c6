"""Dynamic context assembly: contributors, budgets, token estimation, compaction, windows, validation, traces, context plans."""
