"""A secrets request leaves no reference cycles behind: its environ, request, body stream and answer are
freed as the call returns, not left to the garbage collector (whose runs inside a client's loop cost
the caller; werkzeug's ``Request`` filed in ``environ["werkzeug.request"]`` made such a cycle)."""

import gc

from pytest_schedpki import Double
from pytest_schedpki.wire import inprocess


def test_an_in_process_role_read_leaves_no_cyclic_garbage():
    double = Double(rsa_key_pool=0).start()
    try:
        server = double.secrets_server
        headers = [("Host", f"127.0.0.1:{server.port}"), ("X-Vault-Token", double.root_token)]
        for target, body in (("/v1/sys/mounts/pki", b'{"type": "pki"}'),
                             ("/v1/pki/roles/web", b'{"allow_any_name": true}')):
            answer = inprocess.exchange(server, "POST", target, headers + [("Content-Length", str(len(body)))], body)
            assert answer.status in (200, 204), answer.body
        read = inprocess.exchange(server, "GET", "/v1/pki/roles/web", headers)
        assert read.status == 200
        gc.collect()
        gc.disable()
        try:
            for _ in range(50):
                assert inprocess.exchange(server, "GET", "/v1/pki/roles/web", headers).status == 200
            # 0 from the reads; the bound leaves room for another thread's odd cycle (xdist's channel),
            # far below the 9 objects per read that the environ <-> request cycle left
            assert gc.collect() < 50
        finally:
            gc.enable()
        assert [e.path for e in double.journal.entries("secrets")][-50:] == ["/v1/pki/roles/web"] * 50
    finally:
        double.stop()
