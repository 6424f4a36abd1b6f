"""E-mail out, for notifications: one message over SMTP, with TLS (STARTTLS, or TLS from the start)
and a login when the server's URL holds one. The server is the operator's (DAILIES_SMTP_URL), never a
member's, so its address is not checked as a member's webhook is; each step has the callback timeout."""

from __future__ import annotations

import smtplib
import ssl
from email.message import EmailMessage
from email.utils import make_msgid
from urllib.parse import unquote, urlsplit

from dailies.service.settings import Settings


class MailError(Exception):
    """The message was not accepted; the text says how far it got."""


def send(settings: Settings, to: str, subject: str, text: str, message_id: str) -> None:
    if not settings.smtp_url:
        raise MailError("no SMTP server is set (DAILIES_SMTP_URL)")
    parts = urlsplit(settings.smtp_url)
    if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
        raise MailError("DAILIES_SMTP_URL must be smtp://[user:password@]host[:port] or smtps://...")
    context = ssl.create_default_context(cafile=settings.smtp_ca_file)
    timeout = settings.callback_timeout
    message = EmailMessage()
    message["From"] = settings.smtp_from
    message["To"] = to
    message["Subject"] = subject
    message["Message-ID"] = make_msgid(idstring=message_id.removeprefix("msg_")[:24], domain="dailies")
    message.set_content(text)
    try:
        if parts.scheme == "smtps":
            client: smtplib.SMTP = smtplib.SMTP_SSL(parts.hostname, parts.port or 465, timeout=timeout,
                                                    context=context)
        else:
            client = smtplib.SMTP(parts.hostname, parts.port or 587, timeout=timeout)
        with client:
            if parts.scheme == "smtp":
                client.starttls(context=context)  # required: a login or a message never goes in the clear
            if parts.username:
                client.login(unquote(parts.username), unquote(parts.password or ""))
            client.send_message(message)
    except (smtplib.SMTPException, OSError, ssl.SSLError) as exc:
        raise MailError(f"{type(exc).__name__}: {exc}") from exc
