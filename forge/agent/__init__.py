"""The agent: tools, approvals, the loop, headless mode, sessions. Never imports Textual."""
