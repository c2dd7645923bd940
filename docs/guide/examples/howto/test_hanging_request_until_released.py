import threading

import requests

from pytest_schedpki import Fault


def test_hanging_request_until_released(schedpki):
    hang = schedpki.faults.add(Fault(service="secrets", path="/v1/sys/health", hang=True, times=1))
    answers = []
    worker = threading.Thread(target=lambda: answers.append(requests.get(f"{schedpki.secrets.url}/v1/sys/health").status_code))
    worker.start()
    worker.join(0.2)
    assert answers == []                                            # still hanging
    hang.release()
    worker.join(5)
    assert answers == [200]
