"""Where new private keys come from: the background RSA pool and deterministic keys."""

from __future__ import annotations

import os
import threading
import time

import pytest
import requests
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding

from pytest_schedpki import Double
from pytest_schedpki.cli import build_parser
from pytest_schedpki.secrets.engines.pki.codecs import detkeys, keypool
from pytest_schedpki.secrets.engines.pki.codecs.x509 import generate_key


@pytest.fixture
def restore_pool():
    """Tests here reconfigure the process-wide pool; put the previous one back afterwards."""
    before = keypool.current()
    yield
    keypool.configure(size=before.size, seed=before.seed or "")


def _der(key) -> bytes:
    return key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _wait_ready(pool: keypool.KeyPool, count: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pools = pool.status()["pools"]
        if pools and pools[0]["ready"] >= count:
            return
        time.sleep(0.02)
    raise AssertionError(f"pool not filled: {pool.status()}")


def test_pool_starts_on_first_rsa_draw_and_refills_in_the_background(restore_pool):
    pool = keypool.configure(size=2, seed="")
    assert pool.status() == {"deterministic": False, "pools": []}  # nothing made before an RSA draw
    first, _, bits = generate_key("rsa", 0)
    assert bits == 2048 and first.key_size == 2048
    _wait_ready(pool, 2)
    keys = [generate_key("rsa", 2048)[0] for _ in range(4)]  # 2 from the pool, then made on demand
    assert len({_der(k) for k in [first, *keys]}) == 5  # a drawn key is never handed out again
    _wait_ready(pool, 2)
    assert pool.status() == {"deterministic": False,
                             "pools": [{"key_type": "rsa", "bits": 2048, "size": 2, "ready": 2}]}


def test_warm_fills_the_pool_before_any_draw(restore_pool):
    pool = keypool.configure(size=2, seed="")
    pool.warm()
    _wait_ready(pool, 2)
    assert pool.status() == {"deterministic": False,
                             "pools": [{"key_type": "rsa", "bits": 2048, "size": 2, "ready": 2}]}


@pytest.mark.skipif(not hasattr(os, "SCHED_IDLE"), reason="SCHED_IDLE is Linux-only")
def test_idle_warm_runs_on_spare_cpu_until_hurried(restore_pool):
    pool = keypool.configure(size=1, seed="")
    pool.warm(idle=True)
    deadline = time.monotonic() + 30
    while pool._filler_tid is None and time.monotonic() < deadline:
        time.sleep(0.01)
    tid = pool._filler_tid
    assert os.sched_getscheduler(tid) == os.SCHED_IDLE
    pool.hurry()
    assert os.sched_getscheduler(tid) == os.SCHED_OTHER
    assert pool.rsa(2048).key_size == 2048


def test_warm_without_a_pool_starts_nothing(restore_pool):
    pool = keypool.configure(size=0, seed="")
    pool.warm()
    assert pool._thread is None and pool.status() == {"deterministic": False, "pools": []}


def _join_draw_helpers() -> None:
    for thread in threading.enumerate():
        if thread.name == "schedpki-keypool-draw":
            thread.join(timeout=60)


def test_draws_on_an_empty_pool_take_the_first_key_made_and_the_pool_keeps_its_size(restore_pool):
    pool = keypool.configure(size=1, seed="")
    keys: list = []
    drawers = [threading.Thread(target=lambda: keys.append(pool.rsa(2048))) for _ in range(5)]
    for drawer in drawers:
        drawer.start()
    for drawer in drawers:
        drawer.join(timeout=60)
    assert len(keys) == 5 and {k.key_size for k in keys} == {2048}
    assert len({_der(k) for k in keys}) == 5  # never one key twice
    _join_draw_helpers()
    _wait_ready(pool, 1)
    assert pool.status()["pools"] == [{"key_type": "rsa", "bits": 2048, "size": 1, "ready": 1}]  # no surplus kept


def test_a_draw_waiting_when_the_pool_closes_gets_its_helpers_key(restore_pool, monkeypatch):
    made = keypool.KeyPool(size=0).rsa(2048)
    release = threading.Event()

    def slow_make(self, bits, number):
        release.wait(60)
        return made

    monkeypatch.setattr(keypool.KeyPool, "_make_rsa", slow_make)
    pool = keypool.KeyPool(size=1)
    got: list = []
    drawer = threading.Thread(target=lambda: got.append(pool.rsa(2048)))
    drawer.start()
    deadline = time.monotonic() + 30
    while pool._waiting[2048] == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    pool.close()
    release.set()
    drawer.join(timeout=60)
    assert got == [made]


def test_pool_size_zero_makes_keys_on_demand_without_a_thread(restore_pool):
    pool = keypool.configure(size=0, seed="")
    key = pool.rsa(2048)
    assert key.key_size == 2048 and pool._thread is None


def test_other_rsa_sizes_are_not_pooled(restore_pool):
    pool = keypool.configure(size=2, seed="")
    assert pool.rsa(3072).key_size == 3072
    assert pool.status()["pools"] == []


def test_deterministic_keys_repeat_per_seed_and_draw_order(restore_pool, tmp_path, monkeypatch):
    monkeypatch.setenv(detkeys.ENV_CACHE, str(tmp_path))
    keypool.configure(size=0, seed="alpha")
    first = [_der(generate_key(t, b)[0]) for t, b in (("ec", 256), ("ed25519", 0), ("ec", 256), ("rsa", 2048))]
    keypool.configure(seed="alpha")  # numbering starts again
    again = [_der(generate_key(t, b)[0]) for t, b in (("ec", 256), ("ed25519", 0), ("ec", 256), ("rsa", 2048))]
    assert again == first and first[0] != first[2]  # same sequence; two draws differ
    keypool.configure(seed="beta")
    other = [_der(generate_key(t, b)[0]) for t, b in (("ec", 256), ("ed25519", 0))]
    assert other != first[:2]
    assert len(list(tmp_path.iterdir())) == 1  # the derived RSA key was cached on disk


def test_deterministic_pool_prepares_the_next_numbers(restore_pool, tmp_path, monkeypatch):
    monkeypatch.setenv(detkeys.ENV_CACHE, str(tmp_path))
    pool = keypool.configure(size=1, seed="gamma")
    key0 = pool.rsa(2048)
    _wait_ready(pool, 1)
    key1 = pool.rsa(2048)
    assert _der(key1) == _der(detkeys.rsa_key("gamma", 2048, 1)) != _der(key0)
    assert pool.status()["deterministic"] is True


def test_derived_rsa_keys_are_valid_keys():
    key = detkeys.derive_rsa("seed", 1024, 0)
    loaded = serialization.load_der_private_key(_der(key), None)  # full OpenSSL consistency check
    assert loaded.key_size == 1024 and key.private_numbers().public_numbers.e == 65537
    signature = key.sign(b"data", padding.PKCS1v15(), hashes.SHA256())
    key.public_key().verify(signature, b"data", padding.PKCS1v15(), hashes.SHA256())
    assert _der(detkeys.derive_rsa("seed", 1024, 0)) == _der(key)


def test_derived_ec_keys_for_every_curve():
    for curve in (ec.SECP224R1(), ec.SECP256R1(), ec.SECP384R1(), ec.SECP521R1()):
        key = detkeys.derive_ec("s", curve, 3)
        assert key.curve.name == curve.name and _der(key) == _der(detkeys.derive_ec("s", curve, 3))


def test_a_corrupt_cache_file_is_derived_again(tmp_path, monkeypatch):
    monkeypatch.setenv(detkeys.ENV_CACHE, str(tmp_path))
    key = detkeys.rsa_key("delta", 2048, 0)
    (cached,) = tmp_path.iterdir()
    cached.write_bytes(b"garbage")
    assert _der(detkeys.rsa_key("delta", 2048, 0)) == _der(key)


def test_environment_configures_the_first_pool(monkeypatch):
    monkeypatch.setenv(keypool.ENV_SIZE, "7")
    monkeypatch.setenv(keypool.ENV_SEED, "env-seed")
    pool = keypool._from_environment()
    assert (pool.size, pool.seed) == (7, "env-seed")
    monkeypatch.setenv(keypool.ENV_SIZE, "many")
    with pytest.raises(ValueError, match="SCHEDPKI_RSA_KEY_POOL"):
        keypool._from_environment()


def test_knobs_of_double_and_cli(restore_pool):
    Double(rsa_key_pool=3)
    assert (keypool.current().size, keypool.current().seed) == (3, None)
    Double(deterministic_keys="knob")
    assert (keypool.current().size, keypool.current().seed) == (3, "knob")  # the size is kept
    with pytest.raises(ValueError):
        Double(rsa_key_pool=-1)
    args = build_parser().parse_args(["serve", "--rsa-key-pool", "8", "--deterministic-keys", "s"])
    assert (args.rsa_key_pool, args.deterministic_keys) == (8, "s")


def test_keypool_control_endpoint(schedpki):
    answer = requests.get(f"{schedpki.secrets.url}/_schedpki/keypool").json()
    assert set(answer) == {"deterministic", "pools"}
