"""The PKI engine as a Hypothesis rule-based state machine, driven over HTTP against a model.

Rules: issue from any live issuer (stored and ``no_store`` roles, one or a batch), generate new roots, revoke by
serial (stored, ``no_store``, issuer serials, unknown) and by PEM, rotate the CRLs, change the
default issuer and delete non-default issuers. The expectations were taken from OpenBao 2.7.2:
a first revocation, a rotation, a root generation and an issuer deletion each rebuild every CRL
(two CRL numbers per rebuild, a new issuer starts at 1); a repeated or refused revocation and a
default change rebuild nothing; revocations whose issuer is gone are listed by the default issuer
of the last rebuild.

Invariants after every step: serial numbers are unique across all issuers of the mount (issued and
issuer certificates alike), ``LIST certs`` and ``LIST certs/revoked`` are exactly the model's, and
each live issuer's CRL is signed by it, has the expected number and holds exactly its revoked
serials."""

from __future__ import annotations

import json

import pytest
from cryptography import x509
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from robust_helpers import RawClient, check_secrets_reply, robust, seed_secrets

from pytest_schedpki.secrets.engines.pki.model import serial_to_hex

MAX_ISSUERS = 5


class SecretsMachine(RuleBasedStateMachine):
    double = None  # set by the test
    baseline = None

    def __init__(self):
        super().__init__()
        self.double.reset()
        self.client = RawClient(self.double.secrets_url)
        base = self.baseline
        self.default = base.root_a["issuer_id"]
        self.crl_default = self.default
        self.issuers: dict[str, dict] = {}
        for root in (base.root_a, base.root_b):
            self.issuers[root["issuer_id"]] = {"serial": root["serial_number"], "cert": root["certificate"],
                                               "crl": self._crl(root["issuer_id"]).extensions.get_extension_for_class(
                                                   x509.CRLNumber).value.crl_number}
        self.deleted: set[str] = set()
        self.issuer_serials = {root["serial_number"] for root in (base.root_a, base.root_b)}
        self.certs = {
            base.leaf["serial_number"]: {"issuer": self.default, "stored": True, "revoked": False,
                                         "pem": base.leaf["certificate"]},
            base.revoked_serial: {"issuer": self.default, "stored": True, "revoked": True, "pem": None},
        }
        self.counter = 0

    def teardown(self):
        self.client.close()

    # -- helpers -------------------------------------------------------------------------------
    def send(self, method: str, rel: str, body: dict | None = None):
        reply = self.client.request(method, "/v1/pki/" + rel, {"X-Vault-Token": "root"},
                                    json.dumps(body).encode() if body is not None else None)
        payload = check_secrets_reply(reply, method, f"{method} {rel} {body}")
        errors = self.double.pop_handler_errors()
        assert not errors, "\n".join(map(str, errors))
        return reply, payload

    def _crl(self, issuer_id: str) -> x509.CertificateRevocationList:
        reply = self.client.request("GET", f"/v1/pki/issuer/{issuer_id}/crl/der")
        assert reply.status == 200 and reply.content_type == "application/pkix-crl", (reply.status, reply.text())
        return x509.load_der_x509_crl(reply.body)

    def live(self) -> list[str]:
        """Live issuers in creation order (ids are random: sorting them would make replays differ)."""
        return [i for i in self.issuers if i not in self.deleted]

    def rebuilt(self) -> None:
        """Every live issuer's CRL was rebuilt: two CRL numbers each (complete + delta)."""
        for issuer_id in self.live():
            self.issuers[issuer_id]["crl"] += 2
        self.crl_default = self.default

    def new_serial(self, serial: str) -> None:
        assert serial not in self.issuer_serials and serial not in self.certs, f"duplicate serial {serial}"

    # -- rules ---------------------------------------------------------------------------------
    @rule(data=st.data(), role=st.sampled_from(["web", "web", "nostore"]), via=st.sampled_from(["default", "id", "name"]))
    def issue(self, data, role, via):
        self.counter += 1
        body = {"common_name": f"h{self.counter}.example.com", "ttl": "1h"}
        if via == "default":
            issuer_id = self.default
            reply, payload = self.send("POST", f"issue/{role}", body)
        else:
            issuer_id = data.draw(st.sampled_from(self.live()), label="issuer")
            ref = issuer_id if via == "id" else self.issuers[issuer_id].get("name", issuer_id)
            reply, payload = self.send("POST", f"issuer/{ref}/issue/{role}", body)
        assert reply.status == 200, reply.text()
        serial = payload["data"]["serial_number"]
        self.new_serial(serial)
        issuing = x509.load_pem_x509_certificate(payload["data"]["issuing_ca"].encode())
        assert serial_to_hex(issuing.serial_number) == self.issuers[issuer_id]["serial"]
        self.certs[serial] = {"issuer": issuer_id, "stored": role != "nostore", "revoked": False,
                              "pem": payload["data"]["certificate"]}

    @rule(data=st.data(), count=st.integers(2, 6))
    def issue_batch(self, data, count):
        for _ in range(count):
            self.issue(data, data.draw(st.sampled_from(["web", "nostore"])), "id")

    @precondition(lambda self: len(self.live()) < MAX_ISSUERS)
    @rule()
    def generate_root(self):
        self.counter += 1
        name = f"gen-{self.counter}"
        reply, payload = self.send("POST", "root/generate/internal", {"common_name": f"Root {self.counter}",
                                                                      "key_type": "ec", "ttl": "8760h",
                                                                      "issuer_name": name})
        assert reply.status == 200, reply.text()
        data = payload["data"]
        self.new_serial(data["serial_number"])
        self.rebuilt()
        self.issuers[data["issuer_id"]] = {"serial": data["serial_number"], "cert": data["certificate"], "crl": 1,
                                           "name": name}
        self.issuer_serials.add(data["serial_number"])

    @rule(data=st.data(), form=st.sampled_from(["colon", "hyphen", "upper"]))
    def revoke_by_serial(self, data, form):
        serial = data.draw(st.sampled_from(list(self.certs)), label="serial")  # creation order
        cert = self.certs[serial]
        sent = {"colon": serial, "hyphen": serial.replace(":", "-"), "upper": serial.upper()}[form]
        reply, payload = self.send("POST", "revoke", {"serial_number": sent})
        if not cert["stored"]:
            assert (reply.status, payload["errors"]) == (400, [f"certificate with serial {sent} not found."])
            return
        assert reply.status == 200 and payload["data"]["state"] == "revoked", reply.text()
        if not cert["revoked"]:
            cert["revoked"] = True
            self.rebuilt()

    @precondition(lambda self: any(c["pem"] and c["issuer"] not in self.deleted for c in self.certs.values()))
    @rule(data=st.data())
    def revoke_by_pem(self, data):
        serial = data.draw(st.sampled_from([s for s, c in self.certs.items()
                                            if c["pem"] and c["issuer"] not in self.deleted]), label="serial")
        cert = self.certs[serial]
        reply, _ = self.send("POST", "revoke", {"certificate": cert["pem"]})
        assert reply.status == 200, reply.text()
        cert["stored"] = True  # a no_store certificate revoked by PEM is stored from then on
        if not cert["revoked"]:
            cert["revoked"] = True
            self.rebuilt()

    @rule(data=st.data())
    def revoke_an_issuer_serial(self, data):
        issuer_id = data.draw(st.sampled_from(self.live()), label="issuer")
        reply, payload = self.send("POST", "revoke", {"serial_number": self.issuers[issuer_id]["serial"]})
        assert (reply.status, payload["errors"]) == (
            400, [f"adding issuer (id: {issuer_id}) to its own CRL is not allowed"]), reply.text()

    @rule(serial=st.sampled_from(["01:02:03:04", "ff", "zz:zz"]))
    def revoke_unknown(self, serial):
        reply, payload = self.send("POST", "revoke", {"serial_number": serial})
        assert (reply.status, payload["errors"]) == (400, [f"certificate with serial {serial} not found."])

    @rule()
    def rotate_crl(self):
        reply, payload = self.send("GET", "crl/rotate")
        assert reply.status == 200 and payload["data"] == {"success": True}, reply.text()
        self.rebuilt()

    @rule(data=st.data())
    def set_default(self, data):
        issuer_id = data.draw(st.sampled_from(self.live()), label="issuer")
        reply, payload = self.send("POST", "config/issuers", {"default": issuer_id})
        assert reply.status == 200 and payload["data"]["default"] == issuer_id, reply.text()
        self.default = issuer_id

    @precondition(lambda self: len(self.live()) > 1)
    @rule(data=st.data())
    def delete_issuer(self, data):
        issuer_id = data.draw(st.sampled_from([i for i in self.live() if i != self.default]), label="issuer")
        reply, _ = self.send("DELETE", f"issuer/{issuer_id}")
        assert reply.status == 200, reply.text()
        self.deleted.add(issuer_id)
        self.rebuilt()

    # -- invariants ------------------------------------------------------------------------------
    @invariant()
    def cert_store_lists_exactly_the_stored_and_revoked_serials(self):
        reply, payload = self.send("LIST", "certs")
        stored = {s for s, c in self.certs.items() if c["stored"]} | self.issuer_serials
        assert set(payload["data"]["keys"]) == stored
        reply, payload = self.send("LIST", "certs/revoked")
        revoked = {s for s, c in self.certs.items() if c["stored"] and c["revoked"]}
        if revoked:
            assert set(payload["data"]["keys"]) == revoked
        else:
            assert (reply.status, payload) == (404, {"errors": []})

    @invariant()
    def each_crl_holds_exactly_the_revoked_serials_of_its_issuer(self):
        for issuer_id in self.live():
            crl = self._crl(issuer_id)
            issuer_cert = x509.load_pem_x509_certificate(self.issuers[issuer_id]["cert"].encode())
            assert crl.is_signature_valid(issuer_cert.public_key())
            assert crl.issuer == issuer_cert.subject
            number = crl.extensions.get_extension_for_class(x509.CRLNumber).value.crl_number
            assert number == self.issuers[issuer_id]["crl"], (issuer_id, number, self.issuers[issuer_id]["crl"])
            expected = {s for s, c in self.certs.items() if c["revoked"] and c["stored"] and (
                c["issuer"] == issuer_id or (c["issuer"] in self.deleted and issuer_id == self.crl_default))}
            assert {serial_to_hex(e.serial_number) for e in crl} == expected


PARTS = 4  # 100 runs as 4 tests of 25: progress shows on long runs and xdist spreads them


@pytest.mark.parametrize("part", range(PARTS))
def test_pki_state_machine(double, part):
    double.scheduler.restore(None)  # each part starts from an empty double and its own baseline
    double.secrets.restore(None)
    SecretsMachine.double = double
    SecretsMachine.baseline = seed_secrets(double)
    run_state_machine_as_test(SecretsMachine, settings=robust(100 // PARTS, stateful_step_count=30))
