"""The web object viewer and the dependency cutout service (one ASGI app)."""
