"""PLACEHOLDER: the PKI engine (being built)."""

from ..router import Router


class PkiBackend:
    def __init__(self, service, mount):
        self.service = service
        self.mount = mount
        self.router = Router([])

    def snapshot(self):
        return None

    def restore(self, snapshot):
        return None
