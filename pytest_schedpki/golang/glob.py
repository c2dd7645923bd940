"""``github.com/ryanuber/go-glob`` ``Glob``, the wildcard match both upstreams use: OpenBao's PKI roles
(glob domains, other SANs, user ids, serial numbers, URI SANs) and Nomad's ACL (wildcard namespace,
node pool, host volume and variable names)."""

from __future__ import annotations


def go_glob(pattern: str, subject: str) -> bool:
    """``Glob(pattern, subject)``: ``*`` is the only wildcard and matches any run of characters (dots
    included), each literal part found at its first place left to right; ``""`` matches only ``""``."""
    if pattern == "":
        return subject == ""
    if pattern == "*":
        return True
    parts = pattern.split("*")
    if len(parts) == 1:
        return subject == pattern
    leading, trailing = pattern.startswith("*"), pattern.endswith("*")
    for i, part in enumerate(parts[:-1]):
        idx = subject.find(part)
        if (i == 0 and not leading and idx != 0) or idx < 0:
            return False
        subject = subject[idx + len(part):]
    return trailing or subject.endswith(parts[-1])
