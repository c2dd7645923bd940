"""The seam for the next secrets engines: an engine registered with ``register_engine`` is mounted,
routed, snapshotted and restored by the service without touching PKI code."""

import pytest

from pytest_schedpki.clock import ManualClock
from pytest_schedpki.secrets.engines import registry
from pytest_schedpki.secrets.framework.fields import STRING, Field
from pytest_schedpki.secrets.framework.logical import LogicalError, LogicalResponse
from pytest_schedpki.secrets.framework.router import Path, Router
from pytest_schedpki.secrets.http import dispatch
from pytest_schedpki.secrets.service import SecretsService


class NotesEngine:
    """A minimal engine: ``notes/:name`` read and write, state in a dict."""

    def __init__(self, host, mount):
        self.host = host
        self.mount = mount
        self.notes: dict[str, str] = {}
        self.router = Router([Path("notes/(?P<name>[a-z]+)", {"name": Field(STRING), "text": Field(STRING)},
                                   {"read": self._read, "update": self._write})])

    def _read(self, req):
        if req.data.get("name") not in self.notes:
            return None
        return LogicalResponse(data={"text": self.notes[req.data.get("name")],
                                     "max_ttl": self.mount.effective_max_ttl()})

    def _write(self, req):
        self.notes[req.data.get("name")] = req.data.get("text")
        return LogicalResponse(status=204)

    def snapshot(self):
        return dict(self.notes)

    def restore(self, snapshot):
        self.notes = dict(snapshot or {})


@pytest.fixture
def notes_type():
    registry.register_engine("notes", NotesEngine)
    yield "notes"
    registry.ENGINES.pop("notes", None)


def test_a_registered_engine_is_mounted_routed_and_restored(notes_type):
    service = SecretsService(ManualClock())
    before = service.snapshot()
    dispatch(service, "update", "sys/mounts/kb", {"type": notes_type, "config": {"max_lease_ttl": "2h"}}, "root")
    engine = service.mount("kb").backend
    assert isinstance(engine, NotesEngine) and engine.host is service
    assert dispatch(service, "update", "kb/notes/first", {"text": "hello"}, "root").status == 204
    assert dispatch(service, "read", "kb/notes/first", {}, "root").data == {"text": "hello", "max_ttl": 7200}
    saved = service.snapshot()
    dispatch(service, "update", "kb/notes/second", {"text": "later"}, "root")
    service.restore(saved)
    assert service.mount("kb").backend.notes == {"first": "hello"}
    service.restore(before)
    assert "kb/" not in service.mounts


def test_an_unregistered_type_is_not_in_the_catalog():
    service = SecretsService(ManualClock())
    with pytest.raises(LogicalError) as caught:
        dispatch(service, "update", "sys/mounts/kb", {"type": "notes"}, "root")
    assert caught.value.status == 400
    assert caught.value.errors == ["plugin not found in the catalog: notes"]
