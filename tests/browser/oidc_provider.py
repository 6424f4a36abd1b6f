"""A fake OpenID Connect provider for the sign-in tests: plain http.server in a thread on a free port.

- /.well-known/openid-configuration: the discovery document;
- /authorize: no login form, it redirects straight back with a code and the state, signing in as
  whoever `signing_in_as` names at that moment (the test sets it before each sign-in);
- /token: exchanges the code for an id_token signed RS256 (a key made for this run), with the
  nonce of the authorize request, the audience the client id, and the user's name and email;
- /jwks: the public key.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from base64 import b64decode, urlsafe_b64encode
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlparse

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

CLIENT_ID = "dailies-dashboard"
CLIENT_SECRET = "fake-provider-client-secret"
KEY_ID = "fake-1"


# The ID token is signed here with `cryptography` (RS256 is a PKCS#1 v1.5 signature over SHA-256):
# Authlib's own JOSE module, which the dashboard's sign-in uses to check it, warns that it is
# deprecated when a test imports it to sign.
def _b64url(raw: bytes) -> str:
    return urlsafe_b64encode(raw).rstrip(b"=").decode()


def _big_endian(number: int) -> bytes:
    return number.to_bytes((number.bit_length() + 7) // 8, "big")


def signed_jwt(header: dict, claims: dict, key: rsa.RSAPrivateKey) -> str:
    signing_input = f"{_b64url(json.dumps(header).encode())}.{_b64url(json.dumps(claims).encode())}"
    signature = key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
    return f"{signing_input}.{_b64url(signature)}"


class FakeProvider:
    def __init__(self, users: dict[str, dict[str, str]]) -> None:
        """`users`: a login name -> the claims of that person (sub, name, email)."""
        self.users = users
        self.signing_in_as = next(iter(users))
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self._codes: dict[str, tuple[str, str | None, str]] = {}  # code -> (user, nonce, redirect_uri)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.issuer = f"http://127.0.0.1:{self.server.server_port}"
        self.token_requests = 0
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def metadata_url(self) -> str:
        return f"{self.issuer}/.well-known/openid-configuration"

    def __enter__(self) -> FakeProvider:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def secrets_toml(self) -> str:
        """The dashboard's [auth] section for this provider ({port}: Streamlit fills in its own)."""
        return (f'[auth]\nredirect_uri = "http://127.0.0.1:{{port}}/oauth2callback"\n'
                f'cookie_secret = "{secrets.token_urlsafe(32)}"\nclient_id = "{CLIENT_ID}"\n'
                f'client_secret = "{CLIENT_SECRET}"\nserver_metadata_url = "{self.metadata_url}"\n')

    # ---------- the endpoints ----------

    def discovery(self) -> dict:
        return {"issuer": self.issuer, "authorization_endpoint": f"{self.issuer}/authorize",
                "token_endpoint": f"{self.issuer}/token", "jwks_uri": f"{self.issuer}/jwks",
                "response_types_supported": ["code"], "subject_types_supported": ["public"],
                "id_token_signing_alg_values_supported": ["RS256"],
                "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
                "scopes_supported": ["openid", "email", "profile"]}

    def authorize(self, query: dict[str, str]) -> str:
        assert query.get("client_id") == CLIENT_ID, query
        code = secrets.token_urlsafe(16)
        self._codes[code] = (self.signing_in_as, query.get("nonce"), query["redirect_uri"])
        return query["redirect_uri"] + "?" + urlencode({"code": code, "state": query.get("state", "")})

    def token(self, form: dict[str, str], authorization: str | None) -> tuple[int, dict]:
        client_id, client_secret = form.get("client_id"), form.get("client_secret")
        if authorization and authorization.startswith("Basic "):
            client_id, _, client_secret = b64decode(authorization[6:]).decode().partition(":")
        if (client_id, client_secret) != (CLIENT_ID, CLIENT_SECRET):
            return 401, {"error": "invalid_client"}
        found = self._codes.pop(form.get("code", ""), None)
        if found is None or form.get("redirect_uri") != found[2]:
            return 400, {"error": "invalid_grant"}
        user, nonce, _ = found
        now = int(time.time())
        claims = {"iss": self.issuer, "aud": CLIENT_ID, "iat": now, "exp": now + 3600, **self.users[user]}
        if nonce:
            claims["nonce"] = nonce
        id_token = signed_jwt({"alg": "RS256", "typ": "JWT", "kid": KEY_ID}, claims, self.key)
        self.token_requests += 1
        return 200, {"access_token": secrets.token_urlsafe(16), "token_type": "Bearer", "expires_in": 3600,
                     "id_token": id_token}

    def jwks(self) -> dict:
        numbers = self.key.public_key().public_numbers()
        return {"keys": [{"kty": "RSA", "kid": KEY_ID, "alg": "RS256", "use": "sig",
                          "n": _b64url(_big_endian(numbers.n)), "e": _b64url(_big_endian(numbers.e))}]}

    def _handler(self):
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _json(self, status: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                url = urlparse(self.path)
                query = {k: v[0] for k, v in parse_qs(url.query).items()}
                if url.path == "/.well-known/openid-configuration":
                    self._json(200, provider.discovery())
                elif url.path == "/jwks":
                    self._json(200, provider.jwks())
                elif url.path == "/authorize":
                    self.send_response(302)
                    self.send_header("Location", provider.authorize(query))
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                else:
                    self._json(404, {"error": "not_found"})

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
                if urlparse(self.path).path == "/token":
                    self._json(*provider.token(form, self.headers.get("Authorization")))
                else:
                    self._json(404, {"error": "not_found"})

        return Handler
