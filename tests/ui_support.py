"""Shared by the web inspector's tests: a server on a free 127.0.0.1 port (uvicorn in a
thread of the test process), an HTTP client holding its cookie, and headless Chromium.

The browser is Debian's ``chromium`` driven by its ``chromium-driver`` through Selenium.
When either is missing the tests that need it fail, naming the script that installs them
(``tools/install-browser.sh``): they are never skipped.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from memvault import Vault
from memvault.ui import Server

CHROMIUM = Path(os.environ.get("MEMVAULT_CHROMIUM", "/usr/bin/chromium"))
CHROMEDRIVER = Path(os.environ.get("MEMVAULT_CHROMEDRIVER", "/usr/bin/chromedriver"))
INSTALL_HINT = (
    "run 'bash tools/install-browser.sh' (as root) to install chromium and chromium-driver"
)


class Running:
    """A started inspector and a client that went through its token URL."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.base = server.base
        self.client = httpx.Client(base_url=server.base, follow_redirects=False, timeout=60)
        first = self.client.get(server.url)
        assert first.status_code == 303, first.text
        assert server.guard.cookie in self.client.cookies

    @property
    def csrf(self) -> str:
        return self.server.guard.csrf

    def post(self, path: str, data: dict[str, Any], **headers: str) -> httpx.Response:
        """A same-origin form POST, as the inspector's own pages send it."""
        data = {"csrf": self.csrf, **data}
        sent = {"Origin": self.base, "Sec-Fetch-Site": "same-origin", **headers}
        return self.client.post(path, data=data, headers=sent)


def start(vault: Vault) -> Running:
    server = Server(vault, port=0)
    server.start()
    return Running(server)


def serving() -> Iterator[Any]:
    """For a fixture: ``serve(vault)`` starts an inspector for ``vault``; every one started
    is stopped afterwards."""
    started: list[Running] = []

    def run(vault: Vault) -> Running:
        running = start(vault)
        started.append(running)
        return running

    yield run
    for running in started:
        running.client.close()
        running.server.stop()


def chromium_driver(download_dir: Path | None = None) -> Any:
    """Headless Chromium with a fresh profile; fails (never skips) when it is not installed."""
    missing = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not p.exists()]
    if missing:
        pytest.fail(f"{', '.join(missing)} not found: {INSTALL_HINT}", pytrace=False)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    os.environ["SE_OFFLINE"] = "true"  # Selenium Manager must never try to download a driver
    profile = tempfile.mkdtemp(prefix="memvault-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--window-size=1280,860",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    if download_dir is not None:
        options.add_experimental_option(
            "prefs",
            {
                "download.default_directory": str(download_dir),
                "download.prompt_for_download": False,
            },
        )
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(60)
    driver._memvault_profile = profile  # removed by quit_driver
    return driver


def quit_driver(driver: Any) -> None:
    try:
        driver.quit()
    finally:
        shutil.rmtree(getattr(driver, "_memvault_profile", ""), ignore_errors=True)
