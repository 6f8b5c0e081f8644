"""Forge: a full-screen terminal coding agent whose edge is context management."""

__version__ = "0.1.0"
