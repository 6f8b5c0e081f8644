"""The widgets of Forge's main screen, one region each: header, chat, status pane, prompt."""
