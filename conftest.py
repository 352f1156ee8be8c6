"""Repository-wide test settings, loaded for every package's tests (pytest's rootdir conftest).

Hypothesis: no per-example deadline. These machines are shared and noisy; speed is measured by
benchmarks, never by timed assertions, and a deadline is a timed assertion. Example counts stay as
each test sets them.
"""

from hypothesis import HealthCheck, settings

settings.register_profile("sciencediscovery", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("sciencediscovery")
