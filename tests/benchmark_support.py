"""A tiny corpus in the lookups format for the benchmark's quick runs: an sdist-like archive placed in a cache
folder (so nothing is downloaded) and a lookups file over it. Its documents are invented for the tests."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

NAME = "tinydocs-1.0"

DOCS = {
    "docs/security.txt": ("Security", [
        ("HTTPS", "Set SECURE_SSL_REDIRECT to redirect every plain HTTP request to HTTPS. Behind a proxy that "
                  "terminates TLS, set SECURE_PROXY_SSL_HEADER so the site knows a request was secure."),
        ("Strict transport", "SECURE_HSTS_SECONDS makes browsers remember to use HTTPS for the site for that "
                             "many seconds; start small, then raise it to a year once everything works."),
        ("Cookies", "SESSION_COOKIE_SECURE and CSRF_COOKIE_SECURE keep the cookies off plain connections.")]),
    "docs/settings.txt": ("Settings reference", [
        (name, f"{name} is a setting of the security and deployment group. {text} Its default suits development; "
               "review it in the deployment checklist before the site goes live, and keep it the same on every "
               "server that answers for the site, or requests will behave differently from one server to another.")
        for name, text in (
            ("SECURE_SSL_REDIRECT", "When true, every plain HTTP request is redirected to HTTPS."),
            ("SECURE_HSTS_SECONDS", "The max-age of the Strict-Transport-Security header browsers remember."),
            ("SECURE_HSTS_PRELOAD", "Adds the preload directive so browsers may ship the site in their list."),
            ("SECURE_PROXY_SSL_HEADER", "Names the header a proxy sets when the original request was secure."),
            ("SESSION_COOKIE_SECURE", "Sends the session cookie over HTTPS only."),
            ("CSRF_COOKIE_SECURE", "Sends the CSRF cookie over HTTPS only."),
            ("ALLOWED_HOSTS", "The host names the site answers for; others get a bad request."),
            ("ADMINS", "Who gets the emailed traceback of a server error."),
            ("SERVER_EMAIL", "The sender address of error emails."),
            ("CACHES", "The cache backends and their locations."),
            ("SESSION_ENGINE", "Where session data is kept."),
            ("LOGGING", "The logging configuration, as a dictionary."))]),
    "docs/middleware.txt": ("Middleware", [
        ("Security middleware", "The security middleware applies the HTTPS redirect and the HSTS header; it "
                                "belongs near the top of the MIDDLEWARE list."),
        ("Order", "Middleware runs top to bottom on the way in and bottom to top on the way out.")]),
    "docs/errors.txt": ("Error reporting", [
        ("Server errors", "With DEBUG off, the site emails the ADMINS a full traceback whenever a view raises "
                          "an exception (a server error, status 500)."),
        ("Filtering", "Mark sensitive variables so that the emailed report leaves their values out.")]),
    "docs/cache.txt": ("The cache framework", [
        ("Per-view cache", "Decorate a view with cache_page to keep its whole rendered page for a number of "
                           "seconds; the next request is answered from the cache."),
        ("Backends", "Memcached, Redis, the database, the file system or local memory can hold the cache.")]),
    "docs/sessions.txt": ("Sessions", [
        ("Engines", "Session data is kept in the database by default; the cache, signed cookies or files "
                    "can hold it instead (SESSION_ENGINE)."),
        ("Expiry", "SESSION_COOKIE_AGE sets how long a session lasts; clearsessions removes expired rows.")]),
    "docs/testing.txt": ("Testing", [
        ("Test client", "The test client makes requests to your views without a server and returns the "
                        "response, the templates used and the context."),
        ("Fixtures", "Load rows into the test database before each test with fixtures.")]),
    "docs/deploy.txt": ("Deployment checklist", [
        ("Before going live", "Run the deployment checks, set ALLOWED_HOSTS, turn DEBUG off and serve "
                              "static files from a web server."),
        ("Logging", "Configure LOGGING so errors reach a file or a log service as well as the ADMINS.")]),
}

LOOKUPS = [
    {"id": "T01", "kind": "independent", "split": "tune",
     "question": "How do I force HTTPS and have browsers remember it, and get a traceback mailed on a crash?",
     "parts": [{"query": "make browsers always use HTTPS",
                "gold": ["docs/security.txt", "docs/middleware.txt", "docs/settings.txt"]},
               {"query": "email me the stack trace when the site crashes", "gold": ["docs/errors.txt"]}],
     "gold": ["docs/security.txt", "docs/middleware.txt", "docs/settings.txt", "docs/errors.txt"]},
    {"id": "T02", "kind": "related", "split": "test",
     "question": "How do I keep a whole rendered page for a while, and where are sessions stored?",
     "parts": [{"query": "keep a rendered page for some seconds", "gold": ["docs/cache.txt"]},
               # One gold file is not in the corpus: it is never found.
               {"query": "where session data is kept", "gold": ["docs/sessions.txt", "docs/missing.txt"]}],
     "gold": ["docs/cache.txt", "docs/sessions.txt", "docs/missing.txt"]},
    {"id": "T03", "kind": "related", "split": "test", "question": "Left out by --quick: how do I test a view without a server?",
     "parts": [{"query": "request a view in a test", "gold": ["docs/testing.txt"]}], "gold": ["docs/testing.txt"]},
]


def tiny_corpus(cache: Path, work: Path) -> Path:
    """Place the corpus's archive in ``cache/corpus`` and write its lookups file under ``work``; returns the
    lookups file."""
    tree = work / "src" / NAME
    for rel, (title, sections) in DOCS.items():
        path = tree / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{title}\n{'=' * len(title)}\n\n" + "\n\n".join(
            f"{heading}\n{'-' * len(heading)}\n\n{text}" for heading, text in sections) + "\n")
    (cache / "corpus").mkdir(parents=True, exist_ok=True)
    with tarfile.open(cache / "corpus" / f"{NAME}.tar.gz", "w:gz") as tar:
        tar.add(tree, arcname=NAME)
    lookups = work / "tiny-lookups.json"
    lookups.write_text(json.dumps({"corpus": {"name": NAME, "requirement": "tinydocs==1.0",
                                              "include": ["docs/**/*.txt"]}, "lookups": LOOKUPS}))
    return lookups
