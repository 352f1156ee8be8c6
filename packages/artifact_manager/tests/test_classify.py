"""Classification from content and name."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sciencediscovery.artifact_manager import ArtifactKind, classify, media_type_of

NOTEBOOK = json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode()


@pytest.mark.parametrize(
    ("name", "content", "kind"),
    [
        ("plot.png", b"\x89PNG\r\n\x1a\n....", ArtifactKind.FIGURE),
        ("results.csv", b"\x89PNG\r\n\x1a\n....", ArtifactKind.FIGURE),  # content beats a misleading name
        ("scan", b"\xff\xd8\xff\xe0JFIF", ArtifactKind.FIGURE),
        ("figure.svg", b"<?xml version='1.0'?>\n<svg xmlns='http://www.w3.org/2000/svg'/>", ArtifactKind.FIGURE),
        ("paper", b"%PDF-1.7\n...", ArtifactKind.REPORT),
        ("summary.md", b"# Findings\nTP53 is mutated.", ArtifactKind.REPORT),
        ("notes", b"# Findings\nTP53 is mutated.", ArtifactKind.REPORT),
        ("counts.csv", b"gene,count\nTP53,4\n", ArtifactKind.TABLE),
        ("counts", b"gene,count\nTP53,4\nBRCA1,7\n", ArtifactKind.TABLE),
        ("counts", b"gene\tcount\nTP53\t4\nBRCA1\t7\n", ArtifactKind.TABLE),
        ("matrix.h5", b"\x89HDF\r\n\x1a\n\x00\x00", ArtifactKind.DATASET),
        ("blob", b"\x93NUMPY\x01\x00v\x00", ArtifactKind.DATASET),
        ("reads.fastq", b"@r1\nACGT\n+\n!!!!\n", ArtifactKind.DATASET),
        ("analysis.ipynb", NOTEBOOK, ArtifactKind.NOTEBOOK),
        ("untitled", NOTEBOOK, ArtifactKind.NOTEBOOK),
        ("fit.py", b"import numpy as np\n", ArtifactKind.CODE),
        ("script", b"#!/bin/sh\necho hi\n", ArtifactKind.CODE),
        ("run.log", b"anything", ArtifactKind.LOG),
        ("stdout", b"2026-01-01 10:00:01 INFO start\n2026-01-01 10:00:02 ERROR failed\n", ArtifactKind.LOG),
        ("stdout", b"INFO: start\nWARNING: slow\nINFO: done\n", ArtifactKind.LOG),
        ("mystery.bin", b"\x00\x01\x02\x03", ArtifactKind.OTHER),
        ("plain", b"just one line of prose", ArtifactKind.OTHER),
    ],
)
def test_classification_cases(name, content, kind) -> None:
    assert classify(name, content) is kind


@pytest.mark.parametrize(
    ("name", "content", "media_type"),
    [
        ("x.csv", b"\x89PNG\r\n\x1a\n", "image/png"),
        ("x.csv", b"a,b\n", "text/csv"),
        ("noname", b"hello", "text/plain"),
        ("noname", b"\x00\x01", "application/octet-stream"),
    ],
)
def test_media_type_from_content_then_name(name, content, media_type) -> None:
    assert media_type_of(name, content) == media_type


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=30), st.binary(max_size=300))
def test_classify_is_total(name, content) -> None:
    assert isinstance(classify(name, content), ArtifactKind)
    assert media_type_of(name, content)
