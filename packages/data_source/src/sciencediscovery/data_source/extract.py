"""Response bodies to readable text: HTML through trafilatura, JSON pretty-printed, plain text as is."""

from __future__ import annotations

import json

import trafilatura

from .errors import WebFetchError

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
PDF_TYPE = "application/pdf"


def media_type(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def readable_text(body: bytes, content_type: str, encoding: str | None, url: str) -> str:
    """The readable text of a response; PDFs and other binary types raise ``unsupported_content``."""
    kind = media_type(content_type)
    if kind in HTML_TYPES:
        text = trafilatura.extract(body, url=url, output_format="txt", include_tables=True, favor_recall=True)
        if not text:
            raise WebFetchError(f"{url}: the page has no readable text", "no_readable_text")
        return text
    decoded = body.decode(encoding or "utf-8", errors="replace")
    if kind == "application/json" or kind.endswith("+json"):
        try:
            return json.dumps(json.loads(decoded), ensure_ascii=False, indent=1)
        except ValueError:
            return decoded
    if kind.startswith("text/") or kind in {"application/xml", "application/x-ndjson"} or kind.endswith("+xml"):
        return decoded
    if kind == PDF_TYPE:
        raise WebFetchError(
            f"{url} is a PDF; it is not read inline. Download it as an artifact with the artifact download tool.",
            "unsupported_content",
        )
    raise WebFetchError(f"{url}: content type {kind or 'unknown'} is not read inline", "unsupported_content")
