"""The application under test: it gets its TLS certificates and its configuration from OpenBao."""

import hvac


class CertificateClient:
    """Issues, signs and revokes the application's certificates through one PKI role."""

    def __init__(self, url: str, token: str, mount: str = "pki", role: str = "web"):
        self.client = hvac.Client(url=url, token=token)
        self.mount, self.role = mount, role

    def issue(self, common_name: str, **params) -> dict:
        return self.client.secrets.pki.generate_certificate(self.role, common_name, extra_params=params,
                                                            mount_point=self.mount)["data"]

    def issue_with_retry(self, common_name: str, attempts: int = 3) -> dict:
        for attempt in range(attempts):
            try:
                return self.issue(common_name)
            except hvac.exceptions.VaultDown:
                if attempt == attempts - 1:
                    raise
        raise AssertionError("not reached")

    def sign(self, csr_pem: str, common_name: str) -> dict:
        return self.client.secrets.pki.sign_certificate(self.role, csr_pem, common_name, mount_point=self.mount)["data"]

    def revoke(self, serial: str) -> None:
        self.client.secrets.pki.revoke_certificate(serial, mount_point=self.mount)

    def revoked_at(self, serial: str) -> int:
        return self.client.secrets.pki.read_certificate(serial, mount_point=self.mount)["data"]["revocation_time"]

    def allowed_domains(self) -> list:
        return self.client.secrets.pki.read_role(self.role, mount_point=self.mount)["data"]["allowed_domains"]


def load_config(url: str, token: str, path: str = "app/config") -> dict:
    client = hvac.Client(url=url, token=token)
    return client.secrets.kv.v2.read_secret_version(path, mount_point="kv", raise_on_deleted_version=True)["data"]["data"]


def save_config(url: str, token: str, path: str, values: dict) -> None:
    hvac.Client(url=url, token=token).secrets.kv.v2.create_or_update_secret(path, values, mount_point="kv")
