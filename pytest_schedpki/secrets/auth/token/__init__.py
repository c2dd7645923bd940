"""The token auth method: the token store (``store``: ``Token``, ``TokenStore``, token ids and
accessors, TTLs, ``lookup-self`` data).

The method's paths (``auth/token/create``, ``lookup-self``, ``lookup``, ``renew-self``) are still
defined in ``secrets/sys.py`` and registered in ``secrets.http.AUTH_METHODS``; they move here next.

May import: the standard library and ``framework/``. Never imports the service.
"""
