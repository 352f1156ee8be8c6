"""Provenance records, claims and evidence, review checkpoints, PROV export."""
