"""Shared by the state page's tests: a PKI mount with a root and a role, a headless Chromium (Debian's
``chromium`` and ``chromium-driver``, driven by Selenium; ``.ci/run`` installs them), screenshots."""

import os
import pathlib
import shutil

import pytest
import requests

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHOTS = ROOT / "build" / "ui-screenshots"
ROOT_HEADERS = {"X-Vault-Token": "root"}


def setup_pki(url: str, mount: str = "pki") -> None:
    """``mount`` with an EC root CA and a role ``web`` that issues any name (EC keys: no RSA wait)."""
    s = requests.Session()
    s.headers.update(ROOT_HEADERS)
    assert s.post(f"{url}/v1/sys/mounts/{mount}", json={"type": "pki"}).status_code == 204
    r = s.post(f"{url}/v1/{mount}/root/generate/internal", json={"common_name": "UI Root CA", "key_type": "ec"})
    assert r.status_code == 200, r.text
    r = s.post(f"{url}/v1/{mount}/roles/web", json={"allow_any_name": True, "key_type": "ec", "ttl": "24h"})
    assert r.status_code in (200, 204), r.text


def issue(url: str, common_name: str, mount: str = "pki", **extra) -> dict:
    r = requests.post(f"{url}/v1/{mount}/issue/web", json={"common_name": common_name, **extra}, headers=ROOT_HEADERS)
    assert r.status_code == 200, r.text
    return r.json()["data"]


@pytest.fixture
def pki(schedpki):
    setup_pki(schedpki.secrets.url)
    return schedpki


def _chromium_paths() -> tuple[str | None, str | None]:
    return (shutil.which("chromium") or shutil.which("chromium-browser"),
            shutil.which("chromedriver") or ("/usr/lib/chromium/chromedriver"
                                             if os.path.exists("/usr/lib/chromium/chromedriver") else None))


@pytest.fixture(scope="session")
def browser():
    """One headless Chromium for the session (missing browser: the test fails, it is not skipped)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    binary, driver_path = _chromium_paths()
    assert binary and driver_path, ("the browser tests need Debian's chromium and chromium-driver "
                                    "(apt-get install -y chromium chromium-driver; .ci/run does it)")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1440,1000", "--no-first-run", "--disable-extensions"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


def shot(driver, name: str) -> pathlib.Path:
    """Save a screenshot as build/ui-screenshots/<name>.png (the test's artifact)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    driver.save_screenshot(str(path))
    return path
