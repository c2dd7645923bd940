"""The secrets layer's request-header dict (handed to handlers and the journal) is werkzeug's
``EnvironHeaders`` as a dict: same names, same order, same values (``secrets.http_headers.request_headers``)."""

import pytest
from werkzeug.datastructures import EnvironHeaders

from pytest_schedpki.secrets.http_headers import request_headers as _headers

ENVIRONS = [
    {"REQUEST_METHOD": "GET", "PATH_INFO": "/v1/sys/health", "HTTP_HOST": "127.0.0.1:8200",
     "HTTP_X_VAULT_TOKEN": "root", "HTTP_USER_AGENT": "hvac", "CONTENT_LENGTH": "", "CONTENT_TYPE": ""},
    {"REQUEST_METHOD": "POST", "HTTP_HOST": "h", "CONTENT_LENGTH": "35", "CONTENT_TYPE": "application/json",
     "HTTP_X_VAULT_REQUEST": "true", "HTTP_ACCEPT_ENCODING": "gzip, deflate", "wsgi.url_scheme": "http"},
    {"HTTP_CONTENT_TYPE": "text/plain", "HTTP_CONTENT_LENGTH": "3", "CONTENT_TYPE": "application/json",
     "HTTP_X_FORWARDED_FOR": "10.0.0.1,10.0.0.2", "HTTP_X_VAULT_WRAP_TTL": "60s", "HTTP_AUTHORIZATION": "Bearer x",
     "SERVER_NAME": "127.0.0.1"},
    {},
]


@pytest.mark.parametrize("environ", ENVIRONS)
def test_the_header_dict_is_werkzeugs_environ_headers(environ):
    expected = dict(EnvironHeaders(environ).items())
    got = _headers(environ)
    assert got == expected
    assert list(got) == list(expected)
