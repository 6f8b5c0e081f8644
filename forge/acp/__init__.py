"""`forge acp`: Forge as an Agent Client Protocol agent over stdio, for editors (Zed, Toad).

A third front end beside `forge.tui` and `forge.headless`, on the same session API
(`forge.session`); see docs/adr/0044-acp-front-end.md. Import from the modules.
"""
