"""Redaction: API keys and URL credentials never reach the run store, a report or the terminal.

A run store is meant to be shared, and a server's error text, an ``--api-base`` URL or a manifest's
copy of the settings may carry a secret. :func:`redact` replaces, in any text:

- the value of every environment variable that holds a secret: a name ending in ``_KEY``,
  ``_TOKEN``, ``_SECRET`` or ``_PASSWORD`` (``OPENAI_API_KEY``, ``HF_TOKEN``, ...) or one of
  :data:`SECRET_VARIABLES`, when the value is at least :data:`MIN_SECRET_LENGTH` characters long;
- strings shaped like known provider keys (:data:`KEY_PATTERNS`: ``sk-...``, ``hf_...``, ...);
- the user and password of a URL (``http://user:secret@host`` -> ``http://[redacted]@host``), a
  bearer token and ``api_key=...``-style query parameters.

Each becomes :data:`REDACTED`. :func:`redact_data` does the same through the strings of a JSON-like
value. Whatever pvsst records or prints that may hold text from outside (an error, a URL, a
manifest) passes through here: the gateway's call records, the manifest writer, the CLI's one-line
errors and the run summary.

Examples
--------
>>> redact("POST http://me:hunter22@127.0.0.1:8080/v1 failed: bad key sk-abcdefghijklmnop1234")
'POST http://[redacted]@127.0.0.1:8080/v1 failed: bad key [redacted]'
>>> redact_data({"api_base": "https://u:p@example.org/v1", "n": 3})
{'api_base': 'https://[redacted]@example.org/v1', 'n': 3}
"""
from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

REDACTED = "[redacted]"
MIN_SECRET_LENGTH = 8
"""Shorter environment values are not treated as secrets (``OLLAMA_KEY=1`` would blank every ``1``)."""
SECRET_SUFFIXES = ("_KEY", "_TOKEN", "_SECRET", "_PASSWORD")
SECRET_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AZURE_API_KEY", "GEMINI_API_KEY",
                    "HUGGINGFACE_API_KEY", "HF_TOKEN", "TOGETHERAI_API_KEY", "OPENROUTER_API_KEY",
                    "MISTRAL_API_KEY", "GROQ_API_KEY", "COHERE_API_KEY", "DEEPSEEK_API_KEY",
                    "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "LITELLM_MASTER_KEY")
"""Provider variables redacted by name (most also end in one of :data:`SECRET_SUFFIXES`)."""

KEY_PATTERNS = (
    r"\bsk-[A-Za-z0-9_\-]{16,}",            # OpenAI, Anthropic (sk-ant-...), DeepSeek, many proxies
    r"\bhf_[A-Za-z0-9]{20,}",               # Hugging Face
    r"\bgsk_[A-Za-z0-9]{20,}",              # Groq
    r"\bxai-[A-Za-z0-9]{20,}",              # xAI
    r"\bAIza[0-9A-Za-z_\-]{30,}",           # Google
    r"\bAKIA[0-9A-Z]{16}\b",                # AWS access key id
    r"\bgh[pousr]_[A-Za-z0-9]{30,}",        # GitHub
    r"\bxox[abprs]-[A-Za-z0-9\-]{10,}",     # Slack
)
"""Shapes of provider keys, redacted wherever they appear."""

_KEYS = re.compile("|".join(KEY_PATTERNS))
_URL_CREDENTIALS = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.\-]*://)[^\s/@:]*(?::[^\s/@]*)?@")
_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=\-]{8,}")
_KEY_FIELDS = re.compile(r"(?i)\b(api[_-]?key|access[_-]?token|auth[_-]?token|secret|password)"
                         r"(?P<sep>['\"]?\s*[:=]\s*['\"]?)[^\s'\"&,;}]{4,}")


def environment_secrets(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The values of the environment's secret-holding variables (see the module docstring), longest first.

    Examples
    --------
    >>> environment_secrets({"OPENAI_API_KEY": "abcdefgh12", "HOME": "/home/me", "MY_TOKEN": "short"})
    ('abcdefgh12',)
    """
    environ = os.environ if environ is None else environ
    values = {value for name, value in environ.items()
              if (name.upper().endswith(SECRET_SUFFIXES) or name.upper() in SECRET_VARIABLES)
              and len(value) >= MIN_SECRET_LENGTH}
    return tuple(sorted(values, key=len, reverse=True))


def redact(text: str, environ: Mapping[str, str] | None = None) -> str:
    """``text`` with every secret replaced by :data:`REDACTED` (see the module docstring).

    Examples
    --------
    >>> redact("Authorization: Bearer abcdefghijklmnop and ?api_key=12345678", environ={})
    'Authorization: [redacted] and ?api_key=[redacted]'
    >>> redact("no secret here", environ={"A_TOKEN": "zzzzzzzzzz"})
    'no secret here'
    """
    return _redact(text, environment_secrets(environ)) if text else text


def _redact(text: str, secrets: tuple[str, ...]) -> str:
    if not text:
        return text
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    text = _URL_CREDENTIALS.sub(lambda m: f"{m.group('scheme')}{REDACTED}@", text)
    text = _BEARER.sub(REDACTED, text)
    text = _KEY_FIELDS.sub(lambda m: f"{m.group(1)}{m.group('sep')}{REDACTED}", text)
    return _KEYS.sub(REDACTED, text)


def redact_data(value: Any, environ: Mapping[str, str] | None = None) -> Any:
    """A JSON-like ``value`` with :func:`redact` applied to every string in it (keys included).

    Examples
    --------
    >>> redact_data(["http://a:b@h", {"http://a:b@h": 1}, 2.5], environ={})
    ['http://[redacted]@h', {'http://[redacted]@h': 1}, 2.5]
    """
    return _redact_data(value, environment_secrets(environ))


def _redact_data(value: Any, secrets: tuple[str, ...]) -> Any:
    if isinstance(value, str):
        return _redact(value, secrets)
    if isinstance(value, Mapping):
        return {_redact_data(key, secrets): _redact_data(item, secrets) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_redact_data(item, secrets) for item in value]
    return value
