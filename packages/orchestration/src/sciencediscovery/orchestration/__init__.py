"""Run profiles, RunContract, Skills, Plans, subagents and the reviewer."""
