"""Behaving like Go's standard library, byte for byte where clients can see it: ``time.Duration``
parsing and printing (``duration``), ``encoding/json`` decoding with Go's texts (``json`` on the
scanner in ``scan``), RFC 3339 times and ``time.Time`` JSON (``time``), ``mime.ParseMediaType``
(``mime``), ``encoding/base64`` errors (``base64``), ``sort.SliceStable``'s order (``sort``), and
``ryanuber/go-glob``, the wildcard match both upstreams use (``glob``).

May import: the standard library only (and each other). Everything else may import it.
"""
