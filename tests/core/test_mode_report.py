"""What upstream and shadow mode say they compared (:mod:`pytest_schedpki.upstream.run_report`),
without a real server."""

from types import SimpleNamespace

from pytest_schedpki.upstream.run_report import WORKER_KEY, ModeReport


class Config:
    """The options a ModeReport reads."""

    def __init__(self, **options):
        self.options = options

    def getoption(self, name, default=None):
        return self.options.get(name)

    def getini(self, name):
        return {"schedpki_seed": [], "schedpki_shadow_mode": "fail"}.get(name, "")


def shadow_record(nodeid, requests, total, differences=0, stopped=""):
    return {"mode": "shadow", "nodeid": nodeid, "requests": requests, "total": total, "differences": differences,
            "stopped": stopped}


def test_the_controller_sums_its_workers_into_one_shadow_summary():
    controller = ModeReport(Config(schedpki_shadow="bao"))
    workers = [
        {"records": [shadow_record("t.py::b", 3, 3), shadow_record("t.py::a", 0, 2, stopped="request 1 (GET /v1/x) was "
                                                                                          "made with a sealed double")],
         "servers": ["http://127.0.0.1:1"]},
        {"records": [shadow_record("t.py::c", 1, 1, differences=1), shadow_record("t.py::d", 0, 0)],
         "servers": ["http://127.0.0.1:2"]},
    ]
    for output in workers:
        controller.pytest_testnodedown(SimpleNamespace(workeroutput={WORKER_KEY: output}), None)
    controller.pytest_testnodedown(SimpleNamespace(workeroutput={}), None)  # a worker that ran no schedpki test
    assert controller.summary_lines() == [
        "schedpki shadow: 4 requests compared in 2 tests, 1 difference in 1 test, 1 test not compared in full; "
        "real server: bao at http://127.0.0.1:1, http://127.0.0.1:2",
        "  differs: t.py::c: 1 request answered differently",
        "  not compared: t.py::a: 0 of 2 requests compared; request 1 (GET /v1/x) was made with a sealed double",
    ]


def test_a_run_without_a_test_of_the_fixture_still_says_it_compared_nothing():
    assert ModeReport(Config(schedpki_shadow="http://127.0.0.1:8200")).summary_lines() == [
        "schedpki shadow: 0 requests compared in 0 tests, 0 differences in 0 tests, 0 tests not compared in full; "
        "real server: http://127.0.0.1:8200"]
    assert ModeReport(Config(schedpki_upstream_scheduler="http://127.0.0.1:4646")).summary_lines() == [
        "schedpki upstream: scheduler requests went straight to http://127.0.0.1:4646 (not counted), "
        "0 tests skipped for a double-only knob"]


def test_a_plain_run_has_no_header_and_no_summary():
    report = ModeReport(Config())
    assert report.pytest_report_header(Config()) == [] and report.summary_lines() == []


def test_the_worker_keeps_its_records_in_workeroutput_for_the_controller():
    config = Config(schedpki_upstream="http://127.0.0.1:8200")
    config.workeroutput = {}
    worker = ModeReport(config)
    worker._record({"mode": "upstream", "nodeid": "t.py::a", "requests": 2, "skipped": "", "not_sent": []},
                   "http://127.0.0.1:8200")
    worker._record({"mode": "upstream", "nodeid": "t.py::b", "requests": 0, "skipped": "seal() exists only in the double",
                    "not_sent": []}, None)
    assert config.workeroutput[WORKER_KEY]["servers"] == ["http://127.0.0.1:8200"]
    assert worker.summary_lines() == [
        "schedpki upstream: 2 requests answered by the real server in 1 test (secrets: http://127.0.0.1:8200), "
        "1 test skipped for a double-only knob",
        "  skipped: t.py::b: seal() exists only in the double"]
