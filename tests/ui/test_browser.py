"""The state page in a real headless Chromium: what the API changes shows up without a reload, and the
page's actions (clock, faults) reach the double. Screenshots of each view go to build/ui-screenshots/."""

import datetime

import pytest
import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from .conftest import ROOT_HEADERS, issue, shot

pytestmark = pytest.mark.browser
WAIT = 20  # seconds a change may take to show (the page polls each second)


def _open(browser, url: str, tab: str) -> None:
    browser.get("about:blank")  # a new document: the same URL with another fragment would not load anew
    browser.get(f"{url}/_schedpki/ui/#tab={tab}")
    WebDriverWait(browser, WAIT).until(lambda d: d.find_element(By.ID, "clock-now").text not in ("", "…"))


_ROWS = """
return Array.from(document.querySelectorAll("#" + arguments[0] + " tbody tr")).map((tr) => {
  const row = {serial: tr.dataset.serial || null, text: tr.innerText};
  for (const td of tr.cells) if (td.className) row[td.className.slice(4)] = td.textContent;
  return row;
});"""


def _rows(browser, container: str) -> list[dict]:
    """The rows of a table as ``{"serial", "text", <column>: text}``, read in one step of the page's own
    thread (a table redrawn meanwhile cannot leave a stale element behind)."""
    return browser.execute_script(_ROWS, container)


def _click_in_row(browser, container: str, contains: str) -> None:
    browser.execute_script("""
for (const tr of document.querySelectorAll("#" + arguments[0] + " tbody tr"))
  if (tr.innerText.includes(arguments[1])) { tr.querySelector("button").click(); return; }
throw new Error("no row with " + arguments[1]);""", container, contains)


def _cert_status(browser, serial: str) -> str | None:
    return next((r["status"] for r in _rows(browser, "certs") if r["serial"] == serial), None)


def test_issued_and_revoked_certificates_show_without_a_reload(browser, pki):
    url = pki.secrets.url
    first = issue(url, "alpha.example", alt_names="www.alpha.example")
    _open(browser, url, "certs")
    WebDriverWait(browser, WAIT).until(lambda d: _cert_status(d, first["serial_number"]) == "valid")
    marker = browser.execute_script("return window.performance.timeOrigin")  # same document throughout
    second = issue(url, "beta.example")
    WebDriverWait(browser, WAIT).until(lambda d: _cert_status(d, second["serial_number"]) == "valid")
    r = requests.post(f"{url}/v1/pki/revoke", json={"serial_number": second["serial_number"]}, headers=ROOT_HEADERS)
    assert r.status_code == 200, r.text
    WebDriverWait(browser, WAIT).until(lambda d: _cert_status(d, second["serial_number"]) == "revoked")
    row = next(r for r in _rows(browser, "certs") if r["serial"] == first["serial_number"])
    assert row["sans"] == "DNS:alpha.example, DNS:www.alpha.example" and row["issuer"] == "CN=UI Root CA"
    assert row["common-name"] == "alpha.example" and row["role"] == "web" and row["key"] == "ec P-256"
    shot(browser, "certificates")
    # the text filter narrows the page server-side; the PEM comes when asked
    browser.find_element(By.ID, "cert-q").send_keys("alpha")
    WebDriverWait(browser, WAIT).until(lambda d: [r["serial"] for r in _rows(d, "certs")] == [first["serial_number"]])
    _click_in_row(browser, "certs", first["serial_number"])
    WebDriverWait(browser, WAIT).until(lambda d: d.find_element(By.ID, "cert-pem").text.startswith(
        "-----BEGIN CERTIFICATE-----"))
    assert browser.find_element(By.ID, "cert-pem").text.strip() == first["certificate"].strip()
    shot(browser, "certificates-filtered")
    assert browser.execute_script("return window.performance.timeOrigin") == marker  # never reloaded


def test_the_journal_filters_by_service_path_and_status(browser, pki):
    url = pki.secrets.url
    requests.get(f"{url}/v1/sys/health")
    requests.get(f"{url}/v1/pki/roles/missing", headers=ROOT_HEADERS)
    requests.get(f"{pki.scheduler.url}/v1/acl/auth-methods", headers={"X-Nomad-Token": "root"})
    _open(browser, url, "journal")
    WebDriverWait(browser, WAIT).until(lambda d: len(_rows(d, "journal")) >= 5)
    browser.find_element(By.ID, "journal-path").send_keys("/v1/pki/roles/")
    WebDriverWait(browser, WAIT).until(
        lambda d: {r["path"] for r in _rows(d, "journal")}
        == {"/v1/pki/roles/web", "/v1/pki/roles/missing"})
    browser.find_element(By.ID, "journal-status").send_keys("404")
    WebDriverWait(browser, WAIT).until(
        lambda d: [r["path"] for r in _rows(d, "journal")]
        == ["/v1/pki/roles/missing"])
    shot(browser, "journal")
    browser.find_element(By.ID, "journal-path").clear()
    browser.find_element(By.ID, "journal-status").clear()
    Select(browser.find_element(By.ID, "journal-service")).select_by_visible_text("scheduler")
    WebDriverWait(browser, WAIT).until(
        lambda d: {r["service"] for r in _rows(d, "journal")} == {"scheduler"})


