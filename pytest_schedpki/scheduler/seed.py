"""PLACEHOLDER - replaced by the scheduler implementation."""


def apply_scheduler_seed(state, section, source):
    return None
