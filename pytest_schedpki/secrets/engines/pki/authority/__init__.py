"""The certificate authority of a mount: issuers (``issuers``: read, update, delete,
``config/issuers``, chains, AIA), managed keys (``keys``), root and intermediate generation
(``ca_generate``, ``ca_params``), CA and bundle import (``ca_import``); ``routes`` is the table.

May import: ``..model``, ``..codecs``, ``..issuance`` (the name and validity rules shared with
leaves), ``secrets.framework``, ``golang``. Never ``..revocation`` (announce with
``backend.issuers_changed()`` instead), never the service.
"""
