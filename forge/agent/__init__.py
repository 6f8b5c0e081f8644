"""The agent: tools, approvals, the loop, sessions. Never imports Textual (its front ends are
`forge.tui` and `forge.headless`, on `forge.session`)."""
