"""A real SMTP server on loopback (aiosmtpd), with STARTTLS and AUTH LOGIN/PLAIN, so tests can check that
mail is actually delivered the way a production relay would take it."""

from __future__ import annotations

import datetime
import email
import email.policy
import ipaddress
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, AuthResult, Envelope, LoginPassword, Session
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from tests.support.servers import free_port


@dataclass
class SmtpServer:
    """A running server's address and credentials, and what it has received; also aiosmtpd's handler."""

    host: str
    port: int
    username: str
    password: str
    ca_file: Path
    messages: list[EmailMessage] = field(default_factory=list)
    logins: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def wait_for_messages(self, count: int, timeout: float = 60) -> list[EmailMessage]:
        """The messages received so far, once there are at least `count` of them."""
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                if len(self.messages) >= count:
                    return list(self.messages)
                arrived = len(self.messages)
            if time.monotonic() > deadline:
                raise AssertionError(f"expected {count} message(s) within {timeout:g} s, {arrived} arrived")
            time.sleep(0.05)

    # aiosmtpd's handler hook, called on the server's thread for each message accepted.
    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        message = email.message_from_bytes(envelope.original_content or b"", policy=email.policy.default)
        with self._lock:
            self.messages.append(message)
        return "250 Message accepted for delivery"

    def authenticate(self, server: SMTP, session: Session, envelope: Envelope, mechanism: str, data: Any) -> AuthResult:
        if isinstance(data, LoginPassword) and (data.login, data.password) == (
            self.username.encode(),
            self.password.encode(),
        ):
            with self._lock:
                self.logins.append(data.login.decode())
            return AuthResult(success=True)
        # handled=False: aiosmtpd answers "535 5.7.8 Authentication credentials invalid".
        return AuthResult(success=False, handled=False)


def _self_signed_certificate(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and localhost that is its own CA, and its key: (cert PEM, key PEM)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "dailies test SMTP")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]),
            critical=False,
        )
        # A CA certificate, so the client can trust this same PEM as its cafile.
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            # It signs (the TLS handshake) and is its own issuer; nothing else.
            x509.KeyUsage(digital_signature=True, key_cert_sign=True, content_commitment=False, key_encipherment=False,
                          data_encipherment=False, key_agreement=False, crl_sign=False, encipher_only=False,
                          decipher_only=False),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "smtp-cert.pem", folder / "smtp-key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_file, key_file


@contextmanager
def smtp_server(tmp_path: Path, username: str = "dailies", password: str = "s3cret") -> Iterator[SmtpServer]:
    """Run an SMTP server on 127.0.0.1 that requires STARTTLS, then AUTH, before it takes mail."""
    cert_file, key_file = _self_signed_certificate(tmp_path)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert_file, key_file)
    server = SmtpServer(host="127.0.0.1", port=free_port(), username=username, password=password, ca_file=cert_file)
    controller = Controller(
        server,
        hostname=server.host,
        port=server.port,
        # The name in the greeting; without it aiosmtpd calls socket.getfqdn(), which can wait on DNS.
        server_hostname="localhost",
        # start() checks readiness by reading the plain-text greeting, which require_starttls still sends.
        ready_timeout=30,
        tls_context=tls,
        require_starttls=True,
        auth_require_tls=True,
        auth_required=True,
        authenticator=server.authenticate,
    )
    controller.start()
    try:
        yield server
    finally:
        controller.stop()
