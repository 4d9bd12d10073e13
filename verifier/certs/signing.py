"""ed25519 signatures over a certificate's body (PyNaCl, the optional `sign` extra).

Key files are hex text: a private key file holds the 32-byte seed (64 hex digits), a public
key file (`NAME.pub`) the 32-byte verify key. `keq prove --new-key K` writes K (mode 0600)
and K.pub; `keq gate --trusted-keys DIR` trusts every `*.pub` in DIR. The signature covers the
same canonical bytes as `certificate_sha256`, so it also pins every obligation hash, and
through them the stored SMT-LIB2 files.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from verifier.certs.errors import CertError
from verifier.certs.format import body_bytes

_HEX64 = re.compile(r"^[0-9a-fA-F]{64}$")


def _nacl():
    try:
        import nacl.exceptions
        import nacl.signing
    except ImportError:
        raise CertError("signing needs PyNaCl: pip install 'keq[sign]'") from None
    return nacl


def require_nacl() -> None:
    """Raise the CertError (exit 3) now when PyNaCl is missing."""
    _nacl()


def _read_hex(path: Path, what: str) -> bytes:
    try:
        text = path.read_text().strip()
    except OSError as e:
        raise CertError(f"{path}: cannot read the {what}: {e.strerror or e}") from None
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    if len(lines) != 1 or not _HEX64.match(lines[0]):
        raise CertError(f"{path}:1:1: error: a {what} file holds one line of 64 hex digits")
    return bytes.fromhex(lines[0])


def new_key(path: str | Path) -> tuple[Path, Path]:
    """Write a fresh private key to `path` (0600) and its public key to `path`.pub."""
    nacl = _nacl()
    path = Path(path)
    if path.exists():
        raise CertError(f"{path} exists: keq never overwrites a key")
    key = nacl.signing.SigningKey.generate()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(bytes(key).hex() + "\n")
    pub = path.with_name(path.name + ".pub")
    pub.write_text(bytes(key.verify_key).hex() + "\n")
    return path, pub


def sign(cert: dict, key_file: str | Path) -> dict:
    """The certificate with its `signature` filled in."""
    nacl = _nacl()
    key = nacl.signing.SigningKey(_read_hex(Path(key_file), "private key"))
    sig = key.sign(body_bytes(cert)).signature
    return {**cert, "signature": {"algorithm": "ed25519",
                                  "public_key": bytes(key.verify_key).hex(),
                                  "value": sig.hex()}}


def trusted_keys(directory: str | Path) -> dict[str, str]:
    """hex public key -> the file it came from, for every *.pub in `directory`."""
    d = Path(directory)
    if not d.is_dir():
        raise CertError(f"--trusted-keys {directory}: not a directory")
    keys = {_read_hex(p, "public key").hex(): p.name for p in sorted(d.glob("*.pub"))}
    if not keys:
        raise CertError(f"--trusted-keys {directory}: no *.pub key files in it")
    return keys


def check(cert: dict, trusted: dict[str, str]) -> str:
    """"" when the certificate is signed by a trusted key and the signature holds; else why
    not."""
    sig = cert.get("signature")
    if not sig:
        return "unsigned (--trusted-keys requires a signature)"
    if sig["public_key"] not in trusted:
        return f"signed by an untrusted key {sig['public_key'][:16]}..."
    nacl = _nacl()
    vk = nacl.signing.VerifyKey(bytes.fromhex(sig["public_key"]))
    try:
        vk.verify(body_bytes(cert), bytes.fromhex(sig["value"]))
    except nacl.exceptions.BadSignatureError:
        return (f"bad signature: the certificate changed after {trusted[sig['public_key']]} "
                f"signed it")
    return ""
