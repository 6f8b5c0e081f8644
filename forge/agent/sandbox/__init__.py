"""The OS sandbox of the model's commands (docs/adr/0053-command-sandbox.md).

`environment` scrubs what a model's command may see of Forge's environment; `probe` finds the
mechanism (bubblewrap); `mounts` says which paths a confined command may write, read or not
see; `namespaces` holds the session's one network namespace; `pids` bounds its processes;
`sandbox` puts them together for `execute_command`.
"""
