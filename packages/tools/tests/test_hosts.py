from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sciencediscovery.tools.hosts import InvalidHostError, normalize_host


@pytest.mark.parametrize(
    ("spelling", "canonical"),
    [
        ("127.1", "127.0.0.1"),
        ("0x7f.0.0.1", "127.0.0.1"),
        ("2130706433", "127.0.0.1"),
        ("[::1]", "::1"),
        ("NCBI.nlm.nih.GOV.", "ncbi.nlm.nih.gov"),
        ("ｎｃｂｉ.org", "ncbi.org"),  # full-width letters fold (NFKC)
        ("bücher.example", "xn--bcher-kva.example"),
    ],
)
def test_every_spelling_of_a_host_reads_the_same(spelling: str, canonical: str) -> None:
    assert normalize_host(spelling) == canonical


@pytest.mark.parametrize("bad", ["", ".", "a..b", "-x.org", "x" * 64 + ".org", "a b.org"])
def test_hosts_that_name_nothing_are_refused(bad: str) -> None:
    with pytest.raises(InvalidHostError):
        normalize_host(bad)


@given(st.from_regex(r"[a-z0-9]{1,20}(\.[a-z0-9]{1,20}){0,3}", fullmatch=True))
def test_normalisation_is_idempotent(host: str) -> None:
    once = normalize_host(host)
    assert normalize_host(once) == once
