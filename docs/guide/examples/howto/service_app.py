# service_app.py: the application code under test
import hvac


def start_service(vault_url, role_id, secret_id):
    client = hvac.Client(url=vault_url)
    client.auth.approle.login(role_id, secret_id)
    config = client.secrets.kv.v2.read_secret_version(
        "web/config", raise_on_deleted_version=True)["data"]["data"]
    cert = client.secrets.pki.generate_certificate(
        "web", config["hostname"], mount_point="pki_int")["data"]
    client.auth.token.renew_self()
    return config, cert
