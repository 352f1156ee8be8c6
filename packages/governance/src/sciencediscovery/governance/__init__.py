"""Permission epochs, rules, grants and the permission-decision queue."""
