"""Settings, XDG paths, the YAML config store and its watcher.

The bottom layer of Forge: it imports nothing else from Forge. Import each name from the module
that defines it (`forge.config.settings`, `forge.config.store`, `forge.config.errors`, …): this
package re-exports nothing, so `forge.config.paths` (which `forge` reads before its first
frame) never pulls in pydantic-settings by way of the package, and every name has one spelling.
The watcher stays in `forge.config.watcher` because it pulls in `watchfiles`.
"""
