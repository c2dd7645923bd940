"""The scheduler half: Nomad's ACL auth methods API (``/v1/acl/auth-method(s)``)."""
