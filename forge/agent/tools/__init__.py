"""The agent's tools: confined file tools, search, shell commands, and the turn-ending tools.

`forge.agent.tools.registry.default_registry()` holds them all; `ToolRegistry.execute` runs a
model's call and turns every failure into an error result. Each tool's arguments are a
pydantic model in the tool's module (`forge.agent.tools.read_file.ReadFileArgs`, ...). See
`docs/adr/0005-tool-call-format-and-tools.md` and `docs/adr/0040-tool-arguments-as-models.md`.

Import every name from the module that defines it (`forge.agent.tools.base`, `.registry`,
`.workspace`, ...): this package re-exports nothing and imports nothing, so importing
`process_guard` before the first frame (for its signal handling) does not load the tools.
"""
