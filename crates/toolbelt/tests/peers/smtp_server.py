"""An SMTP server on loopback for the e-mail channel's tests (aiosmtpd from PyPI): STARTTLS
required before anything else, then AUTH (user `bot`, password `s3cret`), with a certificate
for 127.0.0.1 signed by a fresh test CA (trustme) written to DIR/ca.pem. Each message it
accepts is appended to DIR/received.jsonl as {"from", "to", "data"}.

Usage: smtp_server.py DIR
Prints {"port": N} once it listens; runs until stdin closes.
"""

import json
import socket
import ssl
import sys
from pathlib import Path

import trustme
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


class Keep:
    async def handle_DATA(self, server, session, envelope):
        with open(out / "received.jsonl", "a") as f:
            f.write(json.dumps({
                "from": envelope.mail_from,
                "to": envelope.rcpt_tos,
                "data": envelope.content.decode("utf-8", "replace"),
                "tls": session.ssl is not None,
            }) + "\n")
        return "250 OK: queued as 42"


def authenticate(server, session, envelope, mechanism, auth_data):
    ok = isinstance(auth_data, LoginPassword) and auth_data.login == b"bot" and auth_data.password == b"s3cret"
    # handled=False: aiosmtpd answers a failure itself (535).
    return AuthResult(success=ok, handled=False)


out = Path(sys.argv[1])
ca = trustme.CA()
ca.cert_pem.write_to_path(str(out / "ca.pem"))
cert = ca.issue_cert("127.0.0.1", "localhost")
context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
cert.configure_cert(context)

# aiosmtpd connects to its own port to check it listens, so it needs a real one up front.
probe = socket.socket()
probe.bind(("127.0.0.1", 0))
port = probe.getsockname()[1]
probe.close()
controller = Controller(
    Keep(),
    hostname="127.0.0.1",
    port=port,
    tls_context=context,
    require_starttls=True,
    authenticator=authenticate,
    auth_required=True,
    auth_require_tls=True,
)
controller.start()
print(json.dumps({"port": controller.port}), flush=True)
sys.stdin.read()
controller.stop()
