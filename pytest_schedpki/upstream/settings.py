"""Which side of the double is a real server (light: imported when the plugin loads)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class UpstreamSettings:
    """``secrets``: ``"bao"`` (start ``bao server -dev``), a URL, or None (the double);
    ``secrets_token``: its root token; ``scheduler``: a URL of a running Nomad agent or None;
    ``scheduler_token``: its management token."""

    secrets: str | None = None
    secrets_token: str = "root"
    scheduler: str | None = None
    scheduler_token: str = "root"

    @property
    def active(self) -> bool:
        return bool(self.secrets or self.scheduler)

    def describe(self) -> str:
        parts = []
        if self.secrets:
            parts.append(f"secrets: {self.secrets}")
        if self.scheduler:
            parts.append(f"scheduler: {self.scheduler}")
        return ", ".join(parts)
