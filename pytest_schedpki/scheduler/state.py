"""PLACEHOLDER - replaced by the scheduler implementation."""


class SchedulerState:
    def __init__(self, clock, management_token="root"):
        self.clock = clock
        self.management_token = management_token

    def snapshot(self):
        return None

    def restore(self, snapshot):
        return None
