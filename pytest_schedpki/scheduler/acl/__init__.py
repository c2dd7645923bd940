"""Nomad's ACL policy language on the scheduler: rules parsed and validated, and the decisions a
set of policies makes (``acl/policy.go``, ``acl/acl.go``).

* ``capabilities`` - the shorthands (``policy = "read"``), each block's capabilities and expansions;
* ``hcl_decode`` - HCL1's decoder into the policy's blocks (Go's reflection rules, error texts and
  panics); ``gosyntax`` - Go's ``%#v`` of a block, as Nomad's errors print it;
* ``policy`` - ``acl.Parse``: a policy's ``Rules`` to a :class:`~.policy.Policy`, or Nomad's error;
* ``glob`` - ``go-glob`` and the closest-match rule for wildcard names;
* ``evaluate`` - ``acl.NewACL`` and its ``Allow*`` decisions, pure functions over parsed policies.

Nothing here holds state or knows HTTP; endpoints call it. May import: ``hcl/`` and ``golang/``
(and each other); never the rest of the scheduler, ``secrets/`` or the double.
"""
