"""Content-addressed artifacts and governed downloads."""
