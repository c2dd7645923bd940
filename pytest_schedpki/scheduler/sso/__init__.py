"""Nomad SSO on the scheduler: ACL binding rules, policies, roles, login tokens, JWT and OIDC login.

What lives here (one job per module):

* ``body`` - request bodies decoded like Go's ``encoding/json`` into plain dicts;
* ``bexpr`` - the go-bexpr selector subset Nomad's binder uses (parse + evaluate);
* ``rules`` / ``objects`` - binding rules, policies and roles: records, validation, hashes, JSON;
* ``store`` - their state (shares the scheduler state's lock, raft index and replication knobs);
* ``claims`` (claims and binding) / ``jwt_validate`` / ``login`` - Nomad's ``lib/auth`` login algorithm;
* ``http`` - the ``/v1/acl/binding-rule(s)``, ``policy``, ``role``, ``token`` and ``login`` routes.

Imports: this package may import ``..acl`` (policy rules), ``..model``, ``..tokens``, ``..blocking``, ``..replication``,
``..views``, ``...golang`` and ``...clock``; the scheduler state and HTTP skin import it, never the
other way round (``store`` receives the state object it works for).
"""
