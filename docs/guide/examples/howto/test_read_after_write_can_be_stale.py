def test_read_after_write_can_be_stale(schedpki, nomad):
    schedpki.pause_replication()
    schedpki.factories.scheduler.jwt_auth_method("ci")
    assert nomad.acl_auth_methods.list()[0] == []                   # the local region has not seen it
    assert [m.Name for m in schedpki.authoritative_view().methods.values()] == ["ci"]
    schedpki.sync()
    assert [s.name for s in nomad.acl_auth_methods.list()[0]] == ["ci"]
