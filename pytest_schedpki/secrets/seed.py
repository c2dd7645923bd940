"""PLACEHOLDER: secrets seed (being built)."""


def apply_secrets_seed(service, section, source):
    return None
