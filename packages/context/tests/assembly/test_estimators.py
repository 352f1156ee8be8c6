"""Token estimation: the conservative default, exact tiktoken counts offline, and memoisation."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sciencediscovery.context import (
    ConservativeTokenEstimator,
    TiktokenEstimator,
    TokenizerUnavailableError,
    TokenLedger,
)
from sciencediscovery.context.tiktoken_estimator import ensure_offline_cache, find_shared_cache
from sciencediscovery.runtime_core import Message, ToolCall

WORDS = [
    "the",
    "protein",
    "gene",
    "expression",
    "resistance",
    "mechanism",
    "cells",
    "were",
    "treated",
    "with",
    "cisplatin",
    "and",
    "analysed",
    "by",
    "western",
    "blot",
    "mutation",
    "TP53",
    "BRCA1",
    "apoptosis",
    "pathway",
    "p-value",
    "IC50",
    "µM",
    "mg/kg",
    "n=12",
    "p<0.05",
    "95%",
    "CI",
    "(SD)",
    "[ref]",
    "3.2",
    "1e-5",
    "肿瘤",
    "抑制",
    "基因",
    "突变",
    "导致",
    "耐药性",
    "研究",
    "表明",
    "机制",
    "复杂",
    "细胞",
    "蛋白",
    "实验",
    "结果",
    "显著",
    "数据",
    "分析",
    "我们",
    "发现",
    "研究表明，",
    "结果显示。",
    "（对照组）",
    "数据：\n",
]
SEPARATORS = [" ", " ", " ", ", ", ". ", "\n", "", "; "]


def test_conservative_counts_high_on_mixed_chinese_english_science() -> None:
    exact = TiktokenEstimator("cl100k_base")
    conservative = ConservativeTokenEstimator()
    for text in [
        "The p53 protein (TP53) regulates apoptosis; IC50 = 3.2 µM, n=12, p<0.05.",
        "肿瘤抑制基因TP53的突变导致耐药性，研究表明其机制复杂。",
        '{"gene": "TP53", "值": [1, 2, 3], "结论": "显著"}',
    ]:
        assert conservative.count(text) >= exact.count(text)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(WORDS), st.sampled_from(SEPARATORS)), min_size=1, max_size=120).map(
        lambda parts: "".join(w + s for w, s in parts)
    )
)
def test_conservative_never_underestimates_scientific_text(text: str) -> None:
    conservative = ConservativeTokenEstimator().count(text)
    for encoding in ("cl100k_base", "o200k_base"):
        assert conservative >= TiktokenEstimator(encoding).count(text)


def test_tiktoken_estimator_names_its_encoding_and_cache() -> None:
    estimator = TiktokenEstimator("o200k_base")
    assert estimator.name == "tiktoken:o200k_base"
    assert estimator.count("hello world") == 2
    assert estimator.cache_dir and Path(estimator.cache_dir).is_dir()


def test_the_shared_cache_is_found_beside_the_repository() -> None:
    found = find_shared_cache(Path(__file__).parent)
    assert found is not None and found.name == "tiktoken" and found.parent.name == "shared"
    environ: dict[str, str] = {}
    assert ensure_offline_cache(environ) == str(found)
    assert environ["TIKTOKEN_CACHE_DIR"] == str(found)
    user = {"TIKTOKEN_CACHE_DIR": "/my/cache"}
    assert ensure_offline_cache(user) == "/my/cache"


def test_a_missing_encoding_is_a_clear_error(tmp_path: Path) -> None:
    script = (
        "from sciencediscovery.context import TiktokenEstimator, TokenizerUnavailableError\n"
        "try:\n    TiktokenEstimator('cl100k_base')\n"
        "except TokenizerUnavailableError as e:\n    print('ERR', e)\n"
    )
    env = {
        **os.environ,
        "TIKTOKEN_CACHE_DIR": str(tmp_path),
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "https_proxy": "http://127.0.0.1:9",
    }
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120, check=True
    )
    assert "ERR" in out.stdout and "cl100k_base" in out.stdout and "TIKTOKEN_CACHE_DIR" in out.stdout
    with pytest.raises(TokenizerUnavailableError, match="no_such_encoding"):
        TiktokenEstimator("no_such_encoding")


class CountingEstimator:
    name = "counting"

    def __init__(self) -> None:
        self.calls = 0

    def count(self, text: str) -> int:
        self.calls += 1
        return len(text)


def test_unchanged_messages_are_counted_once() -> None:
    estimator = CountingEstimator()
    ledger = TokenLedger(estimator)
    history = [Message.user("a" * 10), Message.assistant("", [ToolCall("c1", "search", {"q": "x"})])]
    first = ledger.messages(history)
    calls = estimator.calls
    assert ledger.messages(history) == first
    assert estimator.calls == calls
    ledger.messages([*history, Message.user("new")])
    assert estimator.calls == calls + 1
