"""`forge run`: the headless front end (scripts and CI), beside the TUI on the session core.

`run.py` drives one turn of a `forge.session.Session` and its limits; `output.py` writes text,
json or jsonl (`jsonl.py` makes the records, docs/adr/0015); `result.py` is the final record;
`exit_status.py` maps how the run ended to its exit code. Never imports Textual or the TUI.
"""