def test_moving_the_clock_from_the_page(browser, pki):
    _open(browser, pki.secrets.url, "secrets")
    before = pki.double.clock.now() if hasattr(pki, "double") else None
    browser.find_element(By.ID, "clock-advance-day").click()
    WebDriverWait(browser, WAIT).until(lambda d: "(manual)" in d.find_element(By.ID, "clock-mode").text)
    shown = datetime.datetime.fromisoformat(browser.find_element(By.ID, "clock-now").text.replace("Z", "+00:00"))
    real = datetime.datetime.now(datetime.timezone.utc)
    assert datetime.timedelta(hours=23) < shown - real < datetime.timedelta(hours=25), (before, shown)
    browser.find_element(By.ID, "clock-set").send_keys("2031-02-03T04:05:06Z")
    browser.find_element(By.ID, "clock-set-button").click()
    WebDriverWait(browser, WAIT).until(lambda d: d.find_element(By.ID, "clock-now").text.startswith("2031-02-03T04:05"))
    state = requests.get(f"{pki.secrets.url}/_schedpki/clock").json()
    assert state["mode"] == "manual" and state["now"].startswith("2031-02-03T04:05")
    shot(browser, "clock")


def test_adding_a_fault_and_watching_its_hits(browser, pki):
    url = pki.secrets.url
    _open(browser, url, "faults")
    Select(browser.find_element(By.ID, "fault-service")).select_by_visible_text("secrets")
    browser.find_element(By.ID, "fault-path").send_keys("/v1/sys/health")
    browser.find_element(By.ID, "fault-status").send_keys("503")
    browser.find_element(By.ID, "fault-add").click()
    WebDriverWait(browser, WAIT).until(lambda d: len(_rows(d, "faults")) == 1)
    hits = lambda d: _rows(d, "faults")[0]["hits"]  # noqa: E731
    assert hits(browser) == "0"
    for _ in range(3):
        assert requests.get(f"{url}/v1/sys/health").status_code == 503
    WebDriverWait(browser, WAIT).until(lambda d: hits(d) == "3")
    shot(browser, "faults")
    browser.find_element(By.ID, "fault-clear").click()
    WebDriverWait(browser, WAIT).until(lambda d: not _rows(d, "faults"))
    assert requests.get(f"{url}/v1/sys/health").status_code == 200


def test_secrets_and_scheduler_views(browser, pki):
    url = pki.secrets.url
    s = requests.Session()
    s.headers.update(ROOT_HEADERS)
    assert s.post(f"{url}/v1/sys/mounts/kv", json={"type": "kv", "options": {"version": "2"}}).status_code == 204
    assert s.post(f"{url}/v1/kv/data/app/db", json={"data": {"password": "hunter2-ui"}}).status_code == 200
    _open(browser, url, "secrets")
    WebDriverWait(browser, WAIT).until(lambda d: any("app/db" in r["text"] for r in _rows(d, "kv")))
    assert "hunter2-ui" not in browser.page_source
    _click_in_row(browser, "kv", "app/db")
    WebDriverWait(browser, WAIT).until(lambda d: "hunter2-ui" in d.find_element(By.ID, "kv-value").text)
    assert "CN=UI Root CA" in browser.find_element(By.ID, "issuers").text
    shot(browser, "secrets")
    browser.find_element(By.ID, "tab-scheduler").click()
    WebDriverWait(browser, WAIT).until(lambda d: "Bootstrap Token" in d.find_element(By.ID, "acl-tokens").text)
    browser.find_element(By.ID, "replication-pause").click()
    WebDriverWait(browser, WAIT).until(lambda d: "paused" in d.find_element(By.ID, "replication").text)
    browser.find_element(By.ID, "replication-resume").click()
    WebDriverWait(browser, WAIT).until(lambda d: "running" in d.find_element(By.ID, "replication").text)
    shot(browser, "scheduler")
