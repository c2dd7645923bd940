# test_first.py
def test_issue_a_certificate(vault, nomad, schedpki):
    issued = vault.secrets.pki.generate_certificate("example-dot-com", "www.example.com")["data"]
    record = schedpki.certs.assert_issued(common_name="www.example.com", role="example-dot-com")
    assert record.serial_number == issued["serial_number"]
    methods, _ = nomad.acl_auth_methods.list()
    assert [m.name for m in methods] == ["example-oidc"]
