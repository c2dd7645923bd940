"""The PKI secrets engine (OpenBao 2.7 behaviour)."""
