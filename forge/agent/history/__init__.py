"""A session on disk: the session file, listing, rewind, checkpoints, the recall archive."""
