"""The secrets half: a Vault/OpenBao-like service hosting PKI engine mounts."""
