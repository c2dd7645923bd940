"""One question to an ACL, written as a short string, for tests that assert what a token may do.

Forms (each the ``Allow*`` call Nomad's endpoints make, ``acl/acl.go``):

* ``namespace:<ns>:<capability>`` - ``AllowNamespaceOperation`` (``submit-job``, ``read-job``,
  ``list-jobs``, ``alloc-exec``, ...; ``<ns>`` may be ``*``: any namespace);
* ``namespace:<ns>`` - ``AllowNamespace`` (any capability, no deny);
* ``node_pool:<pool>:<capability>``, ``host_volume:<name>:<capability>`` - their ``Allow*Operation``;
* ``variables:<ns>:<path>:<op>`` - ``AllowVariableOperation`` (``read``, ``list``, ``write``, ``destroy``);
* ``agent:read|write``, ``node:read|write``, ``operator:read|write``, ``quota:read|write``,
  ``plugin:read|list`` - the coarse policies;
* ``operator:<capability>`` (``snapshot-save``, ``license-read``, ``keyring-rotate``, ...) -
  ``AllowOperatorOperation``;
* ``management`` - ``IsManagement``.

:func:`allows` raises ValueError naming the forms for anything else.
"""

from __future__ import annotations

from .evaluate import ACL

FORMS = ("namespace:<ns>[:<capability>]", "node_pool:<pool>:<capability>", "host_volume:<name>:<capability>",
         "variables:<ns>:<path>:<op>", "agent|node|operator|quota:read|write", "plugin:read|list",
         "operator:<capability>", "management")
_COARSE = {("agent", "read"): ACL.allow_agent_read, ("agent", "write"): ACL.allow_agent_write,
           ("node", "read"): ACL.allow_node_read, ("node", "write"): ACL.allow_node_write,
           ("operator", "read"): ACL.allow_operator_read, ("operator", "write"): ACL.allow_operator_write,
           ("quota", "read"): ACL.allow_quota_read, ("quota", "write"): ACL.allow_quota_write,
           ("plugin", "read"): ACL.allow_plugin_read, ("plugin", "list"): ACL.allow_plugin_list}


def allows(acl: ACL, check: str) -> bool:
    """Whether ``acl`` allows ``check`` (one of the module's forms)."""
    if check == "management":
        return acl.is_management()
    kind, _, rest = check.partition(":")
    parts = rest.split(":") if rest else []
    if kind == "namespace" and len(parts) == 1 and parts[0]:
        return acl.allow_namespace(parts[0])
    if kind == "namespace" and len(parts) == 2 and all(parts):
        return acl.allow_namespace_operation(parts[0], parts[1])
    if kind == "node_pool" and len(parts) == 2 and all(parts):
        return acl.allow_node_pool_operation(parts[0], parts[1])
    if kind == "host_volume" and len(parts) == 2 and all(parts):
        return acl.allow_host_volume_operation(parts[0], parts[1])
    if kind == "variables" and len(parts) >= 3 and parts[0] and parts[-1]:
        return acl.allow_variable_operation(parts[0], ":".join(parts[1:-1]), parts[-1])
    if len(parts) == 1 and (kind, parts[0]) in _COARSE:
        return _COARSE[(kind, parts[0])](acl)
    if kind == "operator" and len(parts) == 1 and parts[0]:
        return acl.allow_operator_operation(parts[0])
    raise ValueError(f"unknown ACL check {check!r}; expected one of: {', '.join(FORMS)}")
