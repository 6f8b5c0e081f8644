"""Forge's terminal UI: a Textual app that is one client of the agent core.

The agent turn runs in an async worker that only posts messages; widgets change only in
message handlers. `forge.tui.app.run_tui` is the entry point `forge` calls.
"""
