"""Memory graph, observation sink and memory context contributor."""
