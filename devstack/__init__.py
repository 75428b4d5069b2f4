"""The local stack: template.yaml played on an embedded AWS emulator, without Docker."""
