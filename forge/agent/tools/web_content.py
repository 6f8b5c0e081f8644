"""What `web_fetch` makes of a response body: readable text, never markup or control codes.

- HTML: hidden and non-content elements are removed first (scripts, styles, navigation,
  headers, footers, forms, frames, and anything marked hidden: the `hidden` attribute,
  `aria-hidden="true"`, an inline `display:none` or `visibility:hidden`), so text a reader
  never sees (a hidden prompt-injection paragraph) does not reach the model either. Then
  readability-lxml keeps the main content and markdownify writes it as Markdown
  (docs/adr/0055).
- Other `text/*` types, JSON, XML and the like: decoded as text.
- PDF: the text of its pages (pypdf).
- Anything else is binary and refused.

Every result passes through `terminal_safe`: the page is data.
"""

from __future__ import annotations

import io
import re

from forge.agent.tools.base import ToolError
from forge.text_safety import terminal_safe

REMOVED_TAGS = (
    "script",
    "style",
    "noscript",
    "template",
    "iframe",
    "frame",
    "object",
    "embed",
    "svg",
    "canvas",
    "nav",
    "header",
    "footer",
    "aside",
    "form",
    "button",
    "select",
    "input",
    "textarea",
    "link",
    "meta",
)
"""Elements that are never part of a page's readable content."""

TEXT_TYPES = (
    "application/json",
    "application/xml",
    "application/javascript",
    "application/x-javascript",
    "application/ecmascript",
    "application/x-yaml",
    "application/yaml",
    "application/toml",
    "application/x-sh",
    "application/sql",
    "application/graphql",
)
"""Types outside `text/*` that are text (plus any `+json` / `+xml` type)."""

_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
_BLANK_LINES = re.compile(r"\n{3,}")


def media_type(content_type: str) -> str:
    """The bare, lower-case media type of a Content-Type header ("" when absent)."""
    return content_type.split(";", 1)[0].strip().lower()


def is_html(kind: str) -> bool:
    """Whether `kind` (a media type) is HTML."""
    return kind in ("text/html", "application/xhtml+xml")


def is_text(kind: str) -> bool:
    """Whether `kind` (a media type) is text to read as is."""
    return (
        kind.startswith("text/")
        or kind in TEXT_TYPES
        or kind.endswith("+json")
        or kind.endswith("+xml")
    )


def page_text(body: bytes, content_type: str, encoding: str | None = None) -> str:
    """The readable text of `body` served as `content_type`; `ToolError` for binary data."""
    kind = media_type(content_type)
    if not kind:
        kind = _sniff(body)
    if is_html(kind):
        return terminal_safe(html_to_markdown(_decode(body, encoding)))
    if kind == "application/pdf":
        return terminal_safe(pdf_text(body))
    if is_text(kind):
        return terminal_safe(_decode(body, encoding))
    raise ToolError(
        f"the response is {kind} ({len(body)} bytes), not text, HTML or PDF; "
        "web_fetch reads only those"
    )


def html_to_markdown(html: str) -> str:
    """The main content of an HTML page as Markdown, with a `# title` line when the page has
    a title its content does not start with."""
    from lxml import html as lxml_html  # imported when a page is fetched, not at start
    from markdownify import markdownify
    from readability import Document

    if not html.strip():
        return ""
    try:
        tree = lxml_html.document_fromstring(html)
    except (ValueError, lxml_html.etree.ParserError):
        return ""
    for element in list(tree.iter()):
        if not isinstance(element.tag, str):  # comments and processing instructions
            element.drop_tree()
            continue
        if element.tag in REMOVED_TAGS or _hidden(element):
            element.drop_tree()
    cleaned = lxml_html.tostring(tree, encoding="unicode")
    document = Document(cleaned)
    title = (document.short_title() or "").strip()
    main = document.summary(html_partial=True)
    markdown = markdownify(main, heading_style="ATX", strip=["img"], bullets="-")
    markdown = _BLANK_LINES.sub("\n\n", markdown).strip()
    if title and title not in markdown[: len(title) + 20]:
        markdown = f"# {title}\n\n{markdown}"
    return markdown


def pdf_text(body: bytes) -> str:
    """The text of a PDF's pages, a blank line between pages; `ToolError` if unreadable."""
    from pypdf import PdfReader  # imported when a PDF is fetched, not at start
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(body))
        pages = [page.extract_text() or "" for page in reader.pages]
    except (PdfReadError, ValueError, KeyError, TypeError) as error:
        raise ToolError(f"the PDF could not be read: {error}") from None
    return "\n\n".join(page.strip() for page in pages if page.strip())


def _hidden(element: object) -> bool:
    get = getattr(element, "get", None)
    if get is None:
        return False
    if get("hidden") is not None:
        return True
    if str(get("aria-hidden") or "").strip().lower() == "true":
        return True
    return bool(_HIDDEN_STYLE.search(str(get("style") or "")))


def _decode(body: bytes, encoding: str | None) -> str:
    try:
        return body.decode(encoding or "utf-8", errors="replace")
    except LookupError:  # an encoding name Python does not know
        return body.decode("utf-8", errors="replace")


def _sniff(body: bytes) -> str:
    """A media type for a response that names none."""
    head = body[:512].lstrip().lower()
    if head.startswith(b"%pdf-"):
        return "application/pdf"
    if head.startswith((b"<!doctype html", b"<html")):
        return "text/html"
    if b"\x00" in body[:8192]:
        return "application/octet-stream"
    return "text/plain"
