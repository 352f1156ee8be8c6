"""The composition root: ``platform`` selects adapters from configuration, ``runtime`` wires each run."""
