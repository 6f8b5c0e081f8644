"""`forge run`'s writers handle every event of the session (docs/adr/0059): each class of
`SessionEvent`, enumerated from the union, is printed in text mode or named silent there, and
is a stream-json record or (retries, attachments) deliberately not one."""

from __future__ import annotations

import io

from forge.headless.jsonl import has_record
from forge.headless.output import TEXT_MODE_SILENT, JsonLinesWriter, TextWriter
from forge.llm.stream import RetryScheduled
from forge.session.events import AttachmentsAdded
from tests.support.session_events import event_classes, sample_events


async def test_text_mode_prints_each_event_unless_it_is_named_silent() -> None:
    out, err = io.StringIO(), io.StringIO()
    writer = TextWriter(out, err)
    printed: set[type] = set()
    for event in sample_events():
        before = len(out.getvalue()) + len(err.getvalue())
        writer.event(event)
        if len(out.getvalue()) + len(err.getvalue()) > before:
            printed.add(type(event))
    assert printed.isdisjoint(TEXT_MODE_SILENT), "a silent event printed something"
    assert printed | set(TEXT_MODE_SILENT) == event_classes(), "an event was silently ignored"


async def test_stream_json_writes_a_record_for_each_event_but_retries_and_attachments() -> None:
    out, err = io.StringIO(), io.StringIO()
    writer = JsonLinesWriter(out, err)
    writer.init({"type": "init"})
    for event in sample_events():
        lines, said = out.getvalue().count("\n"), err.getvalue()
        writer.event(event)
        wrote = out.getvalue().count("\n") > lines
        assert wrote == has_record(event), type(event).__name__
        if isinstance(event, AttachmentsAdded):
            assert err.getvalue() != said, "the attachments are said on stderr"
        elif not wrote:
            assert isinstance(event, RetryScheduled), type(event).__name__
